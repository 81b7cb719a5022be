"""A toy game no module of `shared/` or `services/` knows: High card, hosted by a test
(`with catalog.hosting(HIGH_CARD): ...`) to show that a game needs nothing outside its own
module (docs/architecture.md, "A new game").

Each seat is dealt `cards` cards face down. In seat order, seat 0 first, each seat shows one
of its cards (its one decision); once every seat has shown, the highest rank wins (aces
high, suits never matter) and seats that show the same rank share a place.
"""

from __future__ import annotations

import msgspec

from shared.bots.generic import FirstLegalBot, RandomBot
from shared.errors import IllegalAction, InvalidRuleset
from shared.games.base import GameSpec
from shared.games.cards import (
    HIDDEN,
    RANKS,
    Card,
    rank_of,
    replace_at,
    shuffled,
    standard_deck,
    without,
)
from shared.messages.common import Action, Event, GameCreated, GameFinished, Result


class HighCardRules(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """High card's one option."""

    cards: int = 2
    """How many cards each seat is dealt."""


class ShowCard(Action, frozen=True, kw_only=True):
    """The seat to move shows one of its cards."""

    card: Card
    """The card shown, one of the seat's."""


class HighCardDealt(Event, frozen=True, kw_only=True):
    """The deal: each seat's cards."""

    ruleset: HighCardRules
    """The game's ruleset."""
    hands: list[list[Card]]
    """Each seat's cards."""


class CardShown(Event, frozen=True, kw_only=True):
    """`seat` showed `card`."""

    seat: int
    """The seat that showed."""
    card: Card
    """The card shown."""


HighCardEvent = GameCreated | HighCardDealt | CardShown | GameFinished


class HighCardState(msgspec.Struct, frozen=True):
    """The whole table: each seat's cards still held and the card each seat showed."""

    ruleset: HighCardRules
    """The game's ruleset."""
    hands: tuple[tuple[Card, ...], ...]
    """Each seat's cards still held."""
    shown: tuple[Card, ...] = ()
    """The cards shown so far, in seat order (seat 0's first)."""
    result: Result | None = None
    """The result once every seat has shown; else null."""


class HighCardView(msgspec.Struct, frozen=True):
    """What a seat may know: its own cards, every card shown, how many each seat holds."""

    seat: int
    """The seat this view is of."""
    hand: list[Card]
    """The seat's own cards."""
    held: list[int]
    """How many cards each seat holds."""
    shown: list[Card]
    """The cards shown so far, in seat order."""


class HighCardTable(msgspec.Struct, frozen=True):
    """What anyone may know: how many cards each seat holds and every card shown."""

    held: list[int]
    """How many cards each seat holds."""
    shown: list[Card]
    """The cards shown so far, in seat order."""


def validate(rules: HighCardRules, players: int) -> None:
    """Raises InvalidRuleset unless 2 to 4 players can each be dealt `cards` cards."""
    if not 2 <= players <= 4:
        raise InvalidRuleset("players", f"High card takes 2 to 4 players, not {players}")
    if not 1 <= rules.cards <= 13:
        raise InvalidRuleset("cards", f"must be 1 to 13, not {rules.cards}")


def deal(rules: HighCardRules, players: int, seed: int | str) -> HighCardDealt:
    """Returns the deal of `seed`: `cards` cards to each seat from one shuffled deck."""
    validate(rules, players)
    deck = shuffled(standard_deck(), seed)
    hands = [deck[seat * rules.cards : (seat + 1) * rules.cards] for seat in range(players)]
    return HighCardDealt(ruleset=rules, hands=hands)


def evolve(state: HighCardState | None, event: Event) -> HighCardState:
    """Returns the state after `event`."""
    match state, event:
        case _, HighCardDealt(ruleset=rules, hands=dealt):
            return HighCardState(ruleset=rules, hands=tuple(tuple(hand) for hand in dealt))
        case HighCardState(), CardShown(seat=seat, card=card):
            hands = replace_at(state.hands, seat, without(state.hands[seat], [card]))
            return msgspec.structs.replace(state, hands=hands, shown=(*state.shown, card))
        case HighCardState(), GameFinished(result=result):
            return msgspec.structs.replace(state, result=result)
    raise TypeError(f"High card has no event {type(event).__name__}")


def to_move(state: HighCardState) -> list[int]:
    """Returns the seat whose card is due, nothing once every seat has shown."""
    due = len(state.shown)
    return [] if state.result is not None or due == len(state.hands) else [due]


def legal_actions(state: HighCardState, seat: int) -> list[ShowCard]:
    """Returns one ShowCard per card of the seat to move, in the order dealt; else nothing."""
    if seat not in to_move(state):
        return []
    return [ShowCard(card=card) for card in state.hands[seat]]


def _places(shown: tuple[Card, ...]) -> list[int]:
    """Returns each seat's place: one more than the seats that showed a higher rank."""
    ranks = [RANKS.index(rank_of(card)) for card in shown]
    return [1 + sum(other > mine for other in ranks) for mine in ranks]


def decide(state: HighCardState, seat: int, action: Action) -> list[Event]:
    """Returns the events of `seat` showing a card, and the finish after the last seat's."""
    if state.result is not None:
        raise IllegalAction("game_over", "the game is over")
    if seat not in to_move(state):
        raise IllegalAction("not_your_turn", f"seat {len(state.shown)} shows next")
    if not isinstance(action, ShowCard) or action.card not in state.hands[seat]:
        raise IllegalAction("not_held", "show one of your own cards")
    shown = CardShown(seat=seat, card=action.card)
    if len(state.shown) + 1 < len(state.hands):
        return [shown]
    result = Result("finished", _places((*state.shown, action.card)), "every seat has shown")
    return [shown, GameFinished(result=result)]


def view(state: HighCardState, seat: int) -> HighCardView:
    """Returns what `seat` may know."""
    held = [len(hand) for hand in state.hands]
    return HighCardView(seat=seat, hand=list(state.hands[seat]), held=held, shown=list(state.shown))


def table(state: HighCardState) -> HighCardTable:
    """Returns what anyone may know: the counts and the cards shown."""
    return HighCardTable(held=[len(hand) for hand in state.hands], shown=list(state.shown))


def redact(event: Event, seat: int | None) -> Event:
    """Returns `event` as `seat` (None: a spectator) sees it: only its own cards of the deal."""
    if isinstance(event, HighCardDealt):
        hands = [
            hand if index == seat else [HIDDEN] * len(hand)
            for index, hand in enumerate(event.hands)
        ]
        return msgspec.structs.replace(event, hands=hands)
    return event


def action_of(event: Event) -> tuple[int, ShowCard] | None:
    """Returns the seat and the action whose decision begins with `event`."""
    if isinstance(event, CardShown):
        return event.seat, ShowCard(card=event.card)
    return None


HIGH_CARD: GameSpec[HighCardState, HighCardRules, HighCardView, ShowCard] = GameSpec(
    name="high-card",
    title="High card",
    min_players=2,
    max_players=4,
    has_decisions=True,
    ruleset_type=HighCardRules,
    presets={"classic": HighCardRules(), "one-card": HighCardRules(cards=1)},
    action_type=ShowCard,
    event_type=HighCardEvent,
    deal=deal,
    evolve=evolve,
    decide=decide,
    view=view,
    legal_actions=legal_actions,
    to_move=to_move,
    is_over=lambda state: state.result is not None,
    result=lambda state: state.result,
    validate=validate,
    redact=redact,
    table=table,
    bots={"random": RandomBot(), "first": FirstLegalBot()},
    action_of=action_of,
)
"""High card, with the generic bots: not hosted unless a test hosts it."""
