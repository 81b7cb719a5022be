"""The version of the game service's API, as its OpenAPI document states it (`info.version`);
a module of its own so that `cardarena --version` reads it without loading Litestar."""

API_VERSION = "1.2.0"
"""The API's version: its OpenAPI document's `info.version`."""
