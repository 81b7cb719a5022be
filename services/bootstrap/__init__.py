"""The composition root: builds every adapter that the settings choose, for every process.

`stores` (event store, outbox, views, archive) serves them all; `game`, `projection` and
`workers` each build one service's own parts (only `game` imports `services.game`, so the
workers and the projection never load Litestar). Entry points call these, nothing else does.
"""
