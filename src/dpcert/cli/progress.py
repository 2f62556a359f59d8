"""Progress of the CLI's long work (a release of several queries, an audit) on stderr.

How it shows depends on where stderr goes, decided once per command (`progress_mode`):

* ``"rich"``: a terminal with `rich` installed (the ``report`` extra): a live bar with the
  step's text, the count of steps done and the time elapsed;
* ``"bar"``: a terminal without `rich`: the same on one line, redrawn with ``\\r``;
* ``"lines"``: not a terminal (a pipe, a CI log, a test): one plain line per step, no redrawing;
* ``"off"``: ``--quiet``.

`rich` stays an optional dependency (the ``report`` extra; ``make demo`` installs it): the CLI
needs only the standard library to report progress.

Examples
--------
>>> import io
>>> out = io.StringIO()
>>> with Steps(2, "dpcert release", "lines", out) as steps:
...     steps.step("computing")
...     steps.step("writing")
>>> print(out.getvalue(), end="")
dpcert release: [1/2] computing
dpcert release: [2/2] writing
>>> progress_mode(quiet=False, stream=io.StringIO())  # not a terminal
'lines'
"""

from __future__ import annotations

import importlib.util
import sys
from types import TracebackType
from typing import TYPE_CHECKING, Literal, TextIO

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

__all__ = ["Mode", "Steps", "progress_mode"]

Mode = Literal["rich", "bar", "lines", "off"]

#: Width of the ``"bar"`` mode's bar, in characters.
BAR_WIDTH = 20


def progress_mode(quiet: bool, stream: TextIO | None = None) -> Mode:
    """How progress shows on ``stream`` (stderr by default); ``quiet`` turns it off."""
    if quiet:
        return "off"
    target = sys.stderr if stream is None else stream
    isatty = getattr(target, "isatty", None)
    if not (callable(isatty) and isatty()):
        return "lines"
    return "rich" if importlib.util.find_spec("rich") is not None else "bar"


class Steps:
    """Progress through ``total`` steps of one piece of work called ``what``.

    ``step(text)`` marks one more step done, with its text; ``note(text)`` shows what is
    happening without counting a step (an audit's phases).  ``total = 0`` means the number
    of steps is not known (a spinner in ``"rich"`` mode).  Use it as a context manager so a
    live display is closed on every exit.
    """

    def __init__(self, total: int, what: str, mode: Mode,
                 stream: TextIO | None = None) -> None:
        self.total, self.what, self.mode = total, what, mode
        self.stream = sys.stderr if stream is None else stream
        self.done = 0
        self._live: Progress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> Steps:
        if self.mode == "rich":
            self._start_rich()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None
        elif self.mode == "bar" and 0 < self.done < self.total:
            print(file=self.stream)  # end the redrawn line before whatever is printed next

    def _start_rich(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        self._live = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                              MofNCompleteColumn(), TimeElapsedColumn(),
                              console=Console(file=self.stream), transient=False)
        self._live.start()
        self._task = self._live.add_task(self.what, total=self.total or None)

    def step(self, text: str) -> None:
        """One more step done; ``text`` says which."""
        self.done += 1
        self._show(text)

    def note(self, text: str) -> None:
        """Show ``text`` as what is happening now, without counting a step."""
        self._show(text)

    def _show(self, text: str) -> None:
        if self.mode == "off":
            return
        if self.mode == "rich":
            assert self._live is not None and self._task is not None  # set on entering
            self._live.update(self._task, completed=self.done,
                              description=f"{self.what}: {text}")
            return
        count = f"[{self.done}/{self.total}]" if self.total else ""
        if self.mode == "lines":
            print(f"{self.what}: {count} {text}" if count else f"{self.what}: {text}",
                  file=self.stream, flush=True)
            return
        filled = "#" * (BAR_WIDTH * self.done // max(self.total, 1))
        print(f"\r{self.what} [{filled:<{BAR_WIDTH}}] {count} {text[:50]:<50}", end="",
              file=self.stream, flush=True)
        if self.total and self.done >= self.total:
            print(file=self.stream)
