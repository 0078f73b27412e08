"""The decision-boundary study: gated against ungated attention on linear and nonlinear tasks.

One run = (task, model variant, depth, seed): make the task's train/test split from the seed
(:func:`curvlab.tasks.make_task`), build the classifier from the same seed
(:func:`curvlab.attention.build_classifier`), train it (:func:`curvlab.training.fit`), test it,
and measure the curvature of its representation sheet: the Gaussian curvature K of
x ∈ P ↦ pooled representation after the last block (Σ = I), on a midpoint grid over the fixed
input patch P = [-1, 1]², summarised scale-free by :mod:`curvlab.measures`:

    curvature_total_abs      ∫_P |K| dA    (area of the Gauss image; the headline measure)
    curvature_dimensionless  K̄ · A         (mean K over the input patch times the image area)
    curvature_positive_fraction            share of the image area with K > 0
    curvature_mean_abs       mean |K| over the grid (NOT scale-free; for reference)

Grid nodes where the map is not an immersion (σ_min/σ_max of J below the engine's tolerance)
are excluded and counted in ``non_immersed_nodes``: never silently dropped.

The protocol (task recipes, tokenisation, widths, optimiser, epochs, grid) is this library's
own: the paper's experimental settings are not known.  :data:`SCALES` holds three sizes;
``small`` runs in about a minute on two CPU cores.  Every run is cached on disk
(:mod:`curvlab.experiments.cache`) under its configuration and the source of the modules it
uses, so a rebuild reuses it and a change of code recomputes it.

Statistics (:mod:`curvlab.stats`, scipy): :func:`summarize` (mean ± sample std),
:func:`paired_comparison` (paired t interval and Wilcoxon signed-rank test between two variants
over matched task/depth/seed), :func:`pearson_correlation` (``scipy.stats.pearsonr``).  The
Part II reproduction proper, with seeds as the unit, lives in
:mod:`curvlab.experiments.reproduce`.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Iterable, Sequence

import torch
from scipy import stats as scipy_stats
from tqdm.auto import tqdm

from curvlab import stats
from curvlab.attention import (
    VARIANTS,
    AttentionClassifier,
    build_classifier,
    parameter_count,
    representation_map,
)
from curvlab.experiments.cache import cached
from curvlab.experiments.config import study_config
from curvlab.measures import sheet_measures
from curvlab.tasks import LINEAR_TASKS, TASKS, make_task
from curvlab.training import evaluate, fit, resolve_device

__all__ = [
    "CODE_MODULES",
    "CURVATURE_METRICS",
    "PATCH",
    "SCALES",
    "decision_config",
    "decision_study",
    "paired_comparison",
    "pearson_correlation",
    "predict_grid",
    "representation_curvature",
    "run_decision",
    "summarize",
    "train_decision_model",
]

PATCH: tuple[tuple[float, float], tuple[float, float]] = ((-1.0, 1.0), (-1.0, 1.0))
"""The fixed input patch over which representation curvature is integrated."""

CODE_MODULES: tuple[str, ...] = (
    "curvlab.attention",
    "curvlab.curvature",
    "curvlab.experiments.decision",
    "curvlab.measures",
    "curvlab.tasks",
    "curvlab.training",
)
"""The modules a cached run depends on: a change to any of their sources recomputes it."""

CURVATURE_METRICS: tuple[str, ...] = (
    "curvature_total_abs",
    "curvature_dimensionless",
    "curvature_positive_fraction",
    "curvature_mean_abs",
)
"""The curvature statistics in every record (see the module docstring)."""

_MODEL = {"d_model": 4, "n_heads": 1, "n_tokens": 2, "residual": True, "norm": False}
_DATA = {"n_train": 128, "n_test": 512, "noise": 0.05}
_FIT = {"epochs": 60, "learning_rate": 0.05, "batch_size": None, "weight_decay": 0.0}

SCALES: dict[str, dict] = {
    "small": {
        **_MODEL,
        **_DATA,
        **_FIT,
        "tasks": list(TASKS),
        "models": list(VARIANTS),
        "depths": [1],
        "seeds": [0, 1, 2, 3, 4],
        "grid": 12,
    },
    "medium": {
        **_MODEL,
        **_DATA,
        **_FIT,
        "d_model": 8,
        "n_heads": 2,
        "n_tokens": 4,
        "n_train": 256,
        "epochs": 150,
        "learning_rate": 0.02,
        "tasks": list(TASKS),
        "models": list(VARIANTS),
        "depths": [1, 2],
        "seeds": list(range(10)),
        "grid": 16,
    },
    "large": {
        **_MODEL,
        **_DATA,
        **_FIT,
        "d_model": 16,
        "n_heads": 2,
        "n_tokens": 8,
        "n_train": 1024,
        "n_test": 2048,
        "epochs": 300,
        "learning_rate": 0.01,
        "batch_size": 256,
        "tasks": list(TASKS),
        "models": list(VARIANTS),
        "depths": [1, 2, 4],
        "seeds": list(range(20)),
        "grid": 24,
    },
}
"""Study sizes.  A study config holds the settings of one run plus the lists it sweeps over
(``tasks``, ``models``, ``depths``, ``seeds``) and the curvature grid (points per axis)."""

_SWEPT = ("tasks", "models", "depths", "seeds")


def decision_config(scale: str = "small", **overrides) -> dict:
    """The study configuration of ``scale`` with ``overrides`` applied (unknown keys rejected).

    >>> config = decision_config("small", seeds=[0, 1])
    >>> config["seeds"], config["depths"]
    ([0, 1], [1])
    """
    checks = {"tasks": TASKS, "models": VARIANTS, "depths": 1, "seeds": 0, "grid": 2}
    config = study_config(SCALES, scale, overrides, checks)
    return config


def representation_curvature(
    model: AttentionClassifier, *, layer: int = -1, patch=PATCH, points_per_axis: int = 12
) -> dict:
    """Curvature statistics of the sheet x ∈ patch ↦ pooled representation after ``layer``.

    K from :func:`curvlab.curvature.gaussian_curvature` (Σ = I) at the nodes of a midpoint
    grid (``points_per_axis``² nodes) where the map is an immersion; the others are excluded
    and counted.  Returns the :data:`CURVATURE_METRICS`, ``area`` and the node counts; if no
    node is an immersion the curvature entries are None.

    >>> stats = representation_curvature(build_classifier("gated_headwise", seed=0),
    ...                                  points_per_axis=4)
    >>> stats["curvature_nodes"] + stats["non_immersed_nodes"], stats["curvature_total_abs"] > 0
    (16, True)
    """
    f = representation_map(model, layer)
    device = next(model.parameters()).device
    sheet = sheet_measures(f, patch, points_per_axis, rule="midpoint", device=device)
    stats = {
        "curvature_nodes": sheet.immersed_nodes,
        "non_immersed_nodes": sheet.non_immersed_nodes,
    }
    return {
        **stats,
        "curvature_total_abs": sheet.total_absolute_curvature,
        "curvature_dimensionless": sheet.dimensionless_curvature,
        "curvature_positive_fraction": sheet.positive_fraction,
        "curvature_mean_abs": sheet.mean_abs_curvature,
        "area": sheet.area,
    }


def _model_settings(config: dict) -> dict:
    return {key: config[key] for key in ("d_model", "n_heads", "n_tokens", "residual", "norm")}


def train_decision_model(
    task: str, model: str, depth: int, seed: int, config: dict, *, device=None
) -> tuple[AttentionClassifier, dict]:
    """Train one run of the study (not cached): the classifier and its accuracy record.

    ``config`` is a study configuration (:func:`decision_config`).  The record holds task,
    boundary ("linear"/"nonlinear"), model, depth, seed, parameters, train and test accuracy
    and loss (``accuracy`` and ``loss`` are the test values) and the fit's wall time.
    """
    data = make_task(
        task, n_train=config["n_train"], n_test=config["n_test"], seed=seed, noise=config["noise"]
    )
    classifier = build_classifier(model, depth=depth, seed=seed, **_model_settings(config))
    fitted = fit(
        classifier,
        data.train_points,
        data.train_labels,
        epochs=config["epochs"],
        learning_rate=config["learning_rate"],
        batch_size=config["batch_size"],
        weight_decay=config["weight_decay"],
        seed=seed,
        device=device,
    )
    tested = evaluate(classifier, data.test_points, data.test_labels, device=device)
    record = {
        "task": task,
        "boundary": "linear" if task in LINEAR_TASKS else "nonlinear",
        "model": model,
        "depth": depth,
        "seed": seed,
        "parameters": parameter_count(classifier),
        "accuracy": tested["accuracy"],
        "loss": tested["loss"],
        "train_accuracy": fitted["train_accuracy"],
        "train_loss": fitted["train_loss"],
        "fit_seconds": fitted["seconds"],
        "device": fitted["device"],
    }
    return classifier, record


def _run(run_config: dict) -> dict:
    start = time.perf_counter()
    classifier, record = train_decision_model(
        run_config["task"],
        run_config["model"],
        run_config["depth"],
        run_config["seed"],
        run_config,
        device=run_config["device"],
    )
    curvature = representation_curvature(classifier, points_per_axis=run_config["grid"])
    return {**record, **curvature, "seconds": time.perf_counter() - start}


def run_decision(run_config: dict, *, directory=None, refresh: bool = False) -> dict:
    """One cached run: ``run_config`` is a study config with single ``task``, ``model``,
    ``depth``, ``seed`` and ``device`` entries in place of the swept lists."""
    return cached(
        _run,
        run_config,
        name="decision",
        modules=CODE_MODULES,
        directory=directory,
        refresh=refresh,
    )


def decision_study(
    scale: str = "small",
    *,
    directory=None,
    refresh: bool = False,
    progress: bool = False,
    device=None,
    **overrides,
) -> list[dict]:
    """Run (or read from the cache) the whole study; a list of tidy records, one per run.

    Sweeps tasks × models × depths × seeds of :func:`decision_config` (``scale`` plus
    ``overrides``).  Each record: task, boundary, model, depth, seed, parameters, accuracy and
    loss (test), train accuracy and loss, the curvature statistics of
    :func:`representation_curvature`, and the run's wall time ``seconds`` (as first computed).
    ``device`` None: CUDA when available.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     records = decision_study(directory=d, tasks=["xor"], models=["ungated"], seeds=[0],
    ...                              epochs=2, grid=3, device="cpu")
    >>> len(records), records[0]["task"], records[0]["curvature_nodes"]
    (1, 'xor', 9)
    """
    config = decision_config(scale, **overrides)
    device = str(resolve_device(device))
    runs = [
        (task, model, depth, seed)
        for task in config["tasks"]
        for depth in config["depths"]
        for seed in config["seeds"]
        for model in config["models"]
    ]
    base = {key: value for key, value in config.items() if key not in _SWEPT}
    records = []
    for task, model, depth, seed in tqdm(runs, desc="decision study", disable=not progress):
        run_config = {**base, "task": task, "model": model, "depth": depth, "seed": seed}
        run_config["device"] = device
        records.append(run_decision(run_config, directory=directory, refresh=refresh))
    return records


# ---------------------------------------------------------------------------------------------
# statistics over seeds


def summarize(
    records: Iterable[dict],
    metrics: Sequence[str] = ("accuracy", "curvature_total_abs"),
    by: Sequence[str] = ("task", "model", "depth"),
) -> list[dict]:
    """Mean and sample standard deviation of ``metrics`` per group of ``by``, with n.

    Groups appear in first-seen order; keys ``<metric>_mean``, ``<metric>_std``, ``n``.
    Records whose metric is None are left out of that metric (and counted in
    ``<metric>_missing``).

    >>> rows = summarize([{"m": "a", "x": 1.0}, {"m": "a", "x": 3.0}], metrics=["x"], by=["m"])
    >>> rows[0]["x_mean"], rows[0]["x_std"], rows[0]["n"]
    (2.0, 1.4142135623730951, 2)
    """
    groups: dict[tuple, list[dict]] = {}
    for record in records:
        groups.setdefault(tuple(record[key] for key in by), []).append(record)
    rows = []
    for key, members in groups.items():
        row = dict(zip(by, key, strict=True))
        row["n"] = len(members)
        for name in metrics:
            values = [r[name] for r in members if r.get(name) is not None]
            row[f"{name}_mean"] = statistics.fmean(values) if values else None
            row[f"{name}_std"] = statistics.stdev(values) if len(values) > 1 else None
            row[f"{name}_missing"] = len(members) - len(values)
        rows.append(row)
    return rows


def paired_comparison(
    records: Iterable[dict],
    metric: str,
    model: str,
    baseline: str,
    *,
    tasks: Sequence[str] | None = None,
    depths: Sequence[int] | None = None,
) -> dict:
    """Paired test of ``model`` against ``baseline`` on ``metric`` over matched runs.

    Pairs are runs with the same (task, depth, seed), restricted to ``tasks`` and ``depths``
    when given.  Differences d = metric(model) − metric(baseline).  Returns n,
    mean_difference, std_difference, t = mean / (std/√n) with its two-sided p (paired t-test,
    n − 1 degrees of freedom; p = 1 when all differences are 0 and t is then 0), wins/losses/ties
    and the exact two-sided sign-test p.

    >>> rs = [{"task": "x", "depth": 1, "seed": s, "model": m, "acc": v}
    ...       for s, (a, b) in enumerate([(0.9, 0.8), (0.85, 0.8), (0.95, 0.9)])
    ...       for m, v in (("g", a), ("u", b))]
    >>> result = paired_comparison(rs, "acc", "g", "u")
    >>> result["n"], result["wins"], round(result["mean_difference"], 6)
    (3, 3, 0.066667)
    """
    index: dict[tuple, dict[str, float]] = {}
    for record in records:
        if tasks is not None and record["task"] not in tasks:
            continue
        if depths is not None and record["depth"] not in depths:
            continue
        if record["model"] in (model, baseline) and record.get(metric) is not None:
            key = (record["task"], record["depth"], record["seed"])
            index.setdefault(key, {})[record["model"]] = record[metric]
    pairs = [(v[model], v[baseline]) for v in index.values() if len(v) == 2]
    n = len(pairs)
    if n < 2:
        raise ValueError(f"records: need at least 2 matched pairs of {model!r} and {baseline!r}")
    result = stats.paired_difference([a for a, _ in pairs], [b for _, b in pairs])
    differences = [a - b for a, b in pairs]
    mean, std = result["effect"], result["sd"]
    if std == 0:
        t = 0.0 if mean == 0 else math.copysign(math.inf, mean)
    else:
        t = mean / (std / math.sqrt(n))
    wins = sum(d > 0 for d in differences)
    losses = sum(d < 0 for d in differences)
    return {
        "metric": metric,
        "model": model,
        "baseline": baseline,
        "n": n,
        "mean_difference": mean,
        "std_difference": std,
        "ci_low": result["ci_low"],
        "ci_high": result["ci_high"],
        "t": t,
        "p_t": result["p"],
        "wins": wins,
        "losses": losses,
        "ties": n - wins - losses,
        "p_wilcoxon": result["p_wilcoxon"],
    }


def pearson_correlation(x: Sequence[float], y: Sequence[float]) -> dict:
    """Pearson r of paired samples with n and the two-sided p of t = r √((n − 2)/(1 − r²)).

    >>> result = pearson_correlation([1, 2, 3, 4], [1, 3, 2, 4])
    >>> result["n"], round(result["r"], 6)
    (4, 0.8)
    """
    x, y = [float(v) for v in x], [float(v) for v in y]
    if len(x) != len(y) or len(x) < 3:
        raise ValueError(f"x, y: expected equal lengths >= 3, got {len(x)} and {len(y)}")
    if statistics.pstdev(x) == 0 or statistics.pstdev(y) == 0:
        raise ValueError("x, y: a constant sample has no correlation")
    result = scipy_stats.pearsonr(x, y)
    return {"r": float(result.statistic), "n": len(x), "p": float(result.pvalue)}


def predict_grid(model: AttentionClassifier, extent=(-1.5, 1.5), points_per_axis: int = 100):
    """The model's probability σ(logit) on a square grid: (xs, ys, probabilities (n, n)).

    ``probabilities[i, j]`` is at (xs[j], ys[i]), ready for ``plt.contourf(xs, ys, p)``.

    >>> xs, ys, p = predict_grid(build_classifier("ungated"), points_per_axis=5)
    >>> xs.shape, p.shape
    (torch.Size([5]), torch.Size([5, 5]))
    """
    low, high = float(extent[0]), float(extent[1])
    if not low < high:
        raise ValueError(f"extent: expected (low, high) with low < high, got {extent!r}")
    parameter = next(model.parameters())
    axis = torch.linspace(low, high, points_per_axis, dtype=parameter.dtype)
    grid_y, grid_x = torch.meshgrid(axis, axis, indexing="ij")
    points = torch.stack([grid_x.reshape(-1), grid_y.reshape(-1)], dim=1).to(parameter.device)
    model.eval()
    with torch.no_grad():
        probabilities = torch.sigmoid(model(points)).reshape(points_per_axis, points_per_axis)
    return axis, axis, probabilities.cpu()
