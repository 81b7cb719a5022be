"""Hospodský autobus, as ../shared/rules/hospodsky-autobus.md describes it.

A turn is several decisions by one seat: any number of plays onto the shared sequences,
then exactly one discard, under-the-bus or end-turn. `decide` builds a decision's events
one at a time, folding each into a working state, so that automatic steps (revealing the
main pile's next card, completing a sequence, drawing, reshuffling the completed stock,
refilling the next player's hand, the end of the game) are events of their own.

Choices the rules page leaves open, each covered by a test:
- Seats, slots and sequences are 0-based (the page numbers seats and slots from 1); seat 0
  moves first, its hand already full. Sequence indices are those of the current view:
  a completed sequence leaves and the later ones move up.
- The page's actions are the commands `PlayToSequence` (`play`; `sequence: null` opens a
  new one), `Discard`, `UnderTheBus` and `EndTurn`.
- The reshuffle of the completed stock is seeded by a secret of the deal (recorded in the
  start event, hidden while the game runs) and the number of the reshuffle; the new order
  is recorded in the event. It happens whenever a card must be drawn from an empty draw
  pile, also in the middle of a refill.
- A joker discarded onto an empty slot needs `joker_rank`; onto a slot of a rank it takes
  that rank (a `joker_rank` given must match). A joker always fits some slot, so it never
  goes under the bus.
- `legal_actions` lists one action per rank (suits never matter): the first card of that
  rank in the hand; a joker discarded to an empty slot is listed once per rank it may name.
- Draws (no sequence play in a full round with nothing to draw, or the turn cap) rank the
  players by the cards left in their main piles, fewest first, ties sharing; a win ranks
  the winner first and the others the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import msgspec

from shared.errors import IllegalAction, InvalidRuleset
from shared.games.base import Decision, GameSpec
from shared.games.cards import (
    HIDDEN,
    Card,
    is_joker,
    replace_at,
    shuffled,
    standard_deck,
    without,
)
from shared.messages.common import (
    Action,
    Clock,
    ClockEvent,
    Event,
    GameCreated,
    GameFinished,
    Result,
)

RANKS = "A23456789TJQK"
VALUE = {rank: index + 1 for index, rank in enumerate(RANKS)}
"""A = 1 ... K = 13."""
KING = 13

Source = Literal["hand", "main", "slot"]


class AutobusRuleset(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Hospodský autobus options."""

    main_pile: int = 10
    """Cards in each main pile (its top face up)."""
    hand: int = 4
    """Cards a hand is refilled to."""
    slots: int = 4
    """Reserve slots per player."""
    decks: int = 2
    """52-card decks shuffled together."""
    jokers: int = 4
    """Jokers in the whole pack."""
    max_turns: int = 1000
    """The turn cap: the game ends as a draw after this many turns."""
    clock: Clock | msgspec.UnsetType = msgspec.UNSET
    """The clock of games played under this ruleset; unset (and then not even encoded):
    untimed (a game with a webhook seat still gets the default webhook clock, see
    `shared.model.clocks.clock_for`). A game's own clock overrides it."""


# Commands ------------------------------------------------------------------------------


class PlayToSequence(Action, frozen=True, kw_only=True):
    """Play a card from the hand (`card`), the main pile's top or a slot's top onto a sequence.

    `sequence` is the index of an open sequence, or None to open a new one (ace or joker).
    """

    source: Source
    card: Card | None = None
    slot: int | None = None
    sequence: int | None = None
    joker_rank: str | None = None


class Discard(Action, frozen=True, kw_only=True):
    """End the turn: a hand card onto a slot of its rank or an empty slot."""

    card: Card
    slot: int
    joker_rank: str | None = None


class UnderTheBus(Action, frozen=True, kw_only=True):
    """End the turn: a hand card that fits no slot goes under the own main pile."""

    card: Card


class EndTurn(Action, frozen=True, kw_only=True):
    """End the turn with an empty hand when nothing can be drawn."""


AutobusAction = PlayToSequence | Discard | UnderTheBus | EndTurn


# Events --------------------------------------------------------------------------------


class GameStarted(Event, frozen=True, kw_only=True):
    """The deal: main piles (top first, the top face up), hands, the draw pile (top first)."""

    ruleset: AutobusRuleset
    players: int
    mains: list[list[Card]]
    hands: list[list[Card]]
    draw: list[Card]
    shuffle_seed: str


class CardPlayed(Event, frozen=True, kw_only=True):
    """A card went onto a sequence, standing for `rank` (a new sequence when `opened`)."""

    seat: int
    source: Source
    card: Card
    sequence: int
    rank: int
    slot: int | None = None
    opened: bool = False


class MainTopRevealed(Event, frozen=True, kw_only=True):
    """The next card of a main pile was turned face up."""

    seat: int
    card: Card


class SequenceCompleted(Event, frozen=True, kw_only=True):
    """A sequence reached the king and left for the completed stock."""

    sequence: int
    cards: list[Card]


class CardsDrawn(Event, frozen=True, kw_only=True):
    """A seat drew cards (a refill or an emptied hand); others see only how many."""

    seat: int
    cards: list[Card]
    reason: Literal["refill", "empty_hand"]


class StockReshuffled(Event, frozen=True, kw_only=True):
    """The completed stock became the draw pile, in this (hidden) order."""

    cards: list[Card]
    number: int


class CardDiscarded(Event, frozen=True, kw_only=True):
    """A seat ended its turn with a hand card onto a slot, which now has `rank`."""

    seat: int
    card: Card
    slot: int
    rank: int


class CardUnderTheBus(Event, frozen=True, kw_only=True):
    """A seat ended its turn with a hand card under its own main pile."""

    seat: int
    card: Card


class TurnEnded(Event, frozen=True, kw_only=True):
    """A seat ended its turn with an empty hand and nothing to draw."""

    seat: int


class TurnPassed(Event, frozen=True, kw_only=True):
    """It is now `seat`'s turn."""

    seat: int


AutobusEvent = (
    GameCreated
    | GameStarted
    | CardPlayed
    | MainTopRevealed
    | SequenceCompleted
    | CardsDrawn
    | StockReshuffled
    | CardDiscarded
    | CardUnderTheBus
    | TurnEnded
    | TurnPassed
    | GameFinished
)


# State and view ------------------------------------------------------------------------


class AutobusState(msgspec.Struct, frozen=True):
    """The whole table."""

    ruleset: AutobusRuleset
    mains: tuple[tuple[Card, ...], ...]
    hands: tuple[tuple[Card, ...], ...]
    slots: tuple[tuple[tuple[Card, ...], ...], ...]
    slot_ranks: tuple[tuple[int | None, ...], ...]
    draw: tuple[Card, ...]
    shuffle_seed: str
    sequences: tuple[tuple[Card, ...], ...] = ()
    completed: tuple[Card, ...] = ()
    reshuffles: int = 0
    turn: int = 0
    turns: int = 0
    played_this_turn: bool = False
    quiet_turns: int = 0
    result: Result | None = None

    @property
    def players(self) -> int:
        """Returns the number of seats."""
        return len(self.hands)


class AutobusView(msgspec.Struct, frozen=True):
    """What one seat may know: its hand, and everything public on the table."""

    seat: int
    ruleset: AutobusRuleset
    turn: int
    hand: list[Card]
    main_tops: list[Card]
    main_sizes: list[int]
    slots: list[list[list[Card]]]
    slot_ranks: list[list[int | None]]
    sequences: list[list[Card]]
    hand_sizes: list[int]
    draw_size: int
    completed_size: int
    turns: int
    played_this_turn: bool
    result: Result | None


# Rules ---------------------------------------------------------------------------------


def value(card: Card) -> int:
    """Returns the rank value of a plain card (A = 1 ... K = 13)."""
    return VALUE[card[0]]


def fits_sequence(card: Card, sequence: Sequence[Card]) -> bool:
    """Returns whether `card` may go onto `sequence` (a joker takes the rank it needs)."""
    return is_joker(card) or value(card) == len(sequence) + 1


def slot_fits(state: AutobusState, seat: int, slot: int, card: Card) -> bool:
    """Returns whether `card` may be discarded onto `seat`'s `slot`."""
    rank = state.slot_ranks[seat][slot]
    return rank is None or is_joker(card) or value(card) == rank


def fits_no_slot(state: AutobusState, seat: int, card: Card) -> bool:
    """Returns whether `card` fits none of `seat`'s slots (so it may go under the bus)."""
    return not any(slot_fits(state, seat, slot, card) for slot in range(state.ruleset.slots))


def _source_card(state: AutobusState, seat: int, action: PlayToSequence) -> Card:
    """Returns the card a play takes, or raises why it cannot take it."""
    if action.source == "hand":
        if action.card is None or action.card not in state.hands[seat]:
            raise IllegalAction("card_not_held", f"{action.card} is not in the hand")
        return action.card
    if action.card is not None:
        raise IllegalAction("card_not_allowed", "only a play from the hand names a card")
    if action.source == "main":
        return state.mains[seat][0]
    slot = action.slot
    if slot is None or not 0 <= slot < state.ruleset.slots:
        raise IllegalAction("no_such_slot", f"slots are 0 to {state.ruleset.slots - 1}")
    if not state.slots[seat][slot]:
        raise IllegalAction("empty_slot", f"slot {slot} is empty")
    return state.slots[seat][slot][-1]


def _plays(state: AutobusState, seat: int) -> list[Action]:
    """Returns the legal plays onto sequences, one per source rank and target."""
    sources: list[tuple[Source, Card | None, int | None, Card]] = []
    seen: set[str] = set()
    for held in sorted(state.hands[seat]):
        if held[0] not in seen:
            seen.add(held[0])
            sources.append(("hand", held, None, held))
    sources.append(("main", None, None, state.mains[seat][0]))
    for number, cards in enumerate(state.slots[seat]):
        if cards:
            sources.append(("slot", None, number, cards[-1]))
    plays: list[Action] = []
    for source, card, slot, shown in sources:
        for index, sequence in enumerate(state.sequences):
            if fits_sequence(shown, sequence):
                plays.append(PlayToSequence(source=source, card=card, slot=slot, sequence=index))
        if is_joker(shown) or value(shown) == 1:
            plays.append(PlayToSequence(source=source, card=card, slot=slot, sequence=None))
    return plays


def _turn_enders(state: AutobusState, seat: int) -> list[Action]:
    """Returns the legal ways to end the turn."""
    hand = state.hands[seat]
    if not hand:
        return [EndTurn()]
    enders: list[Action] = []
    ranks_done: set[str] = set()
    for card in sorted(hand):
        if card[0] in ranks_done:
            continue
        ranks_done.add(card[0])
        for slot in range(state.ruleset.slots):
            if not slot_fits(state, seat, slot, card):
                continue
            if is_joker(card) and state.slot_ranks[seat][slot] is None:
                enders.extend(Discard(card=card, slot=slot, joker_rank=r) for r in RANKS)
            else:
                enders.append(Discard(card=card, slot=slot))
        if fits_no_slot(state, seat, card):
            enders.append(UnderTheBus(card=card))
    return enders


def legal_actions(state: AutobusState, seat: int) -> list[Action]:
    """Returns the legal actions of `seat`, in a stable order (nothing when it may not act)."""
    if state.result is not None or seat != state.turn:
        return []
    return [*_plays(state, seat), *_turn_enders(state, seat)]


def default_action(state: AutobusState, seat: int) -> Action:
    """Returns what the platform plays for `seat` when it runs out of time: the first legal
    way to end the turn (a discard, else under the bus, else EndTurn with an empty hand)."""
    if state.result is not None or seat != state.turn:
        raise IllegalAction("not_your_turn", f"seat {seat} has nothing to do")
    return _turn_enders(state, seat)[0]


# Evolve --------------------------------------------------------------------------------


def _start(event: GameStarted) -> AutobusState:
    """Returns the state right after the deal."""
    slots = event.ruleset.slots
    return AutobusState(
        ruleset=event.ruleset,
        mains=tuple(tuple(m) for m in event.mains),
        hands=tuple(tuple(h) for h in event.hands),
        slots=tuple(((),) * slots for _ in range(event.players)),
        slot_ranks=tuple((None,) * slots for _ in range(event.players)),
        draw=tuple(event.draw),
        shuffle_seed=event.shuffle_seed,
    )


def _set_slot(
    state: AutobusState, seat: int, slot: int, cards: tuple[Card, ...], rank: int | None
) -> AutobusState:
    """Returns `state` with `seat`'s `slot` holding `cards` of `rank`."""
    seat_slots = list(state.slots[seat])
    seat_slots[slot] = cards
    seat_ranks = list(state.slot_ranks[seat])
    seat_ranks[slot] = rank if cards else None
    return msgspec.structs.replace(
        state,
        slots=(*state.slots[:seat], tuple(seat_slots), *state.slots[seat + 1 :]),
        slot_ranks=(*state.slot_ranks[:seat], tuple(seat_ranks), *state.slot_ranks[seat + 1 :]),
    )


def _played(state: AutobusState, e: CardPlayed) -> AutobusState:
    if e.source == "hand":
        state = msgspec.structs.replace(
            state, hands=replace_at(state.hands, e.seat, without(state.hands[e.seat], [e.card]))
        )
    elif e.source == "main":
        state = msgspec.structs.replace(
            state, mains=replace_at(state.mains, e.seat, state.mains[e.seat][1:])
        )
    else:
        assert e.slot is not None
        cards = state.slots[e.seat][e.slot][:-1]
        state = _set_slot(state, e.seat, e.slot, cards, state.slot_ranks[e.seat][e.slot])
    sequences = list(state.sequences)
    if e.opened:
        sequences.append((e.card,))
    else:
        sequences[e.sequence] += (e.card,)
    return msgspec.structs.replace(state, sequences=tuple(sequences), played_this_turn=True)


def _completed(state: AutobusState, e: SequenceCompleted) -> AutobusState:
    sequences = state.sequences[: e.sequence] + state.sequences[e.sequence + 1 :]
    return msgspec.structs.replace(
        state, sequences=sequences, completed=state.completed + tuple(e.cards)
    )


def _drawn(state: AutobusState, e: CardsDrawn) -> AutobusState:
    hand = state.hands[e.seat] + tuple(e.cards)
    return msgspec.structs.replace(
        state, hands=replace_at(state.hands, e.seat, hand), draw=state.draw[len(e.cards) :]
    )


def _reshuffled(state: AutobusState, e: StockReshuffled) -> AutobusState:
    return msgspec.structs.replace(
        state, draw=state.draw + tuple(e.cards), completed=(), reshuffles=e.number
    )


def _discarded(state: AutobusState, e: CardDiscarded) -> AutobusState:
    state = msgspec.structs.replace(
        state, hands=replace_at(state.hands, e.seat, without(state.hands[e.seat], [e.card]))
    )
    return _set_slot(state, e.seat, e.slot, (*state.slots[e.seat][e.slot], e.card), e.rank)


def _under_the_bus(state: AutobusState, e: CardUnderTheBus) -> AutobusState:
    hand = without(state.hands[e.seat], [e.card])
    main = (*state.mains[e.seat], e.card)
    return msgspec.structs.replace(
        state,
        hands=replace_at(state.hands, e.seat, hand),
        mains=replace_at(state.mains, e.seat, main),
    )


def _turn_passed(state: AutobusState, e: TurnPassed) -> AutobusState:
    quiet = not state.played_this_turn and not state.draw and not state.completed
    return msgspec.structs.replace(
        state,
        turn=e.seat,
        turns=state.turns + 1,
        played_this_turn=False,
        quiet_turns=state.quiet_turns + 1 if quiet else 0,
    )


def evolve(state: AutobusState | None, event: Event) -> AutobusState:
    """Returns the state after `event`; clock events leave it as it is (`shared.model.clocks`)."""
    if isinstance(event, GameStarted):
        return _start(event)
    assert state is not None
    match event:
        case CardPlayed():
            return _played(state, event)
        case SequenceCompleted():
            return _completed(state, event)
        case CardsDrawn():
            return _drawn(state, event)
        case StockReshuffled():
            return _reshuffled(state, event)
        case CardDiscarded():
            return _discarded(state, event)
        case CardUnderTheBus():
            return _under_the_bus(state, event)
        case TurnPassed():
            return _turn_passed(state, event)
        case GameFinished(result=result):
            return msgspec.structs.replace(state, result=result)
        case MainTopRevealed() | TurnEnded() | ClockEvent():
            return state
    raise TypeError(f"not an Autobus event: {type(event).__name__}")


# Decide --------------------------------------------------------------------------------


def decide(state: AutobusState, seat: int, action: Action) -> list[Event]:
    """Returns the events of `seat` taking `action`; raises IllegalAction naming the rule."""
    if state.result is not None:
        raise IllegalAction("game_over", "the game is over")
    if not 0 <= seat < state.players:
        raise IllegalAction("no_such_seat", f"seats are 0 to {state.players - 1}")
    if seat != state.turn:
        raise IllegalAction("not_your_turn", f"it is seat {state.turn}'s turn")
    d: Decision[AutobusState] = Decision(state, _evolve)
    if isinstance(action, PlayToSequence):
        _play(d, seat, action)
    elif isinstance(action, Discard):
        _discard(d, seat, action)
    elif isinstance(action, UnderTheBus):
        _under_the_bus_action(d, seat, action.card)
    elif isinstance(action, EndTurn):
        _end_turn_action(d, seat)
    else:
        raise IllegalAction("unknown_action", f"Hospodský autobus has no {type(action).__name__}")
    return d.events


def _evolve(state: AutobusState, event: Event) -> AutobusState:
    """Folds one event into a known state."""
    return evolve(state, event)


def _check_joker_rank(card: Card, joker_rank: str | None, rank: int | None) -> int | None:
    """Returns the rank a joker names, checking it against `rank` where that is fixed."""
    if joker_rank is None:
        return rank
    if not is_joker(card):
        raise IllegalAction("joker_rank", "only a joker takes a joker_rank")
    if joker_rank not in VALUE:
        raise IllegalAction("joker_rank", f"{joker_rank!r} is not a rank; one of {RANKS}")
    if rank is not None and VALUE[joker_rank] != rank:
        raise IllegalAction("joker_rank", f"here the joker stands for {RANKS[rank - 1]}")
    return VALUE[joker_rank]


def _play(d: Decision[AutobusState], seat: int, action: PlayToSequence) -> None:
    """Plays a card onto a sequence, with what follows: reveal, completion, drawing, a win."""
    state = d.state
    card = _source_card(state, seat, action)
    if action.sequence is None:
        if not (is_joker(card) or value(card) == 1):
            raise IllegalAction("opens_with_ace", "only an ace or a joker opens a sequence")
        index, rank, opened = len(state.sequences), 1, True
    else:
        if not 0 <= action.sequence < len(state.sequences):
            raise IllegalAction("no_such_sequence", f"there are {len(state.sequences)} sequences")
        index, opened = action.sequence, False
        rank = len(state.sequences[index]) + 1
        if not fits_sequence(card, state.sequences[index]):
            raise IllegalAction("sequence_needs", f"sequence {index} needs {RANKS[rank - 1]}")
    _check_joker_rank(card, action.joker_rank, rank)
    d.emit(
        CardPlayed(
            seat=seat,
            source=action.source,
            card=card,
            sequence=index,
            rank=rank,
            slot=action.slot,
            opened=opened,
        )
    )
    if action.source == "main":
        if not d.state.mains[seat]:
            d.emit(GameFinished(result=_ranked(d.state, "finished", "main_pile_emptied")))
            return
        d.emit(MainTopRevealed(seat=seat, card=d.state.mains[seat][0]))
    if rank == KING:
        d.emit(SequenceCompleted(sequence=index, cards=list(d.state.sequences[index])))
    if action.source == "hand" and not d.state.hands[seat]:
        _draw(d, seat, d.state.ruleset.hand, "empty_hand")


def _discard(d: Decision[AutobusState], seat: int, action: Discard) -> None:
    """Ends the turn with a hand card onto a matching or empty slot."""
    state = d.state
    if action.card not in state.hands[seat]:
        raise IllegalAction("card_not_held", f"{action.card} is not in the hand")
    if not 0 <= action.slot < state.ruleset.slots:
        raise IllegalAction("no_such_slot", f"slots are 0 to {state.ruleset.slots - 1}")
    held = state.slot_ranks[seat][action.slot]
    if not slot_fits(state, seat, action.slot, action.card):
        raise IllegalAction(
            "slot_rank", f"slot {action.slot} holds {RANKS[held - 1] if held else '-'}"
        )
    rank = _check_joker_rank(action.card, action.joker_rank, held)
    if rank is None and is_joker(action.card):
        raise IllegalAction("joker_rank", "a joker on an empty slot needs the rank it names")
    rank = rank if rank is not None else value(action.card)
    d.emit(CardDiscarded(seat=seat, card=action.card, slot=action.slot, rank=rank))
    _pass_turn(d, seat)


def _under_the_bus_action(d: Decision[AutobusState], seat: int, card: Card) -> None:
    """Ends the turn with a hand card that fits no slot under the own main pile."""
    if card not in d.state.hands[seat]:
        raise IllegalAction("card_not_held", f"{card} is not in the hand")
    if not fits_no_slot(d.state, seat, card):
        raise IllegalAction("fits_a_slot", "a card that fits a slot must be discarded there")
    d.emit(CardUnderTheBus(seat=seat, card=card))
    _pass_turn(d, seat)


def _end_turn_action(d: Decision[AutobusState], seat: int) -> None:
    """Ends the turn of a seat with an empty hand and nothing to draw."""
    if d.state.hands[seat]:
        raise IllegalAction("hand_not_empty", "a turn with cards in hand ends with a discard")
    d.emit(TurnEnded(seat=seat))
    _pass_turn(d, seat)


def _pass_turn(d: Decision[AutobusState], seat: int) -> None:
    """Passes the turn on, ends the game by the draw rules, or refills the next hand."""
    nxt = (seat + 1) % d.state.players
    d.emit(TurnPassed(seat=nxt))
    state = d.state
    if state.quiet_turns >= state.players:
        d.emit(GameFinished(result=_ranked(state, "draw", "no_sequence_play_in_a_round")))
    elif state.turns >= state.ruleset.max_turns:
        d.emit(GameFinished(result=_ranked(state, "draw", "turn_cap")))
    else:
        _draw(d, nxt, state.ruleset.hand - len(state.hands[nxt]), "refill")


def _draw(d: Decision[AutobusState], seat: int, count: int, reason: str) -> None:
    """Draws up to `count` cards, reshuffling the completed stock when the draw pile is out."""
    while count > 0:
        state = d.state
        if state.draw:
            cards = list(state.draw[:count])
            d.emit(CardsDrawn(seat=seat, cards=cards, reason=reason))  # type: ignore[arg-type]
            count -= len(cards)
        elif state.completed:
            number = state.reshuffles + 1
            order = shuffled(state.completed, f"{state.shuffle_seed}:{number}")
            d.emit(StockReshuffled(cards=order, number=number))
        else:
            return


def _ranked(state: AutobusState, status: str, reason: str) -> Result:
    """Returns a result ranking by cards left in the main pile (a winner has none), ties sharing."""
    left = [len(main) for main in state.mains]
    places = [1 + sum(o < mine for o in left) for mine in left]
    scores = [-n for n in left]
    return Result(status, places, reason, scores=scores, detail={"turns": state.turns})


# Deal, view, registry ------------------------------------------------------------------


def validate(ruleset: AutobusRuleset, players: int) -> None:
    """Raises InvalidRuleset (naming the field) unless `players` can play `ruleset`."""
    if not 2 <= players <= 4:
        raise InvalidRuleset("players", f"Hospodský autobus takes 2 to 4 players, not {players}")
    checks = {
        "main_pile": 1 <= ruleset.main_pile <= 30,
        "hand": 1 <= ruleset.hand <= 10,
        "slots": 1 <= ruleset.slots <= 8,
        "decks": 1 <= ruleset.decks <= 4,
        "jokers": 0 <= ruleset.jokers <= 8,
        "max_turns": ruleset.max_turns >= 1,
    }
    for field, ok in checks.items():
        if not ok:
            raise InvalidRuleset(field, f"{getattr(ruleset, field)} is out of range")
    total = ruleset.decks * 52 + ruleset.jokers
    if (ruleset.main_pile + ruleset.hand) * players > total:
        raise InvalidRuleset("decks", f"{players} players need more than {total} cards")


def deal(ruleset: AutobusRuleset, players: int, seed: int | str) -> GameStarted:
    """Returns the start event of a shuffled deal: main piles, then hands; the rest to draw."""
    validate(ruleset, players)
    deck = shuffled(standard_deck(ruleset.decks, ruleset.jokers), seed)
    mains_end = ruleset.main_pile * players
    hands_end = mains_end + ruleset.hand * players
    mains = [deck[:mains_end][seat::players] for seat in range(players)]
    hands = [deck[mains_end:hands_end][seat::players] for seat in range(players)]
    secret = shuffled([str(i) for i in range(16)], f"reshuffle:{seed}")
    return GameStarted(
        ruleset=ruleset,
        players=players,
        mains=mains,
        hands=hands,
        draw=deck[hands_end:],
        shuffle_seed="".join(secret),
    )


def view(state: AutobusState, seat: int) -> AutobusView:
    """Returns exactly what `seat` may know (the rules page's hidden-information section)."""
    return AutobusView(
        seat=seat,
        ruleset=state.ruleset,
        turn=state.turn,
        hand=list(state.hands[seat]),
        main_tops=[main[0] if main else "" for main in state.mains],
        main_sizes=[len(main) for main in state.mains],
        slots=[[list(cards) for cards in seat_slots] for seat_slots in state.slots],
        slot_ranks=[list(ranks) for ranks in state.slot_ranks],
        sequences=[list(cards) for cards in state.sequences],
        hand_sizes=[len(hand) for hand in state.hands],
        draw_size=len(state.draw),
        completed_size=len(state.completed),
        turns=state.turns,
        played_this_turn=state.played_this_turn,
        result=state.result,
    )


def redact(event: Event, seat: int | None) -> Event:
    """Returns `event` as `seat` (None: a spectator) may see it while the game runs."""
    if isinstance(event, GameStarted):
        return msgspec.structs.replace(
            event,
            mains=[[main[0]] + [HIDDEN] * (len(main) - 1) for main in event.mains],
            hands=[h if s == seat else [HIDDEN] * len(h) for s, h in enumerate(event.hands)],
            draw=[HIDDEN] * len(event.draw),
            shuffle_seed="",
        )
    if isinstance(event, CardsDrawn) and event.seat != seat:
        return msgspec.structs.replace(event, cards=[HIDDEN] * len(event.cards))
    if isinstance(event, CardUnderTheBus) and event.seat != seat:
        # It goes face down under its owner's main pile: nobody else sees it (rules page,
        # "Hidden information"); the platform checked that it fits no slot.
        return msgspec.structs.replace(event, card=HIDDEN)
    if isinstance(event, StockReshuffled):
        return msgspec.structs.replace(event, cards=[HIDDEN] * len(event.cards))
    return event


def action_of(event: Event) -> tuple[int, Action] | None:
    """Returns the seat and the action whose decision begins with `event`, None for an event
    that follows within a decision."""
    match event:
        case CardPlayed(seat=seat, source=source, card=card, sequence=index, opened=opened):
            named = card if source == "hand" else None
            sequence = None if opened else index
            return seat, PlayToSequence(
                source=source, card=named, slot=event.slot, sequence=sequence
            )
        case CardDiscarded(seat=seat, card=card, slot=slot, rank=rank):
            named_rank = RANKS[rank - 1] if is_joker(card) and 1 <= rank <= KING else None
            return seat, Discard(card=card, slot=slot, joker_rank=named_rank)
        case CardUnderTheBus(seat=seat, card=card):
            return seat, UnderTheBus(card=card)
        case TurnEnded(seat=seat):
            return seat, EndTurn()
    return None


def to_move(state: AutobusState) -> list[int]:
    """Returns the seat whose turn it is, or nothing once the game is over."""
    return [] if state.result is not None else [state.turn]


def is_over(state: AutobusState) -> bool:
    """Returns whether the game has ended."""
    return state.result is not None


def result(state: AutobusState) -> Result | None:
    """Returns the result of an ended game, None while it runs."""
    return state.result


SPEC: GameSpec[AutobusState, AutobusRuleset] = GameSpec(
    name="autobus",
    title="Hospodský autobus",
    min_players=2,
    max_players=4,
    has_decisions=True,
    ruleset_type=AutobusRuleset,
    presets={
        "classic": AutobusRuleset(),
        "classic-timed": AutobusRuleset(clock=Clock(move_seconds=10, bank_seconds=60)),
    },
    action_type=AutobusAction,
    event_type=AutobusEvent,
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
