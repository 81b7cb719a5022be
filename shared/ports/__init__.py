"""Ports other than the event store, each with its in-memory twin."""
