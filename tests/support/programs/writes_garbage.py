"""A bot program that answers every turn with a line that is not JSON."""

import sys

for _line in sys.stdin:
    print("I play the ace of spades", flush=True)
