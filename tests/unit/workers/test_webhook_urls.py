"""Where webhook calls may go: the URL guard (server-side request forgery), in itself, in
the settings, and before each call of the workers."""

from __future__ import annotations

from collections.abc import Sequence

import httpx
import msgspec
import pytest

from services.settings import load_settings
from services.workers import webhooks
from services.workers.webhooks import play_webhook_turn
from shared.app.games import create_game
from shared.app.loading import load
from shared.app.registry import register
from shared.messages.common import Clock, Seat, WebhookFailed
from shared.model.registry import BotSpec
from shared.ports.webhook_urls import Resolver, WebhookUrlRefused, check_webhook_url
from shared.store.memory import InMemoryEventStore

PUBLIC = "93.184.215.14"


def resolver(*addresses: str) -> Resolver:
    """Returns a resolver answering `addresses` for every host (none: it does not resolve)."""

    def resolve(host: str) -> Sequence[str]:
        if not addresses:
            raise OSError(f"[Errno -2] Name or service not known: {host}")
        return addresses

    return resolve


def refusal(url: str, *addresses: str) -> str:
    """Returns why `url` is refused, the host resolving to `addresses`."""
    with pytest.raises(WebhookUrlRefused) as refused:
        check_webhook_url(url, allow_private=False, resolve=resolver(*addresses))
    return str(refused.value)


@pytest.mark.parametrize(
    ("host", "said"),
    [
        ("127.0.0.1", "a loopback address"),
        ("10.0.0.5", "a private address"),
        ("172.16.3.4", "a private address"),
        ("192.168.1.1", "a private address"),
        ("169.254.169.254", "a link-local address"),
        ("0.0.0.0", "an unspecified address"),
        ("224.0.0.1", "a multicast address"),
        ("240.0.0.1", "a reserved address"),
        ("255.255.255.255", "a reserved address"),
        ("100.64.0.1", "an address that is not globally reachable"),
        ("192.0.2.1", "a private address"),
        ("[::1]", "a loopback address"),
        ("[::]", "an unspecified address"),
        ("[fe80::1]", "a link-local address"),
        ("[fc00::1]", "a private address"),
        ("[fec0::1]", "a site-local address"),
        ("[ff02::1]", "a multicast address"),
        ("[::ffff:127.0.0.1]", "a form of 127.0.0.1, a loopback address"),
        ("[::ffff:a9fe:a9fe]", "a form of 169.254.169.254, a link-local address"),
        ("[2002:a00:5::1]", "a form of 10.0.0.5, a private address"),
        ("[64:ff9b::7f00:1]", "a form of 127.0.0.1, a loopback address"),
        ("[::127.0.0.1]", "a reserved address"),
    ],
)
def test_a_literal_address_that_is_not_global_is_refused_with_its_kind(
    host: str, said: str
) -> None:
    assert refusal(f"http://{host}:8080/turn") == f"{host.strip('[]')} is {said}"


@pytest.mark.parametrize(
    "host", [PUBLIC, "[2606:4700:4700::1111]", "[::ffff:8.8.8.8]", "[2002:808:808::1]"]
)
def test_a_public_literal_address_passes_without_resolving(host: str) -> None:
    check_webhook_url(f"https://{host}/turn", allow_private=False, resolve=resolver())


def test_a_host_resolving_to_a_private_address_is_refused_naming_the_address() -> None:
    said = refusal("https://bot.example/turn", PUBLIC, "10.0.0.5")
    assert said == "bot.example resolves to 10.0.0.5, a private address"


def test_a_host_resolving_to_a_mapped_loopback_address_is_refused() -> None:
    said = refusal("https://bot.example/turn", "::ffff:127.0.0.1")
    assert (
        said == "bot.example resolves to ::ffff:127.0.0.1, a form of 127.0.0.1, a loopback address"
    )


def test_a_host_resolving_to_public_addresses_only_passes() -> None:
    resolve = resolver(PUBLIC, "2606:4700:4700::1111")
    check_webhook_url("https://bot.example/turn", allow_private=False, resolve=resolve)


def test_a_host_that_does_not_resolve_is_refused() -> None:
    assert refusal("https://nowhere.invalid/turn").startswith("nowhere.invalid does not resolve")


@pytest.mark.parametrize("host", ["localhost", "127.1", "2130706433", "0x7f.1"])
def test_loopback_in_disguise_is_refused_by_the_system_resolver(host: str) -> None:
    with pytest.raises(WebhookUrlRefused, match="a loopback address"):
        check_webhook_url(f"http://{host}:6379/", allow_private=False)


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("https://user:password@bot.example/turn", "credentials"),
        ("https://user@bot.example/turn", "credentials"),
        ("ftp://bot.example/turn", "http(s) URL"),
        ("https:///turn", "http(s) URL"),
        ("bot.example/turn", "http(s) URL"),
        ("https://bot.example:99999/turn", "not a URL"),
        ("http://[::1/turn", "not a URL"),
    ],
)
def test_syntax_is_checked_even_where_private_addresses_are_allowed(url: str, said: str) -> None:
    for allow_private in (False, True):
        with pytest.raises(WebhookUrlRefused, match=said.replace("(", r"\(").replace(")", r"\)")):
            check_webhook_url(url, allow_private=allow_private, resolve=resolver(PUBLIC))


def test_allowing_private_addresses_lets_loopback_through_without_resolving() -> None:
    for url in ("http://127.0.0.1:9/x", "http://[::1]/x", "http://redis.internal:6379/"):
        check_webhook_url(url, allow_private=True, resolve=resolver())


@pytest.mark.parametrize(
    ("value", "allowed"), [("1", True), ("true", True), ("0", False), ("false", False)]
)
def test_the_setting_is_read_from_the_environment(value: str, allowed: bool) -> None:
    assert load_settings({}).webhook_allow_private is False
    settings = load_settings({"CARDARENA_WEBHOOK_ALLOW_PRIVATE": value})
    assert settings.webhook_allow_private is allowed


def _hooked_game() -> tuple[InMemoryEventStore, str, int]:
    """Returns a store holding a webhook bot at `hook.internal`, an autobus game whose seat 0
    it plays (a 5 s move), and the version its first turn began at."""
    store = InMemoryEventStore()
    spec = BotSpec(name="hook", game="autobus", kind="webhook", url="http://hook.internal/turn")
    register(store, spec, allow_private_urls=True)
    seats = [Seat(kind="webhook", name="hook", version="1"), Seat(kind="bot", bot="random")]
    clock = Clock(move_seconds=5, bank_seconds=0)
    game_id = create_game(store, "autobus", seats=seats, seed=1, clock=clock).game_id
    loaded = load(store, game_id)
    assert loaded.clock is not None
    return store, game_id, loaded.clock.turn_version


def test_a_webhook_resolving_to_a_private_address_at_call_time_is_not_called_but_failed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store, game_id, turn_version = _hooked_game()
    calls: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(500)

    def sleep(_: float) -> None:
        """After the first failure, moves the clock past the deadline."""
        monkeypatch.setattr(webhooks, "now_ms", lambda: 2**62)

    with httpx.Client(transport=httpx.MockTransport(answer)) as client:
        status = play_webhook_turn(
            store,
            game_id,
            turn_version,
            0,
            client=client,
            sleep=sleep,
            resolve=resolver("10.0.0.5"),
        )
    assert status == "deadline"
    assert calls == []
    events = load(store, game_id).spec.codec.decode_all(store.read(game_id))
    failures = [e for e in events if isinstance(e, WebhookFailed)]
    assert [(f.seat, f.reason) for f in failures] == [(0, "url_refused")]
    assert failures[0].detail == "hook.internal resolves to 10.0.0.5, a private address"


def test_a_webhook_on_a_private_address_is_called_where_private_addresses_are_allowed() -> None:
    store, game_id, turn_version = _hooked_game()

    def answer(request: httpx.Request) -> httpx.Response:
        turn = msgspec.json.decode(request.content)
        return httpx.Response(200, json={"action": turn["legal_actions"][0]})

    with httpx.Client(transport=httpx.MockTransport(answer)) as client:
        status = play_webhook_turn(
            store, game_id, turn_version, 0, client=client, allow_private=True, resolve=resolver()
        )
    assert status == "played"
