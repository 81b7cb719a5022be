"""A bot program that answers each turn with its action, then a second line of debugging."""

import json
import sys

for line in sys.stdin:
    print(json.dumps(json.loads(line)["legal_actions"][0]))
    print("debug: that was easy", flush=True)
