"""Tournaments: formats, the event-sourced process, standings and ratings."""
