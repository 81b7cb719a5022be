"""A bot program that plays as examples/local_bot.py does, a tenth of a second a move."""

import json
import sys
import time

PLAYS = ("PlayCards", "PlayToSequence")

for line in sys.stdin:
    legal = json.loads(line)["legal_actions"]
    plays = [action for action in legal if action.get("type") in PLAYS]
    time.sleep(0.1)
    print(json.dumps(plays[0] if plays else legal[0]), flush=True)
