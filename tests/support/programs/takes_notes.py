"""A bot program that plays each turn's first legal action with a private note; with the
argument `bad`, every third note holds a control character (a note that cannot be one)."""

import json
import sys

bad = sys.argv[1:] == ["bad"]
for turns, line in enumerate(sys.stdin, start=1):
    turn = json.loads(line)
    note = "bell\x07" if bad and turns % 3 == 0 else f"turn {turns}:\tthe first legal action"
    print(json.dumps({**turn["legal_actions"][0], "note": note}), flush=True)
