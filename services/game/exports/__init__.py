"""Exports of finished games' logs, checks of their deals, imports of exported logs."""
