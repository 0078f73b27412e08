"""The language-model study's figures (:mod:`curvlab.studies.lm`): one number per run by
variant, and a per-layer measure by variant and layer.  Every seed is a dot, the mean over
seeds a larger mark with its 95% t interval (:func:`seed_interval`); variants keep the book's
colours (:func:`~curvlab.plotting.style.color_of`).

``runs`` are the study's run records (``runs.csv``): ``variant``, ``seed`` and the measure's
keys, a per-layer measure as ``<measure>_layer1`` … ``<measure>_layerL``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from scipy import stats

from curvlab.plotting.style import color_of

__all__ = ["LM_LABELS", "plot_lm_by_variant", "plot_lm_per_layer", "seed_interval"]

LM_LABELS: dict[str, str] = {
    "bits_per_character": "validation bits per character",
    "sink": "attention sink (mean weight on position 0)",
    "max_activation": "largest activation max |h|",
    "curvature_attention": "∫|K| dA, attention output sheet",
    "curvature_residual": "∫|K| dA, residual stream sheet",
}
"""The axis label of each measure the figures draw."""


def seed_interval(values: Sequence[float], *, alpha: float = 0.05) -> tuple[float, float, float]:
    """(mean, low, high): the mean of ``values`` and its 1 − ``alpha`` t interval over seeds.

    >>> mean, low, high = seed_interval([1.0, 2.0, 3.0])
    >>> mean, round(low, 4), round(high, 4)
    (2.0, -0.4841, 4.4841)
    """
    values = np.asarray(values, dtype=float)
    if values.ndim != 1 or values.size < 2 or not np.isfinite(values).all():
        raise ValueError(f"values: expected at least two finite numbers, got {values.tolist()!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha: expected a number in (0, 1), got {alpha!r}")
    mean = float(values.mean())
    half = stats.t.ppf(1 - alpha / 2, values.size - 1) * values.std(ddof=1) / math.sqrt(values.size)
    return mean, mean - float(half), mean + float(half)


def _variants(runs: Sequence[Mapping], variants) -> list[str]:
    found = list(dict.fromkeys(r["variant"] for r in runs))
    if variants is None:
        return found
    missing = [v for v in variants if v not in found]
    if missing:
        raise ValueError(f"variants: {missing} have no run")
    return list(variants)


def _values(runs: Sequence[Mapping], variant: str, key: str) -> list[float]:
    values = [float(r[key]) for r in runs if r["variant"] == variant and r.get(key) is not None]
    if len(values) < 2:
        raise ValueError(f"runs: {key} needs at least two seeds of {variant}, got {len(values)}")
    return values


def _axes(ax, size):
    if ax is None:
        fig, ax = plt.subplots(figsize=size)
    return ax.figure, ax


def plot_lm_by_variant(runs, measure: str = "bits_per_character", *, variants=None, ax=None):
    """One column per variant: each run's ``measure`` (a dot), the mean over seeds with its
    95% t interval.  Returns ``(fig, ax)``.

    >>> runs = [{"variant": v, "seed": s, "bits_per_character": 2.0 + s / 10 + (v == "b")}
    ...         for v in "ab" for s in range(3)]
    >>> fig, ax = plot_lm_by_variant(runs)
    >>> [t.get_text() for t in ax.get_xticklabels()]
    ['a', 'b']
    >>> plt.close(fig)
    """
    runs = list(runs)
    names = _variants(runs, variants)
    fig, ax = _axes(ax, (1.2 + 1.3 * len(names), 3.6))
    for column, variant in enumerate(names):
        values = _values(runs, variant, measure)
        color = color_of(variant)
        ax.scatter([column] * len(values), values, s=14, alpha=0.5, color=color)
        mean, low, high = seed_interval(values)
        ax.errorbar(
            column + 0.2, mean, yerr=[[mean - low], [high - mean]], fmt="o", color=color, capsize=4
        )
    ax.set_xticks(range(len(names)), names, rotation=15)
    ax.set_xlim(-0.5, len(names) - 0.3)
    ax.set_ylabel(LM_LABELS.get(measure, measure))
    fig.tight_layout()
    return fig, ax


def plot_lm_per_layer(runs, measure: str, *, variants=None, log: bool = False, ax=None):
    """``measure`` against the layer (keys ``<measure>_layer1`` …), one line of seed means per
    variant with its 95% t intervals, every run a dot; ``log`` for a log scale.  Returns
    ``(fig, ax)``.

    >>> runs = [{"variant": "a", "seed": s, "sink_layer1": 0.1 * s, "sink_layer2": 0.2}
    ...         for s in range(3)]
    >>> fig, ax = plot_lm_per_layer(runs, "sink")
    >>> [t.get_text() for t in ax.get_xticklabels()]
    ['1', '2']
    >>> plt.close(fig)
    """
    runs = list(runs)
    names = _variants(runs, variants)
    depth = 0
    while runs and f"{measure}_layer{depth + 1}" in runs[0]:
        depth += 1
    if depth == 0:
        raise ValueError(f"measure: the runs have no key {measure}_layer1")
    fig, ax = _axes(ax, (6.4, 3.8))
    width = 0.5 / max(len(names), 1)
    for n, variant in enumerate(names):
        color = color_of(variant)
        x = np.arange(1, depth + 1) + (n - (len(names) - 1) / 2) * width
        means = []
        for layer in range(depth):
            values = _values(runs, variant, f"{measure}_layer{layer + 1}")
            mean, low, high = seed_interval(values)
            means.append(mean)
            ax.scatter([x[layer]] * len(values), values, s=8, alpha=0.35, color=color)
            ax.errorbar(x[layer], mean, yerr=[[mean - low], [high - mean]], color=color, capsize=3)
        ax.plot(x, means, marker="o", color=color, label=variant)
    ax.set_xticks(range(1, depth + 1), [str(layer) for layer in range(1, depth + 1)])
    ax.set_xlabel("layer")
    ax.set_ylabel(LM_LABELS.get(measure, measure))
    if log:
        ax.set_yscale("log")
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig, ax
