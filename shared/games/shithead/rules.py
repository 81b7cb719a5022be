"""Shithead rulesets: every optional or regional rule of docs/rules/shithead.md is a field.

Ranks are the card module's characters (`"2"`... `"9"`, `"T"`, `"J"`, `"Q"`, `"K"`, `"A"`);
jokers have the rank `"X"`. Fields added after the first stored games default to UNSET, which
plays as the field's documented default and is not encoded, so the rulesets that earlier
games stored keep their bytes.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from shared.errors import InvalidRuleset
from shared.games.cards import RANKS, Rank
from shared.messages.common import Clock

ORDER = {rank: index for index, rank in enumerate(RANKS)}
"""Plain ranks, low to high (2 lowest, ace highest)."""

COURT = frozenset("JQK")
"""The court cards ("klädda kort"): jack, queen and king; the ace is not one."""

Multiples = Literal["any", "three_or_more", "single"]
StartRule = Literal["lowest_card", "first_seat", "face_up_first"]
EndRule = Literal["play_to_last", "stop_at_first_out"]
GoesOut = Literal["no_cards", "face_down_gone"]


class ShitheadRuleset(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A complete statement of the Shithead rules a game plays (docs/rules/shithead.md)."""

    face_down: int = 3
    """Cards dealt face down to each player (nobody may look at them)."""
    face_up: int = 3
    """Cards dealt face up on top of the face-down ones."""
    hand: int = 3
    """Cards dealt to each hand; players draw back up to this many while the deck lasts."""
    decks: int = 1
    """52-card decks shuffled together."""
    jokers: int = 0
    """Jokers per deck: 0 or 2; a joker is wild (like a reset: on anything, anything after)."""
    start: StartRule = "lowest_card"
    """Who leads: `lowest_card`, the holder of the lowest plain card in a hand or face up (who
    must play it); `face_up_first` (the Swedish text), the same search rank by rank from the
    lowest, a face-up card before a hand card at each rank; or `first_seat`, seat 0."""
    multiples: Multiples = "any"
    """How many cards of one rank a play may hold: any number, one or three+, or one."""
    reset: Rank | None = "2"
    """The reset rank: goes on anything, and anything may follow it."""
    burn: Rank | None = "T"
    """The burn rank: goes on anything and burns the pile; the player plays again."""
    ten_not_on_faces: bool = False
    """The burn rank may not be played on a court card: J, Q or K (the ace is not one)."""
    burn_run: int | None = 4
    """This many cards of one rank on top of the pile burn it (None: never)."""
    lower: Rank | None = None
    """The lower rank: the next card must be equal or lower (reset and burn still go)."""
    lower_on_anything: bool = True
    """The lower rank goes on anything (else it follows the normal rule)."""
    transparent: Rank | None = None
    """The transparent rank: the next card is compared with the card under it."""
    joker_reverses: bool = False
    """Each joker played reverses the direction of play."""
    skip: Rank | msgspec.UnsetType | None = msgspec.UNSET
    """The skip rank (the Swedish text's "skip a player's turn"): each card of it played skips
    the next seat still in the game; unset or null: none."""
    reverse: Rank | msgspec.UnsetType | None = msgspec.UNSET
    """The reverse rank (the Swedish text's "reverse the order of play"): each card of it
    played reverses the direction of play; unset or null: none."""
    stack_face_up: bool | msgspec.UnsetType = msgspec.UNSET
    """While swapping, a hand card may be stacked onto a face-up card of its rank (the Swedish
    text), and the hand draws a card back from the deck; unset: false."""
    gamble_from_deck: bool = False
    """A player with no legal play may turn the deck's top card instead of picking up."""
    voluntary_pickup: bool = False
    """A player may pick up the pile even when able to play."""
    blind_deck_play: bool = False
    """A player may play the deck's top card blind at any time (as a gamble)."""
    deck_burn_plays_again: bool | msgspec.UnsetType = msgspec.UNSET
    """A card turned from the deck that burns the pile gives the same player another turn;
    unset or false: the turn passes on, as seed 000 says of the deck play."""
    end: EndRule = "play_to_last"
    """Play until one player is left, or stop when the first player is out."""
    goes_out: GoesOut | msgspec.UnsetType = msgspec.UNSET
    """When a seat is out: `no_cards`, with no card left anywhere (unset means this); or
    `face_down_gone` (seed 000 as written), once its last face-down card is turned, even one
    that could not be played and went into its hand with the pile."""
    max_moves: int = 2000
    """The move cap: the game ends after this many decisions, ranked by cards left."""
    clock: Clock | msgspec.UnsetType = msgspec.UNSET
    """The clock of games played under this ruleset; unset (and then not even encoded):
    untimed (a game with a webhook seat still gets the default webhook clock, see
    `shared.model.clocks.clock_for`). A game's own clock overrides it."""

    def total_cards(self) -> int:
        """Returns how many cards the decks hold."""
        return self.decks * (52 + self.jokers)

    @property
    def skip_rank(self) -> Rank | None:
        """Returns the skip rank, None when there is none."""
        return None if isinstance(self.skip, msgspec.UnsetType) else self.skip

    @property
    def reverse_rank(self) -> Rank | None:
        """Returns the reverse rank, None when there is none."""
        return None if isinstance(self.reverse, msgspec.UnsetType) else self.reverse

    @property
    def stacking(self) -> bool:
        """Returns whether hand cards may be stacked onto face-up cards while swapping."""
        return self.stack_face_up is True

    @property
    def deck_burn_again(self) -> bool:
        """Returns whether a deck card that burns gives the same player another turn."""
        return self.deck_burn_plays_again is True

    @property
    def out_when_face_down_gone(self) -> bool:
        """Returns whether a seat is out once its last face-down card is turned."""
        return self.goes_out == "face_down_gone"


PRESETS = {
    "classic": ShitheadRuleset(),
    "classic-timed": ShitheadRuleset(clock=Clock(move_seconds=10, bank_seconds=60)),
    "holland-kocsma": ShitheadRuleset(
        face_down=4,
        face_up=4,
        hand=4,
        lower="5",
        lower_on_anything=True,
        gamble_from_deck=True,
        voluntary_pickup=True,
        blind_deck_play=True,
        goes_out="face_down_gone",
    ),
    "swedish": ShitheadRuleset(
        start="face_up_first",
        stack_face_up=True,
        skip="8",
        reverse="J",
    ),
}
"""The named rulesets: `classic` (the default), `holland-kocsma` (seed 000 as written) and
`swedish` (the Swedish text's rules; it names no rank for skipping and reversing, so the
preset takes 8 and J, two common choices)."""


def earlier_readings(rules: ShitheadRuleset) -> list[ShitheadRuleset]:
    """Returns `rules` as read before 2026-12-03 where it leaves the reading open: a deck card
    that burned gave the same player another turn."""
    if not isinstance(rules.deck_burn_plays_again, msgspec.UnsetType):
        return []
    return [msgspec.structs.replace(rules, deck_burn_plays_again=True)]


def _check_rank(field: str, rank: str | None) -> None:
    """Raises InvalidRuleset unless `rank` is None or a plain rank."""
    if rank is not None and rank not in ORDER:
        raise InvalidRuleset(field, f"{rank!r} is not a rank; one of {' '.join(RANKS)} or null")


def _check_counts(rules: ShitheadRuleset) -> None:
    """Raises InvalidRuleset for deal sizes, decks, jokers or caps out of range."""
    for field in ("face_down", "face_up"):
        if not 0 <= getattr(rules, field) <= 10:
            raise InvalidRuleset(field, f"must be 0 to 10, not {getattr(rules, field)}")
    if not 1 <= rules.hand <= 10:
        raise InvalidRuleset("hand", f"must be 1 to 10, not {rules.hand}")
    if not 1 <= rules.decks <= 4:
        raise InvalidRuleset("decks", f"must be 1 to 4, not {rules.decks}")
    if rules.jokers not in (0, 2):
        raise InvalidRuleset("jokers", f"jokers per deck must be 0 or 2, not {rules.jokers}")
    if rules.max_moves < 1:
        raise InvalidRuleset("max_moves", f"must be at least 1, not {rules.max_moves}")
    if rules.burn_run is not None and not 2 <= rules.burn_run <= 4 * rules.decks:
        raise InvalidRuleset(
            "burn_run", f"must be 2 to {4 * rules.decks} (suits x decks), not {rules.burn_run}"
        )


def _check_specials(rules: ShitheadRuleset) -> None:
    """Raises InvalidRuleset for unknown or clashing special ranks and orphan toggles."""
    specials = {"reset": rules.reset, "burn": rules.burn}
    specials |= {"lower": rules.lower, "transparent": rules.transparent}
    specials |= {"skip": rules.skip_rank, "reverse": rules.reverse_rank}
    seen: dict[str, str] = {}
    for field, rank in specials.items():
        _check_rank(field, rank)
        if rank is None:
            continue
        if rank in seen:
            raise InvalidRuleset(field, f"rank {rank} is already the {seen[rank]} rank")
        seen[rank] = field
    if rules.ten_not_on_faces and rules.burn is None:
        raise InvalidRuleset("ten_not_on_faces", "needs a burn rank")
    if rules.joker_reverses and rules.jokers == 0:
        raise InvalidRuleset("joker_reverses", "needs jokers in the deck")
    if rules.goes_out == "face_down_gone" and rules.face_down == 0:
        raise InvalidRuleset("goes_out", "face_down_gone needs face-down cards (face_down >= 1)")


def validate(rules: ShitheadRuleset, players: int) -> None:
    """Raises InvalidRuleset (naming the field) unless `players` can play `rules`."""
    if not 2 <= players <= 10:
        raise InvalidRuleset("players", f"Shithead takes 2 to 10 players, not {players}")
    _check_counts(rules)
    _check_specials(rules)
    dealt = (rules.face_down + rules.face_up + rules.hand) * players
    if dealt > rules.total_cards():
        raise InvalidRuleset(
            "decks",
            f"{players} players x {rules.face_down + rules.face_up + rules.hand} cards = {dealt} "
            f"is more than the {rules.total_cards()} cards of {rules.decks} deck(s)",
        )
