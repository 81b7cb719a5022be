"""Event and command Structs shared by every game, and the codec that stores them."""
