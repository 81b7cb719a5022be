"""Autobus's deal and decide: a decision's events, each folded into a working state."""

from __future__ import annotations

from shared.errors import IllegalAction
from shared.games.autobus.evolve import evolve
from shared.games.autobus.legal import (
    can_play_to_sequence,
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
from shared.games.autobus.rules import KING, RANKS, AutobusRuleset, validate, value
from shared.games.autobus.state import AutobusState
from shared.games.base import Decision
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
    return d.state, d.events


def _evolve(state: AutobusState, event: Event) -> AutobusState:
    """Folds one event into a known state."""
    return evolve(state, event)


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


def _play(d: Decision[AutobusState], seat: int, action: PlayToSequence) -> None:
    """Plays a card onto a sequence, with what follows: reveal, completion, drawing, a win."""
    state = d.state
    card = source_card(state, seat, action)
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
    """Passes the turn on, ends the game by the draw rules, or refills the next hand.

    The draw (the seed's rule 10): a full round of turns without a play onto a sequence,
    nothing left to draw (the draw pile and the completed stock empty), and no seat holding
    a card that could go onto one. A round where seats could play but did not goes on; the
    turn cap bounds it."""
    nxt = (seat + 1) % d.state.players
    d.emit(TurnPassed(seat=nxt))
    state = d.state
    if state.quiet_turns >= state.players and state.ruleset.draw == "quiet_round":
        d.emit(GameFinished(result=_ranked(state, "draw", "no_sequence_play_in_a_round")))
    elif state.quiet_turns >= state.players and not any(
        can_play_to_sequence(state, other) for other in range(state.players)
    ):
        d.emit(GameFinished(result=_ranked(state, "draw", "no_move_possible")))
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
