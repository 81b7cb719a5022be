"""`cardarena probe`: whether a service is alive (or ready), for Kubernetes exec probes.

Exits 0 (alive, or ready) or 1, printing one line with the reason (`services.ops.probe`).
"""

from __future__ import annotations

import argparse

from services.ops.probe import probe
from services.settings import load_settings


def run(args: argparse.Namespace) -> int:
    """Prints whether `args.service` is alive (ready) in one line; returns 0 if so, else 1."""
    ok, reason = probe(args.service, load_settings(), ready=args.ready)
    what = "ready" if args.ready else "alive"
    print(f"{args.service}: {what if ok else 'not ' + what}: {reason}", flush=True)
    return 0 if ok else 1
