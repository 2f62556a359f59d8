"""``dpcert budget``: create and inspect privacy-budget ledgers.

::

    dpcert budget init LEDGER DATASET --data SOURCE [--privacy-unit COL] [--type COL=TYPE ...]
                       (--epsilon E [--delta D] | --rho R) [--relation R]
                       [--rule auto|basic|renyi|gdp] [--json]
    dpcert budget show LEDGER DATASET [--next-epsilon E] [--json]
    dpcert budget history LEDGER DATASET [--json]

``init`` is the curator's binding of a data source to a budget: it records the source's absolute
real path and schema fingerprint (column names and types as dpcert reads them, no rows), the
privacy unit when given, the declared CSV column types, the total budget and the accounting rule
(`dpcert.accounting.binding`).  ``--rule`` chooses the privacy filter across releases
(default ``auto``: Gaussian-DP when the first release is Gaussian only, PLD points summed for a
first declared batch or when that admits as many releases like the first, else Rényi;
``docs/proofs/filters.md``).
``dpcert release`` then spends that budget only on that
source.  ``--unbound`` creates a dataset without a source (the curator then passes ``--data`` to
every release).

``show`` and ``history`` print both totals: *basic* (the sum of the charges' amounts, basic
composition) and *tight* (what the dataset's privacy filter charges: PLD inside each release,
a fully adaptive filter across releases; ``docs/proofs/filters.md``).  ``show`` names the rule
and what the next release (a Laplace release of ``--next-epsilon``, default 0.1) would cost
under it.  ``history`` prints every
charge with its privacy event.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
from fractions import Fraction
from typing import TYPE_CHECKING

from dpcert.cli._parsers import Subparsers

if TYPE_CHECKING:
    from dpcert.accounting.binding import Binding
    from dpcert.accounting.filters import Point
    from dpcert.accounting.ledger import BudgetStatus, Ledger, Spend
    from dpcert.core.measures import Measure

__all__ = ["register", "run"]


def register(subparsers: Subparsers) -> None:
    """Add the ``budget`` sub-command to the ``dpcert`` parser."""
    from dpcert.cli.exits import EPILOG

    p = subparsers.add_parser("budget", help="manage privacy-budget ledgers",
                              description="Create and inspect privacy-budget ledgers.",
                              epilog=EPILOG)
    sub = p.add_subparsers(dest="budget_command", metavar="ACTION", required=True)
    init = sub.add_parser("init", help="bind a data source to a dataset with a total budget",
                          epilog=EPILOG)
    init.add_argument("ledger")
    init.add_argument("dataset")
    src = init.add_mutually_exclusive_group(required=True)
    src.add_argument("--data", metavar="SOURCE",
                     help="the .csv/.parquet source this budget protects")
    src.add_argument("--unbound", action="store_true",
                     help="no bound source: every release must pass --data")
    init.add_argument("--privacy-unit", metavar="COL",
                      help="the column identifying a person; releases must use it")
    init.add_argument("--type", action="append", default=[], metavar="COL=TYPE",
                      help="how to read a CSV column (int, float, str, bool, date); repeatable")
    init.add_argument("--json", action="store_true", help="print one JSON object")
    group = init.add_mutually_exclusive_group(required=True)
    group.add_argument("--epsilon", type=str, help="total ε (pure DP, or with --delta)")
    group.add_argument("--rho", type=str, help="total ρ (zCDP)")
    init.add_argument("--delta", type=str, help="total δ (approximate DP)")
    init.add_argument("--relation", choices=("add-remove", "replace"),
                      help="neighbouring relation of every charge (default: fixed by the "
                           "first stated charge; engine releases are add-remove)")
    init.add_argument("--rule", choices=("auto", "basic", "renyi", "gdp"), default="auto",
                      help="privacy filter across releases (default auto: renyi, gdp when the "
                           "first release is Gaussian only; basic sums (ε, δ))")
    for name, text in (("show", "total, spent and remaining budget"),
                       ("history", "every charge, oldest first")):
        s = sub.add_parser(name, help=text, epilog=EPILOG)
        s.add_argument("ledger")
        s.add_argument("dataset")
        s.add_argument("--json", action="store_true", help="print one JSON object")
        if name == "show":
            s.add_argument("--next-epsilon", default="1/10", metavar="E",
                           help="quote a next Laplace release of this ε (default 0.1)")
    p.set_defaults(func=run)


def _num(text: str, name: str) -> Fraction:
    from dpcert.errors import InvalidParameter

    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError) as e:
        raise InvalidParameter(f"--{name}={text!r} is not a number") from e


def _total(args: argparse.Namespace) -> Measure:
    from dpcert.core.measures import ZCDP, ApproxDP, PureDP
    from dpcert.errors import InvalidParameter

    if args.rho is not None:
        if args.delta is not None:
            raise InvalidParameter("--delta does not apply to a --rho budget")
        return ZCDP(_num(args.rho, "rho"))
    if args.delta is not None:
        return ApproxDP(_num(args.epsilon, "epsilon"), _num(args.delta, "delta"))
    return PureDP(_num(args.epsilon, "epsilon"))


def _types(pairs: list[str]) -> dict[str, str]:
    from dpcert.errors import InvalidParameter

    out = {}
    for pair in pairs:
        col, sep, kind = pair.partition("=")
        if not sep or not col:
            raise InvalidParameter(f"--type={pair!r} must be COL=TYPE")
        out[col] = kind
    return out


def _binding(args: argparse.Namespace, total: Measure) -> Binding:
    """The curator's binding of ``--data`` (every check before the ledger is touched)."""
    from dpcert.accounting.binding import Binding, accounting_rule
    from dpcert.errors import InvalidParameter
    from dpcert.frame.source import polars_types, resolve_source, schema_fingerprint

    types = _types(args.type)
    location = resolve_source(args.data)
    fingerprint = schema_fingerprint(location, types)
    if args.privacy_unit is not None or types:
        from dpcert.frame.io import to_lazy

        names = to_lazy(location, polars_types(types) if types else None
                        ).collect_schema().names()
        unknown = [c for c in [args.privacy_unit, *types] if c is not None and c not in names]
        if unknown:
            raise InvalidParameter(f"columns {unknown} are not in --data={args.data!r}; it has "
                                   f"{names}")
    return Binding(location, fingerprint, accounting_rule(total, args.rule), args.privacy_unit,
                   types)


def _init(args: argparse.Namespace) -> int:
    from dpcert.accounting.binding import accounting_rule, create_bound
    from dpcert.accounting.ledger import Ledger
    from dpcert.errors import InvalidParameter

    total = _total(args)
    if args.unbound and (args.privacy_unit is not None or args.type):
        raise InvalidParameter("--privacy-unit and --type describe a bound --data source")
    rule = accounting_rule(total, args.rule)  # checks the choice before anything is written
    binding = None if args.unbound else _binding(args, total)
    ledger = Ledger(args.ledger)
    if binding is None:
        ledger.create(args.dataset, total, relation=args.relation, rule=args.rule)
    else:
        create_bound(ledger, args.dataset, total, binding, relation=args.relation,
                     rule=args.rule)
    out = {"ok": True, "ledger": args.ledger, "dataset": args.dataset, "total": repr(total),
           "rule": rule, "choice": args.rule, "relation": args.relation,
           "binding": None if binding is None else binding.to_json()}
    if args.json:
        print(json.dumps(out, ensure_ascii=False))
        return 0
    rel = f", {args.relation} neighbours" if args.relation else ""
    print(f"dataset {args.dataset!r}: budget {total!r}{rel} in {args.ledger}")
    print(f"  rule: {rule}")
    if binding is None:
        print("  no bound source: every release must pass --data")
    else:
        print(f"  bound to {binding.location} ({binding.fingerprint})")
        print(f"  privacy unit: {binding.privacy_unit or 'set by each spec'}; "
              f"accounting rule: {binding.rule}")
    return 0


def _open(path: str) -> Ledger:
    import os

    from dpcert.accounting.ledger import Ledger
    from dpcert.errors import InvalidParameter

    if not os.path.isfile(path):
        raise InvalidParameter(f"ledger={path!r} does not exist")
    return Ledger(path)


def _show(args: argparse.Namespace) -> int:
    from dpcert.accounting.binding import binding_of
    from dpcert.accounting.ledger import describe

    ledger = _open(args.ledger)
    st = ledger.status(args.dataset)
    binding = binding_of(ledger, args.dataset)
    nxt = _next(ledger, args.dataset, st, args.next_epsilon)
    if args.json:
        print(json.dumps({
            "ok": True, "dataset": st.dataset, "measure": st.measure,
            "total": describe(st.measure, st.total), "spent": describe(st.measure, st.spent),
            "basic": None if st.basic_spent is None else describe(st.measure, st.basic_spent),
            "remaining": describe(st.measure, st.remaining), "rule": st.rule,
            "charges": st.charges, "relation": ledger.relation(args.dataset),
            "choice": st.choice, "order": st.order, "next": nxt,
            "binding": None if binding is None else binding.to_json(),
        }, ensure_ascii=False))
        return 0
    print(f"dataset:   {st.dataset}")
    print(f"measure:   {st.measure}")
    print(f"total:     {describe(st.measure, st.total)}")
    print(f"spent:     {describe(st.measure, st.spent)}  (tight, {st.rule} filter)")
    if st.basic_spent is not None:
        print(f"basic:     {describe(st.measure, st.basic_spent)}  (sum of the charges)")
    print(f"remaining: {describe(st.measure, st.remaining)}")
    order = f" at order α = {st.order:g}" if st.order is not None else ""
    print(f"rule:      {st.rule} (chosen: {st.choice}){order}")
    print(f"next:      {nxt['release']} costs {nxt['cost']} under the {nxt['rule']} rule; "
          f"{'fits' if nxt['fits'] else 'does not fit'}")
    print(f"charges:   {st.charges}")
    print(f"relation:  {ledger.relation(args.dataset) or 'not fixed yet'}")
    print(f"source:    {'none bound' if binding is None else binding.location}")
    if binding is not None:
        print(f"schema:    {binding.fingerprint}")
        print(f"unit:      {binding.privacy_unit or 'set by each spec'}")
    return 0


def _next(ledger: Ledger, dataset: str, st: BudgetStatus, eps_text: str) -> dict[str, object]:
    """What a next Laplace release of ε = ``eps_text`` would cost under the dataset's rule."""
    from dpcert.accounting.ledger import describe
    from dpcert.core.events import LaplaceEvent
    from dpcert.errors import InvalidParameter, UnsupportedEvent

    eps = _num(eps_text, "next-epsilon")
    if eps <= 0:
        raise InvalidParameter(f"--next-epsilon={eps_text!r} must be positive")
    release = f"Laplace ε = {float(eps):g}"
    try:
        q = ledger.quote(dataset, LaplaceEvent(1 / eps))
    except UnsupportedEvent as e:
        return {"release": release, "rule": st.rule, "cost": None, "fits": False,
                "reason": str(e)}
    spent = describe(st.measure, q["spent_after"])
    cost = (f"{_scalar(q['tight']):.6g} of Rényi budget at α = {st.order:g}, spent after {spent}"
            if q["rule"] == "renyi" and st.order is not None else
            f"μ² = {_scalar(q['tight']):.6g}, spent after {spent}" if q["rule"] == "gdp" else
            describe(st.measure, q["tight"]))
    if q["rule"] == "renyi" and st.order is None:
        cost = f"spent after {spent}"
    return {"release": release, "rule": q["rule"], "cost": cost, "fits": bool(q["fits"])}


def _scalar(point: Point) -> float:
    """A Rényi or GDP cost, which is one number."""
    assert not isinstance(point, tuple)
    return float(point)


def _history(args: argparse.Namespace) -> int:
    from dpcert.accounting.codec import summarize
    from dpcert.accounting.ledger import describe

    ledger = _open(args.ledger)
    st = ledger.status(args.dataset)
    rows = ledger.history(args.dataset)

    def event(s: Spend) -> str:
        return "(amount only, recorded before events)" if s.legacy or s.event is None else (
            ("batch: " if s.batch else "") + summarize(s.event))

    def when(s: Spend) -> str:
        return _dt.datetime.fromtimestamp(s.time, _dt.UTC).isoformat(timespec="seconds")

    if args.json:
        print(json.dumps({"ok": True, "dataset": args.dataset, "charges": [
            {"id": s.id, "time": when(s), "amount": describe(st.measure, s.amount),
             "note": s.note, "event": event(s)} for s in rows],
            "spent": describe(st.measure, st.spent),
            "remaining": describe(st.measure, st.remaining),
            "total": describe(st.measure, st.total)}, ensure_ascii=False))
        return 0
    if not rows:
        print(f"dataset {args.dataset!r}: no charges")
    for s in rows:
        what = s.note or ""
        print(f"{s.id:>5}  {when(s)}  {describe(st.measure, s.amount):<28}  {what}".rstrip())
        print(f"{'':>7}event: {event(s)}")
    if rows:
        assert st.basic_spent is not None
        print(f"basic total: {describe(st.measure, st.basic_spent)}  (sum of the amounts)")
        iv = ""
        if st.spent_lower is not None and isinstance(st.spent, tuple) and (
                st.spent_lower < st.spent[0]):
            iv = f"; PLD interval of ε [{float(st.spent_lower):.6g}, {float(st.spent[0]):.6g}]"
        print(f"tight total: {describe(st.measure, st.spent)}  ({st.rule} filter{iv})")
        print(f"remaining:   {describe(st.measure, st.remaining)} of "
              f"{describe(st.measure, st.total)}")
    return 0


def run(args: argparse.Namespace) -> int:
    """Execute ``dpcert budget ...``; returns the exit code."""
    actions = {"init": _init, "show": _show, "history": _history}
    return actions[args.budget_command](args)
