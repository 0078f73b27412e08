"""curvlab.analysis.association: E3 within task × model, seed-clustered, with a null that keeps
the model means; the model-pooled r shown confounded."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curvlab.analysis import association, stats
from curvlab.analysis.association import (
    paired_delta_regression,
    permutation_null,
    pooled_within_task_correlation,
    synthetic_runs,
    within_cell_correlation,
)


def test_model_means_bias_the_pooled_r_but_not_the_within_cell_r_nor_its_null():
    # curvature and accuracy independent within every task × model cell, model means rising
    # together: the pooled within-task r is far from 0, and so is its own null; the
    # within-cell r, its permutation null and the Δ–Δ slope centre on 0
    runs = synthetic_runs(n_seeds=40, within_slope=0.0, model_shift=1.0, seed=3)
    pooled = pooled_within_task_correlation(runs)
    assert pooled["pearson_r"] > 0.3 and pooled["spearman_rho"] > 0.3
    pooled_null = permutation_null(runs, statistic="pooled", permutations=400)
    assert pooled_null["null_quantiles"][0.025] > 0.2  # the null itself is not at 0

    within = within_cell_correlation(runs, resamples=400)
    assert within["pearson_ci_low"] < 0 < within["pearson_ci_high"]
    assert within["spearman_ci_low"] < 0 < within["spearman_ci_high"]
    for rank in (False, True):
        null = permutation_null(runs, rank=rank, permutations=400)
        assert abs(null["null_mean"]) < 0.03
        assert null["null_quantiles"][0.025] < 0 < null["null_quantiles"][0.975]
    fit = paired_delta_regression(runs, gated="gated", resamples=400, permutations=400)
    assert fit["slope_ci_low"] < 0 < fit["slope_ci_high"]

    # and over many such data sets: the pooled r is biased, the within-cell r is not
    replicates = [synthetic_runs(n_seeds=20, model_shift=1.0, seed=s) for s in range(30)]
    pooled_rs = [pooled_within_task_correlation(r)["pearson_r"] for r in replicates]
    within_rs = [within_cell_correlation(r, resamples=10)["pearson_r"] for r in replicates]
    assert np.mean(pooled_rs) > 0.3
    assert abs(np.mean(within_rs)) < 3 * np.std(within_rs) / math.sqrt(len(within_rs))


def test_a_true_within_cell_association_is_found_by_every_statistic():
    runs = synthetic_runs(n_seeds=30, within_slope=1.0, model_shift=0.0, seed=4)
    within = within_cell_correlation(runs, resamples=300)
    assert within["pearson_ci_low"] > 0.4 and within["spearman_ci_low"] > 0.4
    assert within["pearson_ci_low"] <= within["pearson_r"] <= within["pearson_ci_high"]
    null = permutation_null(runs, permutations=300, alternative="greater")
    assert null["p"] == pytest.approx(1 / 301)
    fit = paired_delta_regression(runs, gated="gated", resamples=300, permutations=300)
    assert fit["slope_ci_low"] < 1.0 < fit["slope_ci_high"] and fit["p"] < 0.01


def test_delta_delta_slope_is_the_within_task_least_squares_slope():
    runs = synthetic_runs(n_seeds=15, within_slope=0.5, models=("ungated", "gated"), seed=5)
    fit = paired_delta_regression(runs, gated="gated", resamples=50, permutations=50)
    index = {(r["task"], r["model"], r["seed"]): r for r in runs}
    dx, dy, task = [], [], []
    for t in ("xor", "circles"):
        for s in range(15):
            g, u = index[(t, "gated", s)], index[(t, "ungated", s)]
            dx.append(g["log_curvature_total_abs"] - u["log_curvature_total_abs"])
            dy.append(g["test_accuracy"] - u["test_accuracy"])
            task.append(t)
    design = np.column_stack([dx, np.array(task) == "xor", np.array(task) == "circles"])
    coefficients = np.linalg.lstsq(design.astype(float), np.array(dy), rcond=None)[0]
    assert fit["slope"] == pytest.approx(coefficients[0], rel=1e-10)
    assert (fit["n_pairs"], fit["n_tasks"], fit["n_seeds"]) == (30, 2, 15)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(3, 8),
    st.integers(0, 10_000),
    st.sampled_from([0.0, 0.5, -1.0]),
)
def test_within_cell_statistics_equal_grouped_correlation(n_seeds, seed, slope):
    runs = synthetic_runs(n_seeds=n_seeds, within_slope=slope, seed=seed)
    ours = within_cell_correlation(runs, resamples=10)
    x = [r["log_curvature_total_abs"] for r in runs]
    y = [r["test_accuracy"] for r in runs]
    cells = [(r["task"], r["model"]) for r in runs]
    reference = stats.correlation(x, y, groups=[str(c) for c in cells])
    assert ours["pearson_r"] == pytest.approx(reference["pearson_r"], abs=1e-12)
    assert ours["spearman_rho"] == pytest.approx(reference["spearman_rho"], abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_weighting_a_seed_by_its_count_equals_duplicating_its_runs(data):
    # the bootstrap draws seeds; its weighted statistic is the statistic of the resample
    n_seeds = data.draw(st.integers(3, 6))
    runs = synthetic_runs(n_seeds=n_seeds, within_slope=0.3, seed=data.draw(st.integers(0, 99)))
    counts = data.draw(st.lists(st.integers(0, 3), min_size=n_seeds, max_size=n_seeds))
    copies = [{**r, "seed": (r["seed"], k)} for r in runs for k in range(counts[r["seed"]])]
    cells = association._codes([(r["task"], r["model"]) for r in runs])
    x = np.array([r["log_curvature_total_abs"] for r in runs])
    y = np.array([r["test_accuracy"] for r in runs])
    weights = np.array([[counts[r["seed"]] for r in runs]], dtype=float)
    for rank in (False, True):
        weighted = association._association(x, y, cells, weights, rank=rank)[0]
        if len({r["seed"] for r in copies}) >= 3 and math.isfinite(weighted):
            direct = within_cell_correlation(copies, resamples=10)
            key = "spearman_rho" if rank else "pearson_r"
            assert weighted == pytest.approx(direct[key], abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=2, max_size=30), st.integers(0, 10_000))
def test_shuffles_stay_inside_their_cells(cells, seed):
    cells = np.array(cells)
    values = np.arange(cells.size, dtype=float)
    shuffled = association._shuffled(values, cells, 5, np.random.default_rng(seed))
    for row in shuffled:
        for cell in np.unique(cells):
            assert sorted(row[cells == cell]) == sorted(values[cells == cell])


def test_results_are_determined_by_the_seed():
    runs = synthetic_runs(n_seeds=8, within_slope=0.2, seed=6)
    assert within_cell_correlation(runs, resamples=50, seed=1) == within_cell_correlation(
        runs, resamples=50, seed=1
    )
    assert permutation_null(runs, permutations=50, seed=2) == permutation_null(
        runs, permutations=50, seed=2
    )


def test_bad_input_is_refused_with_the_argument_named():
    runs = synthetic_runs(n_seeds=4)
    with pytest.raises(ValueError, match="at least 3 seeds"):
        within_cell_correlation(synthetic_runs(n_seeds=2))
    with pytest.raises(ValueError, match=r"runs\[0\]: missing field 'seed'"):
        within_cell_correlation([{k: v for k, v in runs[0].items() if k != "seed"}, *runs])
    with pytest.raises(ValueError, match="missing field 'test_accuracy'"):
        within_cell_correlation([{**runs[0], "test_accuracy": None}, *runs[1:]])
    with pytest.raises(ValueError, match="must be finite"):
        within_cell_correlation([{**runs[0], "log_curvature_total_abs": math.nan}, *runs[1:]])
    with pytest.raises(ValueError, match="more than once"):
        within_cell_correlation([runs[0], *runs])
    with pytest.raises(ValueError, match="depth"):
        within_cell_correlation(runs, depth=2)
    with pytest.raises(ValueError, match="alternative"):
        permutation_null(runs, alternative="bigger")
    with pytest.raises(ValueError, match="statistic"):
        permutation_null(runs, statistic="pooled_by_model")
    with pytest.raises(ValueError, match="alpha"):
        within_cell_correlation(runs, alpha=1.5)
    with pytest.raises(ValueError, match="gated, ungated"):
        paired_delta_regression(runs, gated="ungated")
    with pytest.raises(ValueError, match="seeds with both"):
        paired_delta_regression(runs, gated="gated_elementwise")
    constant = [{**r, "test_accuracy": 0.5} for r in runs]
    with pytest.raises(ValueError, match="undefined"):
        within_cell_correlation(constant)


def test_few_seed_clusters_get_no_interval_with_the_reason():
    """Four seeds have 35 distinct seed-cluster resamples, too few for a 95% percentile
    interval (40 needed): no interval, and the reason; five seeds (126) get one."""
    few = synthetic_runs(n_seeds=4, within_slope=1.0, seed=1)
    within = within_cell_correlation(few, resamples=50)
    assert within["pearson_ci_low"] is None and within["spearman_ci_high"] is None
    assert "35 distinct" in within["interval_reason"]
    fit = paired_delta_regression(few, gated="gated", resamples=50, permutations=50)
    assert fit["slope_ci_low"] is None and "35 distinct" in fit["interval_reason"]
    five = within_cell_correlation(synthetic_runs(n_seeds=5, seed=1), resamples=50)
    assert five["pearson_ci_low"] is not None and five["interval_reason"] is None
