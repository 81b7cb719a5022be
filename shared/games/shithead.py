"""Shithead (Palace; Hungarian "holland kocsma"), as ../shared/rules/shithead.md describes it.

The ruleset (`shithead_rules`) states every optional rule. The game has three phases:
swap (each seat exchanges hand and face-up cards, then is ready), play, finished.
`decide` builds a decision's events one at a time, folding each into a working state
so that follow-ups (drawing, burning, going out, the next turn) read the state they act on.

Choices the rules page leaves open, each covered by a test:
- Seats are 0-based; the dealer is the last seat, so ties for the lowest card go to the
  lowest seat. The lowest card is the lowest plain rank (not reset, burn or joker) in
  any hand or face-up cards; it is played from the hand when the hand holds that rank,
  else from the face-up cards (the one time face-up cards go before the hand).
- The cards a play lists must be held in the zone it plays from; suits never matter, so
  `legal_actions` lists one play per rank and count (the first cards of that rank).
- Jokers are wild (like a reset) and count as their own rank for multiples and runs.
- A turned card (face-down or the deck's top) that can be played is played with its
  specials; one that cannot goes on the pile, which the player then picks up.
- The transparent rank is played by the normal rule; the lower rank, when it does not go
  on anything, too. A burn-rank card on a lower card is allowed.
- The move cap counts decisions (swaps and ready included); a capped game and a game that
  stops at the first player out rank the others by cards left, fewest first, ties sharing.
- "All public events" are part of what a seat may know, so the view carries, per seat,
  the hand cards everyone saw go in (a picked-up pile, a face-up card swapped into the
  hand) until they are played again: what a player with a perfect memory would know.
- Not supported: out-of-turn play of a matching card (a Swedish variant): a turn-based
  API cannot be fair to it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Literal

import msgspec

from shared.errors import IllegalAction
from shared.games.base import Decision, GameSpec
from shared.games.cards import (
    HIDDEN,
    JOKER,
    Card,
    rank_of,
    replace_at,
    shuffled,
    standard_deck,
    without,
)
from shared.games.shithead_rules import (
    FACES,
    ORDER,
    PRESETS,
    ShitheadRuleset,
    validate,
)
from shared.messages.common import (
    Action,
    ClockEvent,
    Event,
    GameCreated,
    GameFinished,
    Result,
)

Phase = Literal["swap", "play", "finished"]
Zone = Literal["hand", "face_up", "face_down"]


# Commands ------------------------------------------------------------------------------


class Swap(Action, frozen=True, kw_only=True):
    """Swap phase: exchange a hand card with a face-up card."""

    hand_card: Card
    face_up_card: Card


class Ready(Action, frozen=True, kw_only=True):
    """Swap phase: done swapping."""


class PlayCards(Action, frozen=True, kw_only=True):
    """Play one or more cards of one rank from the hand (or, when it is empty, face up)."""

    cards: list[Card]


class PlayFaceDown(Action, frozen=True, kw_only=True):
    """Turn over the face-down card at `index` and play it if it can be played."""

    index: int


class PickUp(Action, frozen=True, kw_only=True):
    """Pick up the whole pile into the hand."""


class PlayFromDeck(Action, frozen=True, kw_only=True):
    """Turn the deck's top card and play it if it can be played (a gamble or a blind play)."""


ShitheadAction = Swap | Ready | PlayCards | PlayFaceDown | PickUp | PlayFromDeck


# Events --------------------------------------------------------------------------------


class GameStarted(Event, frozen=True, kw_only=True):
    """The deal: every seat's face-down, face-up and hand cards, and the deck (top first)."""

    ruleset: ShitheadRuleset
    players: int
    face_down: list[list[Card]]
    face_up: list[list[Card]]
    hands: list[list[Card]]
    deck: list[Card]


class CardsSwapped(Event, frozen=True, kw_only=True):
    """A seat moved `hand_card` face up and took `face_up_card` into the hand."""

    seat: int
    hand_card: Card
    face_up_card: Card


class PlayerReady(Event, frozen=True, kw_only=True):
    """A seat finished swapping."""

    seat: int


class PlayStarted(Event, frozen=True, kw_only=True):
    """The play phase began; `seat` leads by `rule`, and must play `rank` from `zone` if set."""

    seat: int
    rule: str
    rank: str | None = None
    zone: Zone | None = None


class CardsPlayed(Event, frozen=True, kw_only=True):
    """A seat played cards of one rank from its hand or its face-up cards."""

    seat: int
    cards: list[Card]
    source: Zone


class FaceDownRevealed(Event, frozen=True, kw_only=True):
    """A seat turned over its face-down card at `index` onto the pile."""

    seat: int
    index: int
    card: Card
    playable: bool


class DeckCardTurned(Event, frozen=True, kw_only=True):
    """A seat turned the deck's top card onto the pile (a gamble or a blind play)."""

    seat: int
    card: Card
    playable: bool
    blind: bool = False


class CardsDrawn(Event, frozen=True, kw_only=True):
    """A seat drew cards from the deck; others see only how many."""

    seat: int
    cards: list[Card]


class DirectionReversed(Event, frozen=True, kw_only=True):
    """A joker reversed the direction of play."""

    direction: int


class PileBurned(Event, frozen=True, kw_only=True):
    """The pile left the game, by the burn rank or by a run of one rank."""

    seat: int
    reason: Literal["burn_rank", "run"]
    count: int


class PilePickedUp(Event, frozen=True, kw_only=True):
    """A seat took the whole pile into the hand."""

    seat: int
    cards: list[Card]
    reason: Literal["no_play", "chosen", "failed_reveal", "failed_gamble"]


class PlayerOut(Event, frozen=True, kw_only=True):
    """A seat has no cards left; `place` is its finishing place."""

    seat: int
    place: int


class TurnPassed(Event, frozen=True, kw_only=True):
    """It is now `seat`'s turn."""

    seat: int


ShitheadEvent = (
    GameCreated
    | GameStarted
    | CardsSwapped
    | PlayerReady
    | PlayStarted
    | CardsPlayed
    | FaceDownRevealed
    | DeckCardTurned
    | CardsDrawn
    | DirectionReversed
    | PileBurned
    | PilePickedUp
    | PlayerOut
    | TurnPassed
    | GameFinished
)

_DECISIONS = (CardsSwapped, PlayerReady, CardsPlayed, FaceDownRevealed, DeckCardTurned)


# State and view ------------------------------------------------------------------------


class ShitheadState(msgspec.Struct, frozen=True):
    """The whole table."""

    ruleset: ShitheadRuleset
    hands: tuple[tuple[Card, ...], ...]
    face_up: tuple[tuple[Card, ...], ...]
    face_down: tuple[tuple[Card, ...], ...]
    deck: tuple[Card, ...]
    pile: tuple[Card, ...] = ()
    burnt: tuple[Card, ...] = ()
    phase: Phase = "swap"
    ready: tuple[bool, ...] = ()
    turn: int = 0
    direction: int = 1
    opening: tuple[str, Zone] | None = None
    moves: int = 0
    out: tuple[int, ...] = ()
    result: Result | None = None
    known: tuple[tuple[Card, ...], ...] = ()
    """Per seat, the cards of its hand that every player saw go in (a picked-up pile, a
    face-up card swapped into the hand) and that have not been played since; empty for
    a state built by hand, which then tracks nothing."""

    @property
    def players(self) -> int:
        """Returns the number of seats."""
        return len(self.hands)


class ShitheadView(msgspec.Struct, frozen=True):
    """What one seat may know: its hand, every face-up card, counts of the rest, the pile.

    The pile and the burnt cards were all played face up, so they are public knowledge.
    """

    seat: int
    ruleset: ShitheadRuleset
    phase: Phase
    turn: int
    direction: int
    hand: list[Card]
    face_up: list[list[Card]]
    hand_sizes: list[int]
    face_down_sizes: list[int]
    deck_size: int
    pile: list[Card]
    burnt: list[Card]
    ready: list[bool]
    out: list[int]
    known: list[list[Card]]
    """Per seat, the hand cards all players saw go in and not come out (public events)."""
    zone: Zone | None
    opening: str | None
    moves: int
    result: Result | None


# Rules ---------------------------------------------------------------------------------


def _with_known(
    state: ShitheadState, seat: int, added: Sequence[Card] = (), removed: Sequence[Card] = ()
) -> tuple[tuple[Card, ...], ...]:
    """Returns `state.known` after `added` went publicly into `seat`'s hand and `removed` left it.

    A removed card that was not publicly known leaves the known cards as they are.
    """
    known = state.known or ((),) * state.players
    left = list(known[seat])
    for card in removed:
        if card in left:
            left.remove(card)
    return replace_at(known, seat, (*left, *added))


def effective_top(rules: ShitheadRuleset, pile: Sequence[Card]) -> str | None:
    """Returns the rank the next card is compared with (below transparent cards), or None."""
    for card in reversed(pile):
        if rank_of(card) != rules.transparent:
            return rank_of(card)
    return None


def refusal(rules: ShitheadRuleset, pile: Sequence[Card], rank: str) -> str | None:
    """Returns the rule that forbids playing `rank` on `pile`, or None when it may be played."""
    if rank in (rules.reset, JOKER):
        return None
    top = effective_top(rules, pile)
    if rank == rules.burn:
        return "burn_not_on_faces" if rules.ten_not_on_faces and top in FACES else None
    if top is None or top in (rules.reset, JOKER):
        return None
    if rank == rules.lower and rules.lower_on_anything:
        return None
    if top == rules.lower:
        return None if ORDER[rank] <= ORDER[top] else "must_be_equal_or_lower"
    return None if ORDER[rank] >= ORDER[top] else "must_be_equal_or_higher"


def _count_allowed(rules: ShitheadRuleset, count: int) -> bool:
    """Returns whether a play of `count` cards of one rank is allowed by `multiples`."""
    if rules.multiples == "single":
        return count == 1
    if rules.multiples == "three_or_more":
        return count == 1 or count >= 3
    return count >= 1


def zone_of(state: ShitheadState, seat: int) -> Zone | None:
    """Returns the zone `seat` plays from: hand, face-up (once the deck is empty), face-down."""
    if state.hands[seat]:
        return "hand"
    if state.deck:
        return None
    if state.face_up[seat]:
        return "face_up"
    if state.face_down[seat]:
        return "face_down"
    return None


_ZONE_FIELDS: dict[Zone, str] = {"hand": "hands", "face_up": "face_up", "face_down": "face_down"}


def _cards_in(state: ShitheadState, seat: int, zone: Zone) -> tuple[Card, ...]:
    """Returns the cards of `seat` in `zone`."""
    cards: tuple[Card, ...] = getattr(state, _ZONE_FIELDS[zone])[seat]
    return cards


def cards_left(state: ShitheadState, seat: int) -> int:
    """Returns how many cards `seat` holds in all its zones."""
    return len(state.hands[seat]) + len(state.face_up[seat]) + len(state.face_down[seat])


def _plays(state: ShitheadState, seat: int) -> list[Action]:
    """Returns the legal card plays of `seat`: one per playable rank and allowed count."""
    only: str | None = None
    if state.opening is not None:
        only, zone = state.opening
    else:
        found = zone_of(state, seat)
        if found not in ("hand", "face_up"):
            return []
        zone = found
    groups: dict[str, list[Card]] = {}
    for card in sorted(_cards_in(state, seat, zone)):
        groups.setdefault(card[0], []).append(card)
    rules, pile = state.ruleset, state.pile
    plays: list[Action] = []
    for rank in sorted(groups, key=_rank_key):
        if (only is not None and rank != only) or refusal(rules, pile, rank) is not None:
            continue
        cards = groups[rank]
        plays.extend(
            PlayCards(cards=cards[:count])
            for count in range(1, len(cards) + 1)
            if _count_allowed(rules, count)
        )
    return plays


def _rank_key(rank: str) -> int:
    """Orders ranks low to high, jokers last."""
    return ORDER.get(rank, len(ORDER))


def legal_actions(state: ShitheadState, seat: int) -> list[Action]:
    """Returns the legal actions of `seat`, in a stable order (nothing when it may not act)."""
    rules = state.ruleset
    if state.phase == "swap":
        if state.ready[seat]:
            return []
        pairs = {
            (min(c for c in state.hands[seat] if rank_of(c) == h), u)
            for h in {rank_of(c) for c in state.hands[seat]}
            for u in state.face_up[seat]
            if rank_of(u) != h
        }
        swaps = [Swap(hand_card=h, face_up_card=u) for h, u in sorted(pairs)]
        return [Ready(), *swaps]
    if state.phase != "play" or seat != state.turn:
        return []
    plays = _plays(state, seat)
    actions = list(plays)
    if state.opening is None and zone_of(state, seat) == "face_down":
        actions.extend(PlayFaceDown(index=i) for i in range(len(state.face_down[seat])))
    if (
        state.opening is None
        and state.deck
        and (rules.blind_deck_play or (rules.gamble_from_deck and not plays))
    ):
        actions.append(PlayFromDeck())
    if state.opening is None and state.pile and (not actions or rules.voluntary_pickup):
        actions.append(PickUp())
    return actions


def default_action(state: ShitheadState, seat: int) -> Action:
    """Returns what the platform plays for `seat` when it runs out of time (one of its legal
    actions): Ready while swapping; the opening card when it must open; a face-down card turn
    when it plays blind; else a pickup where one is allowed; else its first legal action (a
    play on an empty pile, or a deck card turn when that is all it may do).
    """
    legal = legal_actions(state, seat)
    if not legal:
        raise IllegalAction("not_your_turn", f"seat {seat} has nothing to do")
    for wanted in (Ready, PlayFaceDown, PickUp):
        for action in legal:
            if isinstance(action, wanted):
                return action
    return legal[0]


# Evolve --------------------------------------------------------------------------------


def _start(event: GameStarted) -> ShitheadState:
    """Returns the state right after the deal."""
    return ShitheadState(
        ruleset=event.ruleset,
        hands=tuple(tuple(h) for h in event.hands),
        face_up=tuple(tuple(u) for u in event.face_up),
        face_down=tuple(tuple(d) for d in event.face_down),
        deck=tuple(event.deck),
        ready=(False,) * event.players,
        known=((),) * event.players,
    )


def _to_pile(state: ShitheadState, seat: int, zone: Zone, cards: Sequence[Card]) -> ShitheadState:
    """Moves `cards` from `seat`'s `zone` onto the pile."""
    held = without(_cards_in(state, seat, zone), cards)
    field = _ZONE_FIELDS[zone]
    changes = {field: replace_at(getattr(state, field), seat, held)}
    return msgspec.structs.replace(state, pile=state.pile + tuple(cards), **changes)


def _swapped(state: ShitheadState, e: CardsSwapped) -> ShitheadState:
    hand = (*without(state.hands[e.seat], [e.hand_card]), e.face_up_card)
    face_up = (*without(state.face_up[e.seat], [e.face_up_card]), e.hand_card)
    return msgspec.structs.replace(
        state,
        hands=replace_at(state.hands, e.seat, hand),
        face_up=replace_at(state.face_up, e.seat, face_up),
        known=_with_known(state, e.seat, [e.face_up_card], [e.hand_card]),
    )


def _ready(state: ShitheadState, e: PlayerReady) -> ShitheadState:
    ready = tuple(r or seat == e.seat for seat, r in enumerate(state.ready))
    return msgspec.structs.replace(state, ready=ready)


def _play_started(state: ShitheadState, e: PlayStarted) -> ShitheadState:
    opening = (e.rank, e.zone) if e.rank is not None and e.zone is not None else None
    return msgspec.structs.replace(state, phase="play", turn=e.seat, opening=opening)


def _played(state: ShitheadState, e: CardsPlayed) -> ShitheadState:
    after = _to_pile(state, e.seat, e.source, e.cards)
    if e.source != "hand":
        return msgspec.structs.replace(after, opening=None)
    known = _with_known(state, e.seat, removed=e.cards)
    return msgspec.structs.replace(after, opening=None, known=known)


def _revealed(state: ShitheadState, e: FaceDownRevealed) -> ShitheadState:
    face_down = list(state.face_down[e.seat])
    del face_down[e.index]
    return msgspec.structs.replace(
        state,
        face_down=replace_at(state.face_down, e.seat, tuple(face_down)),
        pile=(*state.pile, e.card),
    )


def _deck_turned(state: ShitheadState, e: DeckCardTurned) -> ShitheadState:
    return msgspec.structs.replace(state, deck=state.deck[1:], pile=(*state.pile, e.card))


def _drawn(state: ShitheadState, e: CardsDrawn) -> ShitheadState:
    hand = state.hands[e.seat] + tuple(e.cards)
    return msgspec.structs.replace(
        state, hands=replace_at(state.hands, e.seat, hand), deck=state.deck[len(e.cards) :]
    )


def _picked_up(state: ShitheadState, e: PilePickedUp) -> ShitheadState:
    moves = state.moves + (e.reason in ("no_play", "chosen"))
    hand = state.hands[e.seat] + state.pile
    return msgspec.structs.replace(
        state,
        hands=replace_at(state.hands, e.seat, hand),
        pile=(),
        moves=moves,
        known=_with_known(state, e.seat, state.pile),
    )


def evolve(state: ShitheadState | None, event: Event) -> ShitheadState:
    """Returns the state after `event`; clock events leave it as it is (`shared.model.clocks`)."""
    if isinstance(event, GameStarted):
        return _start(event)
    assert state is not None
    if isinstance(event, _DECISIONS):
        state = msgspec.structs.replace(state, moves=state.moves + 1)
    match event:
        case CardsSwapped():
            return _swapped(state, event)
        case PlayerReady():
            return _ready(state, event)
        case PlayStarted():
            return _play_started(state, event)
        case CardsPlayed():
            return _played(state, event)
        case FaceDownRevealed():
            return _revealed(state, event)
        case DeckCardTurned():
            return _deck_turned(state, event)
        case CardsDrawn():
            return _drawn(state, event)
        case DirectionReversed(direction=direction):
            return msgspec.structs.replace(state, direction=direction)
        case PileBurned():
            return msgspec.structs.replace(state, burnt=state.burnt + state.pile, pile=())
        case PilePickedUp():
            return _picked_up(state, event)
        case PlayerOut(seat=seat):
            return msgspec.structs.replace(state, out=(*state.out, seat))
        case TurnPassed(seat=seat):
            return msgspec.structs.replace(state, turn=seat)
        case GameFinished(result=result):
            return msgspec.structs.replace(state, phase="finished", result=result)
        case ClockEvent():
            return state
    raise TypeError(f"not a Shithead event: {type(event).__name__}")


# Decide --------------------------------------------------------------------------------


def decide(state: ShitheadState, seat: int, action: Action) -> list[Event]:
    """Returns the events of `seat` taking `action`; raises IllegalAction naming the rule."""
    if state.phase == "finished":
        raise IllegalAction("game_over", "the game is over")
    if not 0 <= seat < state.players:
        raise IllegalAction("no_such_seat", f"seats are 0 to {state.players - 1}")
    decision = Decision(state, evolve)
    if state.phase == "swap":
        _decide_swap(decision, seat, action)
    else:
        _decide_play(decision, seat, action)
    if decision.state.result is None and decision.state.moves >= state.ruleset.max_moves:
        decision.emit(GameFinished(result=_ranked_by_cards_left(decision.state, "capped")))
    return decision.events


def _decide_swap(d: Decision[ShitheadState], seat: int, action: Action) -> None:
    """Applies a swap-phase action."""
    state = d.state
    if not isinstance(action, Swap | Ready):
        raise IllegalAction("swap_phase", "before play every seat swaps, then declares Ready")
    if state.ready[seat]:
        raise IllegalAction("already_ready", f"seat {seat} is ready and may no longer swap")
    if isinstance(action, Swap):
        if action.hand_card not in state.hands[seat]:
            raise IllegalAction("card_not_held", f"{action.hand_card} is not in the hand")
        if action.face_up_card not in state.face_up[seat]:
            raise IllegalAction("card_not_held", f"{action.face_up_card} is not face up")
        d.emit(
            CardsSwapped(seat=seat, hand_card=action.hand_card, face_up_card=action.face_up_card)
        )
        return
    d.emit(PlayerReady(seat=seat))
    if all(d.state.ready):
        d.emit(_opening(d.state))


def _opening(state: ShitheadState) -> PlayStarted:
    """Returns who leads: the holder of the lowest plain card, or seat 0."""
    rules = state.ruleset
    if rules.start == "first_seat":
        return PlayStarted(seat=0, rule="first_seat")
    special = {rules.reset, rules.burn, JOKER}
    best: tuple[int, int] | None = None
    for seat in range(state.players):
        for card in state.hands[seat] + state.face_up[seat]:
            if rank_of(card) not in special:
                best = min(best or (99, seat), (ORDER[rank_of(card)], seat))
    if best is None:
        return PlayStarted(seat=0, rule="no_plain_card")
    rank, seat = next(r for r, i in ORDER.items() if i == best[0]), best[1]
    zone: Zone = "hand" if any(rank_of(c) == rank for c in state.hands[seat]) else "face_up"
    return PlayStarted(seat=seat, rule="lowest_card", rank=rank, zone=zone)


def _decide_play(d: Decision[ShitheadState], seat: int, action: Action) -> None:
    """Applies a play-phase action of the seat whose turn it is."""
    if seat != d.state.turn:
        raise IllegalAction("not_your_turn", f"it is seat {d.state.turn}'s turn")
    if isinstance(action, PlayCards):
        _play_cards(d, seat, action.cards)
    elif isinstance(action, PlayFaceDown):
        _play_face_down(d, seat, action.index)
    elif isinstance(action, PlayFromDeck):
        _play_from_deck(d, seat)
    elif isinstance(action, PickUp):
        _pick_up(d, seat)
    else:
        raise IllegalAction("play_phase", "swapping ended when every seat was ready")


def _play_zone(state: ShitheadState, seat: int, cards: Sequence[Card]) -> Zone:
    """Returns the zone a PlayCards of `cards` comes from, or raises why it may not."""
    if state.opening is not None:
        rank, zone = state.opening
        if any(rank_of(card) != rank for card in cards):
            raise IllegalAction("opening_card", f"the first play must be the lowest rank, {rank}")
        return zone
    current = zone_of(state, seat)
    if current == "face_down":
        raise IllegalAction("face_down_blind", "face-down cards are turned one at a time")
    wanted = Counter(cards)
    if (
        current != "face_up"
        and not wanted <= Counter(state.hands[seat])
        and wanted <= Counter(state.face_up[seat])
    ):
        raise IllegalAction(
            "face_up_too_early", "face-up cards wait until the hand and the deck are empty"
        )
    return current or "hand"


def _play_cards(d: Decision[ShitheadState], seat: int, cards: list[Card]) -> None:
    """Plays cards of one rank from the hand or the face-up cards."""
    state, rules = d.state, d.state.ruleset
    if not cards:
        raise IllegalAction("no_cards", "a play needs at least one card")
    zone = _play_zone(state, seat, cards)
    if not Counter(cards) <= Counter(_cards_in(state, seat, zone)):
        raise IllegalAction("card_not_held", f"{' '.join(cards)} are not all in the {zone}")
    if len({rank_of(card) for card in cards}) > 1:
        raise IllegalAction("one_rank", "the cards of a play must all have one rank")
    if not _count_allowed(rules, len(cards)):
        raise IllegalAction("multiples", f"multiples are {rules.multiples}: not {len(cards)}")
    broken = refusal(rules, state.pile, rank_of(cards[0]))
    if broken is not None:
        raise IllegalAction(broken, f"{cards[0]} may not go on {effective_top(rules, state.pile)}")
    d.emit(CardsPlayed(seat=seat, cards=list(cards), source=zone))
    _resolve(d, seat, cards, refill=zone == "hand")


def _play_face_down(d: Decision[ShitheadState], seat: int, index: int) -> None:
    """Turns over a face-down card: played if it may be, else picked up with the pile."""
    state = d.state
    if state.opening is not None:
        raise IllegalAction("opening_card", "the first play must be the lowest card")
    if zone_of(state, seat) != "face_down":
        raise IllegalAction("face_down_too_early", "face-down cards wait for the rest to go")
    if not 0 <= index < len(state.face_down[seat]):
        raise IllegalAction(
            "no_such_card", f"face-down index must be 0 to {len(state.face_down[seat]) - 1}"
        )
    card = state.face_down[seat][index]
    playable = refusal(state.ruleset, state.pile, rank_of(card)) is None
    d.emit(FaceDownRevealed(seat=seat, index=index, card=card, playable=playable))
    if playable:
        _resolve(d, seat, [card], refill=False)
    else:
        d.emit(PilePickedUp(seat=seat, cards=list(d.state.pile), reason="failed_reveal"))
        d.emit(TurnPassed(seat=_next_seat(d.state, seat)))


def _play_from_deck(d: Decision[ShitheadState], seat: int) -> None:
    """Turns the deck's top card: played if it may be, else picked up with the pile."""
    state, rules = d.state, d.state.ruleset
    if state.opening is not None:
        raise IllegalAction("opening_card", "the first play must be the lowest card")
    if not state.deck:
        raise IllegalAction("deck_empty", "the deck is empty")
    can_play = bool(_plays(state, seat))
    if not (rules.blind_deck_play or (rules.gamble_from_deck and not can_play)):
        raise IllegalAction("deck_play_not_allowed", "this ruleset does not allow that deck play")
    card = state.deck[0]
    playable = refusal(rules, state.pile, rank_of(card)) is None
    d.emit(DeckCardTurned(seat=seat, card=card, playable=playable, blind=can_play))
    if playable:
        _resolve(d, seat, [card], refill=False)
    else:
        d.emit(PilePickedUp(seat=seat, cards=list(d.state.pile), reason="failed_gamble"))
        d.emit(TurnPassed(seat=_next_seat(d.state, seat)))


def _pick_up(d: Decision[ShitheadState], seat: int) -> None:
    """Picks up the pile: when no play is possible, or by choice where the rules allow."""
    state = d.state
    if state.opening is not None:
        raise IllegalAction("opening_card", "the first play must be the lowest card")
    if not state.pile:
        raise IllegalAction("empty_pile", "there is no pile to pick up")
    able = bool(_plays(state, seat)) or zone_of(state, seat) == "face_down"
    if able and not state.ruleset.voluntary_pickup:
        raise IllegalAction("must_play", "a player able to play may not pick up the pile")
    d.emit(PilePickedUp(seat=seat, cards=list(state.pile), reason="chosen" if able else "no_play"))
    d.emit(TurnPassed(seat=_next_seat(d.state, seat)))


def _resolve(
    d: Decision[ShitheadState], seat: int, played: Sequence[Card], *, refill: bool
) -> None:
    """Applies what follows a play: reversals, drawing, burning, going out, the next turn."""
    rules = d.state.ruleset
    if rules.joker_reverses:
        for card in played:
            if rank_of(card) == JOKER:
                d.emit(DirectionReversed(direction=-d.state.direction))
    need = rules.hand - len(d.state.hands[seat])
    if refill and need > 0 and d.state.deck:
        d.emit(CardsDrawn(seat=seat, cards=list(d.state.deck[:need])))
    burned = _burn(d, seat, played)
    if cards_left(d.state, seat) == 0:
        d.emit(PlayerOut(seat=seat, place=len(d.state.out) + 1))
        if _game_over(d):
            return
    elif burned:
        return
    d.emit(TurnPassed(seat=_next_seat(d.state, seat)))


def _burn(d: Decision[ShitheadState], seat: int, played: Sequence[Card]) -> bool:
    """Burns the pile if the play calls for it; returns whether it did."""
    rules, pile = d.state.ruleset, d.state.pile
    if rules.burn is not None and rank_of(played[-1]) == rules.burn:
        d.emit(PileBurned(seat=seat, reason="burn_rank", count=len(pile)))
        return True
    run = rules.burn_run
    if run is not None and len(pile) >= run and len({rank_of(c) for c in pile[-run:]}) == 1:
        d.emit(PileBurned(seat=seat, reason="run", count=len(pile)))
        return True
    return False


def _game_over(d: Decision[ShitheadState]) -> bool:
    """Finishes the game if the end rule says so; returns whether it did."""
    state = d.state
    left = [seat for seat in range(state.players) if seat not in state.out]
    if state.ruleset.end == "stop_at_first_out":
        d.emit(GameFinished(result=_ranked_by_cards_left(state, "finished")))
        return True
    if len(left) > 1:
        return False
    places = [0] * state.players
    for place, seat in enumerate(state.out, start=1):
        places[seat] = place
    places[left[0]] = state.players
    reason = f"seat {left[0]} is the shithead"
    d.emit(GameFinished(result=Result("finished", places, reason, scores=_scores(state))))
    return True


def _next_seat(state: ShitheadState, seat: int) -> int:
    """Returns the next seat in the direction of play that is still in the game."""
    nxt = (seat + state.direction) % state.players
    while nxt in state.out and nxt != seat:
        nxt = (nxt + state.direction) % state.players
    return nxt


def _scores(state: ShitheadState) -> list[int]:
    """Returns every seat's cards left."""
    return [cards_left(state, seat) for seat in range(state.players)]


def _ranked_by_cards_left(state: ShitheadState, status: str) -> Result:
    """Returns a result ranking those out by order, then the rest by cards left (ties share)."""
    places = [0] * state.players
    for place, seat in enumerate(state.out, start=1):
        places[seat] = place
    scores = _scores(state)
    left = [seat for seat in range(state.players) if seat not in state.out]
    for seat in left:
        places[seat] = len(state.out) + 1 + sum(scores[o] < scores[seat] for o in left)
    reason = "the move cap was reached" if status == "capped" else "the first player is out"
    return Result(status, places, reason, scores=scores, detail={"moves": state.moves})


# Deal, view, registry ------------------------------------------------------------------


def deal(ruleset: ShitheadRuleset, players: int, seed: int | str) -> GameStarted:
    """Returns the start event of a shuffled deal: face down, then face up, then hands."""
    validate(ruleset, players)
    deck = shuffled(standard_deck(ruleset.decks, ruleset.jokers * ruleset.decks), seed)
    zones: list[list[list[Card]]] = []
    offset = 0
    for size in (ruleset.face_down, ruleset.face_up, ruleset.hand):
        block = deck[offset : offset + size * players]
        zones.append([block[seat::players] for seat in range(players)])
        offset += size * players
    face_down, face_up, hands = zones
    return GameStarted(
        ruleset=ruleset,
        players=players,
        face_down=face_down,
        face_up=face_up,
        hands=hands,
        deck=deck[offset:],
    )


def view(state: ShitheadState, seat: int) -> ShitheadView:
    """Returns exactly what `seat` may know (the rules page's hidden-information section)."""
    return ShitheadView(
        seat=seat,
        ruleset=state.ruleset,
        phase=state.phase,
        turn=state.turn,
        direction=state.direction,
        hand=list(state.hands[seat]),
        face_up=[list(cards) for cards in state.face_up],
        hand_sizes=[len(cards) for cards in state.hands],
        face_down_sizes=[len(cards) for cards in state.face_down],
        deck_size=len(state.deck),
        pile=list(state.pile),
        burnt=list(state.burnt),
        ready=list(state.ready),
        out=list(state.out),
        known=[list(cards) for cards in state.known or ((),) * state.players],
        zone=zone_of(state, seat),
        opening=state.opening[0] if state.opening else None,
        moves=state.moves,
        result=state.result,
    )


def redact(event: Event, seat: int | None) -> Event:
    """Returns `event` as `seat` (None: a spectator) may see it while the game runs."""
    if isinstance(event, GameStarted):
        return msgspec.structs.replace(
            event,
            face_down=[[HIDDEN] * len(cards) for cards in event.face_down],
            hands=[
                cards if s == seat else [HIDDEN] * len(cards) for s, cards in enumerate(event.hands)
            ],
            deck=[HIDDEN] * len(event.deck),
        )
    if isinstance(event, CardsDrawn) and event.seat != seat:
        return msgspec.structs.replace(event, cards=[HIDDEN] * len(event.cards))
    return event


def action_of(event: Event) -> tuple[int, Action] | None:
    """Returns the seat and the action whose decision begins with `event`, None for an event
    that follows within a decision."""
    match event:
        case CardsSwapped(seat=seat, hand_card=hand_card, face_up_card=face_up_card):
            return seat, Swap(hand_card=hand_card, face_up_card=face_up_card)
        case PlayerReady(seat=seat):
            return seat, Ready()
        case CardsPlayed(seat=seat, cards=cards):
            return seat, PlayCards(cards=list(cards))
        case FaceDownRevealed(seat=seat, index=index):
            return seat, PlayFaceDown(index=index)
        case DeckCardTurned(seat=seat):
            return seat, PlayFromDeck()
        case PilePickedUp(seat=seat, reason="chosen" | "no_play"):
            return seat, PickUp()
    return None


def to_move(state: ShitheadState) -> list[int]:
    """Returns the seats whose action the game waits for: every unready seat, or the turn."""
    if state.phase == "swap":
        return [seat for seat, ready in enumerate(state.ready) if not ready]
    if state.phase == "play":
        return [state.turn]
    return []


def is_over(state: ShitheadState) -> bool:
    """Returns whether the game has ended."""
    return state.result is not None


def result(state: ShitheadState) -> Result | None:
    """Returns the result of an ended game, None while it runs."""
    return state.result


SPEC: GameSpec[ShitheadState, ShitheadRuleset] = GameSpec(
    name="shithead",
    title="Shithead",
    min_players=2,
    max_players=10,
    has_decisions=True,
    ruleset_type=ShitheadRuleset,
    presets=PRESETS,
    action_type=ShitheadAction,
    event_type=ShitheadEvent,
    deal=deal,
    evolve=evolve,
    decide=decide,
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
