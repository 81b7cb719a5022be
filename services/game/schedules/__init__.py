"""Scheduled tournaments over HTTP: list, read, cancel."""
