"""Helpers shared by every tier of tests: real servers a test starts and stops itself."""
