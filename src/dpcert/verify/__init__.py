"""The verifier: prove small DP programs private, or refute them with a witness.

A program in dpcert's small DP language (see ``docs/verifier.md``) is parsed to a typed IR and
either

* **PROVED** by randomness alignment (apRHL couplings as in Gaboardi & Stoughton's notes; Barthe
  et al. LICS 2016 for the pointwise rule; LightDP, Zhang & Kifer POPL 2017; ShadowDP, Wang et al.
  PLDI 2019; CheckDP, Wang et al. CCS 2020): shifts of the noise, checked with z3 over exact
  rationals, that make the two runs agree while the summed cost stays within the claim -- for
  *every* size by an inductive loop invariant (`dpcert.verify.induction`), or for sizes 1..n
  by unrolling;
* **REFUTED** with a concrete neighbouring pair, an output event and the exact privacy loss; or
* **UNKNOWN** with the reason.

Examples
--------
>>> from dpcert.verify import verify
>>> r = verify("input q : real[1]; adjacent q : all in [-1, 1]; param eps > 0;"
...            " claim eps; return q[0] + lap(1/eps);")
>>> r.verdict, r.sizes
('PROVED', 'all')
"""

from __future__ import annotations

from dpcert.verify._deps import MissingExtra, require_lark, require_z3
from dpcert.verify.api import Verdict, VerificationResult, verify
from dpcert.verify.ir import Program, ProgramError
from dpcert.verify.refute import Witness
from dpcert.verify.syntax import parse_program

require_z3()
require_lark()

__all__ = [
    "MissingExtra",
    "Program",
    "ProgramError",
    "Verdict",
    "VerificationResult",
    "Witness",
    "parse_program",
    "verify",
]
