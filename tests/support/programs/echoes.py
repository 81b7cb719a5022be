"""A bot program that answers each turn with the names of the turn's fields, and its pid."""

import json
import os
import sys

for line in sys.stdin:
    turn = json.loads(line)
    print(json.dumps({"type": "Echo", "fields": sorted(turn), "pid": os.getpid()}), flush=True)
