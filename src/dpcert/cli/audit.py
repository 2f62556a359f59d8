"""``dpcert audit``: audit a mechanism, or every dpcert mechanism (``--self``).

``dpcert audit MODULE:CALLABLE --claimed-epsilon E [--pair X X'] ...`` audits a vectorised
black box ``f(x, n)`` (``--scalar`` for a one-output ``g(x)``) or a ``Measurement`` object,
with the options of `dpcert.audit.audit` (pairs, input size, sensitivity, adjacency,
samples, confidence, seconds, candidates, ladder, seed, workers, worker init); progress goes
to stderr (``--quiet`` hides it) and ``--json`` prints the result as JSON.
``dpcert audit --self [--quick] [--plot-dir DIR]`` audits the registry of
`dpcert.selfaudit.targets` and prints a table (or JSON).  The exit code is 1 when any claim
is violated.
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpcert._types import JSON
from dpcert.cli._parsers import Subparsers
from dpcert.cli.progress import Steps, progress_mode
from dpcert.errors import InvalidParameter

if TYPE_CHECKING:
    from dpcert.core.measures import Measure
    from dpcert.selfaudit.targets import TargetReport

__all__ = ["register", "run"]

#: Per-mechanism confidence of ``--self``: with ~15 targets a correct build fails CI with
#: probability below 2e-5.
SELF_CONFIDENCE = 1.0 - 1e-6


def register(subparsers: Subparsers) -> None:
    """Add the ``audit`` sub-command."""
    from dpcert.cli.exits import EPILOG

    p = subparsers.add_parser(
        "audit", help="measure a lower bound on a mechanism's ε from its samples",
        description="Empirical privacy audit (lower bounds on ε with exact Clopper–Pearson "
                    "confidence). Exit code 1 on any violation.",
        epilog=EPILOG,
    )
    p.add_argument("target", nargs="?", metavar="MODULE:CALLABLE",
                   help="f(x, n) returning n outputs, g(x) with --scalar, or a Measurement")
    p.add_argument("--self", dest="self_audit", action="store_true",
                   help="audit every dpcert mechanism")
    p.add_argument("--quick", action="store_true", help="short budget per mechanism (CI)")
    p.add_argument("--only", action="append", default=[], metavar="NAME",
                   help="with --self: audit only targets whose name contains NAME")
    p.add_argument("--claimed-epsilon", type=float, default=None, metavar="E")
    p.add_argument("--claimed-delta", type=float, default=None, metavar="D")
    p.add_argument("--claimed-rho", type=float, default=None, metavar="RHO",
                   help="a zCDP claim, audited as (ε, δ)-DP at --zcdp-delta")
    p.add_argument("--zcdp-delta", type=float, default=1e-6, metavar="D")
    p.add_argument("--pair", nargs=2, action="append", default=None, metavar=("X", "X_PRIME"),
                   help="a neighbouring pair (JSON values, e.g. --pair 0 1 or "
                        "--pair '[1,1]' '[2,1]'); repeatable")
    p.add_argument("--input-size", type=int, default=None,
                   help="vector length for StatDP's pair patterns")
    p.add_argument("--sensitivity", type=float, default=1.0,
                   help="how far neighbouring inputs' answers differ (generated pairs)")
    p.add_argument("--adjacency", choices=["linf", "l1"], default="linf",
                   help="generated vector pairs: every answer may move (linf) or one (l1)")
    p.add_argument("--candidates", type=int, default=2,
                   help="best events estimated")
    p.add_argument("--ladder", type=int, default=4,
                   help="smaller rays nested in the best event, estimated too (the union "
                        "bound covers candidates + ladder)")
    p.add_argument("--seed", type=int, default=None,
                   help="seed of the auditor's own randomness (Poisson sample sizes)")
    p.add_argument("--json", action="store_true", help="print the result(s) as JSON")
    p.add_argument("--quiet", action="store_true",
                   help="no progress on stderr (a live display on a terminal, with rich "
                        "installed; plain lines when stderr is not a terminal)")
    p.add_argument("--scalar", action="store_true",
                   help="the callable is g(x) returning one output")
    p.add_argument("--workers", type=int, default=1, metavar="W",
                   help="processes drawing the estimation batch and the screens of "
                        "few-valued outputs (forked; the mechanism must draw independently "
                        "in each, as dpcert measurements do)")
    p.add_argument("--worker-init", default=None, metavar="MODULE:CALLABLE",
                   help="called as f(w) in worker process w (distinct for every worker, "
                        "search's and estimation's) before it draws, to reseed the "
                        "mechanism's generator")
    p.add_argument("--samples", type=int, default=None)
    p.add_argument("--seconds", type=float, default=None)
    p.add_argument("--confidence", type=float, default=None,
                   help="per mechanism; default 0.95, or 1 - 1e-6 with --self (so CI never "
                        "raises a false alarm)")
    p.add_argument("--plot-dir", type=Path, default=None,
                   help="write one PNG per mechanism (needs matplotlib)")
    p.set_defaults(func=run)


def _parse_value(text: str) -> JSON:
    try:
        value: JSON = json.loads(text)
        return value
    except json.JSONDecodeError:
        return text


def _load(spec: str, what: str = "target") -> Any:  # an imported attribute: dynamic
    if ":" not in spec:
        raise InvalidParameter(f"{what}={spec!r} must be MODULE:CALLABLE")
    mod_name, _, attr = spec.partition(":")
    sys.path.insert(0, str(Path.cwd()))
    try:
        obj: object = importlib.import_module(mod_name)
    except ImportError as e:
        raise InvalidParameter(f"{what}={spec!r}: cannot import {mod_name!r}: {e}") from e
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise InvalidParameter(f"{what}={spec!r}: {mod_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    return obj


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
             for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _run_self(args: argparse.Namespace) -> int:
    from dpcert.audit.plot import matplotlib_available
    from dpcert.selfaudit.targets import TARGETS, run_target

    seconds = args.seconds or (1.5 if args.quick else 20.0)
    confidence = args.confidence if args.confidence is not None else SELF_CONFIDENCE
    rows = [["mechanism", "claimed ε", "lower bound", "verdict", "samples", "seconds",
             "sampling"]]
    violations = 0
    records: list[dict[str, object]] = []
    plots = args.plot_dir is not None and matplotlib_available()
    if args.plot_dir is not None and not plots:
        print("dpcert audit: matplotlib is not installed; no plots written", file=sys.stderr)
    chosen = [t for t in TARGETS if not args.only or any(o in t.name for o in args.only)]
    with Steps(len(chosen), "dpcert audit", progress_mode(args.quiet)) as steps:
        for target in chosen:
            steps.note(f"{target.name} ...")
            rep = run_target(target, seconds=seconds, confidence=confidence,
                             workers=args.workers)
            steps.step(f"{target.name}: {rep.status}")
            violations += _record(args, rep, rows, records, plots)
    if args.json:
        print(json.dumps({"targets": records, "violations": violations,
                          "confidence": confidence}, indent=1))
    else:
        print(_table(rows))
        print(f"\n{violations} violation(s); confidence {confidence:g} per mechanism")
    return 1 if violations else 0


def _record(args: argparse.Namespace, rep: TargetReport, rows: list[list[str]],
            records: list[dict[str, object]], plots: bool) -> int:
    """Add one target's report to the table and the JSON records; 1 if it is a violation."""
    from dpcert.audit.plot import plot_result

    r = rep.result
    records.append({"mechanism": rep.name, "status": rep.status, "note": rep.note,
                    "sampling": rep.sampling, "seconds": rep.seconds,
                    "result": None if r is None else r.to_dict()})
    if r is None:
        rows.append([rep.name, "-", "-", rep.status, "-", f"{rep.seconds:.1f}", rep.note])
        return 0
    at = f" (δ={r.delta:.0e})" if r.delta > 0 else ""
    rows.append([rep.name, f"{r.claimed_epsilon:.4g}{at}", f"{r.epsilon_lower:.4f}",
                 rep.status, f"{r.samples:,}", f"{rep.seconds:.1f}", rep.sampling])
    if plots and rep.built is not None:
        plot_result(r, rep.built.sampler, args.plot_dir / f"{_slug(rep.name)}.png")
    if r.violated:
        print(f"VIOLATION: {r}", file=sys.stderr)
        return 1
    return 0


def run(args: argparse.Namespace) -> int:
    """Run ``dpcert audit``; returns the exit code (1 on a violation)."""
    if args.self_audit:
        return _run_self(args)
    if args.target is None:
        raise InvalidParameter("give MODULE:CALLABLE or --self")
    import dpcert as dp
    from dpcert.audit import AuditOptions, audit, one_at_a_time
    from dpcert.audit.plot import matplotlib_available, plot_result
    from dpcert.core.measurement import Measurement

    mech = _load(args.target)
    # loaded (and checked by audit) before anything is drawn
    worker_init = None if args.worker_init is None else _load(args.worker_init, "worker_init")
    if not callable(mech):
        raise InvalidParameter(f"target={args.target!r} is not callable")
    sampler = one_at_a_time(mech) if args.scalar and not isinstance(mech, Measurement) else mech
    claimed: Measure | None = None
    if args.claimed_epsilon is not None and args.claimed_rho is not None:
        raise InvalidParameter("give --claimed-epsilon or --claimed-rho, not both")
    if args.claimed_epsilon is not None:
        claimed = (dp.ApproxDP(args.claimed_epsilon, args.claimed_delta)
                   if args.claimed_delta else dp.PureDP(args.claimed_epsilon))
    if args.claimed_rho is not None:
        claimed = dp.ZCDP(args.claimed_rho)
    pairs = None
    if args.pair:
        pairs = [(_parse_value(a), _parse_value(b)) for a, b in args.pair]
    confidence = args.confidence if args.confidence is not None else 0.95
    options = AuditOptions(claimed=claimed, samples=args.samples, seconds=args.seconds,
                           confidence=confidence, input_size=args.input_size,
                           sensitivity=args.sensitivity, adjacency=args.adjacency,
                           candidates=args.candidates, ladder=args.ladder,
                           zcdp_delta=args.zcdp_delta, seed=args.seed, name=args.target,
                           workers=args.workers, worker_init=worker_init)
    # a measurement (an engine release, ``query.measurement(budget)``, included) and a black
    # box go through the same call; --self audits the registry's targets the same way
    with Steps(0, "dpcert audit", progress_mode(args.quiet)) as steps:  # phases, not counted
        result = audit(sampler, pairs, replace(options,
                                               progress=None if args.quiet else steps.note))
    print(json.dumps(result.to_dict(), indent=1) if args.json else result)
    if args.plot_dir is not None and matplotlib_available():
        from dpcert.audit.kernel.outputs import measurement_sampler

        s = measurement_sampler(mech) if isinstance(mech, Measurement) else sampler
        plot_result(result, s, args.plot_dir / f"{_slug(args.target)}.png")
    return 1 if result.violated else 0
