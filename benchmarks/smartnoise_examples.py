"""SmartNoise SQL's documented query examples and a seeded PUMS-like table (issue 41 item 5).

``EXAMPLES`` are the ``SELECT`` statements of SmartNoise SQL's documentation (``sql/README.md``
and ``sql/docs/source/{index,advanced}.rst`` of github.com/opendp/smartnoise-sdk) that read the
PUMS sample table, verbatim; :func:`for_dpcert` changes only the table name.  ``OUT_OF_SUBSET``
lists the documentation's other queries and why they are not run.

:func:`pums_like` draws a table shaped like SmartNoise's 1000-row PUMS sample (columns ``age``,
``sex``, ``educ``, ``race``, ``income``, ``married``; integer codes; marginals close to the
sample's), seeded, so every run compares on the same data.  ``BOUNDS`` are the column bounds of
SmartNoise's ``PUMS.yaml``.
"""

from __future__ import annotations

import numpy as np
import polars as pl

#: (where in SmartNoise SQL's documentation, the query as written there)
EXAMPLES: tuple[tuple[str, str], ...] = (
    ("README / index.rst", "SELECT sex, AVG(age) AS age FROM PUMS.PUMS GROUP BY sex"),
    ("README / advanced.rst", "SELECT COUNT(*) FROM PUMS.PUMS"),
    ("README / advanced.rst", "SELECT AVG(age), AVG(income) FROM PUMS.PUMS"),
    ("advanced.rst", "SELECT sex, COUNT(*) AS n FROM PUMS.PUMS GROUP BY sex"),
    ("advanced.rst", "SELECT COUNT(*) AS n FROM PUMS.PUMS"),
    ("advanced.rst", "SELECT AVG(age) AS age FROM PUMS.PUMS"),
    ("advanced.rst", "SELECT age, COUNT(*) AS n FROM PUMS.PUMS GROUP BY age"),
    ("advanced.rst", "SELECT educ, COUNT(*) AS n FROM PUMS.PUMS GROUP BY educ"),
    ("advanced.rst", "SELECT educ, AVG(age) AS age FROM PUMS.PUMS GROUP BY educ"),
    ("advanced.rst",
     "SELECT sex, COUNT(*) AS n, AVG(age) AS age FROM PUMS.PUMS GROUP BY sex ORDER BY sex"),
    ("advanced.rst",
     "SELECT TOP 2 educ, AVG(age) AS age FROM PUMS.PUMS GROUP BY educ ORDER BY age DESC"),
    ("index.rst (Spark, PUMS_large)", "SELECT COUNT(*) FROM PUMS_large"),
)

#: The documentation's other queries, not run here, with the reason.
OUT_OF_SUBSET: tuple[tuple[str, str], ...] = (
    ("SELECT last_name, COUNT(*) FROM Sales GROUP BY last_name",
     "in the subset (private keys), but it illustrates a table (Sales) that is not shipped"),
    ("SELECT SUM(SaleAmount) FROM Sales.Orders (metadata.rst, and its quoted-identifier variants)",
     "in the subset, but they illustrate table-name resolution on a Sales table not shipped"),
)

#: Column bounds of SmartNoise's PUMS.yaml (the other columns are string-typed codes).
BOUNDS = {"age": (0, 100), "income": (0, 500000)}
TABLE = "PUMS"

_EDUC_P = np.array([33, 14, 38, 17, 24, 21, 31, 51, 201, 60, 165, 76, 178, 54, 24, 13], float)
_RACE_P = np.array([550, 71, 265, 108, 1, 5], float)


def for_dpcert(query: str) -> str:
    """The query with SmartNoise's table names replaced by the session's (``PUMS``)."""
    return query.replace("PUMS.PUMS", TABLE).replace("PUMS_large", TABLE)


def pums_like(n: int = 1000, seed: int = 2024) -> pl.DataFrame:
    """A seeded table shaped like SmartNoise's PUMS sample.

    >>> df = pums_like(200, seed=1)
    >>> df.columns
    ['age', 'sex', 'educ', 'race', 'income', 'married']
    >>> bool(df["age"].min() >= 18) and bool(df["income"].max() <= 500000)
    True
    """
    rng = np.random.default_rng(seed)
    age = np.clip(np.rint(rng.normal(45.0, 17.7, n)), 18, 93).astype(np.int64)
    income = np.rint(np.exp(rng.normal(10.0, 1.1, n)) / 100) * 100
    income[rng.random(n) < 0.12] = 0
    return pl.DataFrame({
        "age": age,
        "sex": (rng.random(n) < 0.514).astype(np.int64),
        "educ": rng.choice(np.arange(1, 17), n, p=_EDUC_P / _EDUC_P.sum()),
        "race": rng.choice(np.arange(1, 7), n, p=_RACE_P / _RACE_P.sum()),
        "income": np.clip(income, 0, 420500).astype(np.int64),
        "married": (rng.random(n) < 0.549).astype(np.int64),
    })
