"""The ladders: permanent queues of bots, paired continuously."""
