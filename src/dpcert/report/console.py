"""Console output for long work: tables and progress, with ``rich`` when it is installed
(``pip install "dpcert[report]"``) and plain text otherwise (or when output is not a terminal).

Examples
--------
>>> import io
>>> out = io.StringIO()
>>> print_table("demo", ["g", "count"], [["a", "1,204"], ["b", "17"]], file=out, plain=True)
>>> print(out.getvalue().rstrip())
demo
g  count
-  -----
a  1,204
b  17
>>> list(progress(range(3), "work", file=io.StringIO(), plain=True))
[0, 1, 2]
>>> err = io.StringIO()
>>> with status("proving", file=err, plain=True):
...     pass
>>> err.getvalue().splitlines()[0]
'proving ...'
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Sequence, Sized
from contextlib import contextmanager
from typing import TextIO, TypeVar

__all__ = ["print_table", "progress", "status", "use_rich"]

T = TypeVar("T")


def use_rich(file: TextIO | None = None) -> bool:
    """Whether ``rich`` is installed and ``file`` (default stderr) is a terminal."""
    f = sys.stderr if file is None else file
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return bool(getattr(f, "isatty", lambda: False)())


def print_table(title: str, header: Sequence[str], rows: Sequence[Sequence[str]], *,
                file: TextIO | None = None, plain: bool | None = None) -> None:
    """Print a table of already formatted cells (see `dpcert.report.format`)."""
    f = sys.stdout if file is None else file
    if not (use_rich(f) if plain is None else not plain):
        widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
                  for i, h in enumerate(header)]
        print(title, file=f)
        print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip(), file=f)
        print("  ".join("-" * w for w in widths), file=f)
        for r in rows:
            print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip(), file=f)
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    for i, h in enumerate(header):
        table.add_column(h, justify="left" if i == 0 else "right")
    for r in rows:
        table.add_row(*r)
    Console(file=f).print(table)


def progress(items: Iterable[T], description: str, *, total: int | None = None,
             file: TextIO | None = None, plain: bool | None = None) -> Iterator[T]:
    """Iterate over ``items`` showing progress (a rich bar, or ``[i/n] description`` lines)."""
    f = sys.stderr if file is None else file
    n = total if total is not None else (len(items) if isinstance(items, Sized) else None)
    if not (use_rich(f) if plain is None else not plain):
        for i, item in enumerate(items):
            print(f"[{i}/{n if n is not None else '?'}] {description}", file=f)
            yield item
        return
    from rich.console import Console
    from rich.progress import track

    yield from track(items, description=description, total=n, console=Console(file=f))


@contextmanager
def status(message: str, *, file: TextIO | None = None, plain: bool | None = None
           ) -> Iterator[None]:
    """Show that long work of unknown length is running: a ``rich`` spinner on a terminal, else
    one line on stderr when it starts and one with its wall time when it ends."""
    import time

    f = sys.stderr if file is None else file
    if use_rich(f) if plain is None else not plain:
        from rich.console import Console

        with Console(file=f).status(message):
            yield
        return
    t0 = time.perf_counter()
    print(f"{message} ...", file=f, flush=True)
    yield
    print(f"{message}: done in {time.perf_counter() - t0:.1f} s", file=f, flush=True)
