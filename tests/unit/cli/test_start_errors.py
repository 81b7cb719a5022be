"""What a command says when it cannot start: a setting that does not parse names its variable
and what it takes (exit 2), a server that does not answer is named with its URL, its variable
and what to try (exit 1), each in one line; `serve --host/--port`; what `dev` prints."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Annotated, Literal

import msgspec
import pytest

from services.cli import serve
from services.cli.dev import addresses
from services.cli.main import build_parser, main
from services.cli.servers import require_service, shown, unreachable
from services.settings import GameSettings, SettingsError, expectation, load_settings
from tests.support.stack import ROOT, free_port


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Runs `cardarena argv...`; returns the exit code, stdout and stderr."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("CARDARENA_PORT", "notaport", 'expected an integer from 1 to 65535, got "notaport"'),
        ("CARDARENA_PORT", "0", 'expected an integer from 1 to 65535, got "0"'),
        ("CARDARENA_STORE", "postgres", 'expected one of memory, redis, got "postgres"'),
        ("CARDARENA_LOG_JSON", "yes", 'expected true or false, got "yes"'),
        ("CARDARENA_RATE_LIMIT", "-1", 'expected an integer of at least 0, got "-1"'),
        ("CARDARENA_HEARTBEAT_MAX_AGE", "0", 'expected a number above 0, got "0"'),
    ],
)
def test_a_setting_that_does_not_parse_names_its_variable_and_what_it_takes(
    variable: str, value: str, message: str
) -> None:
    with pytest.raises(SettingsError) as raised:
        load_settings({variable: value})
    assert str(raised.value) == f"{variable}: {message}"
    assert isinstance(raised.value, msgspec.ValidationError)


def test_a_secret_that_does_not_parse_is_not_repeated() -> None:
    with pytest.raises(SettingsError) as raised:
        load_settings({"CARDARENA_DEAL_SECRET": "hunter2"})
    assert "hunter2" not in str(raised.value)
    assert str(raised.value).startswith("CARDARENA_DEAL_SECRET: expected text matching ")


def test_what_a_field_takes_is_read_off_its_annotation() -> None:
    assert expectation(Annotated[int, msgspec.Meta(ge=1, le=9)]) == "an integer from 1 to 9"
    assert expectation(Annotated[float, msgspec.Meta(gt=0)]) == "a number above 0"
    assert expectation(Annotated[int, msgspec.Meta(le=5)]) == "an integer of at most 5"
    assert expectation(Literal["a", "b"]) == "one of a, b"
    assert expectation(bool) == "true or false"
    assert expectation(str) == "text"


def test_serve_with_a_bad_setting_exits_2_with_one_line_and_no_traceback() -> None:
    env = {**os.environ, "CARDARENA_PORT": "notaport"}
    done = subprocess.run(
        [sys.executable, "-m", "services.cli", "serve"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 2
    expected = (
        'cardarena: error: CARDARENA_PORT: expected an integer from 1 to 65535, got "notaport"'
    )
    assert done.stderr.splitlines() == [expected]


@pytest.mark.parametrize(
    ("argv", "variable", "server"),
    [
        (["serve"], "REDIS_URL", "Redis"),
        (["serve", "projection"], "REDIS_URL", "Redis"),
        (["serve", "workers"], "REDIS_URL", "Redis"),
        (["serve", "beat"], "REDIS_URL", "Redis"),
        (["store", "migrate"], "REDIS_URL", "Redis"),
        (["dev"], "REDIS_URL", "Redis"),
        (["migrate"], "DATABASE_URL", "PostgreSQL"),
        (["projection", "rebuild"], "DATABASE_URL", "PostgreSQL"),
    ],
)
def test_a_server_that_does_not_answer_at_start_is_named_in_one_line(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
    variable: str,
    server: str,
) -> None:
    url = {
        "REDIS_URL": f"redis://:sesame@127.0.0.1:{free_port()}/0",
        "DATABASE_URL": f"postgresql://postgres@127.0.0.1:{free_port()}/cardarena",
    }[variable]
    monkeypatch.setenv("CARDARENA_STORE", "redis")
    monkeypatch.setenv(variable, url)
    code, out, err = run(capsys, *argv)
    assert code == 1
    assert out == ""
    (line,) = err.splitlines()
    assert line.startswith(f"cardarena: error: cannot reach {server} at {shown(url)} ({variable}):")
    assert "sesame" not in line
    assert f"or set {variable}" in line


def test_a_missing_database_is_told_apart_from_a_server_that_is_down() -> None:
    url = "postgresql://postgres@127.0.0.1:5432/cardarena_no_such"
    reason = 'connection failed: FATAL:  database "cardarena_no_such" does not exist\n'
    missing = str(unreachable("PostgreSQL", url, "DATABASE_URL", reason, "postgres"))
    assert missing.endswith(
        "does not exist; create it (createdb cardarena_no_such;"
        " `cardarena dev` creates it) or set DATABASE_URL"
    )
    down = str(unreachable("PostgreSQL", url, "DATABASE_URL", "Connection refused.", "postgres"))
    assert down.endswith(
        "Connection refused; start it (docker compose up -d postgres) or set DATABASE_URL to one"
        " that runs"
    )


def test_the_embedded_game_service_needs_no_server() -> None:
    settings = load_settings({"REDIS_URL": f"redis://127.0.0.1:{free_port()}/0"}, GameSettings)
    require_service("game", settings)


def test_a_password_in_a_url_is_masked() -> None:
    assert shown("redis://:pw@h:6379/0") == "redis://:***@h:6379/0"
    assert shown("postgresql://u:pw@h/db") == "postgresql://u:***@h/db"
    assert shown("redis://h:6379/0") == "redis://h:6379/0"


@pytest.mark.parametrize(
    ("argv", "field", "value"),
    [
        (["serve", "--port", "9001"], "port", 9001),
        (["serve", "game", "--host", "0.0.0.0"], "host", "0.0.0.0"),
        (["serve", "projection", "--port", "9200"], "projection_metrics_port", 9200),
        (["serve", "workers", "--port", "9201"], "workers_metrics_port", 9201),
    ],
)
def test_serve_host_and_port_override_the_settings_they_name(
    argv: list[str], field: str, value: object
) -> None:
    args = build_parser().parse_args(argv)
    settings = serve.options(args, load_settings({}, serve.KINDS[args.service]))
    assert getattr(settings, field) == value


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["serve", "beat", "--port", "9000"], "beat listens on no port"),
        (["serve", "projection", "--host", "0.0.0.0"], "--host is the game service's address"),
        (["serve", "workers", "--host", "0.0.0.0"], "--host is the game service's address"),
    ],
)
def test_serve_refuses_an_option_that_means_nothing_to_the_service(
    capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    code, _, err = run(capsys, *argv)
    assert code == 2
    (line,) = err.splitlines()
    assert says in line


def test_a_port_out_of_range_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["serve", "--port", "70000"])
    assert exited.value.code == 2
    assert 'expected an integer from 1 to 65535, got "70000"' in capsys.readouterr().err


def test_dev_lists_the_api_its_docs_the_arena_and_every_metrics_address() -> None:
    listed = dict(addresses("http://127.0.0.1:8000", load_settings({})))
    assert listed["API"] == "http://127.0.0.1:8000/v1"
    assert listed["API docs"] == "http://127.0.0.1:8000/schema"
    assert listed["arena"] == "http://127.0.0.1:8000/arena"
    metrics = [
        where for what, where in addresses("http://h:1", load_settings({})) if what == "metrics"
    ]
    assert metrics == [
        "http://h:1/metrics (game)",
        "http://127.0.0.1:9100/metrics (projection)",
        "http://127.0.0.1:9101/metrics (workers)",
    ]
    off = load_settings({"CARDARENA_PROJECTION_METRICS_PORT": "0"})
    assert "(projection)" not in str(addresses("http://h:1", off))


def test_a_projector_index_that_fits_no_partition_is_one_line_before_any_server_is_asked(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(serve, "require_service", lambda service, settings: None)
    monkeypatch.setattr(serve, "configure_logging", lambda json: None)  # the test's own logs
    monkeypatch.setenv("CARDARENA_PROJECTORS", "2")
    monkeypatch.setenv("CARDARENA_PROJECTOR_INDEX", "5")
    code, _, err = run(capsys, "serve", "projection")
    assert code == 2
    assert err == "cardarena: error: projector index 5 is not below CARDARENA_PROJECTORS=2\n"
