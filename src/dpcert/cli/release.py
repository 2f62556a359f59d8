"""``dpcert release SPEC --ledger LEDGER --dataset DATASET [--out DIR]``: a DP release of the
curator's table, with the analyst's queries from a TOML spec.

Roles (``docs/threat_model.md``): the spec is the analyst's and holds the privacy unit and the
queries only (`dpcert.cli.spec`); the ledger, the dataset (with its total budget and its
bound data source), the output directory and the engine are the curator's, on the command line or
in a curator config (`dpcert.cli.curator`).  Without a ledger the curator says
``--no-ledger`` and gives ``--data`` and a ``--budget-*`` total.

Everything is checked before anything is charged: the spec (strict schema, then every query
against the schema), the source against the ledger dataset's binding (location, schema
fingerprint, privacy unit), the total of all queries against what the ledger has left, and every
output file (inside the output directory, no symbolic link).  The spec is a batch declared in
advance, charged once (``Session.release_all``, PLD inside the batch:
``docs/proofs/filters.md``); then each query is computed and written with its certificate:
``<query>.csv`` and ``<query>.certificate.json``; at the end ``results.json``,
``certificate.json``, ``report.md`` and ``report.html``.  A query that fails after the charge
(a data-free ``ReleaseFailed``) leaves the releases computed before it on disk; exit code 3.
``--dry-run`` reads only the schema and prints what would be spent, the accuracy and every
default applied.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from dpcert.cli._parsers import Subparsers
from dpcert.cli.curator import add_curator_flags, out_path
from dpcert.cli.exits import EPILOG, OK, PARTIAL, REFUSED
from dpcert.cli.progress import Steps, progress_mode
from dpcert.errors import DPCertError

if TYPE_CHECKING:
    import polars as pl

    from dpcert._types import JSON
    from dpcert.cli.build import Built, Queries
    from dpcert.cli.curator import Curator
    from dpcert.cli.spec import ReleaseSpec
    from dpcert.frame.session import Release, Session

__all__ = ["register", "run"]


class Written(TypedDict, total=False):
    """What a release wrote: each query's files, the Markdown and HTML reports."""

    queries: dict[str, dict[str, str]]
    report: str
    html: str | None

#: Files every release writes besides ``<query>.csv`` / ``<query>.certificate.json``.
FIXED_OUTPUTS = ("results.json", "certificate.json", "report.md", "report.html")


class _Planned(TypedDict):
    """A dry run's line for one query."""

    name: str
    would_spend: str
    accuracy: list[dict[str, object]]


def _prepare(args: argparse.Namespace,
             check_total: bool) -> tuple[ReleaseSpec, Curator, Built]:
    """Spec, curator and the built session: every check that needs no charge."""
    from dpcert.cli.build import build
    from dpcert.cli.curator import curator_from
    from dpcert.cli.spec import load_spec

    spec_path = Path(args.spec)
    spec, text = load_spec(spec_path)  # the analyst's input first: strict, reads no data
    cur = curator_from(args)
    built = build(spec_path, spec, text, cur, check_total=check_total)
    return spec, cur, built


def _outputs(out_dir: Path, names: list[str]) -> list[Path]:
    """Every file the release will write, each checked to stay inside ``out_dir``."""
    files = [f"{n}{ext}" for n in names for ext in (".csv", ".certificate.json")]
    files += [*FIXED_OUTPUTS, *(f"report_{n}.png" for n in names)]
    return [out_path(out_dir, f) for f in files]


def _write(out_dir: Path, name: str, text: str) -> Path:
    """Write ``text`` to ``out_dir/name`` without following a symbolic link there."""
    path = out_path(out_dir, name)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    with os.fdopen(os.open(path, flags, 0o644), "w", encoding="utf-8") as f:
        f.write(text)
    return path


#: This module's logger (``dpcert.cli.release``); dpcert adds no handlers.
LOG = logging.getLogger(__name__)


def run(args: argparse.Namespace) -> int:
    """Run (or dry-run) a release spec."""
    LOG.info("release %s%s", args.spec, " (dry run)" if args.dry_run else "")
    alpha_default = args.alpha is None
    if alpha_default:
        args.alpha = ALPHA
    if args.dry_run:
        return _dry_run(args, alpha_default)
    spec, cur, built = _prepare(args, check_total=True)
    sess, queries = built.sess, built.queries
    if not args.json:
        _note_bound_defaults(spec)
    if sess._ledger is None:
        print("dpcert: WARNING: --no-ledger: this run's spending is not recorded anywhere, and "
              "running it again spends the budget AGAIN.", file=sys.stderr)
    if cur.out.exists() and not cur.out.is_dir():
        from dpcert.errors import InvalidParameter

        raise InvalidParameter(f"--out={str(cur.out)!r} exists and is not a directory")
    _outputs(cur.out, [n for n, _, _ in queries])  # before the charge
    cur.out.mkdir(parents=True, exist_ok=True)
    n = len(queries)
    t0 = time.perf_counter()
    failed: BaseException | None = None
    written: Written = {}
    shown: dict[str, Release] = {}  # the releases whose files were written, to print
    # steps: the charge and computation of the whole batch, then writing each query's files
    with Steps(n + 1, "dpcert release", progress_mode(getattr(args, "quiet", False))) as steps:
        steps.note(f"charging the spec as one batch and computing {n} quer"
                   f"{'y' if n == 1 else 'ies'}")
        try:  # one charge for the whole spec: a batch declared in advance (PLD inside it)
            rels = sess.release_all([(q, b, name) for name, q, b in queries], alpha=args.alpha)
        except DPCertError as e:  # after the charge, the releases computed so far are paid for
            failed, rels = e, list(getattr(e, "partial", []))
        steps.step(f"computed {len(rels)} of {n}")
        try:
            written, shown = _write_all(args, cur.out, sess, queries, rels, t0, steps)
        except Exception as e:  # the charge stands: say so, without data
            failed = failed or e
    if shown and not args.json:
        _print_summary(args, sess, written, shown)
    return _finish(args, sess, written, failed)


def _note_bound_defaults(spec: ReleaseSpec) -> None:
    """State on stderr the contribution bounds a run takes by default (``--dry-run`` lists
    every default)."""
    from dpcert.cli.spec import applied_defaults

    for line in applied_defaults(spec):
        if ": max_groups = " in line or ": max_rows_per_group = " in line:
            print(f"dpcert: default {line} (not in the spec; rows beyond it are dropped)",
                  file=sys.stderr)


def _write_all(args: argparse.Namespace, out: Path, sess: Session, queries: Queries,
               rels: list[Release], t0: float, steps: Steps) -> tuple[Written, dict[str, Release]]:
    """Write each query's files, then the reports; (what was written, the releases)."""
    results: dict[str, pl.DataFrame] = {}
    releases: dict[str, Release] = {}
    certs: dict[str, dict[str, JSON]] = {}
    files: dict[str, dict[str, str]] = {}
    for (name, _, _), rel in zip(queries, rels, strict=False):
        raw = rel.to_polars(tidy=False)  # the reports read the raw intervals
        results[name], releases[name], certs[name] = raw, rel, rel.certificate
        csv = _write(out, f"{name}.csv", raw.write_csv())
        cert = _write(out, f"{name}.certificate.json",
                      json.dumps(rel.certificate, indent=2, default=str))
        files[name] = {"csv": str(csv), "certificate": str(cert)}
        steps.step(f"wrote {name}")
    steps.note(f"done in {time.perf_counter() - t0:.1f} s")
    if not results:
        return {"queries": files}, {}
    _write(out, "results.json", json.dumps({k: v.to_dicts() for k, v in results.items()},
                                           indent=2, default=str))
    _write(out, "certificate.json", json.dumps(certs, indent=2, default=str))
    from dpcert.report.html import write_html_report
    from dpcert.report.markdown import write_report

    report = write_report(out, results, certs, sess)
    html = write_html_report(out, releases, certs)
    return ({"queries": files, "report": str(report), "html": str(html) if html else None},
            releases)


def _print_summary(args: argparse.Namespace, sess: Session, written: Written,
                   releases: dict[str, Release]) -> None:
    """The released tables and where the reports are (after the progress display closed)."""
    _print_tables(releases, args.alpha)
    print(f"\nspent {sess.budget.describe(sess.spent)} of {sess.budget!r}; wrote "
          f"{written['report']}")
    print(f"HTML report: {written['html']}" if written["html"] else
          'HTML report skipped: Jinja2 is not installed (pip install "dpcert[report]")')


def _print_tables(releases: dict[str, Release], alpha: float) -> None:
    from dpcert.report.console import print_table
    from dpcert.report.tables import columns, rows

    for name, rel in releases.items():  # tidy: integer counts; rich table on a terminal
        tidy = rel.tidy()
        keys, values = columns(tidy)
        print()
        print_table(f"{name}  (estimate [{100 * (1 - alpha):g}% interval])", keys + values,
                    rows(tidy, keys, values))


def _ledger_json(sess: Session) -> dict[str, str | None] | None:
    if sess._ledger is None:
        return None
    m = sess.budget
    return {"path": str(sess._ledger.path), "dataset": sess.dataset,
            "remaining": m.describe(sess._ledger.remaining(sess.dataset))}


def _finish(args: argparse.Namespace, sess: Session, written: Written,
            failed: BaseException | None) -> int:
    code = OK if failed is None else PARTIAL
    done = list(written.get("queries", {}))
    if failed is not None:
        what = (f"{type(failed).__name__}: {failed}" if isinstance(failed, DPCertError)
                else f"{type(failed).__name__} while writing the outputs")
        print(f"dpcert: error: {what}\ndpcert: the charge stands; releases written before the "
              f"failure: {', '.join(done) or 'none'}", file=sys.stderr)
    if args.json:
        out = {"ok": failed is None, "status": "ok" if failed is None else "partially_charged",
               "exit_code": code, "spent": sess.budget.describe(sess.spent),
               "budget": repr(sess.budget), "ledger": _ledger_json(sess), **written}
        if failed is not None:
            out["error"] = {"type": type(failed).__name__,
                            "message": str(failed) if isinstance(failed, DPCertError) else ""}
        print(json.dumps(out, ensure_ascii=False, default=str))
    return code


def _dry_run(args: argparse.Namespace, alpha_default: bool) -> int:
    """Print what the spec would spend, the accuracy and every default applied; reads only
    the schema, charges and writes nothing."""
    from dpcert.cli.build import over_budget, spec_quote, spec_total
    from dpcert.cli.spec import applied_defaults

    spec, cur, built = _prepare(args, check_total=False)
    sess, queries = built.sess, built.queries
    defaults = [*cur.defaults, *applied_defaults(spec)]
    if alpha_default:
        defaults.append(f"--alpha = {ALPHA}")
    if args.group_size is None:
        args.group_size = GROUP_SIZE
        defaults.append(f"--group-size = {GROUP_SIZE} (rows per group for mean, variance and "
                        "quantile intervals)")
    per_query: list[_Planned] = []
    for name, q, b in queries:
        spend = q.measurement(b, key=bytes(16)).map(1)
        acc = q.accuracy(args.alpha, b, n=args.group_size)
        per_query.append({"name": name, "would_spend": b.describe(spend),
                          "accuracy": [{k: (None if isinstance(v, float) and v != v else v)
                                        for k, v in row.items()} for row in acc.to_dicts()]})
    total = spec_total(sess, queries)
    quote = spec_quote(sess, queries)
    tight = quote["ledger"] or quote["session"]
    problem = over_budget(sess, queries)
    code = OK if problem is None else REFUSED
    if args.json:
        print(json.dumps({"ok": problem is None, "status": "ok" if problem is None else
                          "refused", "exit_code": code, "dry_run": True,
                          "source": built.location, "budget": repr(sess.budget),
                          "ledger": _ledger_json(sess), "queries": per_query,
                          "total_basic": sess.budget.describe(total),
                          "total_batch": sess.budget.describe(tight["tight"]),
                          "rule": tight["rule"], "problem": problem, "defaults": defaults},
                         ensure_ascii=False))
        return code
    print(f"dry run: {len(queries)} queries on {built.location}, budget {sess.budget!r}"
          + (f" (ledger dataset {sess.dataset!r})" if sess._ledger is not None else ""))
    for item in per_query:
        print(f"\n{item['name']}: would spend {item['would_spend']}; at "
              f"{100 * (1 - args.alpha):g}% confidence:")
        for row in item["accuracy"]:
            print(f"  {row['output']}: {row['interval']}")
    print(f"\ntotal: {sess.budget.describe(total)} by basic composition; "
          f"{sess.budget.describe(tight['tight'])} as one batch ({tight['rule']} filter)"
          f" ({'within' if problem is None else 'EXCEEDS'} the budget)")
    print("\ndefaults applied:" if defaults else "\ndefaults applied: none")
    for d in defaults:
        print(f"  {d}")
    if problem is not None:
        print(f"dpcert: {problem}", file=sys.stderr)
    return code


#: Default of ``--alpha``.
ALPHA = 0.05
#: Default of ``--group-size``: the group size a dry run's mean/quantile intervals assume.
GROUP_SIZE = 1000


def register(sub: Subparsers) -> None:
    """Add the ``release`` sub-command."""
    p = sub.add_parser(
        "release", help="DP release of the curator's table with the analyst's spec",
        description="A DP release: the analyst's queries (SPEC, TOML: the privacy unit and "
                    "[[query]] sections only) on the curator's data, charged to the curator's "
                    "ledger dataset; outputs go to the curator's --out directory.",
        epilog=EPILOG)
    p.add_argument("spec", help="path of the analyst's release spec (TOML)")
    add_curator_flags(p)
    p.add_argument("--dry-run", action="store_true",
                   help="print the budget, accuracy and defaults; read only the schema")
    p.add_argument("--alpha", type=float, default=None,
                   help=f"1 - confidence level of the intervals (default {ALPHA})")
    p.add_argument("--group-size", type=int, default=None, metavar="N",
                   help="--dry-run: rows per group at which mean, variance and quantile "
                        f"intervals are stated (default {GROUP_SIZE})")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_quiet_flag(p)
    p.set_defaults(func=run)


def add_quiet_flag(p: argparse.ArgumentParser) -> None:
    """``--quiet``: no progress on stderr (progress shows a bar on a terminal, plain lines
    elsewhere; `dpcert.cli.progress`)."""
    p.add_argument("--quiet", action="store_true",
                   help="no progress on stderr (a live bar on a terminal, with rich installed; "
                        "plain lines when stderr is not a terminal)")
