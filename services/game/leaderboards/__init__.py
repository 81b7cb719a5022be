"""Leaderboards over HTTP: ratings per game and bot version."""
