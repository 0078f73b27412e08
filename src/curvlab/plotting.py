"""Figures for the book: one palette, one style, curvature shown the same way everywhere.

- :data:`COLORS`  the book-wide categorical colours (Okabe–Ito, colour-blind safe): ungated
  attention is always blue, gated attention always vermillion, ablations green, references black.
- :data:`CURVATURE_CMAP`  the diverging colormap for curvature (ColorBrewer ``RdBu`` reversed,
  colour-blind safe): K > 0 red, K < 0 blue, K = 0 white.
- :func:`curvature_norm`  a colour normalisation symmetric about K = 0, so white always means flat.
- :func:`use_book_style` / :data:`BOOK_STYLE`  the rcParams every figure is drawn with.
- :func:`plot_curvature_surface`  a 3-D surface coloured by its curvature, with a labelled colorbar.
- :func:`plot_curvature_map`  the same curvature as a flat map over the chart, K = 0 contour drawn.
- :class:`CheckTable`  a chapter's checks in one table (claim, measured, rule, outcome).
- Part II: :func:`plot_forest` (effects with CIs), :func:`plot_curvature_accuracy` with
  :func:`linear_fit_band` (a fit and its confidence band), :func:`plot_decision_boundaries`
  (several classifiers side by side), :func:`plot_loss_curves`, and the depth study's
  :func:`plot_poole_anchor`, :func:`plot_structured_law`, :func:`plot_depth_study`; and
  :func:`plot_step_errors` (a finite-difference error against its step).

Inputs may be NumPy arrays, nested lists or (detached or not) PyTorch tensors; they are converted
to float64 NumPy arrays. Every function returns the matplotlib objects it made and never calls
``plt.show()``, so chapters and tests decide what to do with the figure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import matplotlib as mpl
import matplotlib.colors as mcolors
import matplotlib.pyplot as plt
import numpy as np

__all__ = [
    "BOOK_STYLE",
    "COLORS",
    "CURVATURE_CMAP",
    "CheckTable",
    "curvature_norm",
    "linear_fit_band",
    "plot_curvature_accuracy",
    "plot_curvature_map",
    "plot_curvature_surface",
    "plot_decision_boundaries",
    "plot_depth_study",
    "plot_forest",
    "plot_loss_curves",
    "plot_poole_anchor",
    "plot_step_errors",
    "plot_structured_law",
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


def _as_float_array(name: str, value: object) -> np.ndarray:
    """``value`` as a float64 NumPy array (tensors are detached and moved to the CPU)."""
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{name} must be an array of real numbers, got {type(value)}") from error
    return array


def _finite_grid(name: str, value: object, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """``value`` as a finite 2-D float64 array, of ``shape`` when given."""
    array = _as_float_array(name, value)
    if array.ndim != 2:
        raise ValueError(f"{name} must be a 2-D grid, got an array of shape {array.shape}")
    if shape is not None and array.shape != shape:
        raise ValueError(f"{name} must have the grid's shape {shape}, got {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must contain only finite numbers (found NaN or inf)")
    return array


def curvature_norm(values: object, halfrange: float | None = None) -> mcolors.Normalize:
    """A colour normalisation centred at K = 0 and symmetric: ``[-h, h]`` with ``h = max|K|``.

    Symmetry makes white mean flat and equal saturation mean equal ``|K|`` on both sides. When
    every value is 0 (a flat surface) ``h`` is 1, so the surface is drawn white, not undefined.
    Pass ``halfrange`` to fix the scale (e.g. to compare several panels or animation frames).

    >>> norm = curvature_norm([-0.5, 0.0, 2.0])
    >>> float(norm.vmin), float(norm.vmax), float(norm(0.0))
    (-2.0, 2.0, 0.5)
    >>> float(curvature_norm([0.0, 0.0]).vmax)
    1.0
    """
    if halfrange is None:
        array = _as_float_array("values", values)
        if array.size == 0:
            raise ValueError("values must contain at least one curvature value")
        if not np.all(np.isfinite(array)):
            raise ValueError("values must contain only finite numbers (found NaN or inf)")
        peak = float(np.max(np.abs(array)))
        halfrange = peak if peak > 0.0 else 1.0
    elif not (isinstance(halfrange, int | float) and math.isfinite(halfrange) and halfrange > 0):
        raise ValueError(f"halfrange must be a positive finite number, got {halfrange!r}")
    return mcolors.Normalize(vmin=-float(halfrange), vmax=float(halfrange))


def plot_curvature_surface(
    x: object,
    y: object,
    z: object,
    curvature: object,
    *,
    ax: object | None = None,
    title: str | None = None,
    colorbar_label: str = "Gaussian curvature $K$",
    axis_labels: tuple[str, str, str] = ("$y_1$", "$y_2$", "$y_3$"),
    halfrange: float | None = None,
    colorbar: bool = True,
):
    """Draw the surface ``(x, y, z)`` (2-D grids) coloured by ``curvature`` on the same grid.

    Colours use :data:`CURVATURE_CMAP` with :func:`curvature_norm` (centred at 0, symmetric),
    and a colorbar labelled ``colorbar_label`` is attached unless ``colorbar=False``.
    Returns ``(fig, ax, mappable)``; pass ``ax`` (a 3-D axes) to draw into an existing figure.

    >>> u, v = np.meshgrid(np.linspace(-1, 1, 9), np.linspace(-1, 1, 9))
    >>> fig, ax, mappable = plot_curvature_surface(u, v, u**2 + v**2, 4 / (1 + 4*(u**2 + v**2))**2)
    >>> ax.name, mappable.norm.vmin == -mappable.norm.vmax
    ('3d', True)
    >>> plt.close(fig)
    """
    x_grid = _finite_grid("x", x)
    y_grid = _finite_grid("y", y, x_grid.shape)
    z_grid = _finite_grid("z", z, x_grid.shape)
    k_grid = _finite_grid("curvature", curvature, x_grid.shape)
    norm = curvature_norm(k_grid, halfrange)
    cmap = mpl.colormaps[CURVATURE_CMAP]
    if ax is None:
        fig = plt.figure(figsize=(6.4, 4.8))
        ax = fig.add_subplot(projection="3d")
    else:
        if getattr(ax, "name", None) != "3d":
            raise ValueError("ax must be a 3-D axes (add_subplot(projection='3d'))")
        fig = ax.figure
    ax.plot_surface(
        x_grid,
        y_grid,
        z_grid,
        facecolors=cmap(norm(k_grid)),
        rstride=1,
        cstride=1,
        linewidth=0.2,
        edgecolor=(0.3, 0.3, 0.3, 0.25),
        antialiased=True,
        shade=False,
    )
    for axis, label in zip((ax.xaxis, ax.yaxis, ax.zaxis), axis_labels, strict=True):
        axis.set_major_locator(mpl.ticker.MaxNLocator(4))  # few ticks: labels do not collide
        axis.set_label_text(label)
    ax.tick_params(labelsize=8)
    if title is not None:
        ax.set_title(title)
    mappable = mpl.cm.ScalarMappable(norm=norm, cmap=cmap)
    mappable.set_array(k_grid)
    if colorbar:
        fig.colorbar(mappable, ax=ax, shrink=0.7, pad=0.1, label=colorbar_label)
    return fig, ax, mappable


def plot_curvature_map(
    u: object,
    v: object,
    curvature: object,
    *,
    ax: object | None = None,
    title: str | None = None,
    colorbar_label: str = "Gaussian curvature $K$",
    axis_labels: tuple[str, str] = ("$u$", "$v$"),
    halfrange: float | None = None,
    zero_contour: bool = True,
    colorbar: bool = True,
):
    """Draw ``curvature`` over the chart grid ``(u, v)`` as a coloured map, K = 0 contour in black.

    Same colormap and centred normalisation as :func:`plot_curvature_surface`, so the sign of K
    reads the same in both. The zero contour is drawn only where K changes sign on the grid by
    more than rounding (|K| > 1e-9 on both sides), so a flat surface shows no contour.
    Returns ``(fig, ax, mappable)``.

    >>> u, v = np.meshgrid(np.linspace(-1, 1, 11), np.linspace(-1, 1, 11))
    >>> fig, ax, mesh = plot_curvature_map(u, v, u * v)
    >>> float(mesh.norm.vmax), ax.get_xlabel()
    (1.0, '$u$')
    >>> plt.close(fig)
    """
    u_grid = _finite_grid("u", u)
    v_grid = _finite_grid("v", v, u_grid.shape)
    k_grid = _finite_grid("curvature", curvature, u_grid.shape)
    norm = curvature_norm(k_grid, halfrange)
    if ax is None:
        fig, ax = plt.subplots(figsize=(5.6, 4.4))
    else:
        fig = ax.figure
    mesh = ax.pcolormesh(u_grid, v_grid, k_grid, cmap=CURVATURE_CMAP, norm=norm, shading="auto")
    # Only where K really changes sign: rounding noise around a flat surface draws no contour.
    noise = 1e-9 * max(1.0, norm.vmax)
    if zero_contour and k_grid.min() < -noise and k_grid.max() > noise:
        ax.contour(u_grid, v_grid, k_grid, levels=[0.0], colors=COLORS["reference"], linewidths=1)
    ax.set_xlabel(axis_labels[0])
    ax.set_ylabel(axis_labels[1])
    ax.set_aspect("equal", adjustable="box")
    ax.grid(False)
    if title is not None:
        ax.set_title(title)
    if colorbar:
        fig.colorbar(mesh, ax=ax, label=colorbar_label)
    return fig, ax, mesh


# ---------------------------------------------------------------------------------------------
# one table of checks per chapter


class CheckTable:
    """A chapter's checks as one table: what is claimed, what was measured, the rule, the outcome.

    Each method records one check and raises AssertionError at once when it fails (so the
    build stops at the cell whose claim is false); the rule column is written from the same
    comparison that decides the outcome, so the two cannot disagree. Displayed in a notebook
    the table renders as HTML, one row per check; ``str(table)`` gives plain text.

    >>> checks = CheckTable("Checks")
    >>> checks.below("round-off of K on the sphere", 3e-15, 1e-13)
    >>> checks.between("best step", 1.2e-4, 1e-5, 1e-3)
    >>> checks.holds("every ReLU value is exactly 0", True, "2000 of 2000")
    >>> len(checks), checks.rows[0]["rule"]
    (3, '< 1e-13')
    >>> checks.above("speed-up", 3.0, 20)
    Traceback (most recent call last):
    ...
    AssertionError: check failed: speed-up: 3 is not > 20
    """

    def __init__(self, title: str | None = None):
        self.title = title
        self.rows: list[dict[str, str]] = []

    def __len__(self) -> int:
        return len(self.rows)

    @staticmethod
    def _number(value: object) -> float:
        if hasattr(value, "item"):
            value = value.item()
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f"value must be a real number, got {type(value)}")
        return float(value)

    def _record(self, claim: str, measured: str, rule: str, passed: bool, failure: str) -> None:
        if not isinstance(claim, str) or not claim:
            raise TypeError(f"claim must be a nonempty string, got {claim!r}")
        self.rows.append(
            {"claim": claim, "measured": measured, "rule": rule, "outcome": "✓" if passed else "✗"}
        )
        if not passed:
            raise AssertionError(f"check failed: {claim}: {failure}")

    def below(self, claim: str, value: object, bound: float) -> None:
        """Check ``value < bound``."""
        value = self._number(value)
        self._record(
            claim,
            f"{value:.3g}",
            f"< {bound:.3g}",
            value < bound,
            f"{value:.3g} is not < {bound:.3g}",
        )

    def above(self, claim: str, value: object, bound: float) -> None:
        """Check ``value > bound``."""
        value = self._number(value)
        self._record(
            claim,
            f"{value:.3g}",
            f"> {bound:.3g}",
            value > bound,
            f"{value:.3g} is not > {bound:.3g}",
        )

    def between(self, claim: str, value: object, low: float, high: float) -> None:
        """Check ``low <= value <= high``."""
        value = self._number(value)
        inside = low <= value <= high
        self._record(
            claim,
            f"{value:.3g}",
            f"in [{low:.3g}, {high:.3g}]",
            inside,
            f"{value:.3g} is outside [{low:.3g}, {high:.3g}]",
        )

    def holds(self, claim: str, condition: object, measured: str = "") -> None:
        """Check that ``condition`` is true (a bool or a one-element tensor/array of bools)."""
        if hasattr(condition, "item"):
            condition = condition.item()
        if not isinstance(condition, bool | np.bool_):
            raise TypeError(f"condition must be a bool, got {type(condition)}")
        self._record(claim, measured, "holds", bool(condition), f"does not hold ({measured})")

    def __str__(self) -> str:
        header = ("claim", "measured", "rule", "outcome")
        widths = [max([len(h)] + [len(r[h]) for r in self.rows]) for h in header]
        lines = [self.title] if self.title else []
        lines.append("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
        for row in self.rows:
            lines.append("  ".join(row[h].ljust(w) for h, w in zip(header, widths, strict=True)))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        import html

        cells = "".join(
            "<tr>"
            + "".join(f"<td>{html.escape(row[h])}</td>" for h in ("claim", "measured", "rule"))
            + f"<td style='text-align:center'>{row['outcome']}</td></tr>"
            for row in self.rows
        )
        caption = f"<caption>{html.escape(self.title)}</caption>" if self.title else ""
        head = "".join(f"<th>{h}</th>" for h in ("claim", "measured", "rule", "outcome"))
        return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{cells}</tbody></table>"


# ---------------------------------------------------------------------------------------------
# Part II figures


def _color_of(label: str, default: str = COLORS["reference"]) -> str:
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


def _records(name: str, records: object, keys: tuple[str, ...]) -> list[Mapping]:
    if isinstance(records, Mapping) or not hasattr(records, "__iter__"):
        raise TypeError(f"{name} must be a sequence of records (dicts), got {type(records)}")
    rows = list(records)
    if not rows:
        raise ValueError(f"{name} must contain at least one record")
    for row in rows:
        if not isinstance(row, Mapping):
            raise TypeError(f"{name} must contain dicts, got {type(row)}")
        missing = [k for k in keys if k not in row]
        if missing:
            raise ValueError(f"{name}: a record lacks {missing} (has {sorted(row)})")
    return rows


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
    rows = _records("effects", effects, ("effect", "ci_low", "ci_high", label))
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

    xs, ys = _as_float_array("x", x).ravel(), _as_float_array("y", y).ravel()
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
    x0 = np.linspace(xs.min(), xs.max(), 100) if grid is None else _as_float_array("grid", grid)
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
    rows = _records("runs", runs, (x, y, group))
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
        ax.scatter(xs[mask], ys[mask], s=16, alpha=0.6, color=_color_of(name), label=name)
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
    xy = _as_float_array("points", points)
    if xy.ndim != 2 or xy.shape[1] != 2:
        raise ValueError(f"points must have shape (n, 2), got {xy.shape}")
    classes = _as_float_array("labels", labels).ravel()
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
            ax.contour(gx, gy, prob, levels=[0.5], colors=_color_of(name), linewidths=2)
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
        array = _as_float_array(f"histories[{name!r}]", [list(c) for c in curves])
        if array.ndim != 2 or array.shape[1] == 0:
            raise ValueError(f"histories[{name!r}] must be equal-length loss curves, one per run")
        if not np.all(np.isfinite(array)) or array.min() <= 0:
            raise ValueError(f"histories[{name!r}] must hold finite positive losses")
        epochs = np.arange(1, array.shape[1] + 1)
        color = _color_of(name)
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


# ---------------------------------------------------------------------------------------------
# the depth study (records of curvlab.experiments.depth)


def _median_series(rows: list[Mapping], name: str, depths: list, **where) -> list[float]:
    chosen = [r for r in rows if all(r[k] == v for k, v in where.items())]
    return [float(np.median([r[name] for r in chosen if r["depth"] == d])) for d in depths]


def plot_poole_anchor(poole: object, *, titles: tuple[str, str] | None = None):
    """Poole et al.'s anchor: scale-free measures (left) and raw ones (right) against depth.

    ``poole`` are the records of :func:`curvlab.experiments.depth.poole_study` (``phase``,
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
    rows = _records("poole", poole, keys)
    depths = sorted({r["depth"] for r in rows})
    n_seeds = len({r.get("seed") for r in rows})
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    panels = (
        (axes[0], "grassmannian_length", "$L_G$", "curvature_total_abs", r"$\int|K|dA$"),
        (axes[1], "curve_curvature_mean", r"mean $\kappa$", "curvature_mean_abs", "mean $|K|$"),
    )
    for phase, style in (("ordered", "--"), ("chaotic", "-")):
        for ax, curve, curve_label, sheet, sheet_label in panels:
            ax.semilogy(
                depths,
                _median_series(rows, curve, depths, phase=phase),
                style,
                marker="o",
                color=COLORS["reference"],
                label=f"{phase}: {curve_label}",
            )
            ax.semilogy(
                depths,
                _median_series(rows, sheet, depths, phase=phase),
                style,
                marker="s",
                color=COLORS["ablation"],
                label=f"{phase}: {sheet_label}",
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
    :func:`curvlab.experiments.depth.structured_regime_study` (``seed``, ``gated``, ``depth``,
    ``curvature_total_abs``, ``tail_constant``); one line per seed (log–log), the tail
    constant / L dotted from L = 16 on, and the ungated stacks' maximum noted in words
    (they are flat, below the scale). Returns ``(fig, ax)``.
    """
    keys = ("seed", "gated", "depth", "curvature_total_abs", "tail_constant")
    rows = _records("structured", structured, keys)
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

    ``records`` are those of :func:`curvlab.experiments.depth.depth_study`; every run is a dot
    (ungated left of the depth, gated right), the median over seeds a line. Returns
    ``(fig, axes)`` with ``axes`` of shape (len(regimes), len(phases)).
    """
    keys = ("regime", "model", "phase", "depth", "curvature_total_abs")
    rows = _records("records", records, keys)
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
                    color=_color_of(model),
                    s=14,
                    alpha=0.5,
                )
                medians = _median_series(chosen, "curvature_total_abs", depths)
                ax.plot(depths, medians, "-", color=_color_of(model), label=f"{model} (median)")
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
    h = _as_float_array("steps", steps).ravel()
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
        array = _as_float_array(f"errors[{label!r}]", values).ravel()
        if array.shape != h.shape:
            raise ValueError(f"errors[{label!r}] must have one value per step ({h.size})")
        color = palette.get(label, COLORS["ablation"])
        ax.loglog(h, array, markers.get(label, "^-"), color=color, label=label)
        if best is not None and label in best:
            ax.axvline(best[label], color=color, lw=0.8, alpha=0.6)
    for style, (label, values) in zip(("--", ":", "-."), (guides or {}).items(), strict=False):
        array = _as_float_array(f"guides[{label!r}]", values).ravel()
        ax.loglog(h, array, style, color=COLORS["reference"], lw=1, label=label)
    ax.set_xlabel("step $h$")
    ax.set_ylabel(ylabel)
    ax.legend(loc="lower right", fontsize=9)
    if title is not None:
        ax.set_title(title)
    return fig, ax
