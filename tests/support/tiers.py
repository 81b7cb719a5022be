"""The tiers of the tests."""

TIERS = ("unit", "contract", "integration", "e2e", "reliability")
"""The tiers, each a folder under tests/ and a marker of the same name (pyproject.toml): the
root conftest marks a test with the folder it lives in."""
