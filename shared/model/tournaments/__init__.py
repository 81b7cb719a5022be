"""Tournaments: formats, the event-sourced process, standings, ratings, seeds and sealing."""
