"""Run every dpcert benchmark (one command: ``make bench`` or ``python benchmarks/run.py``).

Each benchmark measures dpcert and its named peers in the same run and prints ratios.  Peers
(OpenDP, dp-accounting, PipelineDP) are optional: install them in a separate venv (see
``shared/bench-peers/README.md``) and pass ``--peers-python PATH``; without it, the peer
columns are skipped or show published figures where a benchmark says so.

Usage: ``python benchmarks/run.py [--full] [--peers-python PATH] [--only NAME]``
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="the issues' full sizes (slow)")
    ap.add_argument("--peers-python", default=None)
    ap.add_argument("--only", action="append", default=None)
    args = ap.parse_args()
    peers = ["--peers-python", args.peers_python] if args.peers_python else []
    runs = {
        "samplers": ["bench_samplers.py", *([] if args.full else ["--quick"]), *peers],
        "accounting": ["bench_accounting.py", *peers],
        "engine": ["bench_engine.py", "--rows", "1e7" if args.full else "1e6", "--reps",
                   "3" if args.full else "1"],
        "groupby": ["bench_groupby.py", "--rows", *(["1e7", "1e8"] if args.full else ["1e6"]),
                    "--reps", "5" if args.full else "2"],
        "continual": ["bench_continual.py", "--steps", "4096"],
        "audit": ["bench_audit.py", *([] if args.full else ["--samples", "200000"])],
    }
    rc = 0
    for name, cmd in runs.items():
        if args.only and name not in args.only:
            continue
        print(f"\n=== {name}: {' '.join(cmd)}", flush=True)
        rc |= subprocess.call([sys.executable, str(HERE / cmd[0]), *cmd[1:]])
    return rc


if __name__ == "__main__":
    sys.exit(main())
