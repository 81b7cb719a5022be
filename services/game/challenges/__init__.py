"""Challenges between registered bots over HTTP: issue, read, accept, decline, cancel."""
