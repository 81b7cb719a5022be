"""Streams: a game's events and a seat's long poll; a bot's events, turns and challenges."""
