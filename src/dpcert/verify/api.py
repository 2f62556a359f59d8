"""``verify``: prove a small DP program private, refute it with a witness, or say UNKNOWN."""

from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from dpcert._validate import check_int
from dpcert.errors import InvalidParameter
from dpcert.verify._deps import require_z3
from dpcert.verify.adjacency import pieces
from dpcert.verify.gauss_refute import refute_gaussian
from dpcert.verify.gaussian import has_gaussian, prove_gaussian
from dpcert.verify.induction import (
    AllSizesProof,
    claim_poly,
    prove_all_sizes,
    prove_free_gap,
)
from dpcert.verify.ir import Program, ProgramError
from dpcert.verify.loopshape import public_poly
from dpcert.verify.proof import render_proof
from dpcert.verify.refute import Witness, refute
from dpcert.verify.search import STAGES, ClassProof, classes, prove_class
from dpcert.verify.symexec import unroll
from dpcert.verify.syntax import parse_program

__all__ = ["VerificationResult", "Verdict", "verify"]

Verdict = Literal["PROVED", "REFUTED", "UNKNOWN"]


@dataclass(frozen=True)
class VerificationResult:
    """The verifier's answer.

    Attributes
    ----------
    verdict
        ``"PROVED"`` (an apRHL proof was found and checked), ``"REFUTED"`` (a neighbouring pair
        and an event violate the claim) or ``"UNKNOWN"``.
    claim
        The claimed ε as written (after instantiating the size), e.g. ``"5·eps"``.
    proof
        The rule-by-rule proof text (PROVED only).
    witness
        The counterexample (REFUTED only): pair, event, exact probabilities and loss.
    reason
        Why the verdict is UNKNOWN (or which part of the proof search failed before a refutation).
    seconds
        Wall time spent.
    bounded_n
        Proofs hold for every size 1..bounded_n (``None`` when the program has no size or the
        proof is for all sizes).
    sizes
        ``"all"`` when the verdict covers every size (an inductive proof, or a program without
        sizes), else the largest size covered (proved for 1..sizes, or searched up to it).
    """

    verdict: Verdict
    program: str
    claim: str
    proof: str | None
    witness: Witness | None
    reason: str | None
    seconds: float
    bounded_n: int | None
    sizes: int | Literal["all"] = "all"

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict: ``verdict``, ``sizes``, ``claim``, ``witness`` (REFUTED), ..."""
        out: dict[str, object] = {"verdict": self.verdict, "program": self.program,
                                  "claim": self.claim, "sizes": self.sizes,
                                  "seconds": round(self.seconds, 3)}
        if self.proof is not None:
            out["proof"] = self.proof
        if self.reason is not None:
            out["reason"] = self.reason
        if self.witness is not None:
            out["witness"] = self.witness.to_json()
        return out

    def __str__(self) -> str:
        pair = f"({self.claim})" if "," in self.claim else f"({self.claim}, 0)"
        head = f"{self.verdict}: {self.program} claims {pair}-DP"
        if self.verdict == "PROVED":
            head += " [all sizes]" if self.sizes == "all" else f" [sizes n ≤ {self.sizes}]"
        elif self.verdict == "REFUTED" and self.witness is not None:
            head += f" [refuted at n = {self.witness.n}]"
        elif self.sizes != "all":
            head += f" [searched sizes n ≤ {self.sizes}]"
        body = self.proof if self.verdict == "PROVED" else (
            self.witness.describe() if self.witness is not None else f"reason: {self.reason}")
        extra = ""
        if self.verdict == "REFUTED" and self.reason:
            extra = f"\n(proof search: {self.reason})"
        return f"{head}\n{body}{extra}\n({self.seconds:.2f} s)"


def _read(source_or_path: str | os.PathLike[str]) -> tuple[str, str]:
    if isinstance(source_or_path, os.PathLike) or (
            isinstance(source_or_path, str) and "\n" not in source_or_path
            and ";" not in source_or_path and source_or_path.endswith(".dp")):
        path = Path(source_or_path)
        try:
            return path.read_text(encoding="utf-8"), path.stem
        except OSError as e:
            raise ProgramError(f"cannot read program file {str(path)!r}: {e}") from e
    return str(source_or_path), "program"


#: Largest size of the bounded fallback when no ``n`` is given.
DEFAULT_N = 5
#: Largest size the refuter grows to when no ``n`` is given.
MAX_REFUTE_N = 8
#: Shares of the time limit: quick refutation at sizes 1..3, then the all-sizes proof.
QUICK_SHARE, INDUCTION_SHARE = 0.15, 0.6
#: Share of the time limit for the bounded search of a run with ``n`` (the all-sizes proof
#: gets the rest when it ends without a verdict).
SIZED_BOUNDED_SHARE = 0.6


def verify(source_or_path: str | os.PathLike[str], n: int | None = None,
           smt_out: str | os.PathLike[str] | None = None,
           timeout: float = 120.0) -> VerificationResult:
    """Prove or refute the privacy claim of a DP program.

    Parameters
    ----------
    source_or_path
        Program text, or the path of a ``.dp`` file.
    n
        ``None`` (default): try a proof for *every* size first (inductive loop invariants),
        then bounded proofs up to size 5 and refutations at growing sizes up to 8.  An integer:
        the free-gap rule, then proofs for every size 1..n and refutations at the smallest size
        up to n (60% of the time limit), and when these end without a verdict the all-sizes
        proof (its proof covers n: ``sizes == "all"``, the verdict of a run without n).
    smt_out
        A directory to write the SMT-LIB side conditions of a bounded proof to.
    timeout
        Seconds after which the search stops with UNKNOWN (saying what was covered).

    Returns
    -------
    VerificationResult

    Examples
    --------
    >>> r = verify("input q : real[1]; adjacent q : all in [-1, 1]; param eps > 0;"
    ...            " claim eps; return q[0] + lap(1/eps);")
    >>> r.verdict, r.sizes
    ('PROVED', 'all')
    >>> verify("input q : real[1]; adjacent q : all in [-1, 1]; param eps > 0;"
    ...        " claim eps; return q[0] + lap(1/(2*eps));").verdict
    'REFUTED'
    """
    if n is not None:
        n = check_int(n, "n")
        if n < 1:
            raise InvalidParameter(f"n={n} must be >= 1")
    if not (isinstance(timeout, (int, float)) and timeout > 0):
        raise InvalidParameter(f"timeout={timeout!r} must be a positive number of seconds")
    require_z3()
    t0 = time.monotonic()
    deadline = t0 + timeout
    text, stem = _read(source_or_path)
    prog = parse_program(text, name=stem)
    claim_text = str(claim_poly(prog))
    if prog.claim_delta is not None:
        claim_text += f", {public_poly(prog.claim_delta, prog)}"
    if has_gaussian(prog):
        why = None
        if n is None and prog.size_names:  # all sizes first (μ² bounded by induction)
            try:
                proof = prove_all_sizes(prog, t0 + INDUCTION_SHARE * timeout)
            except TimeoutError:
                proof = "time limit of the all-sizes proof search reached"
            if isinstance(proof, AllSizesProof):
                return VerificationResult("PROVED", prog.name, claim_text, proof.text, None,
                                          None, time.monotonic() - t0, None, "all")
            why = f"all sizes: {proof}"
        res = _gaussian(prog, n if n is not None else DEFAULT_N, claim_text)
        if why is not None:
            res = dataclasses.replace(res, reason=f"{why}; {res.reason}" if res.reason else why)
        return _timed(res, t0)
    if not prog.size_names:
        return _timed(_bounded(prog, 1, deadline, smt_out, claim_text, 1), t0)
    if n is not None:
        return _sized(prog, n, t0, timeout, smt_out, claim_text)
    # 1. a quick look for a counterexample at small sizes
    witness, _ = refute(prog, 3, t0 + QUICK_SHARE * timeout, vary_params=False)
    if witness is not None:
        return VerificationResult("REFUTED", prog.name, claim_text, None, witness, None,
                                  time.monotonic() - t0, None, witness.n)
    # 2. a proof for every size
    try:
        proof = prove_all_sizes(prog, t0 + INDUCTION_SHARE * timeout)
    except TimeoutError:
        proof = "time limit of the all-sizes proof search reached"
    if isinstance(proof, AllSizesProof):
        return VerificationResult("PROVED", prog.name, claim_text, proof.text, None, None,
                                  time.monotonic() - t0, None, "all")
    # 3. bounded proofs, refutations at growing sizes
    res = _bounded(prog, DEFAULT_N, deadline, smt_out, claim_text, MAX_REFUTE_N)
    why = f"all sizes: {proof}"
    return _timed(dataclasses.replace(res, reason=f"{why}; {res.reason}" if res.reason else why),
                  t0)


def _sized(prog: Program, n: int, t0: float, timeout: float,
           smt_out: str | os.PathLike[str] | None, claim_text: str) -> VerificationResult:
    """A run with ``n``: the free-gap rule, sizes 1..n, then the all-sizes proof."""
    deadline = t0 + timeout
    # the free-gap rule is cheap and its proof covers every size (the bounded templates
    # shift each sample by a function of the data only, which a released gap defeats)
    try:
        gap = prove_free_gap(prog, deadline)
    except TimeoutError:
        gap = None
    if gap is not None:
        return VerificationResult("PROVED", prog.name, claim_text, gap.text, None, None,
                                  time.monotonic() - t0, None, "all")
    # the bounded search (proofs for sizes 1..n, refutations) first, as it always ran; when it
    # ends without a verdict, an all-sizes proof, which covers n too: the same verdict as
    # without n where the unrolled search does not finish in time
    res = _timed(_bounded(prog, n, t0 + SIZED_BOUNDED_SHARE * timeout, smt_out, claim_text, n),
                 t0)
    if res.verdict != "UNKNOWN" or smt_out is not None:
        return res
    try:
        proof = prove_all_sizes(prog, deadline)
    except TimeoutError:
        proof = "time limit of the all-sizes proof search reached"
    if isinstance(proof, AllSizesProof):
        return VerificationResult("PROVED", prog.name, claim_text, proof.text, None, None,
                                  time.monotonic() - t0, None, "all")
    return _timed(dataclasses.replace(res, reason=f"{res.reason}; all sizes: {proof}"), t0)

def _gaussian(prog: Program, n: int, claim_text: str) -> VerificationResult:
    """Gaussian programs: the shift argument of `dpcert.verify.gaussian` per size."""
    sized = bool(prog.size_names)
    sizes = list(range(n, 0, -1)) if sized else [1]
    text = None
    for size in sizes:
        res = prove_gaussian(prog, size)
        if isinstance(res, str):
            witness, _ = refute_gaussian(prog, list(range(1, size + 1)))
            if witness is not None:
                return VerificationResult("REFUTED", prog.name, claim_text, None, witness, res,
                                          0.0, None, witness.n if sized else "all")
            return VerificationResult("UNKNOWN", prog.name, claim_text, None, None,
                                      f"n = {size}: {res}" if sized else res, 0.0,
                                      n if sized else None, n if sized else "all")
        if text is None:
            text = res[0]
    return VerificationResult("PROVED", prog.name, claim_text, text, None, None, 0.0,
                              n if sized else None, n if sized else "all")


def _bounded(prog: Program, n: int, deadline: float, smt_out: str | os.PathLike[str] | None,
             claim_text: str, refute_n: int) -> VerificationResult:
    """Bounded proofs for sizes 1..n, refutations for sizes 1..refute_n."""
    sized = bool(prog.size_names)
    sizes = list(range(n, 0, -1)) if sized else [n]
    bounded = n if sized else None
    cover: int | Literal["all"] = n if sized else "all"
    try:
        # cheap templates first; if they fail look for a counterexample before the costly one
        reason = _prove_all(prog, sizes, n, deadline, smt_out, ("constant", "outputs"))
        if isinstance(reason, VerificationResult):
            return dataclasses.replace(reason, claim=claim_text, sizes=cover)
        failed_at = int(reason.split(":")[0].split("=")[1]) if reason.startswith("n = ") else None
        witness, note = refute(prog, refute_n if sized else n, deadline, first=failed_at)
        if witness is not None:
            return VerificationResult("REFUTED", prog.name, claim_text, None, witness, reason,
                                      0.0, bounded, witness.n if sized else "all")
        again = _prove_all(prog, sizes, n, deadline, smt_out, STAGES)
        if isinstance(again, VerificationResult):
            return dataclasses.replace(again, claim=claim_text, sizes=cover)
    except TimeoutError:
        return VerificationResult("UNKNOWN", prog.name, claim_text, None, None,
                                  "time limit reached before a proof or a counterexample was "
                                  f"found (bounded search up to n = {n})", 0.0, bounded, cover)
    searched: int | Literal["all"] = refute_n if sized else "all"
    return VerificationResult("UNKNOWN", prog.name, claim_text, None, None,
                              f"{again}; {note}", 0.0, bounded, searched)


def _timed(r: VerificationResult, t0: float) -> VerificationResult:
    return dataclasses.replace(r, seconds=time.monotonic() - t0)


def _prove_all(prog: Program, sizes: list[int], n: int, deadline: float,
               smt_out: str | os.PathLike[str] | None,
               stages: tuple[str, ...]) -> VerificationResult | str:
    """PROVED for every size, or the reason of the first failure."""
    first: tuple[list[ClassProof], int] | None = None
    for size in sizes:
        res = _prove(prog, size, deadline, smt_out is not None and size == n, stages)
        if isinstance(res, str):
            return f"n = {size}: {res}"
        if size == n:
            first = res
    assert first is not None
    u = unroll(prog, n)
    proofs, n_paths = first
    if smt_out is not None:
        _write_smt(Path(smt_out), proofs)
    return VerificationResult("PROVED", prog.name, str(u.claim), render_proof(u, proofs, n_paths),
                              None, None, 0.0, n if prog.size_names else None)


def _prove(prog: Program, n: int, deadline: float, keep_smt: bool,
           stages: tuple[str, ...]) -> tuple[list[ClassProof], int] | str:
    u = unroll(prog, n, deadline)
    out: list[ClassProof] = []
    for pc in pieces(u):
        for cls in classes(u):
            if time.monotonic() > deadline:
                raise TimeoutError
            res = prove_class(u, pc, cls, deadline, keep_smt, stages)
            if isinstance(res, str):
                return res
            out.append(res)
    return out, len(u.paths)


def _write_smt(dirpath: Path, proofs: list[ClassProof]) -> None:
    dirpath.mkdir(parents=True, exist_ok=True)
    k = 0
    for i, pr in enumerate(proofs):
        for q in pr.queries:
            (dirpath / f"side_{i:03d}_{k:04d}.smt2").write_text(q, encoding="utf-8")
            k += 1
