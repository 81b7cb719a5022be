"""A bot program that reads its turn and never answers."""

import sys
import time

for _line in sys.stdin:
    time.sleep(3600)
