"""MkDocs hook: the reference pages generated from the code at build time, so none can drift.

A page holds a marker (an HTML comment of its own line) where generated text goes:
`<!-- generated: cli -->` (every command of `services.cli.main.build_parser()`),
`<!-- generated: settings -->` (every field of the settings classes in `services/settings.py`
with its environment variable, type, default and docstring), `<!-- generated: api-operations
-->` and `<!-- generated: api-schemas -->` (the game service's OpenAPI document, as
`cardarena openapi` prints it) and `<!-- generated: changelog -->` (the top-level
CHANGELOG.md). The OpenAPI document itself is published beside the API pages as
`reference/openapi.json`.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import json
import os
import re
import sys
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

MARKER = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.M)
METHODS = ("get", "put", "post", "delete", "patch")
SCHEMAS_PAGE = "api-schemas.md"


def cell(text: str) -> str:
    """Returns `text` fit for one cell of a Markdown table."""
    return " ".join(text.split()).replace("|", "\\|")


# ---- the CLI ----------------------------------------------------------------------------


def _subcommands(parser: argparse.ArgumentParser) -> Iterator[tuple[str, str, Any]]:
    """Yields (name, help, parser) of each subcommand of `parser`, in the order they were added."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            seen: set[int] = set()
            for name, sub in action.choices.items():
                if id(sub) not in seen:
                    seen.add(id(sub))
                    yield name, helps.get(name, ""), sub


def _commands(
    parser: argparse.ArgumentParser, path: str, summary: str
) -> Iterator[tuple[str, str, argparse.ArgumentParser]]:
    yield path, summary, parser
    for name, text, sub in _subcommands(parser):
        yield from _commands(sub, f"{path} {name}", text)


def cli_reference() -> str:
    """Returns every `cardarena` command with its help, usage and options."""
    from services.cli.main import build_parser  # noqa: PLC0415

    out = []
    for path, summary, parser in _commands(build_parser(), "cardarena", ""):
        depth = path.count(" ")
        out.append(f"{'#' * min(max(depth, 1) + 2, 4)} `{path}`\n")
        if summary:
            out.append(summary.rstrip(".") + ".\n")
        out.append("```text\n" + _help(parser) + "\n```\n")
    return "\n".join(out)


def _help(parser: argparse.ArgumentParser) -> str:
    """Returns `parser`'s help wrapped at 100 columns, whatever the terminal's width."""
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"  # argparse reads the width from the environment
    try:
        return parser.format_help().rstrip()
    finally:
        if previous is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = previous


# ---- the settings -----------------------------------------------------------------------


def _documented_fields(tree: ast.Module) -> dict[str, list[tuple[str, str, str]]]:
    """Returns per settings class its fields as (name, annotation, docstring), in order."""
    classes: dict[str, list[tuple[str, str, str]]] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        found = []
        for statement, after in zip(node.body, [*node.body[1:], None], strict=True):
            if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                doc = ""
                if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
                    doc = str(after.value.value)
                found.append((statement.target.id, ast.unparse(statement.annotation), doc))
        classes[node.name] = found
    return classes


def _type(annotation: str) -> str:
    annotated = re.fullmatch(r"Annotated\[(\w+), msgspec\.Meta\((.*)\)\]", annotation)
    if annotated:
        bounds = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}
        limits = []
        for key, value in re.findall(r"(\w+)=('[^']*'|[^,]+)", annotated.group(2)):
            limits.append(f"{bounds[key]} {value}" if key in bounds else f"{key} {value}")
        return f"{annotated.group(1)} ({', '.join(limits)})"
    literal = re.fullmatch(r"Literal\[(.*)\]", annotation)
    if literal:
        return " or ".join(f"`{v.strip(chr(39))}`" for v in literal.group(1).split(", "))
    return annotation


def settings_table() -> str:
    """Returns a table per service of every setting: variable, type, default, meaning."""
    from services import settings  # noqa: PLC0415

    env: dict[str, str] = settings._ENV
    tree = ast.parse(Path(settings.__file__).read_text(encoding="utf-8"))
    readers = {
        "CommonSettings": "Every process",
        "GameSettings": "The game service",
        "ProjectionSettings": "The projection",
        "WorkerSettings": "The workers",
        "BeatSettings": "Beat",
    }
    out = []
    for name, documented in _documented_fields(tree).items():
        if name not in readers or not documented:
            continue
        kind = getattr(settings, name)
        defaults = {f.name: f.default for f in dataclasses.fields(kind)}
        out.append(f"## {readers[name]} (`{name}`)\n")
        out.append("| variable | type | default | meaning |\n|---|---|---|---|")
        for field, annotation, doc in documented:
            variable = env[field]
            prefix = f"{variable}: "
            if not doc.startswith(prefix):
                raise ValueError(f"settings.{name}.{field}: the docstring must open {prefix!r}")
            default = defaults[field]
            shown = "(empty)" if default == "" else f"`{json.dumps(default)}`"
            meaning = cell(doc[len(prefix) :])
            out.append(f"| `{variable}` | {cell(_type(annotation))} | {shown} | {meaning} |")
        out.append("")
    return "\n".join(out)


# ---- the OpenAPI document ---------------------------------------------------------------


@cache
def openapi() -> dict[str, Any]:
    """Returns the game service's OpenAPI document (what `/schema/openapi.json` serves)."""
    from services.game.app import openapi_document  # noqa: PLC0415

    document: dict[str, Any] = openapi_document()
    return document


def _ref(ref: str) -> str:
    name = ref.rsplit("/", 1)[-1]
    return f"[`{name}`]({SCHEMAS_PAGE}#{name.lower()})"


def type_of(schema: dict[str, Any], link: Callable[[str], str] = _ref) -> str:
    """Returns `schema` as a short Markdown type: schema links, unions, arrays, enums."""
    if not isinstance(schema, dict):
        return "any" if schema else "nothing"
    if "$ref" in schema:
        return link(schema["$ref"])
    for union in ("oneOf", "anyOf"):
        if union in schema:
            return " or ".join(type_of(option, link) for option in schema[union])
    if "enum" in schema:
        return " or ".join(f"`{json.dumps(value)}`" for value in schema["enum"])
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    kind = schema.get("type", "any")
    if isinstance(kind, list):
        return " or ".join(kind)
    if kind == "array" and "prefixItems" in schema:
        items = ", ".join(type_of(item, link) for item in schema["prefixItems"])
        return f"array [{items}]"
    if kind == "array":
        return f"array of {type_of(schema.get('items', {}), link)}"
    if kind == "object" and "additionalProperties" in schema:
        values = schema["additionalProperties"]
        return "object" if values is True else f"object of {type_of(values, link)}"
    return str(kind) + (f" ({schema['format']})" if "format" in schema else "")


def _body(content: dict[str, Any]) -> str:
    kinds = []
    for media, entry in content.items():
        schema = entry.get("schema")
        kinds.append(f"`{media}`" + (f" {type_of(schema)}" if schema else ""))
    return "; ".join(kinds)


def _resolved(item: dict[str, Any], named: dict[str, Any]) -> dict[str, Any]:
    """Returns `item`, or the component its `$ref` names."""
    if "$ref" in item:
        found: dict[str, Any] = named[item["$ref"].rsplit("/", 1)[-1]]
        return found
    return item


def _operation(method: str, path: str, operation: dict[str, Any]) -> str:
    components = openapi().get("components", {})
    title = operation.get("summary") or operation.get("operationId", "")
    anchor = operation.get("operationId", "")
    out = [f"### {cell(title)} {{#{anchor}}}\n" if anchor else f"### {cell(title)}\n"]
    out.append(f"`{method.upper()} {path}`" + (f" (`{anchor}`)" if anchor else "") + "\n")
    if operation.get("description"):
        out.append(operation["description"].strip() + "\n")
    parameters = operation.get("parameters", [])
    if parameters:
        out.append("| parameter | in | type | required | description |\n|---|---|---|---|---|")
        for given in parameters:
            parameter = _resolved(given, components.get("parameters", {}))
            out.append(
                f"| `{parameter['name']}` | {parameter['in']} "
                f"| {cell(type_of(parameter.get('schema', {})))} "
                f"| {'yes' if parameter.get('required') else 'no'} "
                f"| {cell(parameter.get('description', ''))} |"
            )
        out.append("")
    body = operation.get("requestBody")
    if body:
        out.append(f"Request body: {_body(body.get('content', {}))}.\n")
    out.append("| status | meaning | body |\n|---|---|---|")
    for status, given in operation.get("responses", {}).items():
        response = _resolved(given, components.get("responses", {}))
        text = response.get("description", "")
        out.append(f"| {status} | {cell(text)} | {cell(_body(response.get('content', {})))} |")
    out.append("")
    return "\n".join(out)


def api_operations() -> str:
    """Returns every operation of the OpenAPI document, grouped by its first tag."""
    groups: dict[str, list[str]] = {}
    for path, item in openapi()["paths"].items():
        for method in METHODS:
            if method in item:
                tag = (item[method].get("tags") or ["other"])[0]
                groups.setdefault(tag, []).append(_operation(method, path, item[method]))
    out = []
    for tag, operations in groups.items():
        out.append(f"## {tag[:1].upper()}{tag[1:]}\n")
        out.extend(operations)
    for name, item in openapi().get("webhooks", {}).items():
        if not out or not out[-1].startswith("## Webhooks"):
            out.append("## Webhooks\n\nWhat the platform sends to a webhook bot's URL.\n")
        for method in METHODS:
            if method in item:
                out.append(_operation(method, f"(webhook) {name}", item[method]))
    return "\n".join(out)


def api_schemas() -> str:
    """Returns every schema of the OpenAPI document: its description and its fields."""
    out = []
    for name, schema in sorted(openapi()["components"]["schemas"].items()):
        out.append(f"## {name} {{#{name.lower()}}}\n")
        if schema.get("description"):
            out.append(schema["description"].strip() + "\n")
        properties = schema.get("properties", {})
        if properties:
            required = set(schema.get("required", []))
            out.append("| field | type | required | description |\n|---|---|---|---|")
            for field, spec in properties.items():
                out.append(
                    f"| `{field}` | {cell(type_of(spec))} | {'yes' if field in required else 'no'}"
                    f" | {cell(spec.get('description', ''))} |"
                )
            out.append("")
        elif "properties" not in schema:
            out.append(f"Type: {type_of(schema)}.\n")
    return "\n".join(out)


# ---- the hooks --------------------------------------------------------------------------


def changelog() -> str:
    """Returns the top-level CHANGELOG.md, its title left to the page and its links into
    `docs/` made relative to the site."""
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    return re.sub(r"\A# .*\n", "", text).replace("](docs/", "](")


GENERATORS: dict[str, Callable[[], str]] = {
    "cli": cli_reference,
    "settings": settings_table,
    "api-operations": api_operations,
    "api-schemas": api_schemas,
    "changelog": changelog,
}


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Replaces each `<!-- generated: NAME -->` line with its generated text."""

    def generated(match: re.Match[str]) -> str:
        return GENERATORS[match.group(1)]()

    return MARKER.sub(generated, markdown)


def on_files(files: Any, config: Any, **_: Any) -> Any:
    """Publishes the OpenAPI document beside the API pages, as `reference/openapi.json`."""
    from mkdocs.structure.files import File  # noqa: PLC0415

    text = json.dumps(openapi(), indent=2, ensure_ascii=False) + "\n"
    files.append(File.generated(config, "reference/openapi.json", content=text))
    return files
