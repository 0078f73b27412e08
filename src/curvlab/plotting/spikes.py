"""Where a trained sheet's ∫|K| dA lives: its spikes, the Jacobian's collapse, and the points
the adaptive rule spent its evaluations on (:func:`curvlab.models.adaptive_sheets.spike_map`).
"""

from __future__ import annotations

import matplotlib.colors as mcolors
import matplotlib.pyplot as plt
import numpy as np

from curvlab.plotting.style import COLORS

__all__ = ["plot_curvature_spikes"]

_KEYS = ("x", "y", "K_abs", "sigma_max", "evaluated", "peak")


def plot_curvature_spikes(spikes: dict, *, title: str | None = None):
    """Three panels over the data domain: log₁₀|K|, log₁₀ σ_max (the larger singular value of
    the Jacobian) and the adaptive rule's evaluation points, the largest |K| of the grid marked
    in each.  ``spikes`` is :func:`~curvlab.models.adaptive_sheets.spike_map`'s dict.
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
