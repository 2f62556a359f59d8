"""bernoulli: replayed words at the exact boundary U = p (issue 20, item 4).

``bernoulli(p)`` is ``1{U < p}`` for the uniform ``U`` whose binary digits are the source's
bits: a 32-bit prefix (the low half of the first word), then whole words as needed.  For a
dyadic ``p = h/2^32`` the boundary is exact: ``U = p`` (prefix ``h``, then zeros) must give
False, and ``U`` just below (prefix ``h − 1``, then ones) True.  A threshold one unit too high
would return True at ``U = p``: a bias of one unit in the last place, which no statistical test
sees (the threshold brackets themselves are checked in ``test_sampler_internals.py``).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from dpcert.samplers import bernoulli
from dpcert.samplers.entropy import EntropySource


class Words(EntropySource):
    """Replays fixed 64-bit words, then at most 8 zero words: a sampler that still cannot
    decide after 512 zero bits past the boundary is wrong (a correct one decides U = p at once),
    so it fails instead of reading zeros forever."""

    def __init__(self, words: list[int]) -> None:
        self.words = list(words)
        self.zeros = 8

    def random_uint64(self, n: int) -> np.ndarray:
        out = []
        for _ in range(n):
            if self.words:
                out.append(self.words.pop(0))
            else:
                assert self.zeros > 0, "the coin read 8 zero words past U = p undecided"
                self.zeros -= 1
                out.append(0)
        return np.array(out, dtype=np.uint64)


@pytest.mark.parametrize("p", [Fraction(1, 2), Fraction(3, 8), Fraction(5, 2**20),
                               Fraction(2**32 - 1, 2**32)])
def test_bernoulli_is_exactly_u_below_p_at_the_boundary(p: Fraction) -> None:
    h = int(p * 2**32)
    ones = [2**64 - 1] * 4
    assert not bernoulli(p, 1, source=Words([h]))[0]  # U = p exactly
    assert bernoulli(p, 1, source=Words([h - 1, *ones]))[0]  # U = p − 2^-288
    if h + 1 < 2**32:  # U = p + 2^-32
        assert not bernoulli(p, 1, source=Words([h + 1]))[0]
