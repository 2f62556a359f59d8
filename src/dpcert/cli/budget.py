"""``dpcert budget``: create and inspect privacy-budget ledgers.

::

    dpcert budget init LEDGER DATASET --epsilon E [--delta D] | --rho R [--relation R]
    dpcert budget show LEDGER DATASET
    dpcert budget history LEDGER DATASET

``show`` and ``history`` print both totals: *basic* (the sum of the charges' amounts, basic
composition) and *tight* (what the dataset's privacy filter charges: PLD inside each release,
a fully adaptive filter across releases; ``docs/proofs/filters.md``).  ``history`` prints every
charge with its privacy event.  ``--relation add-remove|replace`` declares the neighbouring
relation every charge must be stated for; without it the first stated charge fixes it
(``docs/proofs/ledger.md``).
"""

from __future__ import annotations

import argparse
import datetime as _dt
from typing import Any

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    """Add the ``budget`` sub-command to the ``dpcert`` parser."""
    p = subparsers.add_parser("budget", help="manage privacy-budget ledgers",
                              description="Create and inspect privacy-budget ledgers.")
    sub = p.add_subparsers(dest="budget_command", metavar="ACTION", required=True)
    init = sub.add_parser("init", help="give a dataset a total budget")
    init.add_argument("ledger")
    init.add_argument("dataset")
    group = init.add_mutually_exclusive_group(required=True)
    group.add_argument("--epsilon", type=str, help="total ε (pure DP, or with --delta)")
    group.add_argument("--rho", type=str, help="total ρ (zCDP)")
    init.add_argument("--delta", type=str, help="total δ (approximate DP)")
    init.add_argument("--relation", choices=("add-remove", "replace"),
                      help="neighbouring relation of every charge (default: fixed by the "
                           "first stated charge; engine releases are add-remove)")
    for name, text in (("show", "total, spent and remaining budget"),
                       ("history", "every charge, oldest first")):
        s = sub.add_parser(name, help=text)
        s.add_argument("ledger")
        s.add_argument("dataset")
    p.set_defaults(func=run)


def _num(text: str, name: str) -> Any:
    from fractions import Fraction

    from dpcert.errors import InvalidParameter

    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError) as e:
        raise InvalidParameter(f"--{name}={text!r} is not a number") from e


def run(args: argparse.Namespace) -> int:
    """Execute ``dpcert budget ...``; returns the exit code."""
    from dpcert.accounting.ledger import Ledger, describe
    from dpcert.core.measures import ZCDP, ApproxDP, Measure, PureDP
    from dpcert.errors import InvalidParameter

    ledger = Ledger(args.ledger)
    if args.budget_command == "init":
        total: Measure
        if args.rho is not None:
            if args.delta is not None:
                raise InvalidParameter("--delta does not apply to a --rho budget")
            total = ZCDP(_num(args.rho, "rho"))
        elif args.delta is not None:
            total = ApproxDP(_num(args.epsilon, "epsilon"), _num(args.delta, "delta"))
        else:
            total = PureDP(_num(args.epsilon, "epsilon"))
        ledger.create(args.dataset, total, relation=args.relation)
        rel = f", {args.relation} neighbours" if args.relation else ""
        print(f"dataset {args.dataset!r}: budget {total!r}{rel} in {args.ledger}")
        return 0
    if args.budget_command == "show":
        st = ledger.status(args.dataset)
        print(f"dataset:   {st.dataset}")
        print(f"measure:   {st.measure}")
        print(f"total:     {describe(st.measure, st.total)}")
        print(f"spent:     {describe(st.measure, st.spent)}  (tight, {st.rule} filter)")
        if st.basic_spent is not None:
            print(f"basic:     {describe(st.measure, st.basic_spent)}  (sum of the charges)")
        print(f"remaining: {describe(st.measure, st.remaining)}")
        print(f"charges:   {st.charges}")
        print(f"relation:  {ledger.relation(args.dataset) or 'not fixed yet'}")
        return 0
    from dpcert.accounting.codec import summarize

    st = ledger.status(args.dataset)
    rows = ledger.history(args.dataset)
    if not rows:
        print(f"dataset {args.dataset!r}: no charges")
    for s in rows:
        when = _dt.datetime.fromtimestamp(s.time, _dt.UTC).isoformat(timespec="seconds")
        what = s.note or ""
        ev = "(amount only, recorded before events)" if s.legacy or s.event is None else (
            ("batch: " if s.batch else "") + summarize(s.event))
        print(f"{s.id:>5}  {when}  {describe(st.measure, s.amount):<28}  {what}".rstrip())
        print(f"{'':>7}event: {ev}")
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
