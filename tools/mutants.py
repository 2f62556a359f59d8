"""The curated mutants of ``tools/mutate.py``: one-line changes shaped like real privacy bugs.

Each entry names the file (under ``src/``), an exact text that must occur once, its replacement,
the tests that should kill it, the bug class, and whether CI's fast subset runs it.  Keep
``find`` texts long enough to be unique; the runner reports a mutant whose text no longer occurs
exactly once as STALE (an error), so the list follows the code.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mutant:
    id: str
    path: str
    find: str
    replace: str
    tests: tuple[str, ...]
    kind: str
    note: str
    ci: bool = False
    equivalent: bool = False


def _m(id: str, path: str, find: str, replace: str, tests: str | tuple[str, ...], kind: str,
       note: str, ci: bool = False, equivalent: bool = False) -> Mutant:
    ts = (tests,) if isinstance(tests, str) else tests
    return Mutant(id, "dpcert/" + path, find, replace, tuple(ts), kind, note, ci, equivalent)


T_LAP = "tests/mechanisms/test_laplace.py"
T_GAUSS = "tests/mechanisms/test_gaussian.py"
T_TIES = "tests/samplers/test_lattice_ties.py"
T_SUM = "tests/transformations/test_sum.py"
T_MV = "tests/transformations/test_mean_variance.py"
T_SVT = "tests/mechanisms/test_sparse_vector.py"
T_ACC = "tests/accounting/test_leaf_values_exact.py"
T_SYM = "tests/statistical/test_sampler_symmetry.py"
T_EXPZ = "tests/mechanisms/test_exponential_zcdp.py"

MUTANTS: list[Mutant] = [
    # --- the survivors listed in issue 20 ---------------------------------------------------
    _m("gauss-drop-sqrt-m", "mechanisms/gaussian.py",
       "allowance = sqrt_up(space.coordinates) * rounding_allowance(kk)",
       "allowance = rounding_allowance(kk)",
       T_GAUSS, "dropped allowance", "Gaussian float vector: √m dropped from the allowance",
       ci=True),
    _m("sqrt-up-rounds-down", "mechanisms/_additive.py",
       "return Fraction(r) if r * r == m else Fraction(r + 1)",
       "return Fraction(r)",
       T_GAUSS, "wrong rounding direction", "sqrt_up rounds √m down", ci=True),
    _m("unsized-1025", "mechanisms/_additive.py",
       "and not space.size_known and n > MAX_UNSIZED:",
       "and not space.size_known and n > MAX_UNSIZED + 1:",
       T_GAUSS, "loosened comparison", "unsized float vector of 1025 coordinates accepted",
       ci=True),
    _m("svt-query-noise-forgets-c", "mechanisms/sparse_vector.py",
       "scale_nu = (cc if monotonic else 2 * cc) * sens / e2",
       "scale_nu = (1 if monotonic else 2) * sens / e2",
       T_SVT, "sensitivity off by a factor", "sparse vector query noise forgets c", ci=True),
    _m("int-sum-ignores-d-in", "transformations/sum.py",
       "return int(d_in) * int(sens)",
       "return int(sens)",
       T_SUM, "d_in ignored", "integer sum stability ignores d_in", ci=True),
    _m("mean-sens-max-abs", "transformations/mean.py",
       "sens = (hi - lo) / n",
       "sens = max(abs(lo), abs(hi)) / n",
       T_MV, "sensitivity off by a factor", "mean sensitivity max(|L|,|U|)/n", ci=True),
    _m("zcdp-kary-rr-ignores-k", "accounting/zcdp.py",
       "return log_up(p * (k - 1) / (1 - p))",
       "return log_up(p / (1 - p))",
       T_ACC, "sensitivity off by a factor", "zCDP of k-ary RR given by probability ignores k",
       ci=True),
    _m("pld-poisson-remove-only", "accounting/pld.py",
       'dirs: tuple[Direction, ...] = ("remove", "add") if sampled else ("remove",)',
       'dirs: tuple[Direction, ...] = ("remove",)',
       T_ACC, "forgotten case", "PLD of Poisson subsampling: remove direction only", ci=True),
    _m("cells-negative-wrong-end", "samplers/_cells.py",
       "dv = np.where(vv < 0, (self.t - 1) - rr, rr)",
       "dv = rr",
       T_SYM, "wrong end of a sampler cell", "negative cells measured from the wrong end",
       ci=True),
    _m("lattice-noise-times-2k", "samplers/lattice.py",
       "return x, scalar, kk, s / Fraction(2) ** kk",
       "return x, scalar, kk, s * Fraction(2) ** kk",
       (T_LAP, T_GAUSS), "sensitivity off by a factor",
       "lattice noise scale multiplied instead of divided by 2^k", ci=True),
    # --- issue 19 -----------------------------------------------------------------------------
    _m("lattice-tie-allowance-dropped", "samplers/lattice.py",
       "return Fraction(2) ** kk + max(Fraction(2) ** (kk - 2), Fraction(2) ** -1074)",
       "return Fraction(2) ** kk",
       T_TIES, "dropped allowance", "midpoint-tie term of the rounding allowance dropped",
       ci=True),
    _m("em-zcdp-over-16", "accounting/zcdp.py",
       "return event.epsilon**2 / 8",
       "return event.epsilon**2 / 16",
       T_EXPZ, "sensitivity off by a factor", "bounded-range ρ = ε²/16", ci=True),
    _m("pf-claims-bounded-range", "mechanisms/exponential.py",
       "monotonic, \"permute_and_flip\", permute_and_flip_indices,\n"
       "                            bounded_range=False)",
       "monotonic, \"permute_and_flip\", permute_and_flip_indices,\n"
       "                            bounded_range=True)",
       T_EXPZ, "unproven claim", "permute-and-flip charged ε²/8 under zCDP", ci=True),
    _m("rnm-laplace-bounded-range", "mechanisms/exponential.py",
       'event_map=_bounded_range_events(eps, kk) if noise == "exponential" else None,',
       "event_map=_bounded_range_events(eps, kk),",
       T_EXPZ, "unproven claim", "RNM with Laplace noise charged ε²/8 under zCDP", ci=True),
    _m("em-br-ignores-d-in", "mechanisms/exponential.py",
       "one = BoundedRangeEvent(eps * d)",
       "one = BoundedRangeEvent(eps)",
       T_EXPZ, "d_in ignored", "bounded-range event ignores d_in"),
    _m("em-topk-one-round", "mechanisms/exponential.py",
       "return one if rounds == 1 else SelfComposedEvent(one, rounds)",
       "return one",
       T_EXPZ, "forgotten composition", "top-k bounded-range event charged once"),
]
