"""Accounts over HTTP: make an account (as the host's registration setting allows), read the
calling account and its bots, issue invite codes, suspend an account."""
