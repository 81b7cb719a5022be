"""The command line starts light: building the parser (and printing its help) imports
argparse-level code only, each command's modules are imported when it runs; `--version`."""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import json
import subprocess
import sys

import pytest

from services.cli.main import build_parser, main
from services.game.app import openapi_document
from tests.support.stack import ROOT

HEAVY = (
    "litestar",
    "uvicorn",
    "redis",
    "psycopg",
    "psycopg_pool",
    "celery",
    "kombu",
    "httpx",
    "msgspec",
    "rich",
    "prometheus_client",
    "shared",
)
"""Top-level packages that no parser may import: frameworks, clients, and the domain."""
LIGHT = {
    "services",
    "services.cli",
    "services.cli.main",
    "services.cli.parsers",
    "services.cli.common",
}
"""The only modules of services/ that building the parser may import."""
EVERY_HELP = """
import argparse, json, sys
from services.cli.main import build_parser

def helps(parser):
    yield parser.format_help()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from helps(sub)

list(helps(build_parser()))
print(json.dumps(sorted(sys.modules)))
"""


def commands() -> dict[str, argparse.ArgumentParser]:
    """Returns the parser of each `cardarena` command, by name."""
    (action,) = (a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_building_the_parser_and_every_help_imports_no_framework_client_or_domain_module() -> None:
    printed = subprocess.run(
        [sys.executable, "-c", EVERY_HELP], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    loaded = set(json.loads(printed))
    heavy = sorted(m for m in loaded if m.split(".")[0] in HEAVY)
    assert heavy == []
    assert {m for m in loaded if m.split(".")[0] == "services"} <= LIGHT
    assert "typing" not in loaded
    assert "shutil" not in loaded


def test_every_command_names_a_group_module_that_runs_it() -> None:
    parsers = commands()
    assert {"serve", "simulate", "tournament", "connect", "dev", "migrate", "openapi"} <= set(
        parsers
    )
    for name, parser in parsers.items():
        group = parser.get_default("group")
        assert group is not None, name
        assert callable(importlib.import_module(f"services.cli.{group}").run), name


def test_the_full_parser_still_parses_every_command_s_options() -> None:
    parser = build_parser()
    args = parser.parse_args(["serve", "projection", "--port", "9200"])
    assert (args.group, args.service, args.port, args.host) == ("serve", "projection", 9200, None)
    args = parser.parse_args(["simulate", "--game", "shithead", "--bots", "random,random"])
    assert (args.group, args.move_seconds) == ("simulate", 10.0)


def test_version_prints_the_installed_package_and_the_api_version(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    installed = importlib.metadata.version("cardarena")
    api = openapi_document()["info"]["version"]
    assert capsys.readouterr().out == f"cardarena {installed} (API {api})\n"
