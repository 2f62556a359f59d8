"""Estimation draws from worker processes (``audit(..., workers=W)``).

An audit's bound is only as tight as its estimation batch is large, and on most mechanisms
drawing is what fills the time budget.  With ``workers=W`` the estimation phase forks ``W − 1``
processes (POSIX ``fork``: the mechanism, the chosen events and the frozen output encoder are
inherited, nothing is pickled).  Each worker draws *rounds* of ``m`` outputs of every input of
the chosen pairs, computes the events' membership bits and sends the packed bits back, while
the parent draws its own chunks as before.  When the parent stops (its deadline, or enough
draws), the workers are terminated and the rounds received in full are kept.

Why the bound stays valid
-------------------------
* **Independent draws.**  A forked child inherits its parent's generator states, so a mechanism
  that keeps its own generator would draw the *same* outputs in every process, and the counts
  would no longer be sums of independent draws.  Each worker reseeds NumPy's global legacy
  generator from the OS and calls ``worker_init(w)`` (``w = 1 … W−1``), where the caller
  reseeds whatever generator the mechanism holds.  The search's workers (`Crew`, which
  draw the few-valued screens' batches) call it with ``w = W … 2W−2``
  (`search_index`): no estimation worker may replay a search worker's draws.  dpcert's
  own samplers read the OS CSPRNG and drop their buffer after a fork
  (`SystemSource`).  The auditor checks the assumption twice:
  `check_streams` before the search (in forked copies only, so the parent draws what it
  would draw with ``workers=1``), and the first `CHECKED` rounds of every process
  against the same rounds of every other (a shared stream repeats them call for call).
  Identical outputs of the first input (unless they are all one value, which says nothing)
  stop the audit with `AuditFailed`.
* **Which draws count does not depend on their values.**  The parent stops on the wall clock
  or on the number of draws, never on the outputs; the tally lists the parent's chunks, then
  worker 1's rounds in order, then worker 2's, ….  Every round covers every input of the chosen
  pairs, so each input keeps the same number ``n`` of draws, and the Poissonized counts over a
  prefix of that order (`poisson_counts`) are counts over a
  prefix of independent draws, as in one process.

A mechanism that cannot run in a forked child (one holding threads, such as a Polars query)
shows it in `check_streams`: no answer within its time limit is an error, not a hang.

Examples
--------
>>> import numpy as np
>>> from dpcert.audit.kernel.parallel import check_streams
>>> rng = np.random.default_rng(1)  # insecure-ok: a shared stream, to show the check refuse it
>>> f = lambda x, n: rng.laplace(x, 1.0, n)
>>> check_streams(f, 0.0, workers=2)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
dpcert.errors.AuditFailed: workers=2: worker 1 drew the same 1000 outputs as the parent, ...
>>> def reseed(w):
...     rng.bit_generator.state = np.random.PCG64().state  # insecure-ok: test subject
>>> check_streams(f, 0.0, workers=2, worker_init=reseed)
"""

from __future__ import annotations

import contextlib
import hashlib
import multiprocessing
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import numpy as np

from dpcert._types import Array
from dpcert.audit.kernel.outputs import OutputEncoder, Sampler
from dpcert.errors import AuditFailed, InvalidParameter

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.context import ForkContext, ForkProcess

__all__ = ["CHECKED", "PROBE", "Crew", "Forking", "Workers", "check_streams", "fingerprint",
           "search_index"]

_T = TypeVar("_T")
#: What a search worker's task returns.
_R = TypeVar("_R")
#: What a worker round gives back: (pair, side, packed membership bits of each event).
Bits = list[tuple[int, int, list[Array]]]

#: Draws of the stream check before the search.
PROBE = 1_000
#: Rounds of each process whose outputs are compared with the other processes' rounds.
CHECKED = 8
#: Least time (seconds) a worker gets to answer the stream check.
PROBE_WAIT = 5.0


def _context() -> ForkContext:
    if "fork" not in multiprocessing.get_all_start_methods():   # pragma: no cover - Windows
        raise InvalidParameter("workers>1 needs os.fork (Linux, or another POSIX system)")
    return multiprocessing.get_context("fork")


def fingerprint(encoded: Array) -> bytes | None:
    """A digest of encoded outputs, or None when they are all one value (identical outputs of
    two processes then say nothing about their streams)."""
    a = np.ascontiguousarray(encoded)
    if a.shape[0] == 0:
        return None
    rows = a.reshape(a.shape[0], -1).view(np.uint8).reshape(a.shape[0], -1)
    if bool((rows == rows[0]).all()):
        return None
    return hashlib.blake2b(a.tobytes(), digest_size=16).digest()


def _reseed(w: int, worker_init: Callable[[int], None] | None) -> None:
    """In a fresh worker: fresh OS entropy for NumPy's global generator, then the caller's
    hook (Python's ``random`` reseeds itself after a fork)."""
    # a black box's global stream must not repeat the parent's (never dpcert's noise)
    np.random.seed()  # noqa: NPY002  # insecure-ok: reseeds a black box's stream, not noise
    if worker_init is not None:
        worker_init(w)


def _probe(w: int, conn: Connection[object, object], sampler: Sampler, x: object,
           worker_init: Callable[[int], None] | None) -> None:
    try:
        if w > 0:   # w = 0 stands in for the parent: its stream as inherited, not reseeded
            _reseed(w, worker_init)
        conn.send(("ok", fingerprint(OutputEncoder().encode(sampler(x, PROBE), PROBE))))
    except BaseException as e:   # the parent reports it; a child must never raise past here
        conn.send(("error", f"{type(e).__name__}: {e}"))
    finally:
        conn.close()


def search_index(w: int, workers: int) -> int:
    """The ``worker_init`` index of the search's worker ``w`` (``1 … workers − 1``):
    ``workers − 1 + w``, after the estimation's ``1 … workers − 1``.  Distinct indices give
    distinct streams, so no estimation worker draws again what a search worker drew (a
    ``worker_init`` seeded by its index would otherwise replay the search's outputs into the
    estimation, and the chosen events would be measured on the draws they were chosen on).

    >>> [search_index(w, 3) for w in (1, 2)]
    [3, 4]
    """
    return workers - 1 + w


def _copies(workers: int) -> list[tuple[int, str]]:
    """The processes an audit with ``workers`` may run, as (``worker_init`` index, name): the
    parent (0, never reseeded), the estimation's workers, the search's."""
    return ([(0, "the parent")] + [(w, f"worker {w}") for w in range(1, workers)]
            + [(search_index(w, workers), f"search worker {w}") for w in range(1, workers)])


def _shared_stream(workers: int, who: str, other: str, what: str) -> AuditFailed:
    return AuditFailed(
        f"workers={workers}: {who} drew the same {what} as {other}, so the processes share "
        "one random stream; reseed the mechanism's generator in worker_init(w) (or use a "
        "dpcert measurement, which reads the OS CSPRNG), or use workers=1")


def _answer(conn: Any, until: float, workers: int, who: str, silence: str) -> Any:
    """What a child sent on ``conn`` as ``("ok", value)`` by ``until``
    (``time.perf_counter()`` seconds).  Raises `AuditFailed` when it
    sent nothing by then (``silence`` says so), exited, or reported an error."""
    if not conn.poll(max(0.0, until - time.perf_counter())):
        raise AuditFailed(f"workers={workers}: {who} {silence}; this mechanism may not run in "
                          "a forked process (threads, a Polars query): use workers=1")
    try:
        status, got = conn.recv()
    except (EOFError, OSError) as e:
        raise AuditFailed(f"workers={workers}: {who} exited without an answer "
                          f"({type(e).__name__}); use workers=1") from None
    if status != "ok":
        raise AuditFailed(f"workers={workers}: {who} failed: {got}")
    return got


def check_streams(sampler: Sampler, x: object, workers: int,
                  worker_init: Callable[[int], None] | None = None,
                  per_draw: float | None = None) -> None:
    """Refuse ``workers`` when forked copies of ``sampler`` draw the same outputs on ``x``.

    Forks ``2·workers − 1`` children: ``workers − 1`` reseed as the estimation's workers do,
    ``workers − 1`` as the search's (`search_index`), and one stands in for the parent
    (its generators as inherited), so the parent's own stream is not touched and it draws
    what it would draw with ``workers=1``.  Each draws
    `PROBE` outputs of ``x``.  Raises `AuditFailed` when two of
    them drew the same outputs, when a child fails, or when one does not answer within
    ``max(PROBE_WAIT, 20 × PROBE × per_draw)`` seconds (a mechanism that cannot run after a
    fork)."""
    ctx = _context()
    procs, conns = [], []
    try:
        copies = _copies(workers)
        for w, _ in copies:
            recv, send = ctx.Pipe(duplex=False)
            conns.append(recv)
            p = ctx.Process(target=_probe, args=(w, send, sampler, x, worker_init),
                            daemon=True, name=f"dpcert-audit-probe-{w}")
            p.start()
            send.close()
            procs.append(p)
        wait = max(PROBE_WAIT, 20.0 * PROBE * (per_draw or 0.0))
        end = time.perf_counter() + wait
        seen: dict[bytes, str] = {}
        for (_, who), conn in zip(copies, conns, strict=True):
            got = _answer(conn, end, workers, f"{who}'s copy",
                          f"drew no outputs in {wait:.0f} s")
            if got is None:
                continue
            if got in seen:
                raise _shared_stream(workers, who, seen[got], f"{PROBE} outputs")
            seen[got] = who
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.join()
        for conn in conns:
            conn.close()


def _draw(w: int, conn: Connection[object, object],
          one_round: Callable[[bool], tuple[Array | None, Bits]],
          worker_init: Callable[[int], None] | None) -> None:
    try:
        _reseed(w, worker_init)
        done = 0
        while True:
            encoded, bits = one_round(done < CHECKED)
            conn.send(("round", None if encoded is None else fingerprint(encoded), bits))
            done += 1
    except BaseException as e:   # terminate() ends the loop; anything else is reported
        with contextlib.suppress(OSError, ValueError):
            conn.send(("error", f"{type(e).__name__}: {e}", []))
    finally:
        conn.close()


class Workers:
    """``workers − 1`` forked processes drawing estimation rounds until `close`.

    ``one_round(check)`` draws ``m`` outputs of every input of the chosen pairs and returns
    the first input's encoded outputs (for the stream check, when ``check``; else None) with
    the membership bits; the
    parent's chunks must be drawn by the same calls in the same order.  Create
    it before starting any thread of the estimation (a fork copies only the calling thread)."""

    def __init__(self, workers: int, one_round: Callable[[bool], tuple[Array | None, Bits]],
                 worker_init: Callable[[int], None] | None) -> None:
        ctx = _context()
        self.workers = workers
        self._rounds: list[list[Bits]] = [[] for _ in range(workers - 1)]
        self._prints: list[list[bytes | None]] = [[] for _ in range(workers - 1)]
        self._errors: list[str] = []
        self._lock = threading.Lock()
        self._procs: list[ForkProcess] = []
        self._readers: list[threading.Thread] = []
        conns = []
        try:
            for w in range(1, workers):
                recv, send = ctx.Pipe(duplex=False)
                conns.append(recv)
                p = ctx.Process(target=_draw, args=(w, send, one_round, worker_init),
                                daemon=True, name=f"dpcert-audit-worker-{w}")
                p.start()
                send.close()
                self._procs.append(p)
        except BaseException:   # e.g. no fork possible: leave no child behind
            self.stop()
            for c in conns:
                c.close()
            raise
        self._readers = [threading.Thread(target=self._read, args=(w, c), daemon=True,
                                          name=f"dpcert-audit-reader-{w + 1}")
                         for w, c in enumerate(conns)]
        for t in self._readers:
            t.start()

    def _read(self, w: int, conn: Any) -> None:
        try:
            while True:
                try:
                    kind, info, bits = conn.recv()
                except (EOFError, OSError):
                    return   # the worker ended (terminated mid-message: that round is lost)
                with self._lock:
                    if kind == "error":
                        self._errors.append(f"worker {w + 1} failed: {info}")
                        return
                    if len(self._prints[w]) < CHECKED:
                        self._prints[w].append(info)
                    self._rounds[w].append(bits)
        finally:
            conn.close()

    def rounds(self) -> int:
        """Rounds received so far, all workers together."""
        with self._lock:
            return sum(len(r) for r in self._rounds)

    def stop(self) -> None:
        """Terminate the workers and wait for their readers (idempotent)."""
        for p in self._procs:
            if p.is_alive():
                p.terminate()
        for p in self._procs:
            p.join()
        for t in self._readers:
            t.join()

    def close(self, parent: list[bytes | None]) -> list[Bits]:
        """Stop the workers; return their received rounds, worker by worker, in order.

        ``parent`` holds the fingerprints (`fingerprint`) of the parent's first chunks
        of the first input.  Raises `AuditFailed` when a worker failed,
        or when one of its first `CHECKED` rounds equals the same round of the parent
        or of another worker."""
        self.stop()
        if self._errors:
            raise AuditFailed(f"workers={self.workers}: {self._errors[0]}")
        processes = [("the parent", parent)] + [(f"worker {w}", prints) for w, prints
                                                 in enumerate(self._prints, start=1)]
        for r in range(CHECKED):
            seen: dict[bytes, str] = {}
            for who, prints in processes:
                fp = prints[r] if r < len(prints) else None
                if fp is None:
                    continue
                if fp in seen:
                    raise _shared_stream(self.workers, who, seen[fp], f"round {r + 1}")
                seen[fp] = who
        return [bits for rs in self._rounds for bits in rs]


@dataclass(frozen=True)
class Forking:
    """How the search may fork: ``workers`` processes in all, ``worker_init`` as for the
    estimation (called with `search_index`), and the output ``encoder`` whose copy
    each search worker freezes (the parent's code book stays the only one that grows, so a
    value new to a worker is counted as unseen, never under a code the parent gives to
    something else)."""

    workers: int
    worker_init: Callable[[int], None] | None = None
    encoder: OutputEncoder | None = None


def _serve(w: int, conn: Any, task: Callable[..., object], fork: Forking) -> None:
    try:
        _reseed(search_index(w, fork.workers), fork.worker_init)
        if fork.encoder is not None:
            fork.encoder.freeze()
        while True:
            try:
                args = conn.recv()
            except (EOFError, OSError):
                return
            if args is None:
                return
            conn.send(("ok", task(*args)))
    except BaseException as e:   # terminate() ends the loop; anything else is reported
        with contextlib.suppress(OSError, ValueError):
            conn.send(("error", f"{type(e).__name__}: {e}"))
    finally:
        conn.close()


class Crew(Generic[_R]):
    """``fork.workers − 1`` forked processes that run ``task(*args)`` for the search.

    The search's draws never enter the bound (the estimation draws its own, after the events
    are fixed), so their only requirement is that they are not the estimation's: each worker
    reseeds with its `search_index`, which `check_streams` probed.  ``task`` and
    what it reads (the mechanism, the input pairs) are inherited at the fork; only ``args``
    and the results are pickled.  `send` gives every worker the same ``args``;
    `gather` waits for their results.  Use it as a context manager (or call
    `close`): no child outlives it."""

    def __init__(self, fork: Forking, task: Callable[..., _R]) -> None:
        ctx = _context()
        self.workers = fork.workers
        self._conns: list[Any] = []
        self._procs: list[ForkProcess] = []
        try:
            for w in range(1, fork.workers):
                mine, theirs = ctx.Pipe()
                self._conns.append(mine)
                p = ctx.Process(target=_serve, args=(w, theirs, task, fork), daemon=True,
                                name=f"dpcert-audit-search-{w}")
                p.start()
                theirs.close()
                self._procs.append(p)
        except BaseException:   # e.g. no fork possible: leave no child behind
            self.close()
            raise

    def __enter__(self) -> Crew[_R]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send(self, *args: object) -> None:
        """Start ``task(*args)`` in every worker."""
        for conn in self._conns:
            conn.send(args)

    def gather(self, until: float) -> list[_R]:
        """The workers' results of the last `send`, worker by worker.  Raises
        `AuditFailed` when one failed, or gave no result by ``until``
        (``time.perf_counter()`` seconds)."""
        out = []
        for w, conn in enumerate(self._conns, start=1):
            out.append(_answer(conn, until, self.workers, f"search worker {w}",
                               "gave no result in time"))
        return out

    def alongside(self, task: Callable[..., _T], *args: object) -> tuple[_T, list[_R]]:
        """`send` ``args``, run ``task(*args)`` here meanwhile, then `gather`:
        (this process's result, the workers' results).  A worker's last chunk may overrun a
        deadline as this process's may, so each gets max(`PROBE_WAIT`, twice this
        process's time) after it."""
        t0 = time.perf_counter()
        self.send(*args)
        mine = task(*args)
        now = time.perf_counter()
        return mine, self.gather(now + max(PROBE_WAIT, 2.0 * (now - t0)))

    def close(self) -> None:
        """End the workers (idempotent)."""
        for conn in self._conns:
            with contextlib.suppress(OSError, ValueError):
                conn.send(None)
        for p in self._procs:
            p.join(timeout=1.0)
            if p.is_alive():
                p.terminate()
                p.join()
        for conn in self._conns:
            conn.close()
        self._procs, self._conns = [], []
