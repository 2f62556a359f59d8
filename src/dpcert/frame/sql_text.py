"""The token pass of the SQL front end: limits, comments, statements, and the BigQuery
differential-privacy syntax that sqlglot does not parse.

BigQuery writes a DP query as ``SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, ...)``
and bounds an aggregate inside its call: ``SUM(x, contribution_bounds_per_group => (0, 10))``.
`prepass` cuts the options clause out (returning the options), and rewrites each bounded
call ``F(args, contribution_bounds_per_... => (lo, hi))`` to ``DPCERT_BOUNDS(F(args), i)``, where
``i`` indexes the returned bounds, so that the rest is plain SQL for sqlglot.  Everything is done
on sqlglot's tokens (never on raw text), so string literals and quoted identifiers cannot hide or
fake any of it; a query that contains a comment, a second statement, a literal longer than
`MAX_LITERAL` characters or the name ``DPCERT_BOUNDS`` is refused.

Examples
--------
>>> p = prepass("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, privacy_unit_column = id)"
...             " SUM(x, contribution_bounds_per_group => (0, 5)) FROM data", "bigquery")
>>> p.text
'SELECT DPCERT_BOUNDS(SUM(x), 0) FROM data'
>>> p.options, p.bounds
({'epsilon': Fraction(1, 1), 'privacy_unit_column': 'id'}, [(Fraction(0, 1), Fraction(5, 1))])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import sqlglot
from sqlglot.tokenizer_core import Token, TokenType

from dpcert.errors import UnsupportedSQL

__all__ = ["BOUNDS_FUNCTION", "MAX_LITERAL", "MAX_SQL", "OptionValue", "Prepassed", "prepass"]

#: The longest query text accepted (characters).
MAX_SQL = 20_000
#: The longest literal (number or string, characters) accepted.
MAX_LITERAL = 200
#: The marker function wrapping a bounded aggregate after :func:`prepass`.
BOUNDS_FUNCTION = "DPCERT_BOUNDS"
#: An ``OPTIONS`` value: a number (exact), a name or string, or NULL.
OptionValue = Fraction | str | None
_BOUND_ARGS = ("contribution_bounds_per_group", "contribution_bounds_per_row")


@dataclass
class Prepassed:
    """The query text for sqlglot, the DP options (lower-case names) and the bounds list."""

    text: str
    options: dict[str, OptionValue] = field(default_factory=dict)
    bounds: list[tuple[Fraction, Fraction]] = field(default_factory=list)


def tokens(sql: str, dialect: str | None) -> list[Token]:
    """sqlglot's tokens of ``sql``, refusing what no query of the subset contains."""
    if not isinstance(sql, str) or not sql.strip():
        raise UnsupportedSQL(f"sql={sql!r} must be a non-empty SQL string")
    if len(sql) > MAX_SQL:
        raise UnsupportedSQL(f"sql is {len(sql)} characters long; at most {MAX_SQL} are accepted")
    try:
        toks = sqlglot.Dialect.get_or_raise(dialect).tokenize(sql)
    except sqlglot.errors.SqlglotError as e:
        raise UnsupportedSQL(f"sql could not be read: {e}") from None
    for i, t in enumerate(toks):
        if t.comments:
            raise UnsupportedSQL("comments are not accepted in a query (near "
                                 f"{t.text[:40]!r}); remove them")
        if t.token_type == TokenType.SEMICOLON and i != len(toks) - 1:
            raise UnsupportedSQL("a query is one statement: ';' separates statements")
        if t.token_type in (TokenType.NUMBER, TokenType.STRING) and len(t.text) > MAX_LITERAL:
            raise UnsupportedSQL(f"literal {t.text[:20]!r}... has {len(t.text)} characters; "
                                 f"at most {MAX_LITERAL} are accepted")
        if t.text.upper() == BOUNDS_FUNCTION:
            raise UnsupportedSQL(f"the name {t.text!r} is reserved")
    if toks and toks[-1].token_type == TokenType.SEMICOLON:
        toks = toks[:-1]
    return toks


def prepass(sql: str, dialect: str | None) -> Prepassed:
    """Cut the BigQuery DP options out of ``sql`` and wrap bounded aggregates (module doc)."""
    toks = tokens(sql, dialect)
    skip: set[int] = set()
    before: dict[int, str] = {}
    after: dict[int, str] = {}
    out = Prepassed("")
    if (len(toks) > 2 and toks[0].token_type == TokenType.SELECT
            and toks[1].token_type == TokenType.WITH
            and toks[2].text.upper() == "DIFFERENTIAL_PRIVACY"):
        end = _options(toks, 3, out.options)
        skip.update(range(1, end))
    stack: list[tuple[int | None, list[int]]] = []  # (function-name token, bounds indices)
    i = 0
    while i < len(toks):
        t = toks[i]
        if i in skip:
            i += 1
            continue
        if t.token_type == TokenType.L_PAREN:
            named = i > 0 and toks[i - 1].token_type not in (TokenType.L_PAREN, TokenType.COMMA)
            stack.append((i - 1 if named else None, []))
        elif t.token_type == TokenType.R_PAREN and stack:
            name, idx = stack.pop()
            for j in idx:
                assert name is not None
                before[name] = before.get(name, "") + f"{BOUNDS_FUNCTION}("
                after[i] = after.get(i, "") + f", {j})"
        elif (t.token_type == TokenType.COMMA and i + 1 < len(toks)
              and toks[i + 1].text.lower() in _BOUND_ARGS):
            if not stack or stack[-1][0] is None:
                raise UnsupportedSQL(f"{toks[i + 1].text} must be an argument of an aggregate")
            lo, hi, end = _bounds_arg(toks, i + 1)
            stack[-1][1].append(len(out.bounds))
            out.bounds.append((lo, hi))
            skip.update(range(i, end))
            i = end
            continue
        i += 1
    out.text = _render(sql, toks, skip, before, after)
    return out


def _render(sql: str, toks: list[Token], skip: set[int], before: dict[int, str],
            after: dict[int, str]) -> str:
    parts: list[str] = []
    prev_end = 0
    for i, t in enumerate(toks):
        if i in skip:
            prev_end = t.end + 1
            continue
        gap = sql[prev_end:t.start] if parts else ""
        parts.append(gap + before.get(i, "") + sql[t.start:t.end + 1] + after.get(i, ""))
        prev_end = t.end + 1
    return "".join(parts)


def _value(toks: list[Token], start: int, stop: int, what: str) -> OptionValue:
    """An option's value: a number (exact), a name, a string, or NULL."""
    ts = toks[start:stop]
    text = "".join(t.text for t in ts)
    if len(ts) == 1 and ts[0].token_type == TokenType.STRING:
        return ts[0].text
    if len(ts) == 1 and ts[0].token_type == TokenType.NULL:
        return None
    if len(ts) == 1 and ts[0].token_type in (TokenType.VAR, TokenType.IDENTIFIER):
        return ts[0].text
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise UnsupportedSQL(f"{what}={text!r} must be a number, a column name or a string"
                             ) from None


def _options(toks: list[Token], i: int, into: dict[str, OptionValue]) -> int:
    """Parse ``OPTIONS(name = value, ...)`` from token ``i``; the index after it."""
    if i == len(toks) or toks[i].text.upper() != "OPTIONS":
        return i  # WITH DIFFERENTIAL_PRIVACY without options
    if i + 1 == len(toks) or toks[i + 1].token_type != TokenType.L_PAREN:
        raise UnsupportedSQL("WITH DIFFERENTIAL_PRIVACY OPTIONS must be followed by '('")
    j = i + 2
    while j < len(toks) and toks[j].token_type != TokenType.R_PAREN:
        if j + 1 >= len(toks) or toks[j + 1].token_type != TokenType.EQ:
            raise UnsupportedSQL(f"OPTIONS: expected 'name = value' at {toks[j].text!r}")
        name = toks[j].text.lower()
        k = j + 2
        while k < len(toks) and toks[k].token_type not in (TokenType.COMMA, TokenType.R_PAREN):
            k += 1
        if name in into:
            raise UnsupportedSQL(f"OPTIONS: {name} is given twice")
        into[name] = _value(toks, j + 2, k, name)
        j = k + 1 if k < len(toks) and toks[k].token_type == TokenType.COMMA else k
    if j == len(toks):
        raise UnsupportedSQL("WITH DIFFERENTIAL_PRIVACY OPTIONS( is not closed")
    return j + 1


def _bounds_arg(toks: list[Token], i: int) -> tuple[Fraction, Fraction, int]:
    """``contribution_bounds_per_... => (lo, hi)`` from token ``i``: the pair and the index
    after it."""
    name = toks[i].text
    if i + 2 >= len(toks) or toks[i + 1].token_type != TokenType.FARROW \
            or toks[i + 2].token_type != TokenType.L_PAREN:
        raise UnsupportedSQL(f"{name} must be written {name} => (lower, upper)")
    k = i + 3
    while k < len(toks) and toks[k].token_type != TokenType.R_PAREN:
        k += 1
    inner = toks[i + 3:k]
    commas = [n for n, t in enumerate(inner) if t.token_type == TokenType.COMMA]
    if k == len(toks) or len(commas) != 1:
        raise UnsupportedSQL(f"{name} must be a pair (lower, upper)")
    c = i + 3 + commas[0]
    lo, hi = _value(toks, i + 3, c, f"{name}.lower"), _value(toks, c + 1, k, f"{name}.upper")
    if not isinstance(lo, Fraction) or not isinstance(hi, Fraction):
        raise UnsupportedSQL(f"{name}=({lo!r}, {hi!r}) must be two numbers")
    return lo, hi, k + 1
