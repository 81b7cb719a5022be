"""Shithead's deal and decide: a decision's events, built one at a time over a working copy
of the table (`shared.games.shithead.working`) so that follow-ups (drawing, burning, going
out, the next turn) read the table they act on, and the state they fold to built once."""

from __future__ import annotations

from collections import Counter

from shared.errors import IllegalAction
from shared.games.cards import JOKER, Card, rank_of, shuffled, standard_deck
from shared.games.shithead.legal import can_play, stacked
from shared.games.shithead.messages import (
    GameStarted,
    PickUp,
    PlayCards,
    PlayFaceDown,
    PlayFromDeck,
    PlayStarted,
    Ready,
    Stack,
    Swap,
    Zone,
)
from shared.games.shithead.rules import ORDER, ShitheadRuleset, validate
from shared.games.shithead.state import ShitheadState, cards_in, cards_left, zone_of
from shared.games.shithead.tables import Tables, tables
from shared.games.shithead.working import Working
from shared.messages.common import Action, Event, Result


def decide(state: ShitheadState, seat: int, action: Action) -> list[Event]:
    """Returns the events of `seat` taking `action`; raises IllegalAction naming the rule."""
    return play(state, seat, action)[1]


def play(state: ShitheadState, seat: int, action: Action) -> tuple[ShitheadState, list[Event]]:
    """Returns the state after `seat` takes `action` and the events it writes (`decide`, and
    the state its events fold to); raises IllegalAction naming the rule."""
    phase = state.phase
    if phase == "finished":
        raise IllegalAction("game_over", "the game is over")
    players = len(state.hands)
    if not 0 <= seat < players:
        raise IllegalAction("no_such_seat", f"seats are 0 to {players - 1}")
    work = Working(state, seat)
    if phase == "swap":
        _decide_swap(work, action)
    elif seat != state.turn:
        raise IllegalAction("not_your_turn", f"it is seat {state.turn}'s turn")
    elif isinstance(action, PlayCards):
        _play_cards(work, action.cards)
    elif isinstance(action, PlayFaceDown):
        _play_face_down(work, action.index)
    elif isinstance(action, PlayFromDeck):
        _play_from_deck(work)
    elif isinstance(action, PickUp):
        _pick_up(work)
    else:
        raise IllegalAction("play_phase", "swapping ended when every seat was ready")
    if work.result is None and work.moves >= state.ruleset.max_moves:
        work.finished(_ranked_by_cards_left(work.state(), "capped"))
    return work.state(), work.events


def _decide_swap(w: Working, action: Action) -> None:
    """Applies a swap-phase action."""
    state, seat = w.base, w.seat
    if not isinstance(action, Swap | Stack | Ready):
        raise IllegalAction("swap_phase", "before play every seat swaps, then declares Ready")
    if state.ready[seat]:
        raise IllegalAction("already_ready", f"seat {seat} is ready and may no longer swap")
    if isinstance(action, Stack):
        _stack(w, action.hand_card)
        return
    if isinstance(action, Swap):
        if action.hand_card not in state.hands[seat]:
            raise IllegalAction("card_not_held", f"{action.hand_card} is not in the hand")
        if action.face_up_card not in state.face_up[seat]:
            raise IllegalAction("card_not_held", f"{action.face_up_card} is not face up")
        if stacked(state, seat, action.face_up_card):
            raise IllegalAction("stacked_card", f"{action.face_up_card} lies on a stack")
        w.swapped(action.hand_card, action.face_up_card)
        return
    w.became_ready()
    if all(w.ready):
        w.started(_opening(state))


def _stack(w: Working, card: Card) -> None:
    """Stacks a hand card onto the face-up cards of its rank, and draws one back."""
    state = w.base
    if not state.ruleset.stacking:
        raise IllegalAction("stack_not_allowed", "this ruleset does not stack face-up cards")
    if card not in w.hand:
        raise IllegalAction("card_not_held", f"{card} is not in the hand")
    if not any(up[0] == card[0] for up in w.face_up):
        raise IllegalAction("stack_needs_rank", f"no face-up card of the rank of {card}")
    w.stacked(card)
    if w.deck:
        w.drew(1)


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


def _play_zone(state: ShitheadState, seat: int, cards: list[Card]) -> Zone:
    """Returns the zone a PlayCards of `cards` comes from, or raises why it may not."""
    if state.opening is not None:
        rank, zone = state.opening
        if any(card[0] != rank for card in cards):
            raise IllegalAction("opening_card", f"the first play must be the lowest rank, {rank}")
    elif state.hands[seat]:
        zone = "hand"
    else:
        current = zone_of(state, seat)
        if current == "face_down":
            raise IllegalAction("face_down_blind", "face-down cards are turned one at a time")
        zone = current or "hand"
    if _holds(cards_in(state, seat, zone), cards):
        return zone
    if state.opening is None and zone == "hand" and _holds(state.face_up[seat], cards):
        raise IllegalAction(
            "face_up_too_early", "face-up cards wait until the hand and the deck are empty"
        )
    raise IllegalAction("card_not_held", f"{' '.join(cards)} are not all in the {zone}")


def _holds(held: tuple[Card, ...], cards: list[Card]) -> bool:
    """Returns whether `held` holds every card of `cards` (as many copies as it lists)."""
    if len(cards) == 1:
        return cards[0] in held
    wanted = set(cards)
    if len(wanted) == len(cards):
        return wanted.issubset(held)
    return Counter(cards) <= Counter(held)


def _play_cards(w: Working, cards: list[Card]) -> None:
    """Plays cards of one rank from the hand or the face-up cards."""
    state, hand = w.base, w.hand
    count = len(cards)
    if count == 1 and state.opening is None and cards[0] in hand:
        zone: Zone = "hand"
    elif not cards:
        raise IllegalAction("no_cards", "a play needs at least one card")
    else:
        zone = _play_zone(state, w.seat, cards)
    rank = cards[0][0]
    found = tables(state.ruleset)
    if count > 1:
        if len({card[0] for card in cards}) > 1:
            raise IllegalAction("one_rank", "the cards of a play must all have one rank")
        if not found.count_allowed(count):
            multiples = state.ruleset.multiples
            raise IllegalAction("multiples", f"multiples are {multiples}: not {count}")
    top = found.top(state.pile)
    broken = found.refusals[top][rank]
    if broken is not None:
        raise IllegalAction(broken, f"{cards[0]} may not go on {top}")
    w.played(cards, zone)
    _resolve(w, found, rank, count, refill=zone == "hand")


def _play_face_down(w: Working, index: int) -> None:
    """Turns over a face-down card: played if it may be, else picked up with the pile."""
    state, seat = w.base, w.seat
    if state.opening is not None:
        raise IllegalAction("opening_card", "the first play must be the lowest card")
    if zone_of(state, seat) != "face_down":
        raise IllegalAction("face_down_too_early", "face-down cards wait for the rest to go")
    if not 0 <= index < len(w.face_down):
        raise IllegalAction("no_such_card", f"face-down index must be 0 to {len(w.face_down) - 1}")
    card = w.face_down[index]
    found = tables(state.ruleset)
    playable = found.refusals[found.top(w.pile)][card[0]] is None
    w.revealed(index, card, playable)
    if playable:
        _resolve(w, found, card[0], 1, refill=False)
        return
    w.picked_up("failed_reveal")
    if _is_out(w, found):
        w.went_out()
        if _game_over(w):
            return
    w.passed(w.next_seat(seat))


def _play_from_deck(w: Working) -> None:
    """Turns the deck's top card: played if it may be, else picked up with the pile."""
    state, rules = w.base, w.base.ruleset
    if state.opening is not None:
        raise IllegalAction("opening_card", "the first play must be the lowest card")
    if not state.deck:
        raise IllegalAction("deck_empty", "the deck is empty")
    able = can_play(state, w.seat)
    if not (rules.blind_deck_play or (rules.gamble_from_deck and not able)):
        raise IllegalAction("deck_play_not_allowed", "this ruleset does not allow that deck play")
    card = state.deck[0]
    found = tables(rules)
    playable = found.refusals[found.top(w.pile)][card[0]] is None
    w.turned(card, playable, blind=able)
    if playable:
        _resolve(w, found, card[0], 1, refill=False, from_deck=True)
    else:
        w.picked_up("failed_gamble")
        w.passed(w.next_seat(w.seat))


def _pick_up(w: Working) -> None:
    """Picks up the pile: when no play is possible, or by choice where the rules allow."""
    state = w.base
    if state.opening is not None:
        raise IllegalAction("opening_card", "the first play must be the lowest card")
    if not state.pile:
        raise IllegalAction("empty_pile", "there is no pile to pick up")
    able = can_play(state, w.seat) or zone_of(state, w.seat) == "face_down"
    if able and not state.ruleset.voluntary_pickup:
        raise IllegalAction("must_play", "a player able to play may not pick up the pile")
    w.picked_up("chosen" if able else "no_play")
    w.passed(w.next_seat(w.seat))


def _resolve(
    w: Working, found: Tables, rank: str, count: int, *, refill: bool, from_deck: bool = False
) -> None:
    """Applies what follows a play of `count` cards of `rank`: reversals, drawing, burning,
    going out, the next turn.

    A burn gives the burner another turn, except a card turned from the deck (seed 000: the
    game goes on with the opponent's turn) unless the ruleset's `deck_burn_plays_again`."""
    if rank in found.reversers:
        for _ in range(count):
            w.reversed()
    if refill and w.deck:
        need = found.hand - len(w.hand)
        if need > 0:
            w.drew(need)
    burned = _burn(w, found, rank)
    seat = w.seat
    if _is_out(w, found):
        w.went_out()
        if _game_over(w):
            return
    elif burned and (not from_deck or w.base.ruleset.deck_burn_again):
        return
    if not burned and rank == found.skip:
        skipped: list[int] = []
        for _ in range(count):
            seat = w.next_seat(seat)
            skipped.append(seat)
        w.skipped(skipped)
    w.passed(w.next_seat(seat))


def _is_out(w: Working, found: Tables) -> bool:
    """Returns whether the seat is out now: no cards left, or (`goes_out: face_down_gone`) its
    last face-down card turned."""
    if w.face_down or w.seat in w.out:
        return False
    return found.face_down_gone or not (w.hand or w.face_up)


def _burn(w: Working, found: Tables, rank: str) -> bool:
    """Burns the pile if a play of `rank` (now on top) calls for it; returns whether it did."""
    if rank == found.burn:
        w.burned("burn_rank")
        return True
    run, pile = found.burn_run, w.pile
    if run is None or len(pile) < run or pile[-run][0] != rank:
        return False
    if all(card[0] == rank for card in pile[-run:]):
        w.burned("run")
        return True
    return False


def _game_over(w: Working) -> bool:
    """Finishes the game if the end rule says so; returns whether it did."""
    state = w.state()
    left = [seat for seat in range(state.players) if seat not in state.out]
    if state.ruleset.end == "stop_at_first_out":
        w.finished(_ranked_by_cards_left(state, "finished"))
        return True
    if len(left) > 1:
        return False
    places = [0] * state.players
    for place, seat in enumerate(state.out, start=1):
        places[seat] = place
    places[left[0]] = state.players
    reason = f"seat {left[0]} is the shithead"
    w.finished(Result("finished", places, reason, scores=_scores(state)))
    return True


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
