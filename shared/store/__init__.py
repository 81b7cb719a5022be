"""The EventStore port, its in-memory twin and the Redis Streams adapter."""
