"""The Python client of the cardarena API, for third-party bots (`shared.sdk.client`).

It imports no other layer of `shared`: a bot needs only httpx and msgspec.
"""

from shared.sdk.client import ApiError, Client, RegisteredBot, SeatView, StreamEvent, Turn

__all__ = ["ApiError", "Client", "RegisteredBot", "SeatView", "StreamEvent", "Turn"]
