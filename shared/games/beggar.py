"""Beggar-my-neighbour, as docs/rules/beggar-my-neighbour.md describes it.

The game has no decisions: the seat that leads a trick takes the one action
`PlayTrick`, and `decide` turns every card of that trick. One `TrickPlayed` event records
the cards in the order turned, who turned each and who collected, so a game of
hundreds of cards costs tens of appends.

Choices the original text leaves open, each covered by a test:
- Seats are 0-based: seat 0 is the page's "seat 1" and leads the first trick.
- The deal gives the first card of the shuffled deck to seat 0, the next to seat 1, ...;
  each pack lists its top card first, in the order its cards were dealt.
- A player with no cards is out only when due to turn a card: a player whose last card
  was a pay card still collects if the payment is completed with numerals.
- Loop detection compares trick starts with every numeral alike (only pay cards steer
  the play), as the published records do.
- Places: a finished game ranks the winner first, then the others in reverse order of
  going out; players left without cards by the final collection share a place. A looped
  or capped game ranks the players still in by cards held (ties share), then those out.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from functools import lru_cache
from typing import Literal

import msgspec

from shared.errors import IllegalAction, InvalidRuleset
from shared.games.base import GameSpec
from shared.games.cards import HIDDEN, Card, deal_round_robin, shuffled, standard_deck
from shared.messages.common import (
    Action,
    Clock,
    ClockEvent,
    Event,
    GameCreated,
    GameFinished,
    Result,
)

PAY = {"J": 1, "Q": 2, "K": 3, "A": 4}
"""How many cards each pay card obliges the next player to turn."""

NOTATION = "-23456789TJQKA"
"""Characters of the fixed-deal notation (docs/rules/beggar-my-neighbour.md; `10` reads as `T`)."""

_LOOP_KEY = (bytes.maketrans(b"23456789T", b"-" * 9), b"CDHS")
"""The bytes translation that makes a key of joined packs: numerals to `-`, suits dropped."""

Status = Literal["playing", "finished", "loop", "capped"]


class BeggarRuleset(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Beggar-my-neighbour options (docs/rules/beggar-my-neighbour.md)."""

    decks: int = 1
    """How many 52-card decks are shuffled together."""
    max_cards: int = 100_000
    """The cap on cards turned; reaching it ends the game as `capped`."""
    clock: Clock | msgspec.UnsetType = msgspec.UNSET
    """The clock of games played under this ruleset; unset (and then not even encoded):
    untimed (a game with a webhook seat still gets the default webhook clock, see
    `shared.model.clocks.clock_for`). A game's own clock overrides it."""


class PlayTrick(Action, frozen=True, kw_only=True):
    """The leader turns cards until the trick is collected (the platform's only action)."""


class GameStarted(Event, frozen=True, kw_only=True):
    """The deal: each seat's pack, top card first."""

    ruleset: BeggarRuleset
    """The game's ruleset."""
    players: int
    """The number of seats."""
    packs: list[list[Card]]
    """Each seat's pack, top card first."""


class TrickPlayed(Event, frozen=True, kw_only=True):
    """One trick: the cards turned in order, who turned each, who collected (None if capped)."""

    leader: int
    """The seat that led the trick."""
    cards: list[Card]
    """The cards turned, in order."""
    seats: list[int]
    """The seat that turned each card."""
    collector: int | None
    """The seat that collected the pile; null if the card cap ended the game mid-trick."""
    eliminated: list[int] = []
    """The seats that ran out of cards in this trick."""


class BeggarState(msgspec.Struct, frozen=True):
    """The whole table between tricks."""

    ruleset: BeggarRuleset
    """The game's ruleset."""
    packs: tuple[tuple[Card, ...], ...]
    """Each seat's pack, top card first."""
    leader: int
    """The seat that leads the next trick."""
    pile: tuple[Card, ...] = ()
    """The cards on the table, bottom first."""
    cards: int = 0
    """Cards turned so far."""
    tricks: int = 0
    """Tricks played so far."""
    out: tuple[int, ...] = ()
    """The seats out of cards, in the order they went out."""
    seen: frozenset[str] = frozenset()
    """The positions seen at a trick's start (a repeat ends the game as a `loop`)."""
    result: Result | None = None
    """The result once the game is over; else null."""


class BeggarView(msgspec.Struct, frozen=True):
    """What a seat may know: pack sizes (packs are face down), the pile and the counts."""

    seat: int
    """The seat this view is of."""
    pack_sizes: list[int]
    """The cards in each seat's pack (packs are face down)."""
    leader: int
    """The seat that leads the next trick."""
    pile: list[Card]
    """The cards on the table, bottom first."""
    cards: int
    """Cards turned so far."""
    tricks: int
    """Tricks played so far."""
    out: list[int]
    """The seats out of cards, in the order they went out."""
    status: Status
    """`playing`, or how the game ended."""
    result: Result | None
    """The result once the game is over; else null."""


BeggarEvent = GameCreated | GameStarted | TrickPlayed | GameFinished


def parse_deal(text: str) -> list[Card]:
    """Returns the cards of a pack in the fixed-deal notation, top first (`10` is `T`)."""
    text = text.upper().replace("10", "T")
    for index, char in enumerate(text):
        if char not in NOTATION:
            raise ValueError(f"{char!r} at position {index + 1} is not one of {NOTATION} or 10")
    return list(text)


def validate(ruleset: BeggarRuleset, players: int) -> None:
    """Raises InvalidRuleset when the ruleset cannot be played by `players` players."""
    if not 2 <= players <= 4:
        raise InvalidRuleset("players", f"Beggar-my-neighbour takes 2 to 4 players, not {players}")
    if not 1 <= ruleset.decks <= 8:
        raise InvalidRuleset("decks", f"must be 1 to 8, not {ruleset.decks}")
    if ruleset.max_cards < 1:
        raise InvalidRuleset("max_cards", f"must be at least 1, not {ruleset.max_cards}")


def deal(ruleset: BeggarRuleset, players: int, seed: int | str) -> GameStarted:
    """Returns the start event of a shuffled deal for `players` seats."""
    validate(ruleset, players)
    deck = shuffled(standard_deck(ruleset.decks), seed)
    return GameStarted(ruleset=ruleset, players=players, packs=deal_round_robin(deck, players))


def fixed_deal(
    packs: Sequence[Sequence[Card]], ruleset: BeggarRuleset | None = None
) -> GameStarted:
    """Returns the start event of a given deal, each pack top card first."""
    ruleset = ruleset or BeggarRuleset()
    validate(ruleset, len(packs))
    return GameStarted(ruleset=ruleset, players=len(packs), packs=[list(p) for p in packs])


def _loop_key(packs: Sequence[Sequence[Card]], leader: int) -> str:
    """Returns the trick-start key: who leads and every pack with numerals alike."""
    joined = "|".join(map("".join, packs)).encode("utf-8", "surrogatepass")
    return f"{leader}:" + joined.translate(*_LOOP_KEY).decode("utf-8", "surrogatepass")


class _PayOf(dict[str, int]):
    """Each card's pay value (0 for a numeral), looked up by the whole card code."""

    def __missing__(self, card: Card) -> int:
        return PAY.get(card[0], 0)


_PAY_OF = _PayOf({rank + suit: PAY.get(rank, 0) for rank in NOTATION for suit in ("", *"CDHS")})
"""The pay value of every card of a standard deck and of the fixed-deal notation."""


def evolve(state: BeggarState | None, event: Event) -> BeggarState:
    """Returns the state after `event`; clock events leave it as it is (`shared.model.clocks`)."""
    match state, event:
        case BeggarState(), TrickPlayed():
            return _apply_trick(state, event)
        case _, GameStarted(ruleset=ruleset, packs=packs):
            dealt = tuple(tuple(pack) for pack in packs)
            return BeggarState(
                ruleset=ruleset, packs=dealt, leader=0, seen=frozenset([_loop_key(dealt, 0)])
            )
        case BeggarState(), GameFinished(result=result):
            return msgspec.structs.replace(state, result=result)
        case BeggarState(), ClockEvent():
            return state
    raise TypeError(f"Beggar-my-neighbour has no event {type(event).__name__}")


def _packs_after(state: BeggarState, event: TrickPlayed) -> list[tuple[Card, ...]]:
    """Returns the packs once the trick's cards are turned and the pile is collected."""
    seats = event.seats
    packs = [pack[seats.count(seat) :] for seat, pack in enumerate(state.packs)]
    if event.collector is not None:
        packs[event.collector] += tuple(event.cards)
    return packs


def _apply_trick(state: BeggarState, event: TrickPlayed) -> BeggarState:
    """Moves the trick's cards from the packs to the pile and the pile to its collector."""
    return _after_trick(state, event, _packs_after(state, event))


def _after_trick(
    state: BeggarState, event: TrickPlayed, packs: list[tuple[Card, ...]]
) -> BeggarState:
    """Returns the state after `event`, given the packs it leaves (`_packs_after`)."""
    cards = state.cards + len(event.cards)
    out = state.out + tuple(event.eliminated) if event.eliminated else state.out
    if event.collector is None:
        return msgspec.structs.replace(
            state, packs=tuple(packs), pile=tuple(event.cards), cards=cards, out=out
        )
    return msgspec.structs.replace(
        state,
        packs=tuple(packs),
        leader=event.collector,
        pile=(),
        cards=cards,
        tricks=state.tricks + 1,
        out=out,
        seen=state.seen | {_loop_key(packs, event.collector)},
    )


def _next_in(seat: int, players: int, out: Collection[int]) -> int:
    """Returns the next seat after `seat` that is still in the game."""
    nxt = (seat + 1) % players
    while nxt in out:
        nxt = (nxt + 1) % players
    return nxt


@lru_cache(maxsize=64)
def _following(players: int, out: tuple[int, ...]) -> tuple[int, ...]:
    """Returns, for each seat, the next seat after it still in the game."""
    return tuple(_next_in(seat, players, out) for seat in range(players))


def _turn_cards(state: BeggarState) -> tuple[TrickPlayed, int | None, list[tuple[Card, ...]]]:
    """Plays one trick from `state`; returns its event, the winner if the game was won, and
    the packs it leaves (`_packs_after`)."""
    packs = state.packs
    players = len(packs)
    out = state.out
    following = _following(players, out)
    taken = [0] * players
    eliminated: list[int] = []
    cards: list[Card] = []
    seats: list[int] = []
    budget = state.ruleset.max_cards - state.cards
    due = state.leader
    owner = winner = collector = -1
    debt = 0
    turn_card, turn_seat, pay_of = cards.append, seats.append, _PAY_OF
    while True:
        pack = packs[due]
        index = taken[due]
        if index == len(pack):
            out += (due,)
            eliminated.append(due)
            following = _following(players, out)
            if len(out) == players - 1:
                winner = collector = following[due]
                break
            due = following[due]
            continue
        if budget == 0:
            break
        budget -= 1
        card = pack[index]
        taken[due] = index + 1
        turn_card(card)
        turn_seat(due)
        value = pay_of[card]
        if value:
            owner, debt = due, value
        elif owner >= 0:
            debt -= 1
            if debt == 0:
                collector = owner
                break
            continue
        due = following[due]
    after: list[tuple[Card, ...]] = []
    for seat, count in enumerate(taken):
        after.append(packs[seat][count:])
    if collector >= 0:
        after[collector] += tuple(cards)
    trick = TrickPlayed(
        leader=state.leader,
        cards=cards,
        seats=seats,
        collector=collector if collector >= 0 else None,
        eliminated=eliminated,
    )
    return trick, winner if winner >= 0 else None, after


def decide(state: BeggarState, seat: int, action: Action) -> list[Event]:
    """Returns the events of `seat` taking `action`: one trick, and the finish if it ends."""
    return play(state, seat, action)[1]


def play(state: BeggarState, seat: int, action: Action) -> tuple[BeggarState, list[Event]]:
    """Returns the state after `seat` takes `action` and its events (`decide`, and the state
    they fold to), playing the trick once."""
    if state.result is not None:
        raise IllegalAction("game_over", "the game is over")
    if not isinstance(action, PlayTrick):
        raise IllegalAction("unknown_action", f"Beggar-my-neighbour has no {type(action).__name__}")
    if seat != state.leader:
        raise IllegalAction("not_your_turn", f"seat {state.leader} leads the next trick")
    trick, winner, packs = _turn_cards(state)
    after = _after_trick(state, trick, packs)
    collector = trick.collector
    if collector is None:
        result = _ranked_by_cards(after, "capped")
    elif winner is not None or packs.count(()) == len(packs) - 1:
        result = _ranked_by_elimination(after, collector)
    elif len(after.seen) == len(state.seen):  # the new trick start was seen before
        result = _ranked_by_cards(after, "loop")
    elif after.cards >= state.ruleset.max_cards:
        result = _ranked_by_cards(after, "capped")
    else:
        return after, [trick]
    return msgspec.structs.replace(after, result=result), [trick, GameFinished(result=result)]


def _detail(state: BeggarState) -> dict[str, int]:
    """Returns the published-record counts of a game: cards turned and tricks collected."""
    return {"cards": state.cards, "tricks": state.tricks}


def _ranked_by_elimination(state: BeggarState, winner: int) -> Result:
    """Returns a finished result: winner first, then the others in reverse order of going out."""
    players = len(state.packs)
    places = [0] * players
    places[winner] = 1
    last_out = [s for s in range(players) if s != winner and s not in state.out]
    for seat in last_out:
        places[seat] = 2
    place = 2 + len(last_out)
    for seat in reversed(state.out):
        places[seat] = place
        place += 1
    return Result("finished", places, f"seat {winner} holds every card", detail=_detail(state))


_REASONS = {"loop": "a trick start repeated", "capped": "the card cap was reached"}


def _ranked_by_cards(state: BeggarState, status: str) -> Result:
    """Returns a result ranking the players still in by cards held (ties share), then the out."""
    players = len(state.packs)
    places = [0] * players
    still_in = [s for s in range(players) if s not in state.out]
    for seat in still_in:
        places[seat] = 1 + sum(len(state.packs[o]) > len(state.packs[seat]) for o in still_in)
    place = len(still_in) + 1
    for seat in reversed(state.out):
        places[seat] = place
        place += 1
    scores = [len(pack) for pack in state.packs]
    return Result(status, places, _REASONS[status], scores=scores, detail=_detail(state))


def status(state: BeggarState) -> Status:
    """Returns `playing` or how the game ended."""
    if state.result is None:
        return "playing"
    return state.result.status  # type: ignore[return-value]


def view(state: BeggarState, seat: int) -> BeggarView:
    """Returns what `seat` may know; every pack is face down, so all seats see the same."""
    return BeggarView(
        seat=seat,
        pack_sizes=[len(pack) for pack in state.packs],
        leader=state.leader,
        pile=list(state.pile),
        cards=state.cards,
        tricks=state.tricks,
        out=list(state.out),
        status=status(state),
        result=state.result,
    )


def redact(event: Event, seat: int | None) -> Event:
    """Returns `event` as a seat sees it while the game runs: packs are face down."""
    if isinstance(event, GameStarted):
        hidden = [[HIDDEN] * len(pack) for pack in event.packs]
        return msgspec.structs.replace(event, packs=hidden)
    return event


def legal_actions(state: BeggarState, seat: int) -> list[PlayTrick]:
    """Returns `[PlayTrick()]` for the leader of a running game, else nothing."""
    if state.result is None and seat == state.leader:
        return [PlayTrick()]
    return []


def default_action(state: BeggarState, seat: int) -> PlayTrick:
    """Returns the leader's only action, `PlayTrick` (the game has no decisions)."""
    if not legal_actions(state, seat):
        raise IllegalAction("not_your_turn", f"seat {state.leader} leads the next trick")
    return PlayTrick()


def action_of(event: Event) -> tuple[int, PlayTrick] | None:
    """Returns the seat and the action whose decision begins with `event`: a trick's leader
    playing it."""
    return (event.leader, PlayTrick()) if isinstance(event, TrickPlayed) else None


def to_move(state: BeggarState) -> list[int]:
    """Returns the leader of the next trick, or nothing once the game is over."""
    return [] if state.result is not None else [state.leader]


def is_over(state: BeggarState) -> bool:
    """Returns whether the game has ended (finished, loop or capped)."""
    return state.result is not None


def result(state: BeggarState) -> Result | None:
    """Returns the result of an ended game, None while it runs."""
    return state.result


SPEC: GameSpec[BeggarState, BeggarRuleset, BeggarView, PlayTrick] = GameSpec(
    name="beggar",
    title="Beggar-my-neighbour",
    rules_page="docs/rules/beggar-my-neighbour.md",
    min_players=2,
    max_players=4,
    has_decisions=False,
    ruleset_type=BeggarRuleset,
    presets={
        "classic": BeggarRuleset(),
        "classic-timed": BeggarRuleset(clock=Clock(move_seconds=10, bank_seconds=60)),
    },
    action_type=PlayTrick,
    event_type=BeggarEvent,
    deal=deal,
    evolve=evolve,
    decide=decide,
    play=play,
    view=view,
    legal_actions=legal_actions,
    to_move=to_move,
    is_over=is_over,
    result=result,
    validate=validate,
    redact=redact,
    default_action=default_action,
    action_of=action_of,
)
