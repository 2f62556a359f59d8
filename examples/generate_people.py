"""Generate the bundled example dataset: people with several rows each (documented, seeded).

Each of ``--people`` persons (default 25,000) has an id, a region, an age, an occupation and
1–8 weekly records (about 100k rows in all) with income (heavy-tailed, in [0, ~400k]) and hours
worked (0–99).  Ages follow a rough adult pyramid; incomes depend on age and occupation.  The data
are synthetic: no real person is in them.  This script uses NumPy's seeded generator on purpose
(reproducible *example data*, not privacy noise).

Usage: ``python examples/generate_people.py OUT.csv [--people N] [--seed S]``
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import polars as pl

REGIONS = ["north", "south", "east", "west", "central"]
OCCUPATIONS = ["clerical", "technical", "manual", "services", "professional", "retired"]


def generate(people: int = 25_000, seed: int = 2026) -> pl.DataFrame:
    """The example table (deterministic for a given seed)."""
    rng = np.random.default_rng(seed)
    pid = np.arange(1, people + 1)
    region = rng.choice(len(REGIONS), people, p=[0.25, 0.2, 0.2, 0.2, 0.15])
    age = np.clip(rng.normal(44, 16, people).round(), 18, 95).astype(np.int64)
    occ = rng.choice(len(OCCUPATIONS), people, p=[0.2, 0.2, 0.2, 0.2, 0.15, 0.05])
    occ = np.where(age >= 67, OCCUPATIONS.index("retired"), occ)
    rows_per = rng.integers(1, 9, people)
    idx = np.repeat(np.arange(people), rows_per)
    n = idx.size
    base = np.array([38e3, 55e3, 32e3, 29e3, 80e3, 20e3])[occ[idx]]
    income = np.round(base * rng.lognormal(0, 0.5, n) * (0.7 + age[idx] / 100), 2)
    hours = np.clip(rng.normal(36, 9, n), 0, 99).round(1)
    hours = np.where(occ[idx] == OCCUPATIONS.index("retired"), 0.0, hours)
    return pl.DataFrame({
        "person_id": pid[idx],
        "region": np.array(REGIONS)[region[idx]],
        "age": age[idx],
        "occupation": np.array(OCCUPATIONS)[occ[idx]],
        "week": np.concatenate([np.arange(k) for k in rows_per]) + 1,
        "income": income,
        "hours": hours,
    })


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--people", type=int, default=25_000)
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()
    df = generate(args.people, args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if args.out.suffix == ".parquet":
        df.write_parquet(args.out)
    else:
        df.write_csv(args.out)
    print(f"wrote {df.height} rows for {args.people} people to {args.out}")


if __name__ == "__main__":
    main()
