"""Tests valid at the seeds a claim has: the paired sign-flip test, ties, and the floors of p.

A paired claim has one difference dᵢ per seed, i = 1..n.  Under the null that each dᵢ is as
likely to have the opposite sign (the seeds' pairs are exchangeable), every one of the 2ⁿ sign
patterns s ∈ {−1, +1}ⁿ is equally likely, and the statistic T = Σ dᵢ has the null distribution
of T(s) = Σ sᵢ dᵢ.  The two-sided p is the share of patterns at least as far from 0::

    p = #{s : |Σ sᵢ dᵢ| ≥ |Σ dᵢ|} / 2ⁿ            (one-sided: T(s) ≥ T, or T(s) ≤ T)

It is exact at every n and needs no normality; it can never be below its **floor**, the share
of the patterns that are always counted: 2 · 2⁻ⁿ two-sided (the identity and its mirror image),
2⁻ⁿ one-sided.  Four seeds cannot give p below 0.125, five not below 0.0625.

- :func:`sign_flip_test`  the p above: exact over all 2ⁿ patterns for n <= :data:`EXACT_MAX_SEEDS`
  (by meeting in the middle: the 2^⌈n/2⌉ sums of one half against the sorted 2^⌊n/2⌋ sums of
  the other, every pattern counted once), else Monte Carlo over ``resamples`` seeded draws of
  s with p = (1 + #{draws at least as extreme}) / (1 + resamples).
- :func:`tie_tolerance`  ties are judged with a tolerance relative to the data's scale, never
  by float equality: τ = :data:`TIE_RTOL` · max |v| over the values compared.  A difference
  |dᵢ| <= τ is a tie at the null (its sign cannot flip anything: it is set to 0), differences
  whose spread max d − min d <= τ are equal, and a pattern counts as at least as extreme when
  |T(s)| >= |T| − n·τ (the sums are rounded too).  Accuracies k/R of R test rows differ by at
  least 1/R, far above τ; rounding moves them by about 1e-16 · scale, far below it.
- :func:`sign_flip_floor`, :func:`permutation_floor`  the smallest p a test can return.
- :func:`distinct_seed_resamples`  how many different seed-cluster bootstrap resamples S
  seeds have: the multisets of S seeds drawn from S, C(2S − 1, S) (35 at S = 4).  A 1 − α
  percentile interval needs at least :func:`min_distinct_resamples` of them (⌈2/α⌉: with fewer,
  a tail of α/2 cannot hold one resample of its own); :func:`cluster_interval_allowed` says
  whether S seeds suffice.
"""

from __future__ import annotations

import math

import numpy as np

from curvlab import arguments

__all__ = [
    "EXACT_MAX_SEEDS",
    "MONTE_CARLO_RESAMPLES",
    "TIE_RTOL",
    "cluster_interval_allowed",
    "distinct_seed_resamples",
    "min_distinct_resamples",
    "permutation_floor",
    "sign_flip_floor",
    "sign_flip_test",
    "tie_tolerance",
]

TIE_RTOL: float = 1e-9
"""Two values are tied when they differ by at most this times the data's scale (the largest
magnitude among the values compared): 1e-9 is ten million times the rounding of a float64 and
a million times smaller than one test row in a thousand."""

EXACT_MAX_SEEDS: int = 40
"""Up to this many seeds the sign-flip p is exact (all 2ⁿ patterns); above, Monte Carlo."""

MONTE_CARLO_RESAMPLES: int = 100_000
"""The sign patterns drawn above :data:`EXACT_MAX_SEEDS` seeds (seeded)."""

_ALTERNATIVES = ("two-sided", "greater", "less")
_COUNTS = (int, np.integer)  # a count may come from a NumPy array


def _finite(name: str, values) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name}: expected a sequence of numbers, got {values!r}") from error
    if array.ndim != 1 or array.size < 1:
        raise ValueError(f"{name}: expected a nonempty 1-D sample")
    if not np.isfinite(array).all():
        raise ValueError(f"{name}: expected finite numbers (found NaN or inf)")
    return array


def tie_tolerance(*samples, rtol: float = TIE_RTOL) -> float:
    """τ = rtol · max |v| over every value of ``samples``: the distance below which two of
    those values (or their differences) count as equal.  0 when every value is 0.

    >>> tie_tolerance([31 / 45, 30 / 45], [30 / 45, 29 / 45]) == 1e-9 * 31 / 45
    True
    """
    what = "a float in [0, 1)"
    arguments.number("rtol", rtol, low=0, high=1, high_open=True, expected=what, kinds=float)
    if not samples:
        raise ValueError("samples: expected at least one sample")
    scale = max(float(np.max(np.abs(_finite("samples", s)))) for s in samples)
    return rtol * scale


def sign_flip_floor(n: int, *, alternative: str = "two-sided", resamples: int | None = None):
    """The smallest p :func:`sign_flip_test` can return at n seeds: 2 · 2⁻ⁿ two-sided, 2⁻ⁿ
    one-sided; by Monte Carlo (``resamples`` given, n > :data:`EXACT_MAX_SEEDS`) not below
    1 / (1 + resamples) either.

    >>> sign_flip_floor(4), sign_flip_floor(5), sign_flip_floor(4, alternative="greater")
    (0.125, 0.0625, 0.0625)
    """
    n = arguments.integer("n", n, 1, kinds=_COUNTS)
    alternative = arguments.one_of("alternative", alternative, _ALTERNATIVES)
    exact = 2.0 ** (-n) * (2 if alternative == "two-sided" else 1)
    if n > EXACT_MAX_SEEDS:
        if resamples is not None:
            resamples = arguments.integer("resamples", resamples, 1, kinds=_COUNTS)
        draws = MONTE_CARLO_RESAMPLES if resamples is None else resamples
        return max(exact, 1.0 / (1 + draws))
    return exact


def permutation_floor(permutations: int) -> float:
    """The smallest Monte Carlo permutation p, (1 + 0) / (1 + permutations).

    >>> permutation_floor(1999)
    0.0005
    """
    return 1.0 / (1 + arguments.integer("permutations", permutations, 1, kinds=_COUNTS))


def _signed_sums(values: np.ndarray) -> np.ndarray:
    """The 2ᵏ sums Σ sᵢ vᵢ over every sign pattern of k values (k = 0: the one sum 0)."""
    sums = np.zeros(1)
    for value in values:
        sums = np.concatenate([sums + value, sums - value])
    return sums


def _extreme_count(left: np.ndarray, right: np.ndarray, observed, slack, alternative) -> int:
    """#{(l, r) : l + r at least as extreme as ``observed``}, r from the sorted ``right``."""
    if alternative == "greater":
        return int((right.size - np.searchsorted(right, observed - slack - left)).sum())
    if alternative == "less":
        return int(np.searchsorted(right, observed + slack - left, side="right").sum())
    bound = abs(observed) - slack
    if bound <= 0:
        return left.size * right.size
    above = right.size - np.searchsorted(right, bound - left)
    below = np.searchsorted(right, -bound - left, side="right")
    return int((above + below).sum())


def sign_flip_test(
    d,
    *,
    null: float = 0.0,
    alternative: str = "two-sided",
    tolerance: float | None = None,
    resamples: int = MONTE_CARLO_RESAMPLES,
    seed: int = 0,
) -> dict:
    """The paired sign-flip (randomization) test of "d is symmetric about ``null``".

    x = d − null, with every |xᵢ| <= τ set to 0 (τ = ``tolerance``, by default
    :func:`tie_tolerance` of d and null); T = Σ xᵢ; p = #{s : T(s) at least as extreme as T}
    / 2ⁿ over all 2ⁿ sign patterns (module docstring; a pattern within n·τ of T counts) for
    n <= :data:`EXACT_MAX_SEEDS`, else (1 + #{extreme draws}) / (1 + ``resamples``) over
    patterns drawn from ``numpy.random.default_rng(seed)``.  ``alternative``: "two-sided",
    "greater" (T large) or "less".

    Returns p, method ("exact" or "monte carlo"), patterns (2ⁿ, or the draws), floor
    (:func:`sign_flip_floor`), n, tolerance.

    A gain of one test row on every seed of four gives p = 2/16, whatever the rounding:

    >>> sign_flip_test([31/45 - 30/45, 32/45 - 31/45, 34/45 - 33/45, 30/45 - 29/45])["p"]
    0.125
    >>> sign_flip_test([0.3, -0.1, 0.2, 0.25, 0.1], alternative="greater")["p"]
    0.09375
    """
    x = _finite("d", d)
    alternative = arguments.one_of("alternative", alternative, _ALTERNATIVES)
    if not (isinstance(null, int | float) and math.isfinite(null)):
        raise ValueError(f"null: expected a finite number, got {null!r}")
    if tolerance is None:
        tolerance = tie_tolerance(x, [null])
    if not (isinstance(tolerance, int | float) and math.isfinite(tolerance) and tolerance >= 0):
        raise ValueError(f"tolerance: expected a finite number >= 0, got {tolerance!r}")
    x = x - null
    x[np.abs(x) <= tolerance] = 0.0
    n, observed, slack = x.size, float(x.sum()), x.size * tolerance
    if n <= EXACT_MAX_SEEDS:
        left, right = _signed_sums(x[: n // 2]), np.sort(_signed_sums(x[n // 2 :]))
        count = _extreme_count(left, right, observed, slack, alternative)
        p, method, patterns = count / 2.0**n, "exact", 2**n
    else:
        resamples = arguments.integer("resamples", resamples, 1, kinds=_COUNTS)
        rng, count = np.random.default_rng(seed), 0
        for start in range(0, resamples, 10_000):
            signs = rng.choice((-1.0, 1.0), size=(min(10_000, resamples - start), n))
            count += _extreme_count(signs @ x, np.zeros(1), observed, slack, alternative)
        p, method, patterns = (1 + count) / (1 + resamples), "monte carlo", resamples
    return {
        "p": float(min(1.0, p)),
        "method": method,
        "patterns": patterns,
        "floor": sign_flip_floor(n, alternative=alternative, resamples=resamples),
        "n": n,
        "tolerance": float(tolerance),
    }


def distinct_seed_resamples(n_seeds: int) -> int:
    """The number of different seed-cluster bootstrap resamples of S seeds: the multisets of
    size S from S seeds, C(2S − 1, S).

    >>> [distinct_seed_resamples(s) for s in (3, 4, 5)]
    [10, 35, 126]
    """
    n_seeds = arguments.integer("n_seeds", n_seeds, 1, kinds=_COUNTS)
    return math.comb(2 * n_seeds - 1, n_seeds)


def min_distinct_resamples(alpha: float = 0.05) -> int:
    """The fewest distinct resamples a 1 − α percentile interval needs: ⌈2/α⌉ (40 at α = 0.05),
    so that each tail of mass α/2 can hold a resample of its own.

    >>> min_distinct_resamples(0.05), min_distinct_resamples(0.1)
    (40, 20)
    """
    return math.ceil(2 / arguments.alpha(alpha) - 1e-9)


def cluster_interval_allowed(n_seeds: int, alpha: float = 0.05) -> bool:
    """True when S = ``n_seeds`` seeds have enough distinct resamples for a 1 − α percentile
    interval: :func:`distinct_seed_resamples` (S) >= :func:`min_distinct_resamples` (α).

    >>> cluster_interval_allowed(4), cluster_interval_allowed(5)
    (False, True)
    """
    return distinct_seed_resamples(n_seeds) >= min_distinct_resamples(alpha)
