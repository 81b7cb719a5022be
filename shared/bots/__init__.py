"""Built-in strategies; each sees only a seat's view and its legal actions."""
