"""Bodies of the bot registry routes: a registered bot (with any new credentials), and a list."""

from __future__ import annotations

import msgspec

from shared.model.registry import AcceptChallenges, BotKind, Credentials, RegisteredBot


class Bot(msgspec.Struct, frozen=True):
    """A registered bot; ratings and leaderboards follow its `key` (`name@version`).

    `url` (a webhook's) is shown to the host only; `token` and `signing_secret` only once,
    in the answer that issued them.
    """

    name: str
    version: str
    key: str
    game: str
    strategy: str
    description: str
    registered_at: str
    kind: BotKind = "builtin"
    url: str | msgspec.UnsetType = msgspec.UNSET
    token: str | msgspec.UnsetType = msgspec.UNSET
    """The bot's API token (`Authorization: Bearer <token>`); shown once."""
    signing_secret: str | msgspec.UnsetType = msgspec.UNSET
    """A webhook bot's HMAC key for the platform's calls; shown once."""
    accept_challenges: AcceptChallenges | msgspec.UnsetType = msgspec.UNSET
    """A webhook bot's: whose challenges seat it (`host`, `registered` or `none`)."""

    @classmethod
    def of(
        cls, bot: RegisteredBot, *, host: bool = False, credentials: Credentials | None = None
    ) -> Bot:
        """Returns the bot's representation: for the host with its url, and any new credentials."""
        return cls(
            bot.name,
            bot.version,
            bot.key,
            bot.game,
            bot.strategy,
            bot.description,
            bot.registered_at,
            bot.kind,
            url=bot.url if host and bot.url else msgspec.UNSET,
            token=credentials.token if credentials else msgspec.UNSET,
            signing_secret=(
                credentials.signing_secret
                if credentials and credentials.signing_secret
                else msgspec.UNSET
            ),
            accept_challenges=bot.accept_challenges if bot.kind == "webhook" else msgspec.UNSET,
        )


class Bots(msgspec.Struct, frozen=True):
    """Registered bots, in registration order."""

    bots: list[Bot]
