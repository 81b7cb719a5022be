"""Games: create, read, a seat's view, list events, take actions (and wait for the next turn)."""
