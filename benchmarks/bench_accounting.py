"""Accounting benchmark: ε at δ = 1e-6 / 1e-5 for three workloads, every dpcert accountant, and
Google's dp-accounting (PLD and RDP) when available.

    .venv/bin/python benchmarks/bench_accounting.py [--peers-python PATH]

Workloads (issue 5): 1000 × Gaussian(σ=50); 100 × Laplace(ε=0.1); 1000 × Poisson-subsampled
Gaussian(q=0.01, σ=1).  The peer side runs in-process if ``dp_accounting`` imports, else in the
interpreter given by ``--peers-python`` (e.g. /work/main/.peers/bin/python), else is skipped.
Target: dpcert PLD ε ≤ dp-accounting PLD ε + 1e-3, never below the truth, at least as fast.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from dpcert.accounting import (
    ApproxAccountant,
    GaussianEvent,
    LaplaceEvent,
    PLDAccountant,
    PoissonSampledEvent,
    PureAccountant,
    RDPAccountant,
    ZCDPAccountant,
)
from dpcert.errors import UnsupportedEvent

DELTAS = (1e-6, 1e-5)
WORKLOADS: dict[str, tuple[Any, int]] = {
    "1000 x Gaussian(sigma=50)": (GaussianEvent(sigma=50), 1000),
    "100 x Laplace(eps=0.1)": (LaplaceEvent(scale=10), 100),
    "1000 x Poisson(q=0.01) Gaussian(sigma=1)": (PoissonSampledEvent(GaussianEvent(sigma=1), 0.01),
                                                  1000),
}
ACCOUNTANTS = {"PLD": PLDAccountant, "RDP": RDPAccountant, "zCDP": ZCDPAccountant,
               "pure": PureAccountant, "approx": ApproxAccountant}

PEER_SCRIPT = r"""
import json, time, sys
import dp_accounting as dpa
from dp_accounting.pld import pld_privacy_accountant as pldacc
from dp_accounting.rdp import rdp_privacy_accountant as rdpacc
W = [("1000 x Gaussian(sigma=50)", dpa.GaussianDpEvent(50), 1000),
     ("100 x Laplace(eps=0.1)", dpa.LaplaceDpEvent(10), 100),
     ("1000 x Poisson(q=0.01) Gaussian(sigma=1)",
      dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1)), 1000)]
out = {}
for name, ev, k in W:
    for label, make in (("PLD", lambda: pldacc.PLDAccountant()),
                        ("RDP", lambda: rdpacc.RdpAccountant())):
        t = time.perf_counter()
        try:
            acc = make().compose(ev, k)
            eps = [acc.get_epsilon(d) for d in (1e-6, 1e-5)]
        except Exception as e:  # noqa: BLE001
            eps = [str(e)] * 2
        out[f"{name}|{label}"] = [eps, time.perf_counter() - t]
print(json.dumps(out))
"""


def gaussian_truth(mu: float, delta: float) -> float:
    """ε of one Gaussian with μ = Δ/σ at δ (Balle & Wang 2018), by bisection."""
    def d(e: float) -> float:
        phi = lambda x: 0.5 * math.erfc(-x / math.sqrt(2))  # noqa: E731
        return phi(mu / 2 - e / mu) - math.exp(e) * phi(-mu / 2 - e / mu)

    lo, hi = 0.0, 100.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if d(mid) <= delta else (mid, hi)
    return hi


def run_peers(peers_python: str | None) -> dict[str, Any]:
    try:
        import dp_accounting  # noqa: F401
        code = subprocess.run([sys.executable, "-c", PEER_SCRIPT], capture_output=True,
                              text=True, check=True)
        return dict(json.loads(code.stdout))
    except ImportError:
        pass
    except subprocess.CalledProcessError as e:
        print(f"peer run failed: {e.stderr[-500:]}")
        return {}
    if peers_python:
        try:
            code = subprocess.run([peers_python, "-c", PEER_SCRIPT], capture_output=True,
                                  text=True, check=True, timeout=600)
            return dict(json.loads(code.stdout))
        except (OSError, subprocess.SubprocessError, json.JSONDecodeError) as e:
            print(f"peer run failed: {e}")
    return {}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--peers-python", default=None)
    args = ap.parse_args()
    peers = run_peers(args.peers_python)
    if not peers:
        print("dp-accounting not available: peer columns skipped")
    truth = {"1000 x Gaussian(sigma=50)": [gaussian_truth(math.sqrt(1000) / 50, d)
                                           for d in DELTAS]}
    print(f"{'workload':42} {'accountant':12} {'eps@1e-6':>11} {'eps@1e-5':>11} {'time s':>8}")
    for name, (event, k) in WORKLOADS.items():
        if name in truth:
            t = truth[name]
            print(f"{name:42} {'(analytic)':12} {t[0]:11.7f} {t[1]:11.7f}")
        for label, cls in ACCOUNTANTS.items():
            start = time.perf_counter()
            try:
                acc = cls().compose(event, k)
                eps = [acc.epsilon(d) for d in DELTAS]
            except UnsupportedEvent:
                print(f"{name:42} {label:12} {'unsupported':>11}")
                continue
            dt = time.perf_counter() - start
            print(f"{name:42} {label:12} {eps[0]:11.7f} {eps[1]:11.7f} {dt:8.3f}")
            if label in ("PLD", "RDP") and f"{name}|{label}" in peers:
                (pe, pt) = peers[f"{name}|{label}"]
                if all(isinstance(x, float) for x in pe):
                    print(f"{name:42} {'peer ' + label:12} {pe[0]:11.7f} {pe[1]:11.7f} {pt:8.3f}"
                          f"   dpcert-peer Δε = {eps[0] - pe[0]:+.2e}, time ratio "
                          f"{dt / pt:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
