"""curvlab.analysis.stats: paired intervals, power, TOST, Holm, verdict rules, correlations."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from curvlab.analysis import randomization, stats
from curvlab.analysis.claims import EMPIRICAL_VERDICTS


def test_paired_interval_matches_scipy_ttest_rel_and_covers_the_mean():
    rng = np.random.default_rng(0)
    a, b = rng.normal(1, 1, 20), rng.normal(0.5, 1, 20)
    r = stats.paired_difference(a, b)
    reference = scipy_stats.ttest_rel(a, b)
    ci = reference.confidence_interval()
    assert math.isclose(r["p_t"], reference.pvalue, rel_tol=1e-12)
    assert r["p"] == randomization.sign_flip_test(a - b)["p"]  # the verdict's p: exact
    assert math.isclose(r["ci_low"], ci.low) and math.isclose(r["ci_high"], ci.high)
    assert math.isclose(r["d_z"], np.mean(a - b) / np.std(a - b, ddof=1))


@pytest.mark.parametrize("n", [2, 5, 6, 9])
def test_equal_differences_get_the_exact_sign_flip_p_never_zero(n):
    """Every seed's difference c ≠ 0: p is the share of the 2ⁿ sign flips whose mean is as far
    from 0 as c, counted here by enumeration; five seeds cannot support a verdict."""
    a, b = [3.0] * n, [4.0] * n
    r = stats.paired_difference(a, b)
    flips = np.array(list(itertools.product([-1.0, 1.0], repeat=n)))
    as_far = np.mean(np.abs((flips * -1.0).mean(1)) >= 1.0)
    assert r["sd"] == 0 and r["ci_low"] == r["ci_high"] == -1.0
    assert r["p"] == pytest.approx(as_far, abs=0) and r["p"] > 0
    verdict = stats.directional_verdict(-r["ci_high"], -r["ci_low"], r["p"])
    assert verdict == ("supported" if as_far < 0.05 else "inconclusive")
    assert stats.paired_difference([2.0] * n, [2.0] * n)["p"] == 1.0


def test_minimum_detectable_effect_has_80_percent_power_by_simulation():
    n, sd = 20, 2.0
    mde = stats.minimum_detectable_effect(n, sd)
    rng = np.random.default_rng(1)
    samples = rng.normal(mde, sd, size=(4000, n))
    power = np.mean(scipy_stats.ttest_1samp(samples, 0.0, axis=1).pvalue < 0.05)
    assert abs(power - 0.8) < 0.03
    assert stats.minimum_detectable_effect(80, sd) < mde  # more seeds see smaller effects


def test_tost_t_p_below_alpha_iff_90_percent_interval_inside_margin():
    """The t version beside it keeps its law; equivalence is judged by the sign-flip TOST."""
    rng = np.random.default_rng(2)
    for shift in (0.0, 0.005, 0.02):
        a = rng.normal(0.9 + shift, 0.005, 20)
        b = rng.normal(0.9, 0.005, 20)
        r = stats.equivalence_test(a, b, 0.01)
        inside = -0.01 < r["tost_low"] and r["tost_high"] < 0.01
        assert (r["p_tost_t"] < 0.05) == inside
        assert r["equivalent"] == (r["p_tost"] < 0.05)
        assert r["p_tost"] >= r["p_tost_floor"] == 2.0**-20


@settings(max_examples=200, deadline=None)
@given(
    st.integers(3, 12).flatmap(
        lambda n: st.tuples(
            st.integers(1, 2000).flatmap(
                lambda rows: st.tuples(
                    st.just(rows), st.lists(st.integers(0, rows - 1), min_size=n, max_size=n)
                )
            ),
            st.sampled_from([1, -1]),
        )
    )
)
def test_one_row_gains_at_k_over_n_accuracies_get_exactly_the_sign_flip_p(case):
    """A model that wins (or loses) by one test row on every seed: the differences are equal
    only up to rounding, and the claim gets exactly p = 2 · 2⁻ⁿ, sd 0 and no mde_80."""
    (rows, wins), sign = case
    n = len(wins)
    ahead = [(k + 1) / rows for k in wins]
    behind = [k / rows for k in wins]
    a, b = (ahead, behind) if sign > 0 else (behind, ahead)
    r = stats.paired_difference(a, b)
    assert r["p"] == 2.0 ** (1 - n) == r["p_floor"]
    assert r["sd"] == 0.0 and r["ci_low"] == r["ci_high"] == r["effect"]
    assert r["mde_80"] is None and r["mde_80_reason"] and r["d_z"] is None and r["p_t"] is None
    tost = stats.equivalence_test(a, b, 2 / rows)  # inside the margin on every seed
    assert tost["p_tost"] == 2.0**-n


def test_the_review_example_cannot_decide_at_four_seeds():
    """K = (30, 31, 33, 29) of 45 rows, one row ahead on each of four seeds."""
    K = (30, 31, 33, 29)
    a, b = [(k + 1) / 45 for k in K], [k / 45 for k in K]
    r = stats.paired_difference(a, b)
    assert r["p"] >= 0.125 and r["mde_80"] is None
    assert stats.equivalence_test(a, b, 0.05)["p_tost"] >= 0.0625


def test_holm_matches_the_step_down_definition():
    assert stats.holm([0.01, 0.04, 0.03]) == [0.03, 0.06, 0.06]
    assert stats.holm([0.5]) == [0.5]
    with pytest.raises(ValueError, match="p_values"):
        stats.holm([1.5])


@settings(max_examples=60, deadline=None)
@given(st.floats(-1, 1), st.floats(0, 1), st.floats(0, 1), st.sampled_from(EMPIRICAL_VERDICTS))
def test_verdict_follows_accepts_exactly_the_rule(low, width, p, claimed):
    record = {"ci_low": low, "ci_high": low + width, "p": p, "verdict": claimed}
    expected = stats.directional_verdict(low, low + width, p)
    assert stats.verdict_follows(record) == (claimed == expected)
    if expected == "supported":
        assert low > 0 and p < 0.05


def test_within_group_correlation_removes_a_between_group_confound():
    rng = np.random.default_rng(3)
    groups = np.repeat(np.arange(4), 30)
    # between groups x and y move together; within groups they are anti-correlated
    x = groups + rng.normal(0, 0.3, groups.size)
    y = groups - (x - groups) + rng.normal(0, 0.1, groups.size)
    pooled = stats.correlation(x, y)
    within = stats.correlation(x, y, groups=list(groups))
    assert pooled["pearson_r"] > 0.5
    assert within["pearson_ci_high"] < 0 and within["spearman_ci_high"] < 0
    assert within["pearson_ci_low"] <= within["pearson_r"] <= within["pearson_ci_high"]


def test_pooled_pearson_matches_scipy():
    rng = np.random.default_rng(4)
    x = rng.normal(size=30)
    y = x + rng.normal(size=30)
    r = stats.correlation(x, y)
    assert math.isclose(r["pearson_r"], scipy_stats.pearsonr(x, y).statistic, rel_tol=1e-12)
    assert math.isclose(r["pearson_p"], scipy_stats.pearsonr(x, y).pvalue, rel_tol=1e-8)
    assert math.isclose(r["spearman_rho"], scipy_stats.spearmanr(x, y).statistic, rel_tol=1e-12)


def test_bootstrap_interval_covers_the_mean():
    low, high = stats.bootstrap_interval(np.arange(20.0), resamples=500)
    assert low < 9.5 < high


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="a, b"):
        stats.paired_difference([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="margin"):
        stats.equivalence_test([1, 2], [1, 2], -1)
    with pytest.raises(ValueError, match="alpha"):
        stats.paired_difference([1, 2], [0, 1], alpha=2)
    with pytest.raises(ValueError, match="a"):
        stats.paired_difference([1, float("nan")], [0, 1])


@settings(max_examples=40, deadline=None)
@given(st.floats(0.2, 3.0), st.floats(0.1, 2.0))
def test_required_seeds_is_the_fewest_with_the_effect_detectable(effect, sd):
    n = stats.required_seeds(effect, sd)
    assert stats.minimum_detectable_effect(n, sd) <= effect
    if n > 2:
        assert stats.minimum_detectable_effect(n - 1, sd) > effect
    assert stats.required_seeds(-effect, sd) == n  # only the size of the effect matters


def test_required_seeds_refuses_a_zero_effect_and_an_unreachable_one():
    with pytest.raises(ValueError, match="effect"):
        stats.required_seeds(0.0, 1.0)
    with pytest.raises(ValueError, match="maximum"):
        stats.required_seeds(0.001, 1.0, maximum=100)
