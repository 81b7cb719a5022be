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
    """The bot's name, unique per version."""
    version: str
    """The bot's version label (default "1")."""
    key: str
    """`name@version`: the key its ratings and leaderboard entries follow."""
    game: str
    """The game the bot plays."""
    strategy: str
    """A built-in bot's strategy; empty for an external or webhook bot."""
    description: str
    """The host's free text about the bot."""
    registered_at: str
    """When the bot was registered (ISO 8601, UTC)."""
    kind: BotKind = "builtin"
    """How the bot plays: `builtin` (a strategy run by the platform), `external` (a client with a
    token) or `webhook` (the platform calls its URL)."""
    url: str | msgspec.UnsetType = msgspec.UNSET
    """A webhook bot's URL; shown to the host only."""
    token: str | msgspec.UnsetType = msgspec.UNSET
    """The bot's API token (`Authorization: Bearer <token>`); shown once."""
    signing_secret: str | msgspec.UnsetType = msgspec.UNSET
    """A webhook bot's HMAC key for the platform's calls; shown once."""
    accept_challenges: AcceptChallenges | msgspec.UnsetType = msgspec.UNSET
    """A webhook bot's: whose challenges seat it (`host`, `registered` or `none`)."""
    account: str = "host"
    """The account the bot belongs to (`host`: the host's own)."""
    suspended: bool = False
    """Whether its account is suspended: its token does not work and nothing seats it."""

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
            account=bot.account,
            suspended=bot.suspended,
        )


class Bots(msgspec.Struct, frozen=True):
    """Registered bots, in registration order."""

    bots: list[Bot]
    """The bots, in registration order."""
