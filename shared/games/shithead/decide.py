"""Shithead's deal and decide: a decision's events, built one at a time over a working state
so that follow-ups (drawing, burning, going out, the next turn) read the state they act on."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from shared.errors import IllegalAction
from shared.games.base import Decision
from shared.games.cards import JOKER, Card, rank_of, shuffled, standard_deck
from shared.games.shithead.evolve import evolve
from shared.games.shithead.legal import count_allowed, effective_top, plays_of, refusal, stacked
from shared.games.shithead.messages import (
    CardsDrawn,
    CardsPlayed,
    CardsSwapped,
    CardStacked,
    DeckCardTurned,
    DirectionReversed,
    FaceDownRevealed,
    GameStarted,
    PickUp,
    PileBurned,
    PilePickedUp,
    PlayCards,
    PlayerOut,
    PlayerReady,
    PlayFaceDown,
    PlayFromDeck,
    PlayStarted,
    Ready,
    SeatsSkipped,
    Stack,
    Swap,
    TurnPassed,
    Zone,
)
from shared.games.shithead.rules import ORDER, ShitheadRuleset, validate
from shared.games.shithead.state import ShitheadState, cards_in, cards_left, zone_of
from shared.messages.common import Action, Event, GameFinished, Result


def decide(state: ShitheadState, seat: int, action: Action) -> list[Event]:
    """Returns the events of `seat` taking `action`; raises IllegalAction naming the rule."""
    return play(state, seat, action)[1]


def play(state: ShitheadState, seat: int, action: Action) -> tuple[ShitheadState, list[Event]]:
    """Returns the state after `seat` takes `action` and the events it writes (`decide`, and
    the state its events fold to); raises IllegalAction naming the rule."""
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
    return decision.state, decision.events


def _decide_swap(d: Decision[ShitheadState], seat: int, action: Action) -> None:
    """Applies a swap-phase action."""
    state = d.state
    if not isinstance(action, Swap | Stack | Ready):
        raise IllegalAction("swap_phase", "before play every seat swaps, then declares Ready")
    if state.ready[seat]:
        raise IllegalAction("already_ready", f"seat {seat} is ready and may no longer swap")
    if isinstance(action, Stack):
        _stack(d, seat, action.hand_card)
        return
    if isinstance(action, Swap):
        if action.hand_card not in state.hands[seat]:
            raise IllegalAction("card_not_held", f"{action.hand_card} is not in the hand")
        if action.face_up_card not in state.face_up[seat]:
            raise IllegalAction("card_not_held", f"{action.face_up_card} is not face up")
        if stacked(state, seat, action.face_up_card):
            raise IllegalAction("stacked_card", f"{action.face_up_card} lies on a stack")
        d.emit(
            CardsSwapped(seat=seat, hand_card=action.hand_card, face_up_card=action.face_up_card)
        )
        return
    d.emit(PlayerReady(seat=seat))
    if all(d.state.ready):
        d.emit(_opening(d.state))


def _stack(d: Decision[ShitheadState], seat: int, card: Card) -> None:
    """Stacks a hand card onto the face-up cards of its rank, and draws one back."""
    state = d.state
    if not state.ruleset.stacking:
        raise IllegalAction("stack_not_allowed", "this ruleset does not stack face-up cards")
    if card not in state.hands[seat]:
        raise IllegalAction("card_not_held", f"{card} is not in the hand")
    if not any(rank_of(up) == rank_of(card) for up in state.face_up[seat]):
        raise IllegalAction("stack_needs_rank", f"no face-up card of the rank of {card}")
    d.emit(CardStacked(seat=seat, card=card))
    if d.state.deck:
        d.emit(CardsDrawn(seat=seat, cards=[d.state.deck[0]]))


def _opening(state: ShitheadState) -> PlayStarted:
    """Returns who leads: the holder of the lowest plain card (by the start rule), or seat 0.

    `lowest_card` looks at hands and face-up cards alike, the earliest seat first; the leader
    plays the rank from its hand when the hand holds it. `face_up_first` goes rank by rank
    from the lowest: the earliest seat with the rank face up, else the earliest with it in
    hand, and the leader plays it from where it was found.
    """
    rules = state.ruleset
    if rules.start == "first_seat":
        return PlayStarted(seat=0, rule="first_seat")
    special = {rules.reset, rules.burn, JOKER}
    zones: tuple[Zone, Zone] = ("hand", "face_up")
    candidates = [
        (ORDER[rank_of(card)], rank_of(card), zone, seat)
        for seat in range(state.players)
        for zone in zones
        for card in cards_in(state, seat, zone)
        if rank_of(card) not in special
    ]
    if not candidates:
        return PlayStarted(seat=0, rule="no_plain_card")
    if rules.start == "face_up_first":
        _, rank, zone, seat = min(candidates, key=lambda c: (c[0], c[2] != "face_up", c[3]))
    else:
        _, rank, zone, seat = min(candidates, key=lambda c: (c[0], c[3], c[2] != "hand"))
    return PlayStarted(seat=seat, rule=rules.start, rank=rank, zone=zone)


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
    if not Counter(cards) <= Counter(cards_in(state, seat, zone)):
        raise IllegalAction("card_not_held", f"{' '.join(cards)} are not all in the {zone}")
    if len({rank_of(card) for card in cards}) > 1:
        raise IllegalAction("one_rank", "the cards of a play must all have one rank")
    if not count_allowed(rules, len(cards)):
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
        return
    d.emit(PilePickedUp(seat=seat, cards=list(d.state.pile), reason="failed_reveal"))
    if _is_out(d.state, seat):
        d.emit(PlayerOut(seat=seat, place=len(d.state.out) + 1))
        if _game_over(d):
            return
    d.emit(TurnPassed(seat=_next_seat(d.state, seat)))


def _play_from_deck(d: Decision[ShitheadState], seat: int) -> None:
    """Turns the deck's top card: played if it may be, else picked up with the pile."""
    state, rules = d.state, d.state.ruleset
    if state.opening is not None:
        raise IllegalAction("opening_card", "the first play must be the lowest card")
    if not state.deck:
        raise IllegalAction("deck_empty", "the deck is empty")
    can_play = bool(plays_of(state, seat))
    if not (rules.blind_deck_play or (rules.gamble_from_deck and not can_play)):
        raise IllegalAction("deck_play_not_allowed", "this ruleset does not allow that deck play")
    card = state.deck[0]
    playable = refusal(rules, state.pile, rank_of(card)) is None
    d.emit(DeckCardTurned(seat=seat, card=card, playable=playable, blind=can_play))
    if playable:
        _resolve(d, seat, [card], refill=False, from_deck=True)
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
    able = bool(plays_of(state, seat)) or zone_of(state, seat) == "face_down"
    if able and not state.ruleset.voluntary_pickup:
        raise IllegalAction("must_play", "a player able to play may not pick up the pile")
    d.emit(PilePickedUp(seat=seat, cards=list(state.pile), reason="chosen" if able else "no_play"))
    d.emit(TurnPassed(seat=_next_seat(d.state, seat)))


def _resolve(
    d: Decision[ShitheadState],
    seat: int,
    played: Sequence[Card],
    *,
    refill: bool,
    from_deck: bool = False,
) -> None:
    """Applies what follows a play: reversals, drawing, burning, going out, the next turn.

    A burn gives the burner another turn, except a card turned from the deck (seed 000: the
    game goes on with the opponent's turn) unless the ruleset's `deck_burn_plays_again`."""
    rules = d.state.ruleset
    for card in played:
        rank = rank_of(card)
        if (rank == JOKER and rules.joker_reverses) or rank == rules.reverse_rank:
            d.emit(DirectionReversed(direction=-d.state.direction))
    need = rules.hand - len(d.state.hands[seat])
    if refill and need > 0 and d.state.deck:
        d.emit(CardsDrawn(seat=seat, cards=list(d.state.deck[:need])))
    burned = _burn(d, seat, played)
    if _is_out(d.state, seat):
        d.emit(PlayerOut(seat=seat, place=len(d.state.out) + 1))
        if _game_over(d):
            return
    elif burned and (not from_deck or rules.deck_burn_again):
        return
    if not burned:
        skips = sum(rank_of(card) == rules.skip_rank for card in played)
        skipped = _skipped(d.state, seat, skips)
        if skipped:
            d.emit(SeatsSkipped(seats=skipped))
            seat = skipped[-1]
    d.emit(TurnPassed(seat=_next_seat(d.state, seat)))


def _skipped(state: ShitheadState, seat: int, skips: int) -> list[int]:
    """Returns the seats `skips` skip cards pass over after `seat`, among those still in."""
    skipped: list[int] = []
    for _ in range(skips):
        seat = _next_seat(state, seat)
        skipped.append(seat)
    return skipped


def _is_out(state: ShitheadState, seat: int) -> bool:
    """Returns whether `seat` is out now: no cards left, or (`goes_out: face_down_gone`) its
    last face-down card turned."""
    if seat in state.out:
        return False
    if state.ruleset.out_when_face_down_gone and not state.face_down[seat]:
        return True
    return cards_left(state, seat) == 0


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
