""".env.example lists every setting of services/settings.py, with its default and docstring."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import msgspec
import pytest

from services import settings

ROOT = Path(__file__).resolve().parents[3]


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
    """Returns the docstring of each settings field (whichever service's type declares it),
    on one line; a field declared twice fails."""
    tree = ast.parse(Path(settings.__file__).read_text())
    found: dict[str, str] = {}
    for cls in [n for n in tree.body if isinstance(n, ast.ClassDef)]:
        for node, after in zip(cls.body, cls.body[1:], strict=False):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
            ):
                assert node.target.id not in found, f"{node.target.id} is declared twice"
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


SERVICES = [
    settings.GameSettings,
    settings.ProjectionSettings,
    settings.WorkerSettings,
    settings.BeatSettings,
]


def test_every_setting_belongs_to_a_service_and_settings_holds_them_all() -> None:
    every = {f.name for f in dataclasses.fields(settings.Settings)}
    assert every == set(settings._ENV)
    common = {f.name for f in dataclasses.fields(settings.CommonSettings)}
    own = [{f.name for f in dataclasses.fields(kind)} - common for kind in SERVICES]
    assert set().union(common, *own) == every
    assert sum(map(len, own)) == len(set().union(*own)), "a setting belongs to one service"


def test_a_service_reads_only_its_own_settings_and_checks_them() -> None:
    env = {"CARDARENA_PORT": "9000", "CARDARENA_PROJECTION_METRICS_PORT": "not a port"}
    game = settings.load_settings(env, settings.GameSettings)
    assert (type(game), game.port) == (settings.GameSettings, 9000)
    assert not hasattr(game, "projection_metrics_port")
    with pytest.raises(msgspec.ValidationError, match="CARDARENA_PROJECTION_METRICS_PORT"):
        settings.load_settings(env, settings.ProjectionSettings)
    with pytest.raises(msgspec.ValidationError, match="CARDARENA_RATE_LIMIT"):
        settings.load_settings({"CARDARENA_RATE_LIMIT": "-1"}, settings.GameSettings)
