"""The reproduction's figures, drawn from its tidy outputs (matplotlib, no display needed).

- :func:`forest_plot`  per task, the gated − ungated paired difference with its 95% interval
  (test accuracy and log ∫|K| dA side by side);
- :func:`loss_curve_plot`  the median training-loss curve per model, one panel per task, with
  the 10–90% band over seeds;
- :func:`curvature_accuracy_plot`  log ∫|K| dA against test accuracy on nonlinear tasks,
  task means removed, with the least-squares line.

:func:`write_figures` writes all three as PNG files and returns their paths.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from curvlab.models.tasks import NONLINEAR_TASKS, TASKS  # noqa: E402
from curvlab.studies.cells import CURVE_POINTS  # noqa: E402

__all__ = [
    "curvature_accuracy_plot",
    "forest_plot",
    "loss_curve_plot",
    "sweep_plot",
    "write_figures",
]


def forest_plot(effects, *, baseline: str = "ungated", depth: int = 1):
    """Figure: rows of ``effects.csv`` for ``baseline`` at ``depth``, one panel per measure."""
    measures = ("test_accuracy", "log_curvature_total_abs")
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharey=True)
    for ax, measure in zip(axes, measures, strict=True):
        rows = [
            r
            for r in effects
            if r["measure"] == measure and r["baseline"] == baseline and r["depth"] == depth
        ]
        rows.sort(key=lambda r: TASKS.index(r["task"]))
        y = np.arange(len(rows))
        effect = np.array([r["effect"] for r in rows])
        low = effect - np.array([r["ci_low"] for r in rows])
        high = np.array([r["ci_high"] for r in rows]) - effect
        ax.errorbar(effect, y, xerr=[low, high], fmt="o", capsize=3)
        ax.axvline(0, color="grey", lw=0.8)
        ax.set_yticks(y, [r["task"] for r in rows])
        ax.set_xlabel(f"Δ {measure} (gated − {baseline}), 95% CI")
    fig.tight_layout()
    return fig


def loss_curve_plot(curve_rows, *, depth: int = 1):
    """Figure: median loss curve per model and task over seeds, with a 10–90% band, against
    the share of each run's own budget (runs retrained at a longer budget end at 1 too)."""
    tasks = [t for t in TASKS if any(r["task"] == t for r in curve_rows)]
    models = list(dict.fromkeys(r["model"] for r in curve_rows))
    cols = 4
    rows_n = -(-len(tasks) // cols)
    fig, axes = plt.subplots(rows_n, cols, figsize=(12, 2.6 * rows_n), squeeze=False)
    grouped: dict = {}
    for r in curve_rows:
        if r["depth"] == depth:
            share = round(CURVE_POINTS * r["epoch"] / r["budget"]) / CURVE_POINTS
            grouped.setdefault((r["task"], r["model"]), {}).setdefault(share, []).append(r["loss"])
    for ax, task in zip(axes.flat, tasks, strict=False):
        for model in models:
            series = grouped.get((task, model))
            if not series:
                continue
            shares = sorted(series)
            values = [series[x] for x in shares]  # per share: the runs' losses there
            median = [np.median(v) for v in values]
            line = ax.plot(shares, median, label=model, lw=1)[0]
            ax.fill_between(
                shares,
                [np.quantile(v, 0.1) for v in values],
                [np.quantile(v, 0.9) for v in values],
                color=line.get_color(),
                alpha=0.15,
            )
        ax.set_yscale("log")
        ax.set_title(task, fontsize=9)
    for ax in list(axes.flat)[len(tasks) :]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    fig.supxlabel("share of the run's epochs")
    fig.supylabel("training loss")
    fig.tight_layout()
    return fig


def curvature_accuracy_plot(runs, *, depth: int = 1, measure: str = "log_curvature_total_abs"):
    """Figure: within-task curvature against accuracy on nonlinear tasks, with the OLS line."""
    fig, ax = plt.subplots(figsize=(5, 4))
    xs, ys = [], []
    for task in NONLINEAR_TASKS:
        rows = [
            r
            for r in runs
            if r["task"] == task and r["depth"] == depth and r.get(measure) is not None
        ]
        if len(rows) < 2:
            continue
        x = np.array([r[measure] for r in rows])
        y = np.array([r["test_accuracy"] for r in rows])
        x, y = x - x.mean(), y - y.mean()
        ax.scatter(x, y, s=8, alpha=0.5, label=task)
        xs.append(x)
        ys.append(y)
    if xs:
        x, y = np.concatenate(xs), np.concatenate(ys)
        slope, intercept = np.polyfit(x, y, 1)
        grid = np.linspace(x.min(), x.max(), 50)
        ax.plot(grid, slope * grid + intercept, color="black", lw=1.2)
    ax.set_xlabel(f"{measure} − task mean")
    ax.set_ylabel("test accuracy − task mean")
    ax.legend(fontsize=7, markerscale=1.5)
    fig.tight_layout()
    return fig


def sweep_plot(rows):
    """Figure: per swept factor (columns), the E2 and E1 paired differences (rows) with their
    95% intervals at each value; the default point marked by a filled symbol."""
    from curvlab.studies.sweep import SWEEP

    default = next(r for r in rows if r["factor"] == "default")
    fig, axes = plt.subplots(2, len(SWEEP), figsize=(12, 5), squeeze=False)
    for col, factor in enumerate(SWEEP):
        points = [default, *(r for r in rows if r["factor"] == factor)]
        points.sort(key=lambda r: r[factor])
        for row, (key, label) in enumerate(
            (("e2", "Δ accuracy (E2)"), ("e1", "Δ log ∫|K| dA (E1)"))
        ):
            ax = axes[row, col]
            shown = [r for r in points if r[f"{key}_effect"] is not None]
            x = np.arange(len(shown))
            y = np.array([r[f"{key}_effect"] for r in shown])
            err = [
                y - [r[f"{key}_ci_low"] for r in shown],
                [r[f"{key}_ci_high"] for r in shown] - y,
            ]
            ax.errorbar(x, y, yerr=err, fmt="o", mfc="white", capsize=3)
            marks = [i for i, r in enumerate(shown) if r["factor"] == "default"]
            ax.plot(x[marks], y[marks], "o", color="C0")
            ax.axhline(0, color="grey", lw=0.8)
            ax.set_xticks(x, [str(r[factor]) for r in shown])
            ax.set_xlabel(factor if row else "")
            if col == 0:
                ax.set_ylabel(label)
    fig.suptitle("gated_elementwise − ungated per sweep point (95% CI; filled: small)")
    fig.tight_layout()
    return fig


def write_figures(runs, curve_rows, analysis: dict, out) -> dict:
    """Write forest.png, loss_curves.png and curvature_accuracy.png into ``out``."""
    out = Path(out)
    depth = min(r["depth"] for r in runs)
    figures = {
        "forest": forest_plot(analysis["effects"], depth=depth),
        "loss_curves_figure": loss_curve_plot(curve_rows, depth=depth),
        "curvature_accuracy": curvature_accuracy_plot(runs, depth=depth),
    }
    names = {"loss_curves_figure": "loss_curves"}
    paths = {}
    for key, fig in figures.items():
        path = out / f"{names.get(key, key)}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths[key] = path
    return paths
