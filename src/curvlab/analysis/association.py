"""E3 on the right unit: curvature against accuracy within task × model, seed-clustered.

A run is one (task, model, seed, depth); it gives an accuracy y and a log curvature x.  Pooling
runs of different models confounds the association with the treatment itself: if the gate
raises both curvature and accuracy, x and y correlate across models even when they are
independent within every model.  This module estimates the association with model identity
held fixed, and checks it with a null that keeps every cell's mean.

Notation: runs i = 1..n, cells c(i) = (task, model) (or coarser groups g(i)), seeds s(i).

- **Within-cell correlation** (:func:`within_cell_correlation`): fixed effects for task ×
  model, x̃_i = x_i − x̄_{c(i)}, ỹ_i = y_i − ȳ_{c(i)}, and Pearson r = Σ x̃ỹ / √(Σ x̃² Σ ỹ²).
  The rank version replaces x and y by their average ranks within the cell first (a
  within-cell Spearman ρ).
- **Seed-cluster bootstrap**: draw S seeds with replacement from the S seeds present (a seeded
  :class:`numpy.random.Generator`), keep all runs of a drawn seed together (a seed drawn k
  times enters k times), recompute the cell means, ranks and r on the resample; the 1 − α
  interval is the percentile interval of the B resampled statistics.  Resamples where r is
  undefined (no variation left) are dropped and counted (``bootstrap_undefined``).  S seeds
  have only C(2S − 1, S) distinct resamples (35 at S = 4); below ⌈2/α⌉ of them
  (:func:`curvlab.analysis.randomization.cluster_interval_allowed`: S <= 4 at α = 0.05) no
  percentile interval is reported: its bounds are None and ``interval_reason`` says why.
- **Permutation null that keeps model means** (:func:`permutation_null`): shuffle x within
  each task × model cell (so every cell keeps its values, hence its mean), recompute the
  statistic; p = (1 + #{T*_b at least as extreme as T}) / (1 + B), "extreme" by
  ``alternative`` (two-sided: |T*_b| ≥ |T|).  A statistic that is free of the model confound
  has a null centred at 0.
- **The old, model-pooled within-task r** (:func:`pooled_within_task_correlation`): task means
  removed, models pooled.  Confounded by model: kept only as a descriptive figure.
- **Paired Δ–Δ regression** (:func:`paired_delta_regression`): for each (task, seed) with both
  models, Δy = y_gated − y_ungated and Δx = x_gated − x_ungated; task fixed effects (Δ values
  demeaned within task), slope β = Σ Δx̃ Δỹ / Σ Δx̃², its interval by the seed-cluster
  bootstrap and its p by permuting Δx across seeds within task.

Every function refuses bad input with a ``ValueError`` naming the argument (a missing field,
a non-finite value, fewer than ``min_seeds`` seeds); none returns a NaN.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import partial

import numpy as np

from curvlab import arguments
from curvlab.analysis.randomization import (
    cluster_interval_allowed,
    distinct_seed_resamples,
    min_distinct_resamples,
)
from curvlab.analysis.synthetic import synthetic_runs

__all__ = [
    "RUN_FIELDS",
    "paired_delta_regression",
    "permutation_null",
    "pooled_within_task_correlation",
    "synthetic_runs",
    "within_cell_correlation",
]

RUN_FIELDS: tuple[str, ...] = ("task", "model", "seed", "depth")
"""The fields every run record needs, beside its accuracy and its curvature field."""

_ALTERNATIVES = ("two-sided", "greater", "less")


# ---------------------------------------------------------------------------------------------
# input


def _table(runs, accuracy: str, curvature: str, depth, tasks, models, min_seeds: int) -> dict:
    """The runs at ``depth`` (and in ``tasks``/``models`` when given) as arrays, checked."""
    if isinstance(runs, Mapping) or not isinstance(runs, Sequence):
        raise ValueError("runs: expected a sequence of run records (dicts)")
    rows = []
    for index, run in enumerate(runs):
        if not isinstance(run, Mapping):
            raise ValueError(f"runs[{index}]: expected a dict, got {type(run).__name__}")
        missing = [field for field in RUN_FIELDS if field not in run]
        if missing:
            raise ValueError(f"runs[{index}]: missing field {missing[0]!r}")
        kept = (tasks is None or run["task"] in tasks) and (
            models is None or run["model"] in models
        )
        if run["depth"] != depth or not kept:
            continue
        for field in (accuracy, curvature):
            if run.get(field) is None:
                raise ValueError(f"runs[{index}]: missing field {field!r}")
            value = run[field]
            if not arguments.is_number(value, (int, float, np.number)):
                raise ValueError(f"runs[{index}]: {field!r} must be a number, got {value!r}")
            if not math.isfinite(value):
                raise ValueError(f"runs[{index}]: {field!r} must be finite, got {value!r}")
        rows.append(run)
    if not rows:
        raise ValueError(f"runs: no run at depth {depth!r} in the tasks and models asked for")
    seeds = sorted({r["seed"] for r in rows})
    if len(seeds) < min_seeds:
        raise ValueError(f"runs: need at least {min_seeds} seeds, got {len(seeds)}")
    keys = {(r["task"], r["model"], r["seed"]) for r in rows}
    if len(keys) != len(rows):
        raise ValueError("runs: a (task, model, seed) appears more than once at this depth")
    return {
        "task": [r["task"] for r in rows],
        "model": [r["model"] for r in rows],
        "cells": _codes([(r["task"], r["model"]) for r in rows]),
        "tasks": _codes([r["task"] for r in rows]),
        "seed": _codes([r["seed"] for r in rows])[0],
        "n_seeds": len(seeds),
        "x": np.array([float(r[curvature]) for r in rows]),
        "y": np.array([float(r[accuracy]) for r in rows]),
    }


def _codes(labels: Sequence) -> tuple[np.ndarray, int]:
    """Integer codes 0..g−1 of hashable labels (in order of first appearance) and g."""
    index: dict = {}
    codes = np.array([index.setdefault(label, len(index)) for label in labels], dtype=np.int64)
    return codes, len(index)


# ---------------------------------------------------------------------------------------------
# the statistic, weighted: a weight w_i = how often run i's seed was drawn (1 for the data)


def _demean(values: np.ndarray, groups: np.ndarray, n_groups: int, weights: np.ndarray):
    """values − weighted group mean; values and weights (B, n), groups (n,)."""
    onehot = np.zeros((groups.size, n_groups))  # (n, g)
    onehot[np.arange(groups.size), groups] = 1.0
    sums = (weights * values) @ onehot  # (B, g)
    counts = weights @ onehot  # (B, g)
    means = np.divide(sums, counts, out=np.zeros_like(sums), where=counts > 0)
    return values - means[:, groups]


def _ranks(values: np.ndarray, groups: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Average ranks within each group of the data where run i appears w_i times; (B, n)."""
    ranks = np.zeros_like(weights)
    for group in np.unique(groups):
        members = np.flatnonzero(groups == group)
        v = values[members]
        less = (v[None, :] < v[:, None]).astype(float)  # (m, m): less[i, j] = v_j < v_i
        tied = (v[None, :] == v[:, None]).astype(float)
        w = weights[:, members]  # (B, m)
        ranks[:, members] = w @ less.T + (w @ tied.T + 1) / 2
    return ranks


def _association(x, y, groups, weights, *, rank: bool) -> np.ndarray:
    """Weighted Pearson r of x and y after removing group means (ranks within group first).

    Returns (B,), NaN where r is undefined (callers drop or refuse those)."""
    g, n_groups = groups
    if rank:
        x, y = _ranks(x, g, weights), _ranks(y, g, weights)
    else:
        x, y = np.broadcast_to(x, weights.shape), np.broadcast_to(y, weights.shape)
    rx, ry = _demean(x, g, n_groups, weights), _demean(y, g, n_groups, weights)
    sxy = (weights * rx * ry).sum(-1)
    sxx, syy = (weights * rx * rx).sum(-1), (weights * ry * ry).sum(-1)
    scale = np.sqrt(sxx * syy)
    tiny = 1e-12 * np.sqrt((weights * x * x).sum(-1) * (weights * y * y).sum(-1)) + 1e-300
    return np.where(scale > tiny, sxy / np.where(scale > tiny, scale, 1.0), np.nan)


def _observed(x, y, groups, *, rank: bool, what: str) -> float:
    r = float(_association(x, y, groups, np.ones((1, x.size)), rank=rank)[0])
    if not math.isfinite(r):
        raise ValueError(f"runs: {what} is undefined (no variation left once means are removed)")
    return r


def _seed_bootstrap(statistic, seeds: np.ndarray, resamples: int, seed: int, alpha: float):
    """Percentile interval of ``statistic(weights)`` (weights (B, n) -> (B,)) over seed draws;
    (None, None, 0, reason) where the seeds have too few distinct resamples for one."""
    n_seeds = int(seeds.max()) + 1
    if not cluster_interval_allowed(n_seeds, alpha):
        reason = (
            f"no interval: {n_seeds} seeds give {distinct_seed_resamples(n_seeds)} distinct "
            f"seed-cluster resamples, fewer than the {min_distinct_resamples(alpha)} a "
            f"{1 - alpha:.0%} percentile interval needs"
        )
        return None, None, 0, reason
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n_seeds, np.full(n_seeds, 1 / n_seeds), size=resamples)  # (B, S)
    values = statistic(counts[:, seeds].astype(float))  # (B,)
    defined = values[np.isfinite(values)]
    if defined.size == 0:
        raise ValueError("runs: the statistic is undefined on every bootstrap resample")
    low, high = np.quantile(defined, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high), int(resamples - defined.size), None


def within_cell_correlation(
    runs: Sequence[Mapping],
    *,
    accuracy: str = "test_accuracy",
    curvature: str = "log_curvature_total_abs",
    depth: int = 1,
    tasks: Sequence[str] | None = None,
    models: Sequence[str] | None = None,
    alpha: float = 0.05,
    resamples: int = 2000,
    seed: int = 0,
    min_seeds: int = 3,
) -> dict:
    """E3 with task × model fixed effects: r and within-cell Spearman ρ, seed-cluster intervals.

    r = Σ x̃ỹ / √(Σ x̃² Σ ỹ²), x̃ = x − mean of x over the run's (task, model) cell, likewise ỹ;
    ρ the same on average ranks within the cell.  Intervals: percentile, 1 − α, over
    ``resamples`` seed-cluster bootstrap resamples from ``numpy.random.default_rng(seed)``
    (module docstring).  ``tasks``/``models`` restrict the runs (None: all present).

    Returns n_runs, n_cells, n_seeds, pearson_r, pearson_ci_low, pearson_ci_high,
    spearman_rho, spearman_ci_low, spearman_ci_high, bootstrap_undefined (resamples dropped),
    interval_reason (None; else why the intervals are None: too few seeds).

    >>> runs = synthetic_runs(n_seeds=12, within_slope=1.0, seed=1)
    >>> e3 = within_cell_correlation(runs, resamples=200)
    >>> e3["n_cells"], e3["n_seeds"], e3["pearson_ci_low"] > 0.3
    (6, 12, True)
    """
    alpha = arguments.alpha(alpha)
    arguments.integer("resamples", resamples, 10)
    table = _table(runs, accuracy, curvature, depth, tasks, models, min_seeds)
    cells = table["cells"]
    x, y = table["x"], table["y"]
    record = {"n_runs": int(x.size), "n_cells": cells[1], "n_seeds": table["n_seeds"]}
    undefined, bootstrap = 0, {"resamples": resamples, "seed": seed, "alpha": alpha}
    for name, rank in (("pearson_r", False), ("spearman_rho", True)):
        stem = name.split("_")[0]
        record[name] = _observed(x, y, cells, rank=rank, what=f"the within-cell {stem}")
        statistic = partial(_association, x, y, cells, rank=rank)
        low, high, dropped, reason = _seed_bootstrap(statistic, table["seed"], **bootstrap)
        record[f"{stem}_ci_low"], record[f"{stem}_ci_high"] = low, high
        undefined = max(undefined, dropped)
    record["bootstrap_undefined"], record["interval_reason"] = undefined, reason
    return record


def pooled_within_task_correlation(
    runs: Sequence[Mapping],
    *,
    accuracy: str = "test_accuracy",
    curvature: str = "log_curvature_total_abs",
    depth: int = 1,
    tasks: Sequence[str] | None = None,
    models: Sequence[str] | None = None,
    min_seeds: int = 3,
) -> dict:
    """The OLD E3 statistic: task means removed, models POOLED.  Confounded by model.

    r = Σ x̃ỹ / √(Σ x̃² Σ ỹ²) with x̃ = x − mean over the run's task (all models together),
    and ρ on ranks within task.  When the models differ in mean curvature and mean accuracy
    (the gate raises both, E1 and E2), this r is pushed away from 0 by the model means alone,
    whatever happens within a model: :func:`permutation_null` with ``statistic="pooled"``
    shows its null is not centred at 0.  Report it only as a descriptive figure, labelled
    confounded; test E3 with :func:`within_cell_correlation` or
    :func:`paired_delta_regression`.  No interval on purpose.

    >>> runs = synthetic_runs(n_seeds=12, within_slope=0.0, seed=1)
    >>> pooled_within_task_correlation(runs)["pearson_r"] > 0.3
    True
    """
    table = _table(runs, accuracy, curvature, depth, tasks, models, min_seeds)
    groups = table["tasks"]
    x, y = table["x"], table["y"]
    return {
        "n_runs": int(x.size),
        "n_tasks": groups[1],
        "n_seeds": table["n_seeds"],
        "pearson_r": _observed(x, y, groups, rank=False, what="the pooled r"),
        "spearman_rho": _observed(x, y, groups, rank=True, what="the pooled ρ"),
        "confounded_by": "model",
    }


def _shuffled(values: np.ndarray, cells: np.ndarray, permutations: int, rng) -> np.ndarray:
    """(P, n): each row ``values`` shuffled within ``cells`` (uniform, independent rows)."""
    keys = cells[None, :] + rng.random((permutations, cells.size))  # in [c, c + 1)
    drawn = np.argsort(keys, axis=1)  # grouped by cell, random order inside
    home = np.argsort(cells, kind="stable")  # grouped by cell, original order
    out = np.empty((permutations, cells.size))
    out[:, home] = values[drawn]
    return out


def _permutation_p(observed: float, null: np.ndarray, alternative: str) -> float:
    if alternative == "greater":
        extreme = null >= observed
    elif alternative == "less":
        extreme = null <= observed
    else:
        extreme = np.abs(null) >= abs(observed)
    return float((1 + extreme.sum()) / (1 + null.size))


def _null_summary(observed, null, alternative, quantiles) -> dict:
    null = null[np.isfinite(null)]
    if null.size == 0:
        raise ValueError("runs: the statistic is undefined on every permutation")
    values = map(float, np.quantile(null, quantiles))
    return {
        "observed": observed,
        "null_mean": float(null.mean()),
        "null_sd": float(null.std(ddof=1)) if null.size > 1 else 0.0,
        "null_quantiles": dict(zip(quantiles, values, strict=True)),
        "p": _permutation_p(observed, null, alternative),
        "alternative": alternative,
        "permutations": int(null.size),
    }


def permutation_null(
    runs: Sequence[Mapping],
    *,
    statistic: str = "within_cell",
    rank: bool = False,
    accuracy: str = "test_accuracy",
    curvature: str = "log_curvature_total_abs",
    depth: int = 1,
    tasks: Sequence[str] | None = None,
    models: Sequence[str] | None = None,
    permutations: int = 2000,
    alternative: str = "two-sided",
    quantiles: Sequence[float] = (0.025, 0.5, 0.975),
    seed: int = 0,
    min_seeds: int = 3,
) -> dict:
    """The null of an E3 statistic that keeps every task × model cell's values (hence means).

    Curvature x is shuffled within each (task, model) cell, ``permutations`` times (seeded),
    and the statistic recomputed: ``statistic="within_cell"`` is the r (``rank``: ρ) of
    :func:`within_cell_correlation`, ``"pooled"`` that of
    :func:`pooled_within_task_correlation`.  Returns observed, null_mean, null_sd,
    null_quantiles (a dict quantile -> value), p (module docstring; ``alternative``
    "two-sided", "greater" or "less"), alternative, permutations.  The within-cell statistic's
    null is centred at 0; the pooled one's is centred where the model means put it.

    >>> runs = synthetic_runs(n_seeds=12, within_slope=0.0, seed=1)
    >>> within = permutation_null(runs, permutations=500)
    >>> pooled = permutation_null(runs, statistic="pooled", permutations=500)
    >>> abs(within["null_mean"]) < 0.05, pooled["null_mean"] > 0.3
    (True, True)
    """
    if statistic not in ("within_cell", "pooled"):
        raise ValueError(f"statistic: expected 'within_cell' or 'pooled', got {statistic!r}")
    arguments.one_of("alternative", alternative, _ALTERNATIVES)
    if not all(isinstance(q, int | float) and 0 <= q <= 1 for q in quantiles) or not quantiles:
        raise ValueError(f"quantiles: expected probabilities in [0, 1], got {quantiles!r}")
    arguments.integer("permutations", permutations, 10)
    table = _table(runs, accuracy, curvature, depth, tasks, models, min_seeds)
    cells = table["cells"]
    groups = cells if statistic == "within_cell" else table["tasks"]
    x, y = table["x"], table["y"]
    observed = _observed(x, y, groups, rank=rank, what=f"the {statistic} statistic")
    if rank:  # ranks within a cell are a function of the value: shuffle the ranks themselves
        ones = np.ones((1, x.size))
        x = _ranks(x, groups[0], ones)[0]
        y = _ranks(y, groups[0], ones)[0]
    rng = np.random.default_rng(seed)
    shuffled = _shuffled(x, cells[0], permutations, rng)
    null = _association(shuffled, y, groups, np.ones_like(shuffled), rank=False)
    return _null_summary(observed, null, alternative, tuple(float(q) for q in quantiles))


def paired_delta_regression(
    runs: Sequence[Mapping],
    *,
    gated: str = "gated_elementwise",
    ungated: str = "ungated",
    accuracy: str = "test_accuracy",
    curvature: str = "log_curvature_total_abs",
    depth: int = 1,
    tasks: Sequence[str] | None = None,
    alpha: float = 0.05,
    resamples: int = 2000,
    permutations: int = 2000,
    seed: int = 0,
    min_seeds: int = 3,
) -> dict:
    """Δaccuracy on Δlog-curvature over (task, seed), gated − ungated, task fixed effects.

    Δy = y_gated − y_ungated, Δx = x_gated − x_ungated for each (task, seed) with both runs;
    Δx̃, Δỹ demeaned within task; slope β = Σ Δx̃Δỹ / Σ Δx̃² (no intercept: the task means
    absorb it), r the Pearson correlation of Δx̃ and Δỹ.  Interval: seed-cluster percentile
    bootstrap (1 − α, ``resamples``); p: Δx permuted across seeds within each task
    (``permutations``, two-sided on β).  The model confound cannot enter: each point is a
    difference between the two models of one seed.

    Returns n_pairs, n_tasks, n_seeds, slope, slope_ci_low, slope_ci_high, r, p,
    bootstrap_undefined, interval_reason (as in :func:`within_cell_correlation`).

    >>> runs = synthetic_runs(n_seeds=12, within_slope=1.0, seed=1)
    >>> fit = paired_delta_regression(runs, gated="gated", ungated="ungated",
    ...                               resamples=200, permutations=200)
    >>> fit["n_pairs"], fit["slope_ci_low"] > 0
    (24, True)
    """
    alpha = arguments.alpha(alpha)
    arguments.integer("resamples", resamples, 10)
    arguments.integer("permutations", permutations, 10)
    if gated == ungated:
        raise ValueError(f"gated, ungated: expected two different models, got {gated!r} twice")
    table = _table(runs, accuracy, curvature, depth, tasks, (gated, ungated), 1)
    by_key = {
        (t, m, s): (x, y)
        for t, m, s, x, y in zip(
            table["task"], table["model"], table["seed"], table["x"], table["y"], strict=True
        )
    }
    pairs = sorted(
        {(t, s) for t, m, s in by_key if (t, gated, s) in by_key and (t, ungated, s) in by_key},
        key=repr,
    )
    seeds = sorted({s for _, s in pairs})
    if len(seeds) < min_seeds:
        raise ValueError(
            f"runs: need at least {min_seeds} seeds with both {gated!r} and {ungated!r}, "
            f"got {len(seeds)}"
        )
    dx = np.array([by_key[(t, gated, s)][0] - by_key[(t, ungated, s)][0] for t, s in pairs])
    dy = np.array([by_key[(t, gated, s)][1] - by_key[(t, ungated, s)][1] for t, s in pairs])
    task_groups = _codes([t for t, _ in pairs])
    seed_codes = _codes([s for _, s in pairs])[0]

    def slopes(weights: np.ndarray, x_rows: np.ndarray = dx) -> np.ndarray:
        x_rows = np.broadcast_to(x_rows, weights.shape)
        rx = _demean(x_rows, task_groups[0], task_groups[1], weights)
        ry = _demean(np.broadcast_to(dy, weights.shape), task_groups[0], task_groups[1], weights)
        sxx = (weights * rx * rx).sum(-1)
        ok = sxx > 1e-12 * (weights * x_rows * x_rows).sum(-1) + 1e-300
        return np.where(ok, (weights * rx * ry).sum(-1) / np.where(ok, sxx, 1.0), np.nan)

    ones = np.ones((1, dx.size))
    slope = float(slopes(ones)[0])
    if not math.isfinite(slope):
        raise ValueError("runs: Δ log curvature does not vary within any task; no slope")
    r = _observed(dx, dy, task_groups, rank=False, what="the Δ–Δ correlation")
    low, high, dropped, reason = _seed_bootstrap(slopes, seed_codes, resamples, seed, alpha)
    rng = np.random.default_rng(seed + 1)
    shuffled = _shuffled(dx, task_groups[0], permutations, rng)
    null = slopes(np.ones_like(shuffled), shuffled)
    null = null[np.isfinite(null)]
    return {
        "n_pairs": len(pairs),
        "n_tasks": task_groups[1],
        "n_seeds": len(seeds),
        "slope": slope,
        "slope_ci_low": low,
        "slope_ci_high": high,
        "r": r,
        "p": _permutation_p(slope, null, "two-sided"),
        "bootstrap_undefined": dropped,
        "interval_reason": reason,
    }
