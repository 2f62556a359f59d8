"""Accounting benchmark: dpcert's accountants side by side with dp-accounting and prv-accountant,
measured in one run (peers in their own interpreter, via ``--peers-python``).

    .venv/bin/python benchmarks/bench_accounting.py [--peers-python /work/peers/bin/python]

Sections (issues 5 and 15):
1. ε at δ = 1e-6 / 1e-5 for four workloads — 1000 × Gaussian(σ=50); 100 × Laplace(ε=0.1);
   1000 × Poisson(q=0.01) Gaussian(σ=1); DP-SGD 10⁴ × Poisson(q=0.01) Gaussian(σ=1.1) — every
   dpcert accountant (PLD with its [optimistic, pessimistic] interval), dp-accounting PLD and RDP,
   prv-accountant (its [lower, upper] interval).
2. Calibration: σ for 1000 Gaussians at (ε=1, δ=1e-5): dpcert's exact single-Gaussian solve vs
   dp-accounting's ``calibrate_dp_mechanism`` with its RDP accountant (with its PLD accountant
   it took 76 s here, so the run uses RDP, its fast path; RDP's σ is larger, i.e. looser).
4. The filter rules (issue 39): how many releases each rule (auto, basic, renyi, gdp) admits in
   ApproxDP(5, 1e-6) when chosen one at a time, the ε charged after k of them, the
   non-adaptive bound each aims at, and dp-accounting's RDP/PLD figures for the same k-fold
   composition (peers only when installed: otherwise the columns show "-").
3. The ledger's tight charges: a declared batch of 100 Laplace(ε=0.1) under ApproxDP(·, 1e-6)
   (target ≤ 4.8), and 100 adaptively chosen Gaussian(σ=10) releases (target within 5 % of the
   non-adaptive optimum), against basic composition.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import dpcert as dp
from dpcert.accounting import (
    ApproxAccountant,
    GaussianEvent,
    LaplaceEvent,
    PLDAccountant,
    PoissonSampledEvent,
    PureAccountant,
    RDPAccountant,
    SelfComposedEvent,
    ZCDPAccountant,
    gaussian_sigma,
)
from dpcert.accounting.gdp import gdp_epsilon
from dpcert.accounting.ledger import Ledger
from dpcert.errors import UnsupportedEvent

DELTAS = (1e-6, 1e-5)
WORKLOADS: dict[str, tuple[Any, int]] = {
    "1000 x Gaussian(sigma=50)": (GaussianEvent(sigma=50), 1000),
    "100 x Laplace(eps=0.1)": (LaplaceEvent(scale=10), 100),
    "1000 x Poisson(q=0.01) Gaussian(sigma=1)": (PoissonSampledEvent(GaussianEvent(sigma=1), 0.01),
                                                  1000),
    "DP-SGD 10^4 x Poisson(q=0.01) Gaussian(1.1)": (
        PoissonSampledEvent(GaussianEvent(sigma=1.1), 0.01), 10_000),
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
     ("100 x Gaussian(sigma=10)", dpa.GaussianDpEvent(10), 100),
     ("5 x Laplace(eps=1)", dpa.LaplaceDpEvent(1), 5),
     ("1000 x Poisson(q=0.01) Gaussian(sigma=1)",
      dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1)), 1000),
     ("DP-SGD 10^4 x Poisson(q=0.01) Gaussian(1.1)",
      dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.1)), 10000)]
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
try:
    from prv_accountant import (PRVAccountant, GaussianMechanism, LaplaceMechanism,
                                PoissonSubsampledGaussianMechanism)
    P = [("1000 x Gaussian(sigma=50)", GaussianMechanism(50), 1000),
         ("100 x Laplace(eps=0.1)", LaplaceMechanism(0.1), 100),
         ("1000 x Poisson(q=0.01) Gaussian(sigma=1)",
          PoissonSubsampledGaussianMechanism(0.01, 1.0), 1000),
         ("DP-SGD 10^4 x Poisson(q=0.01) Gaussian(1.1)",
          PoissonSubsampledGaussianMechanism(0.01, 1.1), 10000)]
    for name, prv, k in P:
        t = time.perf_counter()
        try:
            acc = PRVAccountant(prvs=[prv], max_self_compositions=[k], eps_error=0.01,
                                delta_error=1e-10)
            res = [list(acc.compute_epsilon(d, [k])) for d in (1e-6, 1e-5)]
        except Exception as e:  # noqa: BLE001
            res = [str(e)] * 2
        out[f"{name}|PRV"] = [res, time.perf_counter() - t]
except ImportError:
    pass
t = time.perf_counter()
sigma = dpa.calibrate_dp_mechanism(
    rdpacc.RdpAccountant, lambda s: dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(s), 1000),
    1.0, 1e-5)
out["calibrate|RDP"] = [sigma, time.perf_counter() - t]
print(json.dumps(out))
"""


def run_peers(peers_python: str | None) -> dict[str, Any]:
    """The peers' figures, from ``peers_python`` (or this interpreter if it has them)."""
    candidates = [sys.executable] + ([peers_python] if peers_python else [])
    for py in candidates:
        try:
            code = subprocess.run([py, "-c", PEER_SCRIPT], capture_output=True, text=True,
                                  check=True, timeout=900)
            return dict(json.loads(code.stdout))
        except (OSError, subprocess.SubprocessError, json.JSONDecodeError) as e:
            if py != sys.executable:
                print(f"peer run failed: {str(e)[-300:]}")
    return {}


def section_workloads(peers: dict[str, Any]) -> None:
    print(f"{'workload':44} {'accountant':14} {'eps@1e-6':>11} {'eps@1e-5':>11} {'time s':>8}")
    truth = {"1000 x Gaussian(sigma=50)": [gdp_epsilon(math.sqrt(1000) / 50, d) for d in DELTAS]}
    for name, (event, k) in WORKLOADS.items():
        if name in truth:
            t = truth[name]
            print(f"{name:44} {'(analytic)':14} {t[0]:11.7f} {t[1]:11.7f}")
        for label, cls in ACCOUNTANTS.items():
            start = time.perf_counter()
            try:
                acc = cls().compose(event, k)
                eps = [acc.epsilon(d) for d in DELTAS]
            except UnsupportedEvent:
                print(f"{name:44} {label:14} {'unsupported':>11}")
                continue
            dt = time.perf_counter() - start
            print(f"{name:44} {label:14} {eps[0]:11.7f} {eps[1]:11.7f} {dt:8.3f}")
            if isinstance(acc, PLDAccountant):
                iv = [acc.epsilon_interval(d) for d in DELTAS]
                print(f"{'':44} {'PLD interval':14} [{iv[0][0]:.5f}, {iv[0][1]:.5f}]"
                      f" [{iv[1][0]:.5f}, {iv[1][1]:.5f}]")
            peer = peers.get(f"{name}|{label}")
            if peer and all(isinstance(x, float) for x in peer[0]):
                (pe, pt) = peer
                print(f"{'':44} {'dp-acc ' + label:14} {pe[0]:11.7f} {pe[1]:11.7f} {pt:8.3f}"
                      f"   dpcert − peer Δε = {eps[0] - pe[0]:+.2e}, time ratio {dt / pt:.2f}")
        prv = peers.get(f"{name}|PRV")
        if prv and all(isinstance(x, list) for x in prv[0]):
            (r6, r5), pt = prv
            print(f"{'':44} {'prv-accountant':14} {r6[2]:11.7f} {r5[2]:11.7f} {pt:8.3f}"
                  f"   (upper; interval [{r6[0]:.5f}, {r6[2]:.5f}] at 1e-6)")


def section_calibration(peers: dict[str, Any]) -> None:
    start = time.perf_counter()
    reps = 100
    for _ in range(reps):
        sigma = gaussian_sigma(1.0, 1e-5, count=1000)
    dt = (time.perf_counter() - start) / reps
    check = PLDAccountant().compose(GaussianEvent(sigma), 1000).epsilon(1e-5)
    print(f"calibrate σ, 1000 Gaussians at (1, 1e-5): dpcert σ = {sigma:.6f} in {dt:.6f} s "
          f"(PLD check ε = {check:.6f})")
    peer = peers.get("calibrate|RDP")
    if peer:
        print(f"{'':41} dp-accounting (RDP) σ = {peer[0]:.6f} in {peer[1]:.3f} s; time ratio "
              f"{dt / peer[1]:.4f}")


def section_ledger() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        led = Ledger(str(Path(tmp) / "bench.sqlite"))
        led.create("batch", dp.ApproxDP(10, 1e-6))
        start = time.perf_counter()
        led.charge("batch", SelfComposedEvent(LaplaceEvent(10), 100), batch=True)
        st = led.status("batch")
        dt = time.perf_counter() - start
        basic = st.basic_spent
        assert isinstance(basic, tuple) and isinstance(st.spent, tuple)
        print(f"ledger: declared batch 100 × Laplace(ε=0.1), ApproxDP(·, 1e-6): basic "
              f"ε = {float(basic[0]):.4f}, charged ε = {float(st.spent[0]):.4f} "
              f"({st.rule} filter; target ≤ 4.8) in {dt:.3f} s")
        led.create("adaptive", dp.ApproxDP(5, 1e-6))
        start = time.perf_counter()
        for _ in range(100):
            led.charge("adaptive", GaussianEvent(10))
        st = led.status("adaptive")
        dt = time.perf_counter() - start
        assert isinstance(st.spent, tuple)
        opt = PLDAccountant().compose(GaussianEvent(10), 100).epsilon(1e-6)
        zcdp = ZCDPAccountant().compose(GaussianEvent(10), 100).epsilon(1e-6)
        charged = float(st.spent[0])
        print(f"ledger: 100 adaptive Gaussian(σ=10), ApproxDP(5, 1e-6): charged ε = "
              f"{charged:.5f} ({st.rule} filter), non-adaptive optimum (PLD) {opt:.5f}: "
              f"ratio {charged / opt:.4f} (target ≤ 1.05); a zCDP filter would charge "
              f"{zcdp:.4f}; basic composition cannot (no pure statement); "
              f"100 charges in {dt:.2f} s")


RULE_WORKLOADS = [("100 x Laplace(eps=0.1)", LaplaceEvent(10), 100),
                  ("100 x Gaussian(sigma=10)", GaussianEvent(10), 100),
                  ("5 x Laplace(eps=1)", LaplaceEvent(1), 5)]


def _adaptive(rule: str, event: Any, k: int) -> tuple[int, float | None, float | None, str]:
    """Charge ``event`` one release at a time to ApproxDP(5, 1e-6) under ``rule``: how many
    fit (up to 300), the ε charged after ``k`` of them (``None`` if fewer fit), the order and
    the rule in force."""
    from dpcert.accounting.filters import PrivacyFilter
    from dpcert.errors import BudgetExceeded, UnsupportedEvent

    f = PrivacyFilter(dp.ApproxDP(5, 1e-6), rule=rule)
    eps_k = None
    n = 0
    for n in range(300):
        try:
            f.charge(event)
        except (BudgetExceeded, UnsupportedEvent):
            break
        if n + 1 == k:
            spent = f.spent
            assert isinstance(spent, tuple)
            eps_k = float(spent[0])
    else:
        n = 300
    return n, eps_k, f.state.order, f.rule


def section_rules(peers: dict[str, Any]) -> None:
    """Issue 39: each filter rule, releases chosen one at a time, against the non-adaptive
    optimum it aims at and dp-accounting's (non-adaptive) figures for the same composition."""
    from dpcert.accounting.filters import basic_amount

    print("rules: ApproxDP(5, 1e-6), releases chosen adaptively one at a time")
    print(f"{'workload':26} {'rule':12} {'fit':>4} {'ε charged':>10} {'aims at':>22} "
          f"{'dp-acc RDP':>11} {'dp-acc PLD':>11}")
    for name, ev, k in RULE_WORKLOADS:
        pld = PLDAccountant().compose(ev, k).epsilon(1e-6)
        rdp_best = RDPAccountant().compose(ev, k).epsilon(1e-6)
        pr = peers.get(f"{name}|RDP")
        pp = peers.get(f"{name}|PLD")
        peer_r = f"{pr[0][0]:11.4f}" if pr and isinstance(pr[0][0], float) else f"{'-':>11}"
        peer_p = f"{pp[0][0]:11.4f}" if pp and isinstance(pp[0][0], float) else f"{'-':>11}"
        for rule in ("auto", "basic", "renyi", "gdp"):
            n, eps_k, order, used = _adaptive(rule, ev, k)
            if used == "renyi" and order is not None:
                at = RDPAccountant(orders=(order,)).compose(ev, k).epsilon(1e-6)
                aim = f"RDP α={order:g}: {at:.4f}"
            elif used == "approx":
                try:
                    one = basic_amount("ApproxDP", ev)
                    assert isinstance(one, tuple)
                    aim = f"Σε: {float(k * one[0]):.4f}"
                except UnsupportedEvent:  # a Gaussian has no (ε, δ) statement of its own
                    aim = "Σε: none"
            else:
                aim = f"PLD: {pld:.4f}"
            shown = f"{eps_k:10.4f}" if eps_k is not None else f"{'-':>10}"
            label = f"{rule}→{used}" if rule == "auto" else rule
            print(f"{name:26} {label:12} {n:4d} {shown} {aim:>22} {peer_r} {peer_p}")
        print(f"{'':26} (non-adaptive optimum: PLD {pld:.4f}, best-order RDP {rdp_best:.4f})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--peers-python", default=None)
    args = ap.parse_args()
    peers = run_peers(args.peers_python)
    if not peers:
        print("dp-accounting / prv-accountant not available: peer columns skipped")
    section_workloads(peers)
    print()
    section_calibration(peers)
    print()
    section_ledger()
    print()
    section_rules(peers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
