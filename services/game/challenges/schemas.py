"""Bodies of the challenge routes: a challenge to issue, and why a bot declines one."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from shared.messages.common import Clock
from shared.model import challenges
from shared.model.challenges import ExpirySeconds, Opponent


class IssueChallenge(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A challenge: the game, a ruleset (preset name or fields), the registered bots to seat
    after the challenger, a clock, and how long it stays open."""

    game: str
    """The game to play."""
    opponents: list[Opponent]
    """The bots to seat after the challenger, in seat order: registered bots or the game's
    built-in strategies."""
    ruleset: str | dict[str, Any] | None = None
    """A preset's name or the ruleset's fields (none: the game's classic ruleset)."""
    clock: Clock | None = None
    """The game's clock; none (and none in the ruleset): the deployment's default clock of
    external and webhook entrants (CARDARENA_ENTRANT_MOVE_SECONDS), else untimed."""
    expires_in: ExpirySeconds = challenges.DEFAULT_EXPIRY_S
    """Seconds the challenge waits for its answers (10 to 86400)."""


class Decline(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Why the bot declines (optional, shown to the challenger)."""

    reason: Annotated[str, msgspec.Meta(max_length=200)] = ""
    """Why the bot declines, shown to the challenger (at most 200 characters; may be empty)."""
