"""Hospodský autobus, as docs/rules/hospodsky-autobus.md describes it.

A turn is several decisions by one seat: any number of plays onto the shared sequences,
then exactly one discard, under-the-bus or end-turn. `decide` builds a decision's events
one at a time, folding each into a working state, so that automatic steps (revealing the
main pile's next card, completing a sequence, drawing, reshuffling the completed stock,
refilling the next player's hand, the end of the game) are events of their own.

Choices the original text leaves open, each covered by a test:
- Seats, slots and sequences are 0-based (the page numbers seats and slots from 1); seat 0
  moves first, its hand already full. Sequence indices are those of the current view:
  a completed sequence leaves and the later ones move up.
- The page's actions are the commands `PlayToSequence` (`play`; `sequence: null` opens a
  new one), `Discard`, `UnderTheBus` and `EndTurn`.
- The reshuffle of the completed stock is seeded by a secret of the deal (recorded in the
  start event, hidden while the game runs) and the number of the reshuffle; the new order
  is recorded in the event. It happens whenever a card must be drawn from an empty draw
  pile, also in the middle of a refill.
- A joker discarded onto an empty slot needs `joker_rank`, a rank number (1 ace ... 13
  king, as everywhere in Autobus's API); onto a slot of a rank it takes that rank (a
  `joker_rank` given must match). Older logs' actions name it by its character
  (`upgrade_action`). A joker always fits some slot, so it never
  goes under the bus.
- `legal_actions` lists one action per rank (suits never matter): the first card of that
  rank in the hand; a joker discarded to an empty slot is listed once per rank it may name.
- The draw follows the original's rule 10: a full round without a play onto a sequence,
  the draw pile and the completed stock empty, and no seat able to play onto one (reason
  `no_move_possible`); seats that could play but do not are bounded by the turn cap
  (reason `turn_cap`). Draws rank the players by the cards left in their main piles,
  fewest first, ties sharing; a win ranks the winner first and the others the same way.
"""

from __future__ import annotations

from shared.games.autobus.decide import deal, decide, play
from shared.games.autobus.evolve import evolve
from shared.games.autobus.legal import default_action, legal_actions
from shared.games.autobus.messages import (
    AutobusAction,
    AutobusEvent,
    action_problem,
    upgrade_action,
)
from shared.games.autobus.rules import AutobusRuleset, earlier_readings, validate
from shared.games.autobus.state import AutobusState, is_over, result, to_move
from shared.games.autobus.view import AutobusView, action_of, redact, table, view
from shared.games.base import GameSpec
from shared.messages.common import Clock

SPEC: GameSpec[AutobusState, AutobusRuleset, AutobusView, AutobusAction] = GameSpec(
    name="autobus",
    title="Hospodský autobus",
    rules_page="docs/rules/hospodsky-autobus.md",
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
    upgrade_action=upgrade_action,
    action_problem=action_problem,
    earlier_readings=earlier_readings,
)
