"""The curator's side of ``dpcert release``: ledger, dataset, data source, output directory and
engine, from the command line or a curator config file, never from the analyst's spec.

A curator config is a TOML file named by ``--curator-config`` or the environment variable
``DPCERT_CURATOR_CONFIG``; its keys are the long flags with ``_`` for ``-`` (``ledger``,
``dataset``, ``out``, ``data``, ``no_ledger``, ``budget_epsilon``, ``budget_delta``,
``budget_rho``, ``engine``, ``spark_master``, ``spark_remote``); relative paths in it are relative
to the file.  A flag given on the command line wins over the file.

Outputs stay inside the output directory: `out_path` resolves every file it is asked for
(symbolic links included) and refuses one that would land anywhere else.

Examples
--------
>>> import tempfile
>>> out = Path(tempfile.mkdtemp())
>>> out_path(out, "by_region.csv").name
'by_region.csv'
>>> out_path(out, "../by_region.csv")
Traceback (most recent call last):
...
dpcert.errors.InvalidParameter: output name='../by_region.csv' must be a plain file name
"""

from __future__ import annotations

import argparse
import os
import tomllib
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpcert.core.measures import ZCDP, ApproxDP, Measure, PureDP
from dpcert.errors import InvalidParameter

if TYPE_CHECKING:
    from dpcert.cli.spec import CuratorConfig

__all__ = ["Curator", "add_curator_flags", "curator_from", "out_path"]

ENV = "DPCERT_CURATOR_CONFIG"
PATH_KEYS = ("ledger", "out", "data")


@dataclass(frozen=True)
class Curator:
    """What the curator decided for one release; ``defaults`` lists what was left to dpcert."""

    ledger: str | None
    dataset: str | None
    out: Path
    data: str | None
    budget: Measure | None
    engine: str
    spark_master: str | None
    spark_remote: str | None
    defaults: tuple[str, ...] = ()


def add_curator_flags(p: argparse.ArgumentParser) -> None:
    """The curator's flags of ``dpcert release``."""
    g = p.add_argument_group("curator (never from the spec)")
    g.add_argument("--ledger", help="the budget ledger (SQLite file made by `dpcert budget init`)")
    g.add_argument("--dataset", help="the ledger dataset to charge")
    g.add_argument("--out", help="output directory (default: ./out)")
    g.add_argument("--data", help="the data source; with a ledger it must be the bound one")
    g.add_argument("--no-ledger", action="store_true", default=None,
                   help="release without a ledger (needs --data and a --budget-* total)")
    for name, what in (("epsilon", "ε"), ("delta", "δ"), ("rho", "ρ (zCDP)")):
        g.add_argument(f"--budget-{name}", metavar=name[0].upper(),
                       help=f"with --no-ledger: the total {what} of this release")
    g.add_argument("--engine", choices=["polars", "spark", "duckdb"], help="default: polars")
    g.add_argument("--spark-master", help="with --engine spark: a Spark master URL")
    g.add_argument("--spark-remote", help="with --engine spark: a Spark Connect URL")
    g.add_argument("--curator-config", metavar="TOML",
                   help=f"curator config file (or the environment variable {ENV})")


def _config(args: argparse.Namespace) -> tuple[CuratorConfig, Path | None]:
    from pydantic import ValidationError

    from dpcert.cli.spec import CuratorConfig

    name = args.curator_config or os.environ.get(ENV)
    if not name:
        return CuratorConfig(), None
    path = Path(name)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
        return CuratorConfig.model_validate(raw), path.resolve().parent
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise InvalidParameter(f"curator config {name!r} cannot be read: {e}") from None
    except ValidationError as e:
        bad = "; ".join(f"{'.'.join(map(str, x['loc']))}: {x['msg']}" for x in e.errors())
        raise InvalidParameter(f"curator config {name!r}: {bad}") from None


def _number(value: object, flag: str) -> Fraction:
    try:
        return Fraction(str(value))
    except (ValueError, ZeroDivisionError):
        raise InvalidParameter(f"{flag}={value!r} is not a number") from None


def _total(eps: object, delta: object, rho: object) -> Measure | None:
    if rho is not None:
        if eps is not None or delta is not None:
            raise InvalidParameter("--budget-rho excludes --budget-epsilon and --budget-delta")
        return ZCDP(_number(rho, "--budget-rho"))
    if eps is None:
        if delta is not None:
            raise InvalidParameter("--budget-delta needs --budget-epsilon")
        return None
    if delta is None:
        return PureDP(_number(eps, "--budget-epsilon"))
    return ApproxDP(_number(eps, "--budget-epsilon"), _number(delta, "--budget-delta"))


def curator_from(args: argparse.Namespace) -> Curator:
    """The curator's choices from the flags and the curator config; refuses an incomplete or
    contradictory set (a usage error: nothing read, nothing charged)."""
    cfg, base = _config(args)

    def pick(key: str) -> Any:
        flag = getattr(args, key, None)
        if flag is not None:
            return flag
        value = getattr(cfg, key)
        if key in PATH_KEYS and value is not None and base is not None:
            return str(base / value)
        return value

    ledger, dataset, data = pick("ledger"), pick("dataset"), pick("data")
    no_ledger = bool(pick("no_ledger"))
    total = _total(pick("budget_epsilon"), pick("budget_delta"), pick("budget_rho"))
    if no_ledger:
        if ledger is not None or dataset is not None:
            raise InvalidParameter("--no-ledger excludes --ledger and --dataset")
        if data is None or total is None:
            raise InvalidParameter("--no-ledger needs the curator's --data SOURCE and a total "
                                   "budget (--budget-epsilon [--budget-delta] or --budget-rho)")
    else:
        if ledger is None or dataset is None:
            raise InvalidParameter(
                f"a release needs the curator's --ledger LEDGER and --dataset DATASET (got "
                f"ledger={ledger!r}, dataset={dataset!r}), or --no-ledger with --data and a "
                "--budget-* total")
        if total is not None:
            raise InvalidParameter("--budget-* applies to --no-ledger only: a ledger dataset's "
                                   "total was set by `dpcert budget init`")
    engine = pick("engine")
    master, remote = pick("spark_master"), pick("spark_remote")
    if (master is not None or remote is not None) and engine != "spark":
        raise InvalidParameter("--spark-master and --spark-remote go with --engine spark")
    defaults = []
    out = pick("out")
    if out is None:
        out = "out"
        defaults.append(f"--out = {str(Path(out).resolve())!r} (./out)")
    if engine is None:
        engine = "polars"
        defaults.append("--engine = polars")
    return Curator(ledger, dataset, Path(out), data, total, engine, master, remote,
                   tuple(defaults))


def out_path(out_dir: Path, name: str) -> Path:
    """``out_dir / name``, refused unless it resolves (symbolic links followed) to a plain
    entry directly inside the resolved output directory."""
    root = Path(os.path.realpath(out_dir))
    if os.sep in name or (os.altsep and os.altsep in name) or name in ("", ".", ".."):
        raise InvalidParameter(f"output name={name!r} must be a plain file name")
    target = root / name
    real = Path(os.path.realpath(target))
    if real.parent != root or real.name != name or target.is_symlink():
        raise InvalidParameter(
            f"output {str(target)!r} resolves to {str(real)!r}, outside the output directory "
            f"{str(root)!r} (a symbolic link?); nothing was charged")
    if target.exists() and not target.is_file():
        raise InvalidParameter(f"output {str(target)!r} exists and is not a file")
    return target
