"""Part II figures: effects, curvature against accuracy, decision boundaries, loss curves.

- :func:`plot_forest`  paired effects with their confidence intervals, one row per comparison.
- :func:`plot_curvature_accuracy` with :func:`linear_fit_band` (a fit and its confidence band).
- :func:`plot_decision_boundaries`  several classifiers side by side, over the same data.
- :func:`plot_loss_curves`  training loss per model and task, median over seeds with a band.
- :func:`plot_task_effects`  per task, the gated − ungated effects on accuracy and curvature.
- :func:`plot_sweep`  the one-factor sweep's effects per factor.
- :func:`write_figures`  the study's figures as PNG files.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np

from curvlab.plotting.inputs import as_float_array, check_records
from curvlab.plotting.style import COLORS, color_of

__all__ = [
    "linear_fit_band",
    "plot_curvature_accuracy",
    "plot_decision_boundaries",
    "plot_forest",
    "plot_loss_curves",
    "plot_sweep",
    "plot_task_effects",
    "write_figures",
]


def plot_forest(
    effects: object,
    *,
    label: str = "claim",
    ax: object | None = None,
    title: str | None = None,
    xlabel: str = "paired difference, gated − ungated (95% CI)",
    margin: float | None = None,
):
    """A forest plot: one row per record, ``effect`` as a dot, ``[ci_low, ci_high]`` as a bar.

    ``effects`` are records with ``effect``, ``ci_low``, ``ci_high`` and the ``label`` key (the
    schema of ``claims.json``; per-task rows work the same way); a ``verdict`` key, when present,
    is written at the right of its row. The zero line is drawn; an equivalence ``margin``
    (±margin) is shaded. Rows whose interval lies above 0 are drawn in the gated colour, below
    0 in the ungated colour, straddling 0 in grey. Returns ``(fig, ax)``.

    >>> fig, ax = plot_forest([{"claim": "E1", "effect": 0.4, "ci_low": 0.1, "ci_high": 0.7}])
    >>> [t.get_text() for t in ax.get_yticklabels()]
    ['E1']
    >>> plt.close(fig)
    """
    rows = check_records("effects", effects, ("effect", "ci_low", "ci_high", label))
    for row in rows:
        low, mid, high = (float(row[k]) for k in ("ci_low", "effect", "ci_high"))
        if not all(math.isfinite(v) for v in (low, mid, high)) or not low <= mid <= high:
            raise ValueError(
                f"effects: record {row[label]!r} needs finite ci_low <= effect <= ci_high, "
                f"got {low}, {mid}, {high}"
            )
    if margin is not None and not (math.isfinite(margin) and margin > 0):
        raise ValueError(f"margin must be a positive finite number, got {margin!r}")
    if ax is None:
        fig, ax = plt.subplots(figsize=(6.4, 0.5 * len(rows) + 1.4))
    else:
        fig = ax.figure
    positions = np.arange(len(rows))[::-1]
    for y, row in zip(positions, rows, strict=True):
        low, mid, high = (float(row[k]) for k in ("ci_low", "effect", "ci_high"))
        if low > 0:
            color = COLORS["gated"]
        elif high < 0:
            color = COLORS["ungated"]
        else:
            color = "#777777"
        ax.plot([low, high], [y, y], color=color, lw=2.2, solid_capstyle="butt")
        ax.plot([mid], [y], "o", color=color, ms=6)
        if "verdict" in row:
            ax.annotate(
                str(row["verdict"]),
                (1.01, y),
                xycoords=("axes fraction", "data"),
                va="center",
                fontsize=9,
                color=color,
            )
    ax.axvline(0.0, color=COLORS["reference"], lw=0.9)
    if margin is not None:
        ax.axvspan(-margin, margin, color=COLORS["ablation"], alpha=0.12, lw=0)
    ax.set_yticks(positions, [str(row[label]) for row in rows])
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_xlabel(xlabel)
    ax.grid(axis="y", visible=False)
    if title is not None:
        ax.set_title(title)
    return fig, ax


def linear_fit_band(x: object, y: object, grid: object | None = None, level: float = 0.95) -> dict:
    """Least-squares line y ≈ a + b x and the ``level`` confidence band of its mean on ``grid``.

    Band: ŷ(x₀) ± t_{n−2} s √(1/n + (x₀ − x̄)² / Sxx), s² the residual variance (the CI of the
    fitted mean, not a prediction interval). Returns ``slope``, ``intercept``, ``grid``,
    ``fit``, ``low``, ``high`` (arrays on the grid; 100 points over the range of x by default).

    >>> band = linear_fit_band([0, 1, 2, 3], [1.0, 3.1, 4.9, 7.0])
    >>> round(band["slope"], 2), bool((band["low"] <= band["fit"]).all())
    (1.98, True)
    """
    from scipy import stats

    xs, ys = as_float_array("x", x).ravel(), as_float_array("y", y).ravel()
    if xs.shape != ys.shape:
        raise ValueError(f"x and y must have the same length, got {xs.size} and {ys.size}")
    if xs.size < 3 or np.ptp(xs) == 0:
        raise ValueError("x must hold at least 3 values, not all equal, to fit a line with a band")
    if not (np.all(np.isfinite(xs)) and np.all(np.isfinite(ys))):
        raise ValueError("x and y must contain only finite numbers (found NaN or inf)")
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    n = xs.size
    slope, intercept = np.polyfit(xs, ys, 1)
    residual = ys - (intercept + slope * xs)
    s = math.sqrt(float(residual @ residual) / (n - 2))
    sxx = float(((xs - xs.mean()) ** 2).sum())
    x0 = np.linspace(xs.min(), xs.max(), 100) if grid is None else as_float_array("grid", grid)
    fit = intercept + slope * x0
    half = stats.t.ppf(0.5 + level / 2, n - 2) * s * np.sqrt(1 / n + (x0 - xs.mean()) ** 2 / sxx)
    return {
        "slope": float(slope),
        "intercept": float(intercept),
        "grid": x0,
        "fit": fit,
        "low": fit - half,
        "high": fit + half,
    }


def plot_curvature_accuracy(
    runs: object,
    *,
    x: str = "log_curvature",
    y: str = "test_accuracy",
    group: str = "model",
    ax: object | None = None,
    title: str | None = None,
    xlabel: str = r"$\log \int|K|\,dA$",
    ylabel: str = "test accuracy",
    center_by: tuple[str, ...] = (),
):
    """Scatter of ``y`` against ``x`` over runs (coloured by ``group``), the fit and its 95% band.

    ``runs`` are records (rows of ``runs.csv``); rows where ``x`` or ``y`` is None are left
    out. ``center_by`` names keys (e.g. ``("task",)`` or ``("task", "model")``) within whose
    cells the means of x and y are removed first, so the plot shows the association within
    those cells only (the axis labels say so). The line and band are :func:`linear_fit_band`
    over all plotted runs. Returns ``(fig, ax, band)``.

    >>> rows = [{"model": m, "log_curvature": float(i), "test_accuracy": 0.5 + 0.01 * i}
    ...         for i, m in enumerate(["gated", "ungated"] * 3)]
    >>> fig, ax, band = plot_curvature_accuracy(rows)
    >>> round(band["slope"], 6)
    0.01
    >>> plt.close(fig)
    """
    rows = check_records("runs", runs, (x, y, group))
    rows = [r for r in rows if r[x] is not None and r[y] is not None]
    xs = np.array([float(r[x]) for r in rows])
    ys = np.array([float(r[y]) for r in rows])
    if center_by:
        cells = [tuple(r[key] for key in center_by) for r in rows]
        for cell in set(cells):
            mask = np.array([c == cell for c in cells])
            xs[mask] -= xs[mask].mean()
            ys[mask] -= ys[mask].mean()
        within = " × ".join(center_by)
        xlabel, ylabel = f"{xlabel} − {within} mean", f"{ylabel} − {within} mean"
    band = linear_fit_band(xs, ys)
    if ax is None:
        fig, ax = plt.subplots()
    else:
        fig = ax.figure
    for name in dict.fromkeys(str(r[group]) for r in rows):
        mask = np.array([str(r[group]) == name for r in rows])
        ax.scatter(xs[mask], ys[mask], s=16, alpha=0.6, color=color_of(name), label=name)
    ax.fill_between(
        band["grid"],
        band["low"],
        band["high"],
        color=COLORS["reference"],
        alpha=0.12,
        lw=0,
        label="95% CI of the fit",
    )
    ax.plot(
        band["grid"],
        band["fit"],
        color=COLORS["reference"],
        lw=1.2,
        label=f"fit, slope {band['slope']:.3g}",
    )
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    if title is not None:
        ax.set_title(title)
    return fig, ax, band


def _logit_of(model: object):
    if callable(model):
        return model
    raise TypeError(f"models must map to callables (points (n, 2) -> logits (n,)), got {model!r}")


def plot_decision_boundaries(
    models: Mapping[str, object],
    points: object,
    labels: object,
    *,
    extent: tuple[float, float, float, float] = (-1.0, 1.0, -1.0, 1.0),
    resolution: int = 120,
    title: str | None = None,
):
    """The decision boundaries of several classifiers side by side, over the same data.

    ``models`` maps a name to a classifier: any callable (a torch module included) taking float
    points (n, 2) to one logit per point (n,). Each panel shows P(class 1) = σ(logit) on a
    ``resolution``² grid over ``extent`` = (x_min, x_max, y_min, y_max), the boundary
    σ = 1/2 as a line in the model's colour, and the data (``points`` (n, 2), ``labels`` 0/1).
    Returns ``(fig, axes)``.

    >>> import torch
    >>> fig, axes = plot_decision_boundaries(
    ...     {"ungated": lambda p: p[:, 0], "gated": lambda p: p[:, 0] ** 2 + p[:, 1] ** 2 - 0.5},
    ...     np.zeros((2, 2)), [0, 1], resolution=20)
    >>> [ax.get_title() for ax in axes]
    ['ungated', 'gated']
    >>> plt.close(fig)
    """
    import torch

    if not isinstance(models, Mapping) or not models:
        raise TypeError("models must be a nonempty mapping of names to classifiers")
    xy = as_float_array("points", points)
    if xy.ndim != 2 or xy.shape[1] != 2:
        raise ValueError(f"points must have shape (n, 2), got {xy.shape}")
    classes = as_float_array("labels", labels).ravel()
    if classes.shape != (xy.shape[0],):
        raise ValueError(
            f"labels must have one entry per point ({xy.shape[0]}), got {classes.size}"
        )
    x_min, x_max, y_min, y_max = extent
    if not (x_min < x_max and y_min < y_max):
        raise ValueError(
            f"extent must be (x_min, x_max, y_min, y_max) with min < max, got {extent}"
        )
    gx, gy = np.meshgrid(
        np.linspace(x_min, x_max, resolution), np.linspace(y_min, y_max, resolution)
    )
    grid = np.stack([gx.ravel(), gy.ravel()], axis=-1)
    fig, axes = plt.subplots(1, len(models), figsize=(4.2 * len(models), 4.0), squeeze=False)
    axes = list(axes[0])
    for ax, (name, model) in zip(axes, models.items(), strict=True):
        logit = _logit_of(model)
        dtype = torch.float32
        if isinstance(model, torch.nn.Module):
            dtype = next(model.parameters()).dtype
        with torch.no_grad():
            values = logit(torch.as_tensor(grid, dtype=dtype))
        prob = torch.sigmoid(torch.as_tensor(values).double()).numpy().reshape(gx.shape)
        ax.contourf(gx, gy, prob, levels=np.linspace(0, 1, 11), cmap="PuOr_r", alpha=0.45)
        if prob.min() < 0.5 < prob.max():
            ax.contour(gx, gy, prob, levels=[0.5], colors=color_of(name), linewidths=2)
        for value, marker in ((0.0, "o"), (1.0, "^")):
            chosen = classes == value
            ax.scatter(
                xy[chosen, 0],
                xy[chosen, 1],
                s=9,
                marker=marker,
                color=COLORS["reference"],
                alpha=0.55,
                lw=0,
            )
        ax.set_title(name)
        ax.set_xlabel("$x_1$")
        ax.set_aspect("equal", adjustable="box")
        ax.grid(False)
    axes[0].set_ylabel("$x_2$")
    if title is not None:
        fig.suptitle(title)
    return fig, axes


def plot_loss_curves(curve_rows: object, *, depth: int = 1, columns: int = 4):
    """Training loss per model and task: the median over seeds and its 10–90% band.

    ``curve_rows`` are rows of ``loss_curves.csv`` (``task``, ``model``, ``depth``, ``epoch``,
    ``budget``, ``loss``); the x axis is the share of each run's own budget, so runs retrained
    at a longer budget end at 1 too (snapshots at :data:`curvlab.studies.cells.CURVE_POINTS`
    evenly spaced epochs). One panel per task, in the order of ``TASKS``. Returns
    ``(fig, axes)``.

    >>> rows = [{"task": "xor", "model": m, "depth": 1, "epoch": e, "budget": 4,
    ...          "loss": 1 / (e + 1)} for m in ("ungated", "gated_elementwise") for e in range(4)]
    >>> fig, axes = plot_loss_curves(rows)
    >>> len(axes.flat[0].lines)
    2
    >>> plt.close(fig)
    """
    from curvlab.data.tasks import TASKS
    from curvlab.studies.cells import CURVE_POINTS

    keys = ("task", "model", "depth", "epoch", "budget", "loss")
    rows = [r for r in check_records("curve_rows", curve_rows, keys) if r["depth"] == depth]
    if not rows:
        raise ValueError(f"curve_rows: no row at depth {depth}")
    tasks = [t for t in TASKS if any(r["task"] == t for r in rows)]
    models = list(dict.fromkeys(r["model"] for r in rows))
    grouped: dict = {}
    for r in rows:
        share = round(CURVE_POINTS * r["epoch"] / r["budget"]) / CURVE_POINTS
        grouped.setdefault((r["task"], r["model"]), {}).setdefault(share, []).append(r["loss"])
    n_rows = -(-len(tasks) // columns)
    fig, axes = plt.subplots(n_rows, columns, figsize=(12, 2.6 * n_rows), squeeze=False)
    for ax, task in zip(axes.flat, tasks, strict=False):
        for model in models:
            series = grouped.get((task, model))
            if not series:
                continue
            shares = sorted(series)
            values = [series[s] for s in shares]
            color = color_of(model)
            ax.plot(shares, [np.median(v) for v in values], color=color, lw=1.2, label=model)
            low = [np.quantile(v, 0.1) for v in values]
            high = [np.quantile(v, 0.9) for v in values]
            ax.fill_between(shares, low, high, color=color, alpha=0.15, lw=0)
        ax.set_yscale("log")
        ax.set_title(task, fontsize=9)
    for ax in list(axes.flat)[len(tasks) :]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    fig.supxlabel("share of the run's epochs")
    fig.supylabel("training loss (median, 10–90% band)")
    return fig, axes


def plot_task_effects(effects: object, *, baseline: str = "ungated", depth: int = 1):
    """Per task, gated − ``baseline`` paired effects on test accuracy and on log ∫|K| dA.

    Two :func:`plot_forest` panels side by side over the rows of ``effects.csv`` (``task``,
    ``measure``, ``baseline``, ``depth``, ``effect``, ``ci_low``, ``ci_high``), tasks in the
    order of ``TASKS``. Returns ``(fig, axes)``.
    """
    from curvlab.data.tasks import TASKS

    keys = ("task", "measure", "baseline", "depth")
    rows = check_records("effects", effects, keys)
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), sharey=True)
    panels = (("test_accuracy", "Δ test accuracy"), ("log_curvature_total_abs", "Δ log ∫|K| dA"))
    for ax, (measure, xlabel) in zip(axes, panels, strict=True):
        chosen = [
            r
            for r in rows
            if (r["measure"], r["baseline"], r["depth"]) == (measure, baseline, depth)
        ]
        chosen.sort(key=lambda r: TASKS.index(r["task"]))
        plot_forest(chosen, label="task", ax=ax, xlabel=xlabel)
    fig.suptitle(f"gated_elementwise − {baseline}, mean over seeds with 95% CI")
    return fig, axes


def plot_sweep(rows: object):
    """Per swept factor (columns), the E2 and E1 paired differences (rows) with 95% intervals.

    ``rows`` are records of the one-factor sweep (:func:`curvlab.studies.sweep.sweep`); the
    default point (``factor == "default"``) is drawn filled in every column. Returns
    ``(fig, axes)``.
    """
    from curvlab.studies.sweep import SWEEP_FACTORS

    rows = check_records("rows", rows, ("factor",))
    default = next(r for r in rows if r["factor"] == "default")
    fig, axes = plt.subplots(2, len(SWEEP_FACTORS), figsize=(12, 5), squeeze=False)
    measures = (("e2", "Δ accuracy (E2)"), ("e1", "Δ log ∫|K| dA (E1)"))
    for col, factor in enumerate(SWEEP_FACTORS):
        points = sorted(
            [default, *(r for r in rows if r["factor"] == factor)], key=lambda r: r[factor]
        )
        for row, (key, label) in enumerate(measures):
            ax = axes[row, col]
            shown = [r for r in points if r[f"{key}_effect"] is not None]
            x = np.arange(len(shown))
            y = np.array([r[f"{key}_effect"] for r in shown])
            err = [
                y - [r[f"{key}_ci_low"] for r in shown],
                [r[f"{key}_ci_high"] for r in shown] - y,
            ]
            color = COLORS["gated"]
            ax.errorbar(x, y, yerr=err, fmt="o", mfc="white", color=color, capsize=3)
            marks = [i for i, r in enumerate(shown) if r["factor"] == "default"]
            ax.plot(x[marks], y[marks], "o", color=color)
            ax.axhline(0, color=COLORS["reference"], lw=0.8)
            ax.set_xticks(x, [str(r[factor]) for r in shown])
            ax.set_xlabel(factor if row else "")
            if col == 0:
                ax.set_ylabel(label)
    fig.suptitle("gated_elementwise − ungated per sweep point (95% CI; filled: the default)")
    return fig, axes


def write_figures(runs, curve_rows, analysis: Mapping, out) -> dict:
    """Write the study's figures as PNG files into ``out``; returns their paths by name.

    ``task_effects.png`` (:func:`plot_task_effects`), ``loss_curves.png``
    (:func:`plot_loss_curves`) and ``curvature_accuracy.png`` (:func:`plot_curvature_accuracy`
    on the nonlinear tasks, means removed within task × model), each at the shallowest depth.
    """
    from pathlib import Path

    from curvlab.data.tasks import NONLINEAR_TASKS

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    depth = min(r["depth"] for r in runs)
    nonlinear = [r for r in runs if r["task"] in NONLINEAR_TASKS and r["depth"] == depth]
    figures = {
        "task_effects": plot_task_effects(analysis["effects"], depth=depth)[0],
        "loss_curves": plot_loss_curves(curve_rows, depth=depth)[0],
        "curvature_accuracy": plot_curvature_accuracy(
            nonlinear, x="log_curvature_total_abs", center_by=("task", "model")
        )[0],
    }
    paths = {}
    for name, fig in figures.items():
        paths[name] = out / f"{name}.png"
        fig.savefig(paths[name], dpi=110)
        plt.close(fig)
    return paths
