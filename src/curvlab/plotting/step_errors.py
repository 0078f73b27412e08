"""The error of a finite-difference estimate against its step h: :func:`plot_step_errors`."""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np

from curvlab.plotting.inputs import as_float_array
from curvlab.plotting.style import COLORS

__all__ = [
    "plot_step_errors",
]


def plot_step_errors(
    steps: object,
    errors: Mapping[str, object],
    *,
    guides: Mapping[str, object] | None = None,
    best: Mapping[str, float] | None = None,
    ax: object | None = None,
    title: str | None = None,
    ylabel: str = "relative error",
):
    """Error of a finite-difference estimate against its step h, log–log, one line per precision.

    ``errors`` maps a label ("float64", "float32") to errors on ``steps`` (NaN where the
    estimate failed: a gap in the line); ``guides`` maps a legend label to reference values on
    ``steps`` (dashed, e.g. a truncation ∝ h² and a round-off ∝ ε/h² line); ``best`` marks a
    step per label with a vertical line. float64 is drawn in the ungated colour, float32 in the
    gated colour. Returns ``(fig, ax)``.

    >>> h = np.logspace(-6, -1, 6)
    >>> fig, ax = plot_step_errors(h, {"float64": h**2 + 1e-16 / h**2}, best={"float64": 1e-4})
    >>> ax.get_xscale(), len(ax.lines)
    ('log', 2)
    >>> plt.close(fig)
    """
    h = as_float_array("steps", steps).ravel()
    if h.size < 2 or not np.all(h > 0):
        raise ValueError("steps must hold at least two positive step sizes")
    if not isinstance(errors, Mapping) or not errors:
        raise TypeError("errors must be a nonempty mapping of labels to errors on the steps")
    if ax is None:
        fig, ax = plt.subplots()
    else:
        fig = ax.figure
    palette = {"float64": COLORS["ungated"], "float32": COLORS["gated"]}
    markers = {"float64": "o-", "float32": "s-"}
    for label, values in errors.items():
        array = as_float_array(f"errors[{label!r}]", values).ravel()
        if array.shape != h.shape:
            raise ValueError(f"errors[{label!r}] must have one value per step ({h.size})")
        color = palette.get(label, COLORS["ablation"])
        ax.loglog(h, array, markers.get(label, "^-"), color=color, label=label)
        if best is not None and label in best:
            ax.axvline(best[label], color=color, lw=0.8, alpha=0.6)
    for style, (label, values) in zip(("--", ":", "-."), (guides or {}).items(), strict=False):
        array = as_float_array(f"guides[{label!r}]", values).ravel()
        ax.loglog(h, array, style, color=COLORS["reference"], lw=1, label=label)
    ax.set_xlabel("step $h$")
    ax.set_ylabel(ylabel)
    ax.legend(loc="lower right", fontsize=9)
    if title is not None:
        ax.set_title(title)
    return fig, ax
