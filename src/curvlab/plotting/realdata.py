"""The real-data study's figures (:mod:`curvlab.studies.realdata`): test accuracy by model and
dataset with intervals over seeds, the logistic regression beside them; and each run's
∫|K| dA over its slices, by model and dataset.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np

from curvlab.analysis.stats import paired_difference
from curvlab.plotting.style import COLORS, color_of

__all__ = ["mean_intervals", "plot_realdata_accuracy", "plot_realdata_curvature"]


def _check_runs(runs, field: str) -> list[dict]:
    runs = list(runs)
    keys = ("dataset", "model", field)
    if not runs or any(not all(k in r for k in keys) for r in runs):
        raise ValueError(f"runs: expected records with {', '.join(keys)}")
    return runs


def mean_intervals(runs, field: str = "test_accuracy", *, alpha: float = 0.05) -> list[dict]:
    """One row per (dataset, model) in the order met: n, the mean of ``field`` over its runs
    and the 1 − α t interval of that mean (runs whose value is None are left out).

    >>> rows = mean_intervals([{"dataset": "wine", "model": "ungated", "test_accuracy": a}
    ...                        for a in (0.9, 0.92, 0.94)])
    >>> rows[0]["n"], round(rows[0]["mean"], 3), rows[0]["ci_low"] < 0.92 < rows[0]["ci_high"]
    (3, 0.92, True)
    """
    runs = _check_runs(runs, field)
    rows = []
    for dataset in dict.fromkeys(r["dataset"] for r in runs):
        for model in dict.fromkeys(r["model"] for r in runs if r["dataset"] == dataset):
            values = [
                r[field]
                for r in runs
                if (r["dataset"], r["model"]) == (dataset, model) and r[field] is not None
            ]
            if len(values) < 2:
                raise ValueError(f"runs: {dataset} × {model} has fewer than 2 values of {field}")
            record = paired_difference(values, [0.0] * len(values), alpha=alpha)
            rows.append(
                {
                    "dataset": dataset,
                    "model": model,
                    "n": record["n"],
                    "mean": record["effect"],
                    "ci_low": record["ci_low"],
                    "ci_high": record["ci_high"],
                }
            )
    return rows


def _panels(datasets: list[str], width: float = 4.2):
    fig, axes = plt.subplots(1, len(datasets), figsize=(width * len(datasets), 3.8), squeeze=False)
    return fig, axes[0]


def plot_realdata_accuracy(runs, logistic, *, alpha: float = 0.05):
    """One panel per dataset: each model's mean test accuracy over seeds with its 1 − α t
    interval (:func:`mean_intervals`), and the logistic regression's mean test accuracy
    (``logistic``: records with ``dataset`` and ``test_accuracy``) as a dashed black line.
    Returns ``(fig, axes)``.
    """
    rows = mean_intervals(runs, "test_accuracy", alpha=alpha)
    logistic = list(logistic)
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    fig, axes = _panels(datasets)
    for ax, dataset in zip(axes, datasets, strict=True):
        mine = [r for r in rows if r["dataset"] == dataset]
        for x, r in enumerate(mine):
            ax.errorbar(
                x,
                r["mean"],
                yerr=[[r["mean"] - r["ci_low"]], [r["ci_high"] - r["mean"]]],
                fmt="o",
                color=color_of(r["model"]),
                capsize=4,
            )
        linear = [r["test_accuracy"] for r in logistic if r["dataset"] == dataset]
        if not linear:
            raise ValueError(f"logistic: no logistic regression for {dataset}")
        ax.axhline(
            float(np.mean(linear)),
            color=COLORS["reference"],
            linestyle="--",
            label="logistic regression",
        )
        ax.set_xticks(range(len(mine)), [r["model"] for r in mine], rotation=30, ha="right")
        ax.set_title(dataset)
    axes[0].set_ylabel(f"test accuracy (mean, {1 - alpha:.0%} interval)")
    axes[0].legend(loc="lower left")
    fig.tight_layout()
    return fig, axes


def plot_realdata_curvature(runs):
    """One panel per dataset: log₁₀ of each run's ∫|K| dA (``curvature_total_abs``, the mean
    over its triangles) as points, one column per model, the mean of the logs as a bar.  Runs
    with no positive value are left out.  Returns ``(fig, axes)``.
    """
    runs = _check_runs(runs, "curvature_total_abs")
    kept = [r for r in runs if r["curvature_total_abs"] and r["curvature_total_abs"] > 0]
    if not kept:
        raise ValueError("runs: no run has a positive curvature_total_abs")
    datasets = list(dict.fromkeys(r["dataset"] for r in kept))
    fig, axes = _panels(datasets)
    for ax, dataset in zip(axes, datasets, strict=True):
        models = list(dict.fromkeys(r["model"] for r in kept if r["dataset"] == dataset))
        for x, model in enumerate(models):
            logs = [
                math.log10(r["curvature_total_abs"])
                for r in kept
                if (r["dataset"], r["model"]) == (dataset, model)
            ]
            color = color_of(model)
            ax.scatter([x] * len(logs), logs, s=18, alpha=0.7, color=color)
            ax.hlines(float(np.mean(logs)), x - 0.3, x + 0.3, color=color, linewidth=2)
        ax.set_xticks(range(len(models)), models, rotation=30, ha="right")
        ax.set_title(dataset)
    axes[0].set_ylabel("log₁₀ ∫|K| dA over a slice (mean of triangles)")
    fig.tight_layout()
    return fig, axes
