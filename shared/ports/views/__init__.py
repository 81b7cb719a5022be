"""Read views of tournaments and ratings: the port, the pure fold, the in-memory twin."""
