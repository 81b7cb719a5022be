"""The bot registry over HTTP: register bots, list them, rotate and revoke their tokens."""
