"""Ledger benchmark (issue 39): 10⁴ charges to one dataset; each charge must cost the same
whatever the length of the history (the filter's running state is read, not the history).

    .venv/bin/python benchmarks/bench_ledger.py [--charges 10000] [--pure] [--dir /dev/shm]
                                                [--out benchmarks/results]

Charges Laplace(ε = 0.001) releases to ``ApproxDP(100, 1e-6)`` under the default rule (Rényi)
and, with ``--pure``, a ``PureDP`` dataset (the sum rule), each through ``Ledger.charge`` — one
``BEGIN IMMEDIATE`` transaction with ``synchronous=FULL`` per charge.  Prints the median time
of the ten charges ending at charges 10, 100, 1000 and 10000 (one process, no peers: no other
library keeps a hash-chained budget ledger), the time of ``Ledger.verify()`` over the whole
chain, and writes ``bench_ledger.json`` into ``--out``.  The ledger file lives in ``--dir``
(default ``/dev/shm`` where it exists, so that fsync — about 30 ms per charge on this
machine's disk, the same at every length — does not hide the work that depends on the
history).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import dpcert as dp
from dpcert.accounting.ledger import Ledger
from dpcert.core.events import LaplaceEvent


def _run(budget: dp.core.measures.Measure, n: int, marks: list[int],
         folder: str | None) -> dict[str, object]:
    path = str(Path(tempfile.mkdtemp(dir=folder)) / "bench.sqlite")
    led = Ledger(path)
    led.create("d", budget)
    times: list[float] = []
    for _ in range(n):
        t0 = time.perf_counter()
        led.charge("d", LaplaceEvent(1000))
        times.append(time.perf_counter() - t0)
    per = {str(m): statistics.median(times[max(0, m - 10):m]) * 1e3 for m in marks if m <= n}
    t0 = time.perf_counter()
    verified = Ledger(path).verify("d")
    st = led.status("d")
    return {"budget": repr(budget), "rule": st.rule, "charges": st.charges,
            "ms_per_charge_at": per, "verify_s": time.perf_counter() - t0 if verified else None,
            "spent": [float(x) for x in st.spent] if isinstance(st.spent, tuple)
            else float(st.spent)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--charges", type=int, default=10_000)
    ap.add_argument("--pure", action="store_true", help="also a PureDP dataset (sum rule)")
    ap.add_argument("--dir", default="/dev/shm" if Path("/dev/shm").is_dir() else None)
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"))
    args = ap.parse_args()
    marks = [10, 100, 1000, 10_000]
    rows = {"renyi": _run(dp.ApproxDP(100, 1e-6), args.charges, marks, args.dir)}
    if args.pure:
        rows["pure"] = _run(dp.PureDP(100), args.charges, marks, args.dir)
    print(f"{'dataset':<8} {'rule':<6} " + " ".join(f"{'@' + str(m):>9}" for m in marks)
          + "   verify (s)")
    for name, r in rows.items():
        per = r["ms_per_charge_at"]
        assert isinstance(per, dict)
        cells = " ".join(f"{per[str(m)]:>7.2f}ms" if str(m) in per else f"{'-':>9}"
                         for m in marks)
        print(f"{name:<8} {r['rule']!s:<6} {cells}   {r['verify_s']:.2f}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_ledger.json").write_text(json.dumps(
        {"benchmark": "bench_ledger", "charges": args.charges, "dir": args.dir,
         "results": rows}, indent=2)
        + "\n")
    print(f"written {out / 'bench_ledger.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
