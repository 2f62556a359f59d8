"""Throughput of dpcert's exact samplers vs NumPy's insecure samplers (and OpenDP if installed).

Run: ``.venv/bin/python benchmarks/bench_samplers.py [--quick]``.  All ratios come from one run.
NumPy's ``default_rng`` is used here only as the (insecure, inexact) speed reference.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from dpcert.samplers import (
    discrete_gaussian,
    discrete_laplace,
    lattice_gaussian,
    lattice_laplace,
)


def rate(fn: Callable[[int], object], n: int, repeats: int) -> float:
    """Best-of-``repeats`` draws per second."""
    fn(1000)  # warm caches (tables are built once per parameter)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(n)
        best = min(best, time.perf_counter() - t0)
    return n / best


def opendp_cases() -> dict[str, Callable[[int], object]]:
    try:
        import opendp.prelude as odp  # type: ignore[import-not-found]
    except ImportError:
        return {}
    odp.enable_features("contrib")
    space = odp.vector_domain(odp.atom_domain(T=float, nan=False)), odp.l1_distance(T=float)
    lap = odp.m.make_laplace(*space, scale=1.0)
    space2 = odp.vector_domain(odp.atom_domain(T=float, nan=False)), odp.l2_distance(T=float)
    gau = odp.m.make_gaussian(*space2, scale=1.0)
    return {"laplace": lambda n: lap([0.0] * n), "gaussian": lambda n: gau([0.0] * n)}


_PEER_CODE = """
import json, time
import opendp.prelude as odp
odp.enable_features("contrib")
n = 10**5
s1 = odp.vector_domain(odp.atom_domain(T=float, nan=False)), odp.l1_distance(T=float)
s2 = odp.vector_domain(odp.atom_domain(T=float, nan=False)), odp.l2_distance(T=float)
out = {}
for kind, m in (("laplace", odp.m.make_laplace(*s1, scale=1.0)),
                ("gaussian", odp.m.make_gaussian(*s2, scale=1.0))):
    m([0.0] * 10)
    t0 = time.perf_counter(); m([0.0] * n); out[kind] = n / (time.perf_counter() - t0)
print(json.dumps(out))
"""


def opendp_rates_in(python: str) -> dict[str, float]:
    """OpenDP draws/s measured in another interpreter (the peers' venv)."""
    import json
    import subprocess

    out = subprocess.run([python, "-c", _PEER_CODE], capture_output=True, text=True, check=True)
    rates: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return rates


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="only 10^6 draws")
    ap.add_argument("--peers-python", default=None,
                    help="python of a venv with opendp, to measure it in the same run")
    args = ap.parse_args()
    sizes = [10**6] if args.quick else [10**6, 10**7]
    rng = np.random.default_rng()
    peers = opendp_cases()
    peer_rates: dict[str, float] = {}
    if not peers and args.peers_python:
        peer_rates = opendp_rates_in(args.peers_python)
    cases: list[tuple[str, Callable[[int], object], Callable[[int], object], str]] = [
        ("discrete_laplace(3)", lambda n: discrete_laplace(Fraction(3), n),
         lambda n: rng.laplace(0.0, 3.0, n), "laplace"),
        ("discrete_laplace(2^40)", lambda n: discrete_laplace(Fraction(2**40), n),
         lambda n: rng.laplace(0.0, 2.0**40, n), "laplace"),
        ("discrete_gaussian(5/2)", lambda n: discrete_gaussian(Fraction(5, 2), n),
         lambda n: rng.normal(0.0, 2.5, n), "gaussian"),
        ("discrete_gaussian(2^40)", lambda n: discrete_gaussian(Fraction(2**40), n),
         lambda n: rng.normal(0.0, 2.0**40, n), "gaussian"),
        ("lattice_laplace(0.0, 1.0)", lambda n: lattice_laplace(np.zeros(n), 1.0),
         lambda n: np.zeros(n) + rng.laplace(0.0, 1.0, n), "laplace"),
        ("lattice_gaussian(0.0, 1.0)", lambda n: lattice_gaussian(np.zeros(n), 1.0),
         lambda n: np.zeros(n) + rng.normal(0.0, 1.0, n), "gaussian"),
    ]
    print(f"{'sampler':28} {'draws':>9} {'dpcert M/s':>11} {'numpy M/s':>10} {'ratio':>6}"
          f" {'opendp M/s':>11}")
    for n in sizes:
        reps = 3 if n <= 10**6 else 1
        for name, ours, ref, kind in cases:
            r_ours = rate(ours, n, reps)
            r_np = rate(ref, n, reps)
            peer = peers.get(kind)
            if peer:
                r_od = f"{rate(peer, min(n, 10**5), 1) / 1e6:11.3f}"
            elif kind in peer_rates:
                r_od = f"{peer_rates[kind] / 1e6:11.3f}"
            else:
                r_od = f"{'n/a':>11}"
            print(f"{name:28} {n:>9.0e} {r_ours / 1e6:11.1f} {r_np / 1e6:10.1f}"
                  f" {r_np / r_ours:5.1f}x {r_od}")
    if peer_rates:
        print("(OpenDP 10^5 draws measured in --peers-python in this run)")
    elif not peers:
        print("(OpenDP not importable: install the 'bench' extra plus opendp to compare)")


if __name__ == "__main__":
    main()
