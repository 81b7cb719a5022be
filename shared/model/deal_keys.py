"""Deal keys: what the platform deals its games from, so that nobody can compute a deal.

An engine deals from a seed's text alone (`shared.games.cards.shuffled`), by a shuffle
anyone can run: a seed that can be guessed (a host's `7`, a tournament's public seed) gives
away every card. So the platform never deals from what a host gives. It deals every game
from a deal key, 64 lowercase hex digits (256 bits):

- no seed given: 32 fresh random bytes (`fresh`);
- a host's seed `s`: HMAC-SHA256 keyed with the deployment's deal secret over the UTF-8
  bytes `cardarena:deal:v1:<kind>:<s>` (`derive`), where `<kind>` is `game` for a game
  created through `POST /v1/games` and `tournament` for a tournament's game, whose `s` is
  the seed its schedule gave it (`shared.model.tournaments.formats.game_seed`).

The deal key is the seed a game commits to and reveals at its end (`shared.model.deals`), so a
finished game still verifies offline from its own log. The deal secret never leaves the
platform: it is the deployment's `CARDARENA_DEAL_SECRET`, else 32 random bytes drawn once
per deployment (kept in Redis under the namespace, `shared.store.redis_deal_secret`) or per
process (the in-memory store): the port `shared.ports.deal_secret`. The same seed on the
same deployment so deals the same cards, and a seed tried on another deployment, or
guessed, deals nothing anyone can compute.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Literal

from shared.model.deals import seed_text

Kind = Literal["game", "tournament"]
"""What a host's seed seeds: a game of its own, or a tournament's game."""

DOMAIN = "cardarena:deal:v1"
"""The prefix of every derivation's message, so a deal key is used for nothing else."""


def fresh() -> str:
    """Returns a deal key of 32 fresh random bytes, as 64 lowercase hex digits."""
    return secrets.token_hex(32)


def derive(secret: bytes, kind: Kind, seed: int | str) -> str:
    """Returns the deal key of a host's `seed` under a deployment's `secret`: hex
    HMAC-SHA256(secret, `cardarena:deal:v1:<kind>:<seed text>`)."""
    message = f"{DOMAIN}:{kind}:{seed_text(seed)}".encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()
