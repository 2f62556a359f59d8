"""``verify``: prove a small DP program private, refute it with a witness, or say UNKNOWN."""

from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from dpcert._validate import check_int
from dpcert.verify._deps import require_z3
from dpcert.verify.adjacency import pieces
from dpcert.verify.ir import Program, ProgramError
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
        Proofs hold for every size 1..bounded_n (``None`` when the program has no size).
    """

    verdict: Verdict
    program: str
    claim: str
    proof: str | None
    witness: Witness | None
    reason: str | None
    seconds: float
    bounded_n: int | None

    def __str__(self) -> str:
        head = f"{self.verdict}: {self.program} claims ({self.claim}, 0)-DP"
        if self.bounded_n is not None:
            head += f" [sizes n ≤ {self.bounded_n}]"
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


def verify(source_or_path: str | os.PathLike[str], n: int = 5,
           smt_out: str | os.PathLike[str] | None = None,
           timeout: float = 120.0) -> VerificationResult:
    """Prove or refute the privacy claim of a DP program.

    Parameters
    ----------
    source_or_path
        Program text, or the path of a ``.dp`` file.
    n
        Largest size: proofs are searched for every size 1..n; refutations at the smallest size
        that shows a violation.
    smt_out
        A directory to write the SMT-LIB side conditions of a proof to (one file per query).
    timeout
        Seconds after which the search stops with UNKNOWN.

    Returns
    -------
    VerificationResult

    Examples
    --------
    >>> r = verify("input q : real[1]; adjacent q : all in [-1, 1]; param eps > 0;"
    ...            " claim eps; return q[0] + lap(1/eps);")
    >>> r.verdict
    'PROVED'
    >>> verify("input q : real[1]; adjacent q : all in [-1, 1]; param eps > 0;"
    ...        " claim eps; return q[0] + lap(1/(2*eps));").verdict
    'REFUTED'
    """
    n = check_int(n, "n")
    if n < 1:
        from dpcert.errors import InvalidParameter

        raise InvalidParameter(f"n={n} must be >= 1")
    require_z3()
    t0 = time.monotonic()
    deadline = t0 + timeout
    text, stem = _read(source_or_path)
    prog = parse_program(text, name=stem)
    sizes = list(range(n, 0, -1)) if prog.size_names else [n]
    bounded = n if prog.size_names else None
    claim_text = str(unroll(prog, n).claim)
    # cheap templates first; if they fail look for a counterexample before the costly template
    reason = _prove_all(prog, sizes, n, deadline, smt_out, ("constant", "outputs"))
    if isinstance(reason, VerificationResult):
        return _timed(reason, t0)
    failed_at = int(reason.split(":")[0].split("=")[1]) if reason.startswith("n = ") else None
    witness, note = refute(prog, n, deadline, first=failed_at)
    if witness is not None:
        return VerificationResult("REFUTED", prog.name, claim_text, None, witness, reason,
                                  time.monotonic() - t0, bounded)
    again = _prove_all(prog, sizes, n, deadline, smt_out, STAGES)
    if isinstance(again, VerificationResult):
        return _timed(again, t0)
    return VerificationResult("UNKNOWN", prog.name, claim_text, None, None,
                              f"{again}; {note}", time.monotonic() - t0, bounded)


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
    u = unroll(prog, n)
    out: list[ClassProof] = []
    for pc in pieces(u):
        for cls in classes(u):
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
