"""The OpenAPI document of the game service: the games' schemas (`game_schemas`), the
completions of what Litestar generates (`document`, `openapi`, `operations`,
`descriptions`), examples taken from a real run (`examples`), and its browsable page
(`docs`, `/schema`)."""
