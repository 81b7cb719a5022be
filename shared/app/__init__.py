"""Use cases: each loads a stream, decides with the pure models and rules, and appends."""
