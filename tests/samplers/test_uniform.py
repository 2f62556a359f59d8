"""uniform_below: the law at a range where modulo bias would be large (issue 20, item 4).

A second route to the rejection step, beside the replayed top words of
``test_sampler_internals.py``: for ``n = 3·2^61`` a word ``w`` is kept when ``w < 2n``
(``2^64 mod n = 2^62``), so ``P(v < 2^62) = 2^62/n = 2/3`` exactly; without rejection the top
``2^62`` words would fold onto ``[0, 2^62)`` and that probability would be 3/4.
"""

from __future__ import annotations

import math

import numpy as np

from dpcert.samplers import InsecureSeededSource, uniform_below


def test_uniform_below_has_no_modulo_bias_at_a_large_range() -> None:
    n, draws = 3 * 2**61, 20_000
    x = uniform_below(n, draws, source=InsecureSeededSource(20))
    assert x.dtype == np.int64 and int(x.min()) >= 0 and int(x.max()) < n
    hits = int((x < 2**62).sum())
    p, sd = 2 / 3, math.sqrt(draws * (2 / 3) * (1 / 3))
    assert abs(hits - draws * p) < 6 * sd  # a correct sampler fails w.p. < 2e-9
    assert abs(draws * 3 / 4 - draws * p) > 20 * sd  # the folded law is far outside
    # and the three thirds of the range are equally likely (each 1/3 up to 6 sd)
    thirds = np.bincount((x // (n // 3)).astype(np.int64), minlength=3)
    sd3 = math.sqrt(draws * (1 / 3) * (2 / 3))
    assert (np.abs(thirds - draws / 3) < 6 * sd3).all()
