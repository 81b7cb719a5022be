"""A tournament's seed: drawn when the host gives none, withheld while any of its games runs.

Every game of a tournament is dealt from the deal key of the seed its schedule gave it
(`shared.model.tournaments.formats.game_seed` of the tournament's seed, keyed with the
deployment's deal secret by `shared.model.deal_keys`), so the seed alone predicts no card. It is
withheld all the same from whatever shows the tournament (its routes, a schedule, the
projection's row) while the tournament runs, and a cancelled one while a game of it still
plays; it shows once the tournament has ended, for a host to run it again. Whether a game of it
still plays is read from the store by `shared.app.seeds`.
"""

from __future__ import annotations

import msgspec

from shared.model import deal_keys
from shared.model.tournaments.model import TournamentDefinition, TournamentState, pending

WITHHELD = ""
"""What a withheld seed shows as."""


def drawn(definition: TournamentDefinition) -> TournamentDefinition:
    """Returns `definition` with a fresh random seed (256 bits) when the host gave none."""
    if definition.seed:
        return definition
    return msgspec.structs.replace(definition, seed=deal_keys.fresh())


def withheld(definition: TournamentDefinition) -> TournamentDefinition:
    """Returns `definition` with its seed withheld."""
    return msgspec.structs.replace(definition, seed=WITHHELD)


def may_run(state: TournamentState) -> bool:
    """Returns whether a game of the tournament may still run, as far as its own stream tells:
    running, or cancelled (its last round's unrecorded games play on)."""
    return state.status == "running" or (state.status == "cancelled" and bool(pending(state)))
