"""curvlab.analysis.randomization: the exact sign-flip test, ties, floors, few clusters."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curvlab.analysis import randomization

_ALTERNATIVES = ("two-sided", "greater", "less")


def _enumerated(d, alternative, tolerance=0.0):
    """p by listing every one of the 2ⁿ sign patterns (the definition)."""
    x = np.asarray(d, float)
    x = np.where(np.abs(x) <= tolerance, 0.0, x)
    flips = np.array(list(itertools.product([-1.0, 1.0], repeat=x.size)))
    sums, observed, slack = flips @ x, x.sum(), x.size * tolerance
    if alternative == "greater":
        extreme = sums >= observed - slack
    elif alternative == "less":
        extreme = sums <= observed + slack
    else:
        extreme = np.abs(sums) >= abs(observed) - slack
    return extreme.mean()


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(-6, 6), min_size=1, max_size=11),
    st.sampled_from(_ALTERNATIVES),
    st.sampled_from([1.0, 0.37, 1 / 45]),
)
def test_the_exact_test_equals_full_enumeration(values, alternative, unit):
    """Meeting in the middle counts every sign pattern once: the same p as listing all 2ⁿ
    (integer multiples of a unit, so that ties and equal sums are common)."""
    d = [v * unit for v in values]
    result = randomization.sign_flip_test(d, alternative=alternative)
    tolerance = randomization.tie_tolerance(d, [0.0])
    assert result["method"] == "exact" and result["patterns"] == 2 ** len(d)
    assert result["p"] == pytest.approx(_enumerated(d, alternative, tolerance), abs=1e-15)
    assert result["p"] >= result["floor"]


def test_the_floor_is_reached_by_equal_differences_and_by_nothing_lower():
    for n in range(1, 12):
        assert randomization.sign_flip_test([0.5] * n)["p"] == 2.0 ** (1 - n)
        assert randomization.sign_flip_test([0.5] * n, alternative="greater")["p"] == 2.0**-n
        assert randomization.sign_flip_floor(n) == 2.0 ** (1 - n)
    assert randomization.sign_flip_test([0.0, 0.0, 0.0])["p"] == 1.0


def test_ties_are_judged_with_the_tolerance_not_float_equality():
    """Differences of one row in 45 that rounding spreads by 1e-16 are one value; a
    difference within τ of the null is a tie at the null."""
    d = [31 / 45 - 30 / 45, 32 / 45 - 31 / 45, 34 / 45 - 33 / 45, 30 / 45 - 29 / 45]
    assert len(set(d)) > 1  # not equal as floats
    assert randomization.sign_flip_test(d)["p"] == 0.125
    assert randomization.sign_flip_test([1e-17, 1e-17, 1.0], tolerance=1e-9)["p"] == 1.0


def test_monte_carlo_above_the_exact_range_is_seeded_and_near_the_truth():
    rng = np.random.default_rng(0)
    d = rng.normal(0.3, 1.0, randomization.EXACT_MAX_SEEDS + 1)
    one = randomization.sign_flip_test(d, resamples=20_000, seed=1)
    assert one["method"] == "monte carlo" and one == randomization.sign_flip_test(
        d, resamples=20_000, seed=1
    )
    exact = randomization.sign_flip_test(d[:-1])  # 40 seeds: still exact
    assert exact["method"] == "exact"
    assert abs(one["p"] - randomization.sign_flip_test(d[:-1])["p"]) < 0.05


def test_few_seed_clusters_give_no_percentile_interval():
    assert [randomization.distinct_seed_resamples(s) for s in (3, 4, 5)] == [10, 35, 126]
    for s in range(1, 30):
        allowed = randomization.distinct_seed_resamples(s) >= math.ceil(2 / 0.05)
        assert randomization.cluster_interval_allowed(s) == allowed
    assert not randomization.cluster_interval_allowed(4)
    assert randomization.cluster_interval_allowed(5)


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="d"):
        randomization.sign_flip_test([1.0, math.nan])
    with pytest.raises(ValueError, match="alternative"):
        randomization.sign_flip_test([1.0], alternative="up")
    with pytest.raises(ValueError, match="tolerance"):
        randomization.sign_flip_test([1.0], tolerance=-1.0)
    with pytest.raises(ValueError, match="n"):
        randomization.sign_flip_floor(0)
    with pytest.raises(ValueError, match="alpha"):
        randomization.min_distinct_resamples(0)
