"""``dpcert release SPEC.toml``: a DP release of a CSV/Parquet table described by a TOML spec.

The whole spec is validated before anything is charged: query names (``[A-Za-z_][A-Za-z0-9_-]*``,
at most 64 characters, distinct: they become file names), columns, types, filters, keys, and the
total of all queries against both the session budget and what the ledger has left. The spec is a
batch declared in advance, so it is charged once (``Session.release_all``), costed by the PLD
accountant inside the batch (``docs/proofs/filters.md``); then each query is computed and written,
with its certificate, into the spec's output directory: ``<query>.csv`` and
``<query>.certificate.json``; at the end come ``results.json``, ``certificate.json`` and
``report.md`` (with ``report.png`` when matplotlib is installed). A query that fails after the
charge (a data-free ``ReleaseFailed``) leaves the releases computed before it on disk. Without a
ledger a loud warning says that running the spec again spends again. The ledger dataset must exist
(``dpcert budget init``); ``[budget] create = true`` creates it with the spec's budget when it is
missing. CSV cells that do not parse as their column's type (inferred from the first rows, or
declared with ``[data] types = {age = "int"}``) become null, never an error after a charge.
``--dry-run`` reads only the schema and prints the budget and accuracy that would result. Spec
errors name the line of the spec they come from.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

from dpcert.errors import DPCertError, InvalidParameter

__all__ = ["load_spec", "register", "run"]


class SpecError(InvalidParameter):
    """A problem in a release spec, with its line number."""


#: Query names become file names: letters, digits, ``_`` and ``-``, not starting with a digit
#: or ``-``, at most 64 characters (no ``/``, ``..`` or drive letters).
NAME_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")
#: Engines a spec may name in ``[data] engine`` (Polars in this process; Spark on its cluster,
#: with optional ``master`` or Spark Connect ``remote``).
ENGINES = ("polars", "spark")

#: Column types a spec may declare for a CSV file (``[data] types = {age = "int"}``); cells
#: that do not parse as their type become null.
TYPE_NAMES = {"int", "float", "str", "bool", "date"}


def _line_of(text: str, needle: str, after: int = 0) -> int:
    """1-based line of the first line at or after line ``after`` that contains ``needle``."""
    lines = text.splitlines()
    for i in range(max(after - 1, 0), len(lines)):
        if needle in lines[i].split("#", 1)[0]:
            return i + 1
    return max(after, 1)


def _query_lines(text: str) -> list[int]:
    return [i + 1 for i, ln in enumerate(text.splitlines()) if ln.strip() == "[[query]]"]


def _budget(spec: dict[str, Any], where: str) -> Any:
    import dpcert as dp

    keys = set(spec) - {"ledger", "dataset", "create"}
    try:
        if "rho" in spec or "zcdp" in spec:
            return dp.ZCDP(spec.get("rho", spec.get("zcdp")))
        if "epsilon" in spec and "delta" in spec:
            return dp.ApproxDP(spec["epsilon"], spec["delta"])
        if "epsilon" in spec:
            return dp.PureDP(spec["epsilon"])
    except DPCertError as e:
        raise SpecError(f"{where}: {e}") from e
    raise SpecError(f"{where}: budget needs rho, or epsilon (and delta); got keys {sorted(keys)}")


def load_spec(path: Path) -> tuple[dict[str, Any], str]:
    """Parse a spec file; returns the dict and its text."""
    try:
        text = path.read_text()
    except OSError as e:
        raise SpecError(f"cannot read spec {path}: {e}") from e
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"{path}: {e}") from e


def _aggregate(spec: dict[str, Any], where: str) -> Any:
    import dpcert as dp

    kind = spec.get("kind")
    try:
        if kind == "count":
            agg: Any = dp.count()
        elif kind == "count_distinct":
            agg = dp.count_distinct()
        elif kind in ("sum", "mean", "variance"):
            agg = getattr(dp, kind)(spec["column"], tuple(spec["bounds"]))
        elif kind == "quantile":
            agg = dp.quantile(spec["column"], spec["q"], tuple(spec["bounds"]))
        else:
            raise SpecError(f"{where}: unknown aggregate kind={kind!r} (count, count_distinct, "
                            "sum, mean, variance, quantile)")
    except KeyError as e:
        raise SpecError(f"{where}: aggregate {kind!r} needs {e.args[0]!r}") from e
    except SpecError:
        raise
    except DPCertError as e:
        raise SpecError(f"{where}: {e}") from e
    try:
        if "alias" in spec:
            agg = agg.alias(spec["alias"])
        if "weight" in spec:
            agg = agg.weighted(spec["weight"])
    except DPCertError as e:
        raise SpecError(f"{where}: {e}") from e
    return agg


def build(spec_path: Path, *, check_total: bool = True, dry_run: bool = False
          ) -> tuple[Any, list[tuple[str, Any, Any]], dict[str, Any]]:
    """The session and its queries (name, query, budget) from a spec, every query checked and
    (with ``check_total``) their total against the session and ledger; reads only the
    schema.  ``[budget] create = true`` creates a missing ledger dataset only after the whole
    spec has been validated (and never in a dry run)."""
    spec, text = load_spec(spec_path)
    budget_spec = spec.get("budget", {})
    ledger = budget_spec.get("ledger")
    ledger_path = str(spec_path.parent / ledger) if ledger else None
    dataset = budget_spec.get("dataset")
    if (ledger_path is not None and budget_spec.get("create") is True
            and not _has_dataset(ledger_path, dataset)):
        built = _build(spec_path, spec, text, None, check_total)  # validate first
        if dry_run:
            return built  # a dry run creates nothing: checked against the spec's budget
        _create_if_missing(ledger_path, dataset, built[0].budget)
    return _build(spec_path, spec, text, ledger_path, check_total)


def _build(spec_path: Path, spec: dict[str, Any], text: str, ledger_path: str | None,
           check_total: bool) -> tuple[Any, list[tuple[str, Any, Any]], dict[str, Any]]:
    import dpcert as dp

    base = spec_path.parent
    data = spec.get("data")
    if not isinstance(data, dict) or "path" not in data:
        raise SpecError(f"{spec_path}:{_line_of(text, '[data]')}: [data] needs path = ...")
    data_path = (base / data["path"]).resolve()
    if not data_path.exists():
        raise SpecError(f"{spec_path}:{_line_of(text, 'path')}: data file {data_path} not found")
    budget_spec = spec.get("budget", {})
    total = _budget(budget_spec, f"{spec_path}:{_line_of(text, '[budget]')}")
    types = data.get("types")
    schema = None
    if types is not None:
        from dpcert.backends.polars_expr import polars_schema

        bad = {k: v for k, v in types.items() if v not in TYPE_NAMES}
        if bad:
            raise SpecError(f"{spec_path}:{_line_of(text, 'types')}: [data] types {bad} must "
                            f"be one of {sorted(TYPE_NAMES)}")
        schema = polars_schema(types)
    source: Any = str(data_path)
    engine = data.get("engine", "polars")
    if engine not in ENGINES:
        raise SpecError(f"{spec_path}:{_line_of(text, 'engine')}: [data] engine={engine!r} "
                        f"must be one of {list(ENGINES)}")
    for key in ("master", "remote"):
        if key in data and (engine != "spark" or not isinstance(data[key], str)):
            raise SpecError(f"{spec_path}:{_line_of(text, key)}: [data] {key} must be a string "
                            'and goes with engine = "spark"')
    if engine == "spark":
        if schema is not None:
            raise SpecError(f"{spec_path}:{_line_of(text, 'types')}: [data] types is for the "
                            "Polars engine; Spark's CSV reader already turns bad cells into null")
        try:
            from dpcert.backends.spark import read_table
        except ImportError as e:
            raise SpecError(f"{spec_path}:{_line_of(text, 'engine')}: engine = \"spark\" needs "
                            "pyspark: pip install 'dpcert[spark]'") from e
        source = read_table(str(data_path), master=data.get("master"),
                            remote=data.get("remote"))
    try:
        sess = dp.Session(source, data.get("privacy_unit"), budget=total,
                          ledger=ledger_path, dataset=budget_spec.get("dataset"),
                          schema=schema)
    except DPCertError as e:
        needle = "ledger" if ledger_path and "ledger" in str(e) else "privacy_unit"
        line = _line_of(text, needle)
        raise SpecError(f"{spec_path}:{line}: {e}") from e
    queries = []
    starts = _query_lines(text)
    seen: set[str] = set()
    for i, q in enumerate(spec.get("query", [])):
        at = starts[i] if i < len(starts) else 1
        name = q.get("name", f"query{i + 1}")
        where = f"{spec_path}:{at} (query {name!r})"
        if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
            raise SpecError(f"{where}: name={name!r} must match {NAME_PATTERN.pattern} (it "
                            "becomes a file name)")
        if name.casefold() in seen:
            raise SpecError(f"{where}: name={name!r} is used twice (names are compared "
                            "without case, as some file systems do)")
        seen.add(name.casefold())
        try:
            qq = sess.query()
            if "filter" in q:
                qq = qq.filter(q["filter"])
            if "group_by" in q:
                qq = qq.group_by(*q["group_by"], keys=q.get("keys"))
            aggs = q.get("aggregates", [])
            if not aggs:
                raise SpecError(f"{where}: no aggregates")
            qq = qq.agg(*[_aggregate(a, f"{spec_path}:{_line_of(text, 'kind', at + j)}")
                          for j, a in enumerate(aggs)])
            if data.get("privacy_unit"):
                qq = qq.bound_contributions(q.get("max_groups", 1),
                                            q.get("max_rows_per_group", 1))
            b = _budget(q.get("budget", {}), f"{spec_path}:{_line_of(text, 'budget', at)}")
            qq.check(b)  # schema, filters, keys, names, bounds, noise limits: reads no rows
        except SpecError:
            raise
        except DPCertError as e:
            raise SpecError(f"{where}: {e}") from e
        queries.append((name, qq, b))
    if not queries:
        raise SpecError(f"{spec_path}: no [[query]] sections")
    if check_total:
        problem = over_budget(sess, queries)
        if problem is not None:
            raise SpecError(f"{spec_path}:{_line_of(text, '[budget]')}: {problem}")
    return sess, queries, spec


def _has_dataset(path: str, dataset: Any) -> bool:
    import os

    from dpcert.accounting.ledger import Ledger

    return os.path.exists(path) and dataset in Ledger(path, read_only=True).datasets()


def _create_if_missing(path: str, dataset: Any, total: Any) -> None:
    """``[budget] create = true``: the explicit request to create the ledger dataset."""
    from dpcert.accounting.ledger import Ledger

    led = Ledger(path)
    if isinstance(dataset, str) and dataset not in led.datasets():
        led.create(dataset, total)
        print(f"dpcert: created ledger dataset {dataset!r} in {path} with {total!r}",
              file=sys.stderr)


def spec_total(sess: Any, queries: list[tuple[str, Any, Any]]) -> Any:
    """The exact total that running every query would charge (reads no rows)."""
    total = sess.budget.zero()
    for _, q, b in queries:
        sess.budget.check_same_kind(b, "query budget")
        total = sess.budget.compose([total, q.measurement(b, key=bytes(16)).map(1)])
    return total


def spec_quote(sess: Any, queries: list[tuple[str, Any, Any]]) -> dict[str, Any]:
    """The spec's queries as one declared batch: its event and what the session's and the
    ledger's privacy filters would charge for it (``docs/proofs/filters.md``)."""
    from dpcert.core.events import ComposedEvent

    # the compiled measurements' events: exactly what release_all charges (the key does not
    # change a map)
    event = ComposedEvent([q.measurement(b, key=bytes(16)).event(1) for _, q, b in queries])
    total = spec_total(sess, queries)
    m = sess.budget
    amount = type(m)(*total) if isinstance(total, tuple) else type(m)(total)
    out = {"event": event, "basic": total,
           "session": sess._filter.quote(event, amount, batch=True), "ledger": None}
    if sess._ledger is not None:
        out["ledger"] = sess._ledger.quote(sess.dataset, event, amount, batch=True)
    return out


def over_budget(sess: Any, queries: list[tuple[str, Any, Any]]) -> str | None:
    """Why the queries, released together as one batch, do not fit the session's or the
    ledger's budget (None if they fit); reads no rows, charges nothing."""
    m = sess.budget
    quote = spec_quote(sess, queries)
    limits = [("the [budget] of the spec", quote["session"], sess.remaining)]
    if quote["ledger"] is not None:
        limits.append((f"what ledger dataset {sess.dataset!r} has left", quote["ledger"],
                       sess._ledger.remaining(sess.dataset)))
    for what, q, left in limits:
        if not q["fits"]:
            return (f"the queries together would spend {m.describe(quote['basic'])} (basic "
                    f"composition; {m.describe(q['tight'])} as one batch under the "
                    f"{q['rule']} filter), more than {what} ({m.describe(left)}); nothing was "
                    "charged")
    return None


def _num(v: Any) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return "–"
    if isinstance(v, float):
        return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.4g}"
    return str(v)


def compact_table(df: Any) -> str:
    """A narrow text table: keys, then ``estimate [low, high]`` per aggregate."""
    values = [c for c in df.columns if f"{c}_ci_low" in df.columns]
    keys = [c for c in df.columns if c not in values and not c.endswith(("_ci_low", "_ci_high"))]
    header = keys + values
    rows = []
    for r in df.iter_rows(named=True):
        cells = [str(r[k]) for k in keys]
        for v in values:
            lo, hi = r[f"{v}_ci_low"], r[f"{v}_ci_high"]
            ci = "" if lo != lo else f" [{_num(lo)}, {_num(hi)}]"
            cells.append(_num(r[v]) + ci)
        rows.append(cells)
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows]
    return "\n".join(lines)


def _progress(i: int, n: int, msg: str) -> None:
    if not sys.stderr.isatty():
        print(f"[{i}/{n}] {msg}", file=sys.stderr)
        return
    bar = "#" * (20 * i // max(n, 1))
    print(f"\r[{bar:<20}] {i}/{n} {msg:<50}", end="" if i < n else "\n", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    """Run (or dry-run) a release spec."""
    spec_path = Path(args.spec)
    alpha = args.alpha
    if args.dry_run:
        return _dry_run(spec_path, alpha)
    sess, queries, spec = build(spec_path)
    if sess._ledger is None:
        print("dpcert: WARNING: no ledger is named in [budget]: this run's spending is not "
              "recorded anywhere, and running the spec again spends the budget AGAIN. Name a "
              "ledger (ledger = \"budget.sqlite\", dataset = \"...\") to enforce the total.",
              file=sys.stderr)
    out_dir = (spec_path.parent / spec.get("output", {}).get("dir", "out")).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {}
    releases: dict[str, Any] = {}
    certs: dict[str, Any] = {}
    n = len(queries)
    t0 = time.perf_counter()
    failed: DPCertError | None = None
    _progress(0, n, "charging the spec as one batch and computing")
    try:  # one charge for the whole spec: a batch declared in advance (PLD inside it)
        rels = sess.release_all([(q, b, name) for name, q, b in queries], alpha=alpha)
    except DPCertError as e:  # after the charge, the releases computed so far are paid for
        failed = e
        rels = list(getattr(e, "partial", []))
    for (name, _, _), rel in zip(queries, rels, strict=False):
        results[name] = rel.to_polars()
        releases[name] = rel
        certs[name] = rel.certificate
        rel.to_polars().write_csv(out_dir / f"{name}.csv")
        (out_dir / f"{name}.certificate.json").write_text(
            json.dumps(rel.certificate, indent=2, default=str))
    _progress(len(results), n, f"done in {time.perf_counter() - t0:.1f} s")
    if results:
        (out_dir / "results.json").write_text(json.dumps(
            {k: v.to_dicts() for k, v in results.items()}, indent=2, default=str))
        (out_dir / "certificate.json").write_text(json.dumps(certs, indent=2, default=str))
        from dpcert.report.markdown import write_report

        report = write_report(out_dir, results, certs, sess)
        from dpcert.report.html import write_html_report

        html = write_html_report(out_dir, releases, certs)
        from dpcert.report.console import print_table
        from dpcert.report.tables import columns, rows

        for name, rel in releases.items():  # tidy: integer counts; rich table on a terminal
            tidy = rel.tidy()
            keys, values = columns(tidy)
            print()
            print_table(f"{name}  (estimate [{100 * (1 - alpha):g}% interval])", keys + values,
                        rows(tidy, keys, values))
        print(f"\nspent {sess.budget.describe(sess.spent)} of {sess.budget!r}; wrote {report}")
        print(f"HTML report: {html}" if html else
              'HTML report skipped: Jinja2 is not installed (pip install "dpcert[report]")')
    if failed is not None:
        done = ", ".join(results) or "none"
        print(f"dpcert: error: {type(failed).__name__}: {failed}\n"
              f"dpcert: releases written before the failure: {done}", file=sys.stderr)
        return 3
    return 0


def _dry_run(spec_path: Path, alpha: float) -> int:
    """Print what the spec would spend and the accuracy, reading only the schema."""
    sess, queries, _ = build(spec_path, check_total=False, dry_run=True)
    print(f"dry run: {len(queries)} queries, dataset budget {sess.budget!r}")
    for name, q, b in queries:
        q.check(b)
        spend = q.measurement(b, key=bytes(16)).map(1)
        print(f"\n{name}: would spend {b.describe(spend)}")
        print(q.accuracy(alpha, b))
    total = spec_total(sess, queries)
    quote = spec_quote(sess, queries)
    problem = over_budget(sess, queries)
    tight = quote["ledger"] or quote["session"]
    print(f"\ntotal: {sess.budget.describe(total)} by basic composition; "
          f"{sess.budget.describe(tight['tight'])} as one batch ({tight['rule']} filter)"
          f" ({'within' if problem is None else 'EXCEEDS'} the dataset budget)")
    if problem is not None:
        print(f"dpcert: {problem}", file=sys.stderr)
    return 0 if problem is None else 4


def register(sub: Any) -> None:
    """Add the ``release`` sub-command."""
    p = sub.add_parser("release", help="DP release of a table from a TOML spec")
    p.add_argument("spec", help="path of the release spec (TOML)")
    p.add_argument("--dry-run", action="store_true",
                   help="print the budget and accuracy; read only the schema")
    p.add_argument("--alpha", type=float, default=0.05,
                   help="1 - confidence level of the intervals (default 0.05)")
    p.set_defaults(func=run)
