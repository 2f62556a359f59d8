"""The post-processing of a SQL query: ``STDDEV`` from a released variance, ``HAVING``,
``ORDER BY``, ``LIMIT`` and the ``SELECT`` list's order and names, all applied to the released
table.

Everything here reads only released values (estimates, intervals, public or released keys), so
it is post-processing and leaves the privacy map unchanged (``docs/proofs/chaining.md``).  A
standard deviation is the square root of the released variance; since the square root is
increasing, the root of the variance's interval is an interval for it at the same level.

Examples
--------
>>> import polars as pl
>>> t = pl.DataFrame({"g": ["a", "b"], "n": [3.0, 9.0], "n_ci_low": [1.0, 7.0],
...                   "n_ci_high": [5.0, 11.0]})
>>> post = SqlPost(columns=(("n", "n"), ("g", "g")), order=(("n", True),), limit=1,
...                values=("n",))
>>> post.apply(t).rows()
[(9.0, 7.0, 11.0, 'b')]
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from dpcert.frame.plan import generated_names

__all__ = ["SqlPost"]


@dataclass(frozen=True)
class SqlPost:
    """What a SQL query does to its released table.

    Parameters
    ----------
    columns
        The ``SELECT`` list in order as ``(released name, output name)``: a key column is
        renamed, a value column brings its interval columns along.
    stddev
        Released variance columns to replace by their square roots.
    having
        A predicate (SQL text over released column names), or ``None``.
    order
        ``(column, descending)`` pairs.
    limit
        The number of rows kept, or ``None``.
    values
        Which of ``columns`` are value columns (with ``_ci_low``/``_ci_high``).
    """

    columns: tuple[tuple[str, str], ...] = ()
    stddev: tuple[str, ...] = ()
    having: str | None = None
    order: tuple[tuple[str, bool], ...] = ()
    limit: int | None = None
    values: tuple[str, ...] = ()

    def apply(self, table: pl.DataFrame) -> pl.DataFrame:
        """The released ``table`` post-processed."""
        if self.stddev:
            table = table.with_columns(
                pl.col(c).clip(lower_bound=0.0).sqrt()
                for n in self.stddev for c in generated_names([n]))
        if self.having is not None:
            table = table.filter(pl.sql_expr(self.having))
        if self.order:
            table = table.sort([c for c, _ in self.order],
                               descending=[d for _, d in self.order], nulls_last=True)
        if self.limit is not None:
            table = table.head(self.limit)
        if not self.columns:
            return table
        cols: list[pl.Expr] = []
        for src, dst in self.columns:
            if src in self.values:
                cols += [pl.col(g).alias(dst + g[len(src):]) for g in generated_names([src])]
            else:
                cols.append(pl.col(src).alias(dst))
        return table.select(cols)
