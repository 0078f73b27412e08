"""The book's look: one palette, one curvature colormap, one set of rcParams.

- :data:`COLORS`  the book-wide categorical colours (Okabe–Ito, colour-blind safe): ungated
  attention is always blue, gated attention always vermillion, ablations green, references black.
- :data:`CURVATURE_CMAP`  the diverging colormap for curvature (ColorBrewer ``RdBu`` reversed,
  colour-blind safe): K > 0 red, K < 0 blue, K = 0 white.
- :func:`use_book_style` / :data:`BOOK_STYLE`  the rcParams every figure is drawn with.
- :func:`color_of`  the colour of a model name ("gated_headwise", "ungated", ...).
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib as mpl

__all__ = [
    "BOOK_STYLE",
    "COLORS",
    "CURVATURE_CMAP",
    "color_of",
    "use_book_style",
]


COLORS: dict[str, str] = {
    "ungated": "#0072B2",
    "gated": "#D55E00",
    "gated_headwise": "#D55E00",
    "gated_elementwise": "#CC79A7",
    "ablation": "#009E73",
    "reference": "#000000",
}
"""Book-wide colours (Okabe–Ito): the same model variant has the same colour in every figure."""

CURVATURE_CMAP: str = "RdBu_r"
"""Diverging, colour-blind-safe colormap for curvature: red K > 0, white K = 0, blue K < 0."""

BOOK_STYLE: dict[str, object] = {
    "figure.figsize": (6.4, 4.4),
    "figure.dpi": 100,
    "savefig.dpi": 150,
    "savefig.bbox": "tight",
    "font.size": 11,
    "axes.titlesize": 12,
    "axes.titleweight": "bold",
    "axes.labelsize": 11,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.frameon": False,
    "image.cmap": CURVATURE_CMAP,
    "axes.prop_cycle": mpl.cycler(
        color=[
            COLORS["ungated"],
            COLORS["gated"],
            COLORS["ablation"],
            COLORS["gated_elementwise"],
            COLORS["reference"],
        ]
    ),
}
"""rcParams shared by every figure: light grid, no top/right spines, the book's colour cycle."""


def use_book_style(overrides: Mapping[str, object] | None = None) -> None:
    """Apply :data:`BOOK_STYLE` (plus ``overrides``) to matplotlib's rcParams.

    Returns nothing, so a cell ending in this call prints no output. The default colour cycle
    starts with the ungated then the gated colour, so a plain ``ax.plot`` of "ungated, gated"
    already follows :data:`COLORS`.

    >>> use_book_style({"font.size": 10})
    >>> mpl.rcParams["font.size"]
    10.0
    >>> mpl.rcParams["axes.prop_cycle"].by_key()["color"][0] == COLORS["ungated"]
    True
    """
    settings = dict(BOOK_STYLE)
    if overrides is not None:
        if not isinstance(overrides, Mapping):
            raise TypeError(
                f"overrides must be a mapping of rcParams names to values, got {type(overrides)}"
            )
        settings.update(overrides)
    mpl.rcParams.update(settings)


def color_of(label: str, default: str = COLORS["reference"]) -> str:
    """The book colour of a model name ("gated_headwise", "ungated", ...), else ``default``."""
    if label in COLORS:
        return COLORS[label]
    if label.startswith("gated"):
        return COLORS["gated"]
    if label.startswith("ungated"):
        return COLORS["ungated"]
    if "ablation" in label or "additive" in label:
        return COLORS["ablation"]
    return default
