"""Shithead (Palace; Hungarian "holland kocsma"), as docs/rules/shithead.md describes it.

The ruleset (`shared.games.shithead.rules`) states every optional rule; the presets are
`classic`, `holland-kocsma` (seed 000 as written) and `swedish` (seed 004's rules). The game
has three phases: swap (each seat exchanges hand and face-up cards, stacks where the ruleset
allows, then is ready), play, finished. `decide` builds a decision's events one at a time
over a working copy of the table, so that follow-ups (drawing, burning, skipping, going out,
the next turn) read the table they act on; what a rank may go on, and which ranks do what,
are lookups built once per ruleset (`shared.games.shithead.tables`).

Choices the texts leave open, each covered by a test (the rules page says why):
- Seats are 0-based; the dealer is the last seat, so ties for the lowest card go to the
  lowest seat. The lowest card is the lowest plain rank (not reset, burn or joker; the
  lower rank counts) in any hand or face-up cards; `lowest_card` plays it from the hand
  when the hand holds that rank, else from the face-up cards; `face_up_first` looks face up
  first at each rank, then in the hands, and plays it from where it was found.
- The cards a play lists must be held in the zone it plays from; suits never matter, so
  `legal_actions` lists one play per rank and count (the first cards of that rank).
- Jokers are wild (like a reset) and count as their own rank for multiples and runs.
- A turned card (face-down or the deck's top) that can be played is played with its
  specials; one that cannot goes on the pile, which the player then picks up. A playable
  deck card that burns passes the turn on (seed 000), unless `deck_burn_plays_again`.
- The transparent rank is played by the normal rule; the lower rank, when it does not go
  on anything, too; "lower" means equal or lower. A burn-rank card on a lower card is
  allowed; with `ten_not_on_faces` it is refused on J, Q and K (the court cards), not on A.
- Each skip card passes the turn over one more seat still in (round the table, the
  player's own seat included); each reverse card flips the direction; a burn skips nobody.
- Nothing but the opening card may be played while the leader opens: no pickup, no deck
  play (no bluff).
- The move cap counts decisions (swaps, stacks and ready included); a capped game and a
  game that stops at the first player out rank the others by cards left, fewest first,
  ties sharing.
- "All public events" are part of what a seat may know, so the view carries, per seat,
  the hand cards everyone saw go in (a picked-up pile, a face-up card swapped into the
  hand) until they are played again: what a player with a perfect memory would know.
- Not supported: out-of-turn play of a matching card (a Swedish variant): a turn-based
  API cannot be fair to it.
"""

from __future__ import annotations

from shared.games.base import GameSpec
from shared.games.shithead.decide import deal, decide, play
from shared.games.shithead.evolve import evolve
from shared.games.shithead.legal import default_action, legal_actions
from shared.games.shithead.messages import ShitheadAction, ShitheadEvent
from shared.games.shithead.rules import PRESETS, ShitheadRuleset, earlier_readings, validate
from shared.games.shithead.state import ShitheadState, is_over, result, to_move
from shared.games.shithead.view import ShitheadView, action_of, redact, table, view

SPEC: GameSpec[ShitheadState, ShitheadRuleset, ShitheadView, ShitheadAction] = GameSpec(
    name="shithead",
    title="Shithead",
    rules_page="docs/rules/shithead.md",
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
    play=play,
    view=view,
    legal_actions=legal_actions,
    to_move=to_move,
    is_over=is_over,
    result=result,
    validate=validate,
    redact=redact,
    table=table,
    default_action=default_action,
    action_of=action_of,
    earlier_readings=earlier_readings,
)
