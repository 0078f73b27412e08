"""Part II figures: effects, curvature against accuracy, decision boundaries, loss curves.

- :func:`plot_forest`  paired effects with their confidence intervals, one row per comparison.
- :func:`plot_curvature_accuracy` with :func:`linear_fit_band` (a fit and its confidence band).
- :func:`plot_decision_boundaries`  several classifiers side by side, over the same data.
- :func:`plot_loss_curves`  training loss against epoch, one line per model.
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
):
    """Scatter of ``y`` against ``x`` over runs (coloured by ``group``), the fit and its 95% band.

    ``runs`` are records (rows of ``runs.csv``); rows where ``x`` or ``y`` is None are left
    out. The line and band are :func:`linear_fit_band` over all plotted runs. Returns
    ``(fig, ax, band)``.

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


def plot_loss_curves(
    histories: Mapping[str, object],
    *,
    ax: object | None = None,
    title: str | None = None,
    ylabel: str = "training loss (log scale)",
):
    """Training loss against epoch: every run as a thin line, the median per model as a thick one.

    ``histories`` maps a model name to a sequence of loss curves (one per seed, each a sequence
    of per-epoch losses; curves of one model must have equal length). Returns ``(fig, ax)``.

    >>> fig, ax = plot_loss_curves({"gated": [[1.0, 0.5, 0.4], [0.9, 0.6, 0.3]]})
    >>> len(ax.lines)
    3
    >>> plt.close(fig)
    """
    if not isinstance(histories, Mapping) or not histories:
        raise TypeError("histories must be a nonempty mapping of model names to loss curves")
    if ax is None:
        fig, ax = plt.subplots()
    else:
        fig = ax.figure
    for name, curves in histories.items():
        array = as_float_array(f"histories[{name!r}]", [list(c) for c in curves])
        if array.ndim != 2 or array.shape[1] == 0:
            raise ValueError(f"histories[{name!r}] must be equal-length loss curves, one per run")
        if not np.all(np.isfinite(array)) or array.min() <= 0:
            raise ValueError(f"histories[{name!r}] must hold finite positive losses")
        epochs = np.arange(1, array.shape[1] + 1)
        color = color_of(name)
        for curve in array:
            ax.plot(epochs, curve, color=color, lw=0.6, alpha=0.25)
        ax.plot(
            epochs,
            np.median(array, axis=0),
            color=color,
            lw=2,
            label=f"{name} (median of {len(array)})",
        )
    ax.set_yscale("log")
    ax.set_xlabel("epoch")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    if title is not None:
        ax.set_title(title)
    return fig, ax
