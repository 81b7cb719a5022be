"""The reference pages the docs site generates at build time (docs/hooks/reference.py) hold
every setting, every CLI command and every API operation and schema, so none can drift."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from services import settings
from services.cli.main import build_parser
from services.game.app import openapi_document

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def hook() -> ModuleType:
    """Returns the docs site's build hook, loaded from its file as MkDocs loads it."""
    spec = importlib.util.spec_from_file_location(
        "docs_reference", ROOT / "docs/hooks/reference.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_settings_page_has_every_variable_with_its_default(hook: ModuleType) -> None:
    table: str = hook.settings_table()

    for variable in settings._ENV.values():
        assert f"| `{variable}` |" in table, variable
    assert "| `CARDARENA_PARTITIONS` | int (>= 1, <= 1024) | `16` |" in table


def test_the_cli_page_has_every_command_with_its_usage(hook: ModuleType) -> None:
    page: str = hook.cli_reference()
    parser = build_parser()

    commands = [path for path, _, _ in hook._commands(parser, "cardarena", "")]
    assert {"cardarena serve", "cardarena tournament", "cardarena openapi"} <= set(commands)
    for command in commands:
        assert f"`{command}`" in page, command
        assert f"usage: {command}" in page, command


def test_the_api_pages_have_every_operation_and_schema(hook: ModuleType) -> None:
    document = openapi_document()
    operations: str = hook.api_operations()
    schemas: str = hook.api_schemas()

    for item in document["paths"].values():
        for method in hook.METHODS:
            if method in item:
                assert f"{{#{item[method]['operationId']}}}" in operations
    for name in document["components"]["schemas"]:
        assert f"## {name} {{#{name.lower()}}}" in schemas, name


def test_a_marker_is_replaced_by_its_generated_text(hook: ModuleType) -> None:
    page: str = hook.on_page_markdown("# Changelog\n\n<!-- generated: changelog -->\n")

    assert "<!-- generated" not in page
    assert "## [Unreleased]" in page
    assert "](docs/" not in page, "links into docs/ are made relative to the site"
