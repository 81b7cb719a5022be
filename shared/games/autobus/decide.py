"""Autobus's deal and decide: a decision's events, each folded into the state as it is written.

Each step appends its event to the decision's list and folds it with that event's own
`evolve` handler, so that the state returned is the one the events fold to."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from shared.errors import IllegalAction
from shared.games.autobus.evolve import (
    fold_completed,
    fold_discarded,
    fold_drawn,
    fold_finished,
    fold_played,
    fold_reshuffled,
    fold_turn_passed,
    fold_under_the_bus,
)
from shared.games.autobus.legal import (
    anyone_can_play,
    fits_no_slot,
    fits_sequence,
    slot_fits,
    source_card,
)
from shared.games.autobus.messages import (
    CardDiscarded,
    CardPlayed,
    CardsDrawn,
    CardUnderTheBus,
    Discard,
    EndTurn,
    GameStarted,
    MainTopRevealed,
    PlayToSequence,
    SequenceCompleted,
    StockReshuffled,
    TurnEnded,
    TurnPassed,
    UnderTheBus,
)
from shared.games.autobus.rules import KING, NUMBER, RANKS, AutobusRuleset, validate, value
from shared.games.autobus.state import AutobusState
from shared.games.cards import Card, is_joker, shuffled, standard_deck
from shared.messages.common import Action, Event, GameFinished, Result


def decide(state: AutobusState, seat: int, action: Action) -> list[Event]:
    """Returns the events of `seat` taking `action`; raises IllegalAction naming the rule."""
    return play(state, seat, action)[1]


def play(state: AutobusState, seat: int, action: Action) -> tuple[AutobusState, list[Event]]:
    """Returns the state after `seat` takes `action` and the events it writes (`decide`, and
    the state its events fold to); raises IllegalAction naming the rule."""
    if state.result is not None:
        raise IllegalAction("game_over", "the game is over")
    players = len(state.hands)
    if not 0 <= seat < players:
        raise IllegalAction("no_such_seat", f"seats are 0 to {players - 1}")
    if seat != state.turn:
        raise IllegalAction("not_your_turn", f"it is seat {state.turn}'s turn")
    take = _TAKE.get(type(action))
    if take is None:
        raise IllegalAction("unknown_action", f"Hospodský autobus has no {type(action).__name__}")
    events: list[Event] = []
    return take(state, seat, action, events), events


def _check_joker_rank(card: Card, joker_rank: int | None, rank: int | None) -> int | None:
    """Returns the rank number a joker names, checking it against `rank` where that is fixed."""
    if joker_rank is None:
        return rank
    if not is_joker(card):
        raise IllegalAction("joker_rank", "only a joker takes a joker_rank")
    if (
        isinstance(joker_rank, bool)
        or not isinstance(joker_rank, int)
        or not 1 <= joker_rank <= KING
    ):
        raise IllegalAction(
            "joker_rank", f"{joker_rank!r} is not a rank number: 1 (ace) to {KING} (king)"
        )
    if rank is not None and joker_rank != rank:
        raise IllegalAction("joker_rank", f"here the joker stands for {rank} ({RANKS[rank - 1]})")
    return joker_rank


def _play(
    state: AutobusState, seat: int, action: PlayToSequence, events: list[Event]
) -> AutobusState:
    """Plays a card onto a sequence, with what follows: reveal, completion, drawing, a win."""
    card = source_card(state, seat, action)
    sequences = state.sequences
    if action.sequence is None:
        if NUMBER[card] > 1:
            raise IllegalAction("opens_with_ace", "only an ace or a joker opens a sequence")
        index, rank, opened = len(sequences), 1, True
    else:
        if not 0 <= action.sequence < len(sequences):
            raise IllegalAction("no_such_sequence", f"there are {len(sequences)} sequences")
        index, opened = action.sequence, False
        rank = len(sequences[index]) + 1
        if not fits_sequence(card, sequences[index]):
            raise IllegalAction("sequence_needs", f"sequence {index} needs {RANKS[rank - 1]}")
    _check_joker_rank(card, action.joker_rank, rank)
    source = action.source
    played = CardPlayed(
        seat=seat,
        source=source,
        card=card,
        sequence=index,
        rank=rank,
        slot=action.slot,
        opened=opened,
    )
    events.append(played)
    state = fold_played(state, played)
    if source == "main":
        main = state.mains[seat]
        if not main:
            return _finish(state, events, "finished", "main_pile_emptied")
        events.append(MainTopRevealed(seat=seat, card=main[0]))
    if rank == KING:
        completed = SequenceCompleted(sequence=index, cards=list(state.sequences[index]))
        events.append(completed)
        state = fold_completed(state, completed)
    if source == "hand" and not state.hands[seat]:
        state = _draw(state, events, seat, state.ruleset.hand, "empty_hand")
    return state


def _discard(state: AutobusState, seat: int, action: Discard, events: list[Event]) -> AutobusState:
    """Ends the turn with a hand card onto a matching or empty slot."""
    card, slot = action.card, action.slot
    if card not in state.hands[seat]:
        raise IllegalAction("card_not_held", f"{card} is not in the hand")
    if not 0 <= slot < state.ruleset.slots:
        raise IllegalAction("no_such_slot", f"slots are 0 to {state.ruleset.slots - 1}")
    held = state.slot_ranks[seat][slot]
    if not slot_fits(state, seat, slot, card):
        raise IllegalAction("slot_rank", f"slot {slot} holds {RANKS[held - 1] if held else '-'}")
    rank = _check_joker_rank(card, action.joker_rank, held)
    if rank is None and is_joker(card):
        raise IllegalAction("joker_rank", "a joker on an empty slot needs the rank it names")
    discarded = CardDiscarded(
        seat=seat, card=card, slot=slot, rank=rank if rank is not None else value(card)
    )
    events.append(discarded)
    return _pass_turn(fold_discarded(state, discarded), seat, events)


def _under_the_bus_action(
    state: AutobusState, seat: int, action: UnderTheBus, events: list[Event]
) -> AutobusState:
    """Ends the turn with a hand card that fits no slot under the own main pile."""
    card = action.card
    if card not in state.hands[seat]:
        raise IllegalAction("card_not_held", f"{card} is not in the hand")
    if not fits_no_slot(state, seat, card):
        raise IllegalAction("fits_a_slot", "a card that fits a slot must be discarded there")
    under = CardUnderTheBus(seat=seat, card=card)
    events.append(under)
    return _pass_turn(fold_under_the_bus(state, under), seat, events)


def _end_turn_action(
    state: AutobusState, seat: int, _action: EndTurn, events: list[Event]
) -> AutobusState:
    """Ends the turn of a seat with an empty hand and nothing to draw."""
    if state.hands[seat]:
        raise IllegalAction("hand_not_empty", "a turn with cards in hand ends with a discard")
    events.append(TurnEnded(seat=seat))
    return _pass_turn(state, seat, events)


def _pass_turn(state: AutobusState, seat: int, events: list[Event]) -> AutobusState:
    """Passes the turn on, ends the game by the draw rules, or refills the next hand.

    The draw (the seed's rule 10): a full round of turns without a play onto a sequence,
    nothing left to draw (the draw pile and the completed stock empty), and no seat holding
    a card that could go onto one. A round where seats could play but did not goes on; the
    turn cap bounds it."""
    players = len(state.hands)
    nxt = seat + 1 if seat + 1 < players else 0
    passed = TurnPassed(seat=nxt)
    events.append(passed)
    state = fold_turn_passed(state, passed)
    ruleset = state.ruleset
    if state.quiet_turns >= players:
        if ruleset.draw == "quiet_round":
            return _finish(state, events, "draw", "no_sequence_play_in_a_round")
        if not anyone_can_play(state):
            return _finish(state, events, "draw", "no_move_possible")
    if state.turns >= ruleset.max_turns:
        return _finish(state, events, "draw", "turn_cap")
    return _draw(state, events, nxt, ruleset.hand - len(state.hands[nxt]), "refill")


def _draw(
    state: AutobusState,
    events: list[Event],
    seat: int,
    count: int,
    reason: Literal["refill", "empty_hand"],
) -> AutobusState:
    """Draws up to `count` cards, reshuffling the completed stock when the draw pile is out."""
    while count > 0:
        if state.draw:
            drawn = CardsDrawn(seat=seat, cards=list(state.draw[:count]), reason=reason)
            events.append(drawn)
            state = fold_drawn(state, drawn)
            count -= len(drawn.cards)
        elif state.completed:
            number = state.reshuffles + 1
            order = shuffled(state.completed, f"{state.shuffle_seed}:{number}")
            reshuffled = StockReshuffled(cards=order, number=number)
            events.append(reshuffled)
            state = fold_reshuffled(state, reshuffled)
        else:
            break
    return state


def _finish(state: AutobusState, events: list[Event], status: str, reason: str) -> AutobusState:
    """Ends the game: the result ranks by cards left in the main piles."""
    finished = GameFinished(result=_ranked(state, status, reason))
    events.append(finished)
    return fold_finished(state, finished)


_TAKE: dict[type[Action], Callable[[AutobusState, int, Any, list[Event]], AutobusState]] = {
    PlayToSequence: _play,
    Discard: _discard,
    UnderTheBus: _under_the_bus_action,
    EndTurn: _end_turn_action,
}
"""How each action of the game is taken, by exact type."""


def _ranked(state: AutobusState, status: str, reason: str) -> Result:
    """Returns a result ranking by cards left in the main pile (a winner has none), ties sharing."""
    left = [len(main) for main in state.mains]
    places = [1 + sum(o < mine for o in left) for mine in left]
    scores = [-n for n in left]
    return Result(status, places, reason, scores=scores, detail={"turns": state.turns})


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
