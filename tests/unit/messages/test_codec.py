"""Stored events are a contract: payloads written by earlier versions still decode."""

from __future__ import annotations

import json
import typing
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

from shared.catalog import game_names, get_game
from shared.games import beggar
from shared.messages.codec import UnknownSchemaVersion, encode
from shared.messages.common import PLATFORM_EVENTS, Event, GameCreated, GameFinished, Seat
from shared.model import challenges, registry
from shared.model.challenges import ChallengeEvent
from shared.model.registry import RegistryEvent
from shared.model.tournaments.model import AnyTournamentEvent
from tests.support.payloads import FROZEN_V1, recorded

# Written on 2026-11-30 once games committed to their deal (GameCreated's commitment,
# deal_seed and salt; GameFinished's seed and salt); never edit these either.
FROZEN_V1_COMMITTED = {
    "GameCreated": (
        "8ba474797065ab47616d6543726561746564a467616d65a6626567676172a772756c6573657482a56465"
        "636b7301a96d61785f6361726473ce000186a0a573656174739284a46b696e64a3626f74a3626f74a674"
        "75726e6572a46e616d65c0a776657273696f6ea084a46b696e64a3626f74a3626f74a67475726e6572a4"
        "6e616d65c0a776657273696f6ea0aa637265617465645f6174b4323032362d31312d33305431363a3030"
        "3a30305aa8626f745f73656564a0aa746f75726e616d656e74a0ae746f75726e616d656e745f6b6579a0"
        "aa636f6d6d69746d656e74d9406135613437613133623861626131633736333862356437333063386339"
        "6430303965323663626165353131623337356439303636363934393031313035623535a96465616c5f73"
        "656564a137a473616c74d940303030303030303030303030303030303030303030303030303030303030"
        "30303030303030303030303030303030303030303030303030303030303030303030"
    ),
    "GameFinished": (
        "84a474797065ac47616d6546696e6973686564a6726573756c7485a6737461747573a866696e69736865"
        "64a6706c61636573920102a6726561736f6eb773656174203020686f6c64732065766572792063617264"
        "a673636f726573c0a664657461696c82a5636172647307a6747269636b7301a473656564a137a473616c"
        "74d940303030303030303030303030303030303030303030303030303030303030303030303030303030"
        "30303030303030303030303030303030303030303030303030"
    ),
}


def test_frozen_version_1_payloads_decode_and_fold_to_the_same_game() -> None:
    codec = get_game("beggar").codec
    events = [
        codec.decode(recorded(type_, bytes.fromhex(data), version))
        for version, (type_, data) in enumerate(FROZEN_V1.items(), start=1)
    ]
    created, started, trick, finished = events
    assert isinstance(created, GameCreated)
    assert created.seats == [Seat(kind="bot", bot="turner")] * 2
    assert isinstance(started, beggar.GameStarted)
    assert isinstance(trick, beggar.TrickPlayed)
    assert trick.collector == 0
    assert isinstance(finished, GameFinished)
    state = get_game("beggar").fold(events)
    assert state.cards == 7
    assert state.result == finished.result


def test_events_from_before_deal_commitments_decode_with_none() -> None:
    codec = get_game("beggar").codec
    created = codec.decode(recorded("GameCreated", bytes.fromhex(FROZEN_V1["GameCreated"]), 1))
    finished = codec.decode(recorded("GameFinished", bytes.fromhex(FROZEN_V1["GameFinished"]), 4))
    assert isinstance(created, GameCreated)
    assert (created.commitment, created.deal_seed, created.salt) == ("", "", "")
    assert isinstance(finished, GameFinished)
    assert (finished.seed, finished.salt) == ("", "")


def test_frozen_payloads_with_a_deal_commitment_decode() -> None:
    codec = get_game("beggar").codec
    data = {name: bytes.fromhex(hexed) for name, hexed in FROZEN_V1_COMMITTED.items()}
    created = codec.decode(recorded("GameCreated", data["GameCreated"], 1))
    finished = codec.decode(recorded("GameFinished", data["GameFinished"], 4))
    assert isinstance(created, GameCreated)
    assert created.commitment == "a5a47a13b8aba1c7638b5d730c8c9d009e26cbae511b375d9066694901105b55"
    assert (created.deal_seed, created.salt) == ("7", "0" * 64)
    assert isinstance(finished, GameFinished)
    assert (finished.seed, finished.salt) == ("7", "0" * 64)
    assert finished.result.places == [1, 2]


def test_every_event_survives_an_encode_decode_round_trip() -> None:
    codec = get_game("beggar").codec
    started = beggar.deal(beggar.BeggarRuleset(), 3, seed=1)
    envelope = encode(started)
    assert envelope.type == "GameStarted"
    assert codec.decode(recorded(envelope.type, envelope.data, 1)) == started


def test_an_unknown_schema_version_is_an_error_not_a_guess() -> None:
    codec = get_game("beggar").codec
    data = bytes.fromhex(FROZEN_V1["GameStarted"])
    with pytest.raises(UnknownSchemaVersion, match="schema 2"):
        codec.decode(recorded("GameStarted", data, 1, schema=2))


# v1.json: written on 2026-12-01 by the code of that day (before the kw_only Structs), one
# sample of every event type of every union; each later file adds samples of the event types
# added since (v2.json: ChallengeExpired, SeatResigned and GameAborted, 2026-12-02; v3.json:
# Shithead's CardStacked and SeatsSkipped, 2026-12-03; v4.json: the registry's account events,
# 2026-12-05; v4_notes.json: NoteTaken, 2026-12-05; v4-arena.json: the arena's ArenaStarted,
# EntrantJoined and EntrantWithdrew, 2026-12-05). Never edit them, add new files instead.
PAYLOADS = Path(__file__).parent.parent.parent / "golden" / "payloads"


def _samples() -> dict[str, dict[str, str]]:
    """Returns the frozen samples of every payload file, by group and event type."""
    samples: dict[str, dict[str, str]] = {}
    for path in sorted(PAYLOADS.glob("*.json")):
        for group, payloads in json.loads(path.read_text()).items():
            samples.setdefault(group, {}).update(payloads)
    return samples


def _union_members(union: object) -> dict[str, type[Event]]:
    """Returns the Struct types of a (nested) union by tag."""
    args = typing.get_args(union)
    if not args:
        assert isinstance(union, type)
        return {union.__name__: union}
    return {name: kind for arg in args for name, kind in _union_members(arg).items()}


def _decoders() -> dict[str, tuple[object, Callable[[bytes], Event]]]:
    """Returns each sample group's union and a decoder of its payloads."""

    def game(name: str) -> tuple[object, Callable[[bytes], Event]]:
        spec = get_game(name)
        return spec.log_type, lambda data: spec.codec.decode(recorded("x", data, 1))

    tournament = msgspec.msgpack.Decoder(AnyTournamentEvent)
    return {
        **{name: game(name) for name in game_names()},
        "common": game("beggar"),
        "registry": (RegistryEvent, lambda data: registry.CODEC.decode(recorded("x", data, 1))),
        "challenge": (
            ChallengeEvent,
            lambda data: challenges.CODEC.decode(recorded("x", data, 1)),
        ),
        "tournament": (AnyTournamentEvent, tournament.decode),
        "tournament_at": (AnyTournamentEvent, tournament.decode),
    }


def test_a_sample_of_every_event_of_every_union_decodes_and_re_encodes_to_the_same_bytes() -> None:
    samples = _samples()
    decoders = _decoders()
    assert set(samples) == set(decoders)
    for group, payloads in samples.items():
        union, decode = decoders[group]
        types = _union_members(union)
        if group not in {"common", "tournament_at"}:  # extra samples of one type
            expected = set(types) - {"GameCreated", *(kind.__name__ for kind in PLATFORM_EVENTS)}
            assert expected <= set(payloads), group
        if group == "common":  # the platform's events, in every game's log
            assert {kind.__name__ for kind in PLATFORM_EVENTS} <= set(payloads)
        for name, hexed in payloads.items():
            data = bytes.fromhex(hexed)
            event = decode(data)
            assert type(event) is types[name], (group, name)
            assert encode(event).data == data, (group, name)
