"""Replays of a game at any version, and what-if forks from one."""
