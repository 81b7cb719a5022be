"""The descriptions of Struct fields, read once from their attribute docstrings (a string
literal right after the field, in the class or a base class)."""

from __future__ import annotations

import ast
import inspect
import itertools
import textwrap
from functools import cache

import msgspec


@cache
def field_docs(cls: type) -> dict[str, str]:
    """Returns the attribute docstring of each documented field of `cls`, by the name it is
    encoded under; a subclass's docstring replaces its base's."""
    docs: dict[str, str] = {}
    for base in reversed(cls.__mro__):
        docs.update(_own_docs(base))
    renamed = dict(
        zip(
            getattr(cls, "__struct_fields__", ()),
            getattr(cls, "__struct_encode_fields__", ()),
            strict=True,
        )
    )
    return {renamed.get(name, name): doc for name, doc in docs.items()}


@cache
def _own_docs(cls: type) -> dict[str, str]:
    """Returns the attribute docstrings written in the body of `cls` itself."""
    if cls is object or cls is msgspec.Struct:
        return {}
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    tree = ast.parse(source)
    body = next((n.body for n in tree.body if isinstance(n, ast.ClassDef)), [])
    docs: dict[str, str] = {}
    for field, after in itertools.pairwise(body):
        if (
            isinstance(field, ast.AnnAssign)
            and isinstance(field.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[field.target.id] = " ".join(inspect.cleandoc(after.value.value).split())
    return docs


def tag_doc(cls: type) -> str | None:
    """Returns the description of the tag field of a tagged Struct, None for an untagged one."""
    config = getattr(cls, "__struct_config__", None)
    if config is None or config.tag is None:
        return None
    return f"The kind of this {_family(cls)}: always `{config.tag}`."


def _family(cls: type) -> str:
    """Returns what a tagged Struct is: an action, an event or a message."""
    names = {base.__name__ for base in cls.__mro__}
    return "action" if "Action" in names else "event" if "Event" in names else "message"
