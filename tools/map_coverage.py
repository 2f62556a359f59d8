"""Which tests guard each privacy map (issue 20, item 4: no map depends on a single test).

Runs every curated mutant of :mod:`tools.mutants` (or those given with ``--only``) with its
tests run to the end (no ``-x``) and a JUnit XML report, records which test functions fail, and
lists the mutants killed by exactly one test function.  Same options as ``tools/mutate.py``
(it is ``tools/mutate.py --killers``)::

    python tools/map_coverage.py -j 2 --report map_coverage.json
    python tools/map_coverage.py --only engine- keyed-
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tools.mutate import main

if __name__ == "__main__":
    raise SystemExit(main(["--killers", *sys.argv[1:]]))
