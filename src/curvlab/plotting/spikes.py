"""Where a trained sheet's ∫|K| dA lives: its spikes, the Jacobian's collapse, and the points
the adaptive rule spent its evaluations on (:func:`curvlab.measurement.adaptive_sheets.spike_map`);
and the adaptive integral of a study's sheets in units of 2π, per model.
"""

from __future__ import annotations

import math

import matplotlib.colors as mcolors
import matplotlib.pyplot as plt
import numpy as np

from curvlab.plotting.style import COLORS

__all__ = ["plot_curvature_spikes", "plot_spike_counts"]

_KEYS = ("x", "y", "K_abs", "sigma_max", "evaluated", "peak")


def plot_curvature_spikes(spikes: dict, *, title: str | None = None):
    """Three panels over the data domain: log₁₀|K|, log₁₀ σ_max (the larger singular value of
    the Jacobian) and the adaptive rule's evaluation points, the largest |K| of the grid marked
    in each.  ``spikes`` is :func:`~curvlab.measurement.adaptive_sheets.spike_map`'s dict.
    Returns ``(fig, axes)``.
    """
    missing = [k for k in _KEYS if k not in spikes]
    if missing:
        raise ValueError(f"spikes: expected spike_map's dict, missing {missing}")
    x, y = np.asarray(spikes["x"]), np.asarray(spikes["y"])
    K = np.asarray(spikes["K_abs"], dtype=float)
    if not np.isfinite(K).any():
        raise ValueError("spikes: no node of the grid lies in the domain")
    fig, axes = plt.subplots(1, 3, figsize=(12.6, 3.9), sharex=True, sharey=True)
    extent = (x[0], x[-1], y[0], y[-1])
    positive = K[np.isfinite(K) & (K > 0)]
    image = axes[0].imshow(
        K,
        origin="lower",
        extent=extent,
        cmap="magma",
        norm=mcolors.LogNorm(vmin=max(positive.min(), positive.max() * 1e-8), vmax=positive.max()),
        aspect="auto",
    )
    fig.colorbar(image, ax=axes[0], label="$|K|$ (log scale)")
    axes[0].set_title("$|K|$: a few narrow spikes")
    sigma = np.asarray(spikes["sigma_max"], dtype=float)
    image = axes[1].imshow(
        sigma,
        origin="lower",
        extent=extent,
        cmap="viridis",
        norm=mcolors.LogNorm(vmin=np.nanmin(sigma), vmax=np.nanmax(sigma)),
        aspect="auto",
    )
    fig.colorbar(image, ax=axes[1], label=r"$\sigma_{\max}(J)$ (log scale)")
    axes[1].set_title(r"$\sigma_{\max}$ collapses at the spikes")
    points = np.asarray(spikes["evaluated"])
    axes[2].scatter(points[:, 0], points[:, 1], s=0.3, color=COLORS["ungated"], alpha=0.4)
    axes[2].set_title(f"where the adaptive rule looked ({len(points):,} points)")
    for ax in axes:
        ax.plot(*spikes["peak"], marker="o", mfc="none", mec=COLORS["gated"], ms=12, mew=1.5)
        ax.set_xlabel("$x_1$")
    axes[0].set_ylabel("$x_2$")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig, axes


def plot_spike_counts(runs, *, ax=None):
    """∫|K| dA by the adaptive rule (``curvature_adaptive``) of every run that has it, divided
    by 2π (the area of a hemisphere of the Gauss sphere), one row of points per model, on a
    log scale.  ``runs``: records with ``model`` and ``curvature_adaptive`` (None or 0: left
    out).  Returns ``(fig, ax)``.

    >>> fig, ax = plot_spike_counts([{"model": "ungated", "curvature_adaptive": 2 * math.pi}])
    >>> [t.get_text() for t in ax.get_yticklabels()]
    ['ungated']
    >>> plt.close(fig)
    """
    kept = [r for r in runs if r.get("curvature_adaptive")]
    if not kept:
        raise ValueError("runs: no run carries curvature_adaptive")
    models = list(dict.fromkeys(r["model"] for r in kept))
    if ax is None:
        fig, ax = plt.subplots(figsize=(7, 0.6 + 0.7 * len(models)))
    else:
        fig = ax.figure
    for row, model in enumerate(models):
        values = [r["curvature_adaptive"] / (2 * math.pi) for r in kept if r["model"] == model]
        color = COLORS.get(model, COLORS["reference"])
        ax.scatter(values, [row] * len(values), s=10, alpha=0.5, color=color)
    ax.set_xscale("log")
    ax.set_yticks(range(len(models)), models)
    ax.set_xlabel("∫|K| dA / 2π (log scale)")
    fig.tight_layout()
    return fig, ax
