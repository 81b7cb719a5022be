""".env.example lists every setting of shared/settings.py, with its default and docstring."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from shared import settings

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]


def example() -> list[tuple[str, str, str]]:
    """Returns (variable, value, the comment line above it) of each line of .env.example."""
    lines = (ROOT / ".env.example").read_text().splitlines()
    entries = []
    for index, line in enumerate(lines):
        if line and not line.startswith("#"):
            name, _, value = line.partition("=")
            above = lines[index - 1] if index else ""
            entries.append((name, value, above.removeprefix("# ")))
    return entries


def docstrings() -> dict[str, str]:
    """Returns the docstring of each field of `Settings`, on one line."""
    tree = ast.parse(Path(settings.__file__).read_text())
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Settings"]
    found = {}
    for node, after in zip(cls.body, cls.body[1:], strict=False):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
        ):
            found[node.target.id] = " ".join(str(after.value.value).split())
    return found


def test_env_example_lists_every_setting_in_the_order_of_settings_py() -> None:
    assert [name for name, _, _ in example()] == list(settings._ENV.values())


def test_env_example_values_are_the_defaults() -> None:
    values = {name: value for name, value, _ in example()}
    assert settings.load_settings(values) == settings.Settings()


def test_env_example_describes_each_setting_with_its_docstring() -> None:
    docs = docstrings()
    fields = {name: field for field, name in settings._ENV.items()}
    for name, _, comment in example():
        assert f"{name}: {comment}" == docs[fields[name]], name
