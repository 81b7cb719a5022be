"""Tournaments over HTTP: create (or schedule), read, standings, list, cancel."""
