"""The depth study's figures (records of :mod:`curvlab.studies.depth`,
:mod:`~curvlab.studies.graph_law` and :mod:`~curvlab.studies.poole`).

- :func:`plot_poole_anchor`  Poole et al.'s anchor: scale-free and raw measures against depth.
- :func:`plot_structured_law`  the structured regime's ∫|K| dA against its closed-form law.
- :func:`plot_depth_study`  the attention stacks' curvature against depth, before and after
  training.
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np

from curvlab.plotting.inputs import check_records
from curvlab.plotting.style import COLORS, color_of

__all__ = [
    "plot_depth_study",
    "plot_poole_anchor",
    "plot_structured_law",
]


def _median_series(rows: list[Mapping], name: str, depths: list, **where) -> list[float]:
    chosen = [r for r in rows if all(r[k] == v for k, v in where.items())]
    return [float(np.median([r[name] for r in chosen if r["depth"] == d])) for d in depths]


def plot_poole_anchor(poole: object, *, titles: tuple[str, str] | None = None):
    """Poole et al.'s anchor: scale-free measures (left) and raw ones (right) against depth.

    ``poole`` are the records of :data:`curvlab.studies.poole.POOLE` (``phase``,
    ``depth``, ``grassmannian_length``, ``curvature_total_abs``, ``curve_curvature_mean``,
    ``curvature_mean_abs``); each line is the median over seeds, dashed ordered, solid
    chaotic; ``titles`` names the two panels. Returns ``(fig, axes)``.
    """
    keys = (
        "phase",
        "depth",
        "grassmannian_length",
        "curvature_total_abs",
        "curve_curvature_mean",
        "curvature_mean_abs",
    )
    rows = check_records("poole", poole, keys)
    depths = sorted({r["depth"] for r in rows})
    n_seeds = len({r.get("seed") for r in rows})
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    panels = (
        (axes[0], "grassmannian_length", "$L_G$", "curvature_total_abs", r"$\int|K|dA$"),
        (axes[1], "curve_curvature_mean", r"mean $\kappa$", "curvature_mean_abs", "mean $|K|$"),
    )
    for phase, style in (("ordered", "--"), ("chaotic", "-")):
        for ax, curve, curve_label, sheet, sheet_label in panels:
            series = (
                (curve, curve_label, "o", COLORS["reference"]),
                (sheet, sheet_label, "s", COLORS["ablation"]),
            )
            for name, label, marker, color in series:
                values = _median_series(rows, name, depths, phase=phase)
                ax.semilogy(
                    depths, values, style, marker=marker, color=color, label=f"{phase}: {label}"
                )
    for ax, panel_title in zip(axes, titles or (None, None), strict=True):
        if panel_title is not None:
            ax.set_title(panel_title)
    for ax in axes:
        ax.set_xlabel(r"depth $\ell$ (layers)")
        ax.legend(fontsize=8)
    axes[0].set_ylabel(f"scale-free measure (median of {n_seeds} seeds)")
    axes[1].set_ylabel(f"raw curvature (median of {n_seeds} seeds)")
    return fig, axes


def plot_structured_law(structured: object, *, title: str | None = None):
    """The exact structured regime: ∫|K| dA of the gated stacks against depth, with the 1/L tail.

    ``structured`` are the records of
    :func:`curvlab.studies.graph_law.structured_regime_study` (``seed``, ``gated``, ``depth``,
    ``curvature_total_abs``, ``tail_constant``); one line per seed (log–log), the tail
    constant / L dotted from L = 16 on, and the ungated stacks' maximum noted in words
    (they are flat, below the scale). Returns ``(fig, ax)``.
    """
    keys = ("seed", "gated", "depth", "curvature_total_abs", "tail_constant")
    rows = check_records("structured", structured, keys)
    seeds = list(dict.fromkeys(r["seed"] for r in rows))
    fig, ax = plt.subplots(figsize=(7, 4.4))
    for i, seed in enumerate(seeds):
        gated = sorted(
            (r for r in rows if r["seed"] == seed and r["gated"]), key=lambda r: r["depth"]
        )
        depths = [r["depth"] for r in gated]
        ax.loglog(
            depths,
            [r["curvature_total_abs"] for r in gated],
            "o-",
            color=COLORS["gated"],
            alpha=0.7,
            label=f"gated ({len(seeds)} seeds)" if i == 0 else None,
        )
        tail = [d for d in depths if d >= 16]
        ax.loglog(
            tail,
            [gated[0]["tail_constant"] / d for d in tail],
            ":",
            color=COLORS["reference"],
            label=r"$L^{-1}\int|\det\nabla^2\varphi|\,|\nabla\varphi|^{-3}dx$" if i == 0 else None,
        )
    flat = max(r["curvature_total_abs"] for r in rows if not r["gated"])
    ax.text(
        0.02,
        0.04,
        rf"ungated: $\int|K|dA \leq$ {flat:.0e} at every depth (flat)",
        transform=ax.transAxes,
        color=COLORS["ungated"],
        fontsize=9,
    )
    ax.set_xlabel("depth $L$ (tied layers)")
    ax.set_ylabel(r"$\int_P |K|\,dA$")
    if title is not None:
        ax.set_title(title)
    ax.legend(fontsize=8)
    return fig, ax


def plot_depth_study(
    records: object,
    *,
    regimes=("structured", "generic"),
    models=("ungated", "gated_headwise"),
    phases=("init", "trained"),
    title: str | None = None,
):
    """The attention depth study: ∫|K| dA against depth, one panel per (regime, phase).

    ``records`` are those of :data:`curvlab.studies.depth.DEPTH`; every run is a dot
    (ungated left of the depth, gated right), the median over seeds a line. Returns
    ``(fig, axes)`` with ``axes`` of shape (len(regimes), len(phases)).
    """
    keys = ("regime", "model", "phase", "depth", "curvature_total_abs")
    rows = check_records("records", records, keys)
    depths = sorted({r["depth"] for r in rows})
    fig, axes = plt.subplots(
        len(regimes), len(phases), figsize=(11, 7.5), sharex=True, squeeze=False
    )
    for i, regime in enumerate(regimes):
        for j, phase in enumerate(phases):
            ax = axes[i, j]
            for k, model in enumerate(models):
                chosen = [
                    r
                    for r in rows
                    if (r["regime"], r["model"], r["phase"]) == (regime, model, phase)
                ]
                shift = 0.94 if k == 0 else 1.06
                ax.scatter(
                    [r["depth"] * shift for r in chosen],
                    [r["curvature_total_abs"] for r in chosen],
                    color=color_of(model),
                    s=14,
                    alpha=0.5,
                )
                medians = _median_series(chosen, "curvature_total_abs", depths)
                ax.plot(depths, medians, "-", color=color_of(model), label=f"{model} (median)")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(f"{regime}, {phase}")
            ax.set_xticks(depths, [str(d) for d in depths])
            ax.legend(fontsize=8)
        axes[i, 0].set_ylabel(r"$\int_P|K|\,dA$ (log scale)")
    for ax in axes[-1]:
        ax.set_xlabel("depth $L$")
    fig.suptitle(
        "At initialisation curvature grows with depth; after training depth barely matters"
    )
    return fig, axes
