"""SmartNoise SQL's documented queries through dpcert and SmartNoise at the same ε, side by side.

Issue 41 item 5: the query examples of SmartNoise SQL's documentation that fall in dpcert's SQL
subset (:mod:`smartnoise_examples`) run unchanged apart from the table name, with errors no
larger than SmartNoise's at the same privacy loss, on a PUMS-like table.

For each query, SmartNoise's own ``get_privacy_cost`` gives the (ε, δ) it spends with
``Privacy(epsilon, delta)`` (it charges ε per mechanism: ``AVG`` is a noisy sum and a noisy
count); dpcert releases the query with exactly that total, ``ApproxDP(ε, δ)``.  Both treat each
row as a person (SmartNoise's ``row_privacy: True``; dpcert's ``privacy_unit=None``), both use
the bounds of SmartNoise's ``PUMS.yaml``, both select the groups of a ``GROUP BY`` privately
(SmartNoise's ``censor_dims``, dpcert's private keys).  Each output cell's error is taken
against the exact answer (DuckDB on the same table); the table shows the mean absolute error
over all released cells of ``--runs`` runs, and the share of the true groups released.

SmartNoise runs in its own venv (its pins conflict with dpcert's), in a subprocess, while dpcert
runs here::

    python3 -m venv /tmp/snvenv && /tmp/snvenv/bin/pip install smartnoise-sql
    python benchmarks/bench_smartnoise.py [--sn-python /tmp/snvenv/bin/python] [--runs 100]

Without ``--sn-python`` (or if it fails) only dpcert's column is filled.  Results go to
``benchmarks/results/smartnoise.md``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

EPS, DELTA = 1.0, 1e-5
Tables = list[list[list[Any]]]


def _yaml(rows: int) -> str:
    """SmartNoise metadata for the table (the columns and bounds of its PUMS.yaml)."""
    cols = {"age": "int", "sex": "string", "educ": "string", "race": "string",
            "income": "int", "married": "string"}
    bounds = {"age": (0, 100), "income": (0, 500000)}
    out = ["PUMS:", "  PUMS:", "    PUMS:", "      row_privacy: True", f"      rows: {rows}"]
    for c, t in cols.items():
        out += [f"      {c}:", f"        type: {t}"]
        if c in bounds:
            out += [f"        lower: {bounds[c][0]}", f"        upper: {bounds[c][1]}"]
    return "\n".join(out) + "\n"


def sn_worker(csv: str, meta: str, queries: list[str], runs: int) -> dict[str, Any]:
    """In SmartNoise's venv: each query's cost and ``runs`` released tables."""
    import pandas as pd
    import snsql
    from snsql import Privacy

    df = pd.read_csv(csv)
    out: dict[str, Any] = {}
    for q in queries:
        reader = snsql.from_df(df, privacy=Privacy(epsilon=EPS, delta=DELTA), metadata=meta)
        e, d = reader.get_privacy_cost(q)
        tables = []
        for _ in range(runs):
            res = reader.execute_df(q)
            tables.append([[_plain(v) for v in r] for r in res.itertuples(index=False)])
        out[q] = {"epsilon": float(e), "delta": float(d), "runs": tables}
    return out


def _plain(v: Any) -> Any:
    return v.item() if hasattr(v, "item") else v


def _shape(query: str) -> tuple[Any, list[str]]:
    """The parsed query and its GROUP BY column names."""
    import sqlglot

    tsql = "TOP" in query.upper().split()
    tree = sqlglot.parse_one(query, read="tsql" if tsql else None)
    group = tree.args.get("group")
    keys = [e.name for e in group.expressions] if group is not None else []
    return tree, keys


def truth(df: Any, query: str) -> dict[tuple[str, ...], list[float]]:
    """Exact answers per group key (ORDER BY and TOP dropped), from DuckDB."""
    import duckdb
    from smartnoise_examples import for_dpcert

    tree, keys = _shape(for_dpcert(query))
    tree = tree.copy()
    tree.set("limit", None)
    tree.set("order", None)
    con = duckdb.connect()
    con.register("PUMS", df.to_arrow())
    rows = con.sql(tree.sql("duckdb")).fetchall()
    return {tuple(str(v) for v in r[:len(keys)]): [float(x) for x in r[len(keys):]]
            for r in rows}


def dpcert_runs(df: Any, query: str, runs: int, eps: float, delta: float) -> Tables:
    """``runs`` dpcert releases of the query (a fresh session each), as rows of keys and
    released values (intervals dropped)."""
    from smartnoise_examples import BOUNDS, TABLE, for_dpcert

    import dpcert as dp

    _, keys = _shape(query)
    out = []
    for _ in range(runs):
        sess = dp.Session(df, budget=dp.ApproxDP(eps, delta), name=TABLE)
        tab = sess.sql(for_dpcert(query), bounds=BOUNDS).release(
            dp.ApproxDP(eps, delta)).to_polars()
        vals = [c for c in tab.columns
                if c not in keys and not c.endswith(("_ci_low", "_ci_high"))]
        out.append([list(r) for r in tab.select([*keys, *vals]).iter_rows()])
    return out


def errors(tables: Tables, exact: dict[tuple[str, ...], list[float]], n_keys: int
           ) -> tuple[list[float], float]:
    """Mean absolute error per output column over all released cells, and the share of the
    true groups released."""
    width = len(next(iter(exact.values())))
    tot, cnt, released = [0.0] * width, [0] * width, 0
    for rows in tables:
        for r in rows:
            key = tuple(str(v) for v in r[:n_keys])
            if key not in exact:
                continue
            released += 1
            for j, v in enumerate(r[n_keys:]):
                if v is not None:
                    tot[j] += abs(float(v) - exact[key][j])
                    cnt[j] += 1
    mae = [t / c if c else float("nan") for t, c in zip(tot, cnt, strict=True)]
    return mae, released / max(1, len(tables) * len(exact))


def _smartnoise(sn_python: str, df: Any, queries: list[str], runs: int
                ) -> tuple[dict[str, Any], subprocess.Popen[str] | None, str]:
    """SmartNoise's cost per query now; its runs started in the background."""
    tmp = tempfile.mkdtemp()
    csv, meta, qf = (Path(tmp) / n for n in ("pums.csv", "pums.yaml", "q.json"))
    df.write_csv(csv)
    meta.write_text(_yaml(df.height))
    qf.write_text(json.dumps(sorted(set(queries))))
    cmd = [sn_python, __file__, "--sn-worker", str(csv), str(meta), str(qf)]
    first = subprocess.run([*cmd, "0"], capture_output=True, text=True, check=False)
    if first.returncode:
        return {}, None, f"SmartNoise failed: {first.stderr.strip().splitlines()[-1][:200]}"
    cost = json.loads(first.stdout.strip().splitlines()[-1])
    proc = subprocess.Popen([*cmd, str(runs)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    ver = subprocess.run([sn_python, "-c", "import importlib.metadata as m; "
                          "print(m.version('smartnoise-sql'))"],
                         capture_output=True, text=True, check=False).stdout.strip()
    return cost, proc, f"SmartNoise SQL {ver}"


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--rows", type=int, default=1000)
    ap.add_argument("--sn-python", default=None)
    ap.add_argument("--out", default=str(HERE / "results" / "smartnoise.md"))
    ap.add_argument("--sn-worker", nargs=4, metavar=("CSV", "META", "QUERIES", "RUNS"))
    args = ap.parse_args()
    if args.sn_worker:
        csv, meta, qfile, runs = args.sn_worker
        print(json.dumps(sn_worker(csv, meta, json.loads(Path(qfile).read_text()), int(runs))))
        return
    from smartnoise_examples import EXAMPLES, OUT_OF_SUBSET, pums_like

    df = pums_like(args.rows)
    sn_queries = [q.replace("PUMS_large", "PUMS.PUMS") for _, q in EXAMPLES]
    cost: dict[str, Any] = {}
    proc, note = None, "SmartNoise not run (no --sn-python)"
    if args.sn_python:
        cost, proc, note = _smartnoise(args.sn_python, df, sn_queries, args.runs)
    ours = {}
    for (_, q), sq in zip(EXAMPLES, sn_queries, strict=True):  # at SmartNoise's cost
        eps, delta = (cost[sq]["epsilon"], cost[sq]["delta"]) if sq in cost else (EPS, DELTA)
        ours[q] = (eps, delta, dpcert_runs(df, q, args.runs, eps, delta))
    sn: dict[str, Any] = {}
    if proc is not None:
        stdout, stderr = proc.communicate()
        if proc.returncode == 0:
            sn = json.loads(stdout.strip().splitlines()[-1])
        else:
            note = f"SmartNoise failed: {stderr.strip().splitlines()[-1][:200]}"
    lines = ["# SmartNoise SQL's documented queries: dpcert vs SmartNoise (issue 41 item 5)", "",
             f"Command: `python benchmarks/bench_smartnoise.py --runs {args.runs} --rows "
             f"{args.rows} --sn-python ...`; {note}; PUMS-like table of {df.height} rows "
             "(`benchmarks/smartnoise_examples.py`, seeded); SmartNoise at "
             f"`Privacy(epsilon={EPS}, delta={DELTA})`, dpcert at the total (ε, δ) SmartNoise "
             "reports spending on the query. MAE: mean absolute error over every released cell "
             "of all runs; released: share of the true groups in the output.", "",
             "| query (SmartNoise docs; dpcert reads table `PUMS`) | (ε, δ) | output | "
             "dpcert MAE | SmartNoise MAE | dpcert / SN | released dpcert / SN |",
             "|---|---|---|---:|---:|---:|---:|"]
    worst = 0.0
    for (_, q), sq in zip(EXAMPLES, sn_queries, strict=True):
        exact = truth(df, sq)
        _, keys = _shape(sq)
        eps, delta, mine = ours[q]
        a_mae, a_rel = errors(mine, exact, len(keys))
        s = sn.get(sq)
        b_mae, b_rel = (errors(s["runs"], exact, len(keys)) if s
                        else ([float("nan")] * len(a_mae), float("nan")))
        for j, (a, b) in enumerate(zip(a_mae, b_mae, strict=True)):
            ratio = a / b if b == b and b > 0 else float("nan")
            worst = max(worst, ratio) if ratio == ratio else worst
            lines.append(f"| `{q}` | ({eps:g}, {delta:.2g}) | {j + 1} | {a:.4g} | {b:.4g} | "
                         f"{ratio:.2f} | {a_rel:.2f} / {b_rel:.2f} |")
            print(lines[-1], flush=True)
    lines += ["", f"Largest dpcert / SmartNoise MAE ratio: {worst:.2f}.", "",
              "Documentation queries not run:", ""]
    lines += [f"- `{q}`: {why}" for q, why in OUT_OF_SUBSET]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"largest ratio {worst:.2f}; written {args.out}")


if __name__ == "__main__":
    main()
