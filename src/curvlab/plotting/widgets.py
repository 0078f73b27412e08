"""Interactive explorers: move a gate's parameters, watch the attention surface bend.

The surface explored is one attention head read as a map of a 2-D input ``x``::

    y(x) = gamma(x) * sum_i alpha_i(x) U_i,  alpha = softmax(beta * K x),  gamma = sigmoid(w.x + b)

with three fixed keys ``K`` (unit vectors at 90, 210 and 330 degrees), temperature ``beta`` and
three fixed values ``U_i = (cos t_i, sin t_i, 1)`` on the plane ``y_3 = 1``. Ungated
(``gamma = 1``) the image lies in that plane: Gaussian curvature ``K = 0`` everywhere, whatever
the parameters. With the headwise gate the plane is rescaled point by point and bends, unless
the gate is constant (``w = 0``), which only rescales the plane and leaves it flat. This is the
book's own illustration of the paper's claim, not a construction taken from the paper.

- :class:`GateSettings`            the explored head's settings (gate ``w``, ``b``, gated or not,
                                    ``beta``), checked once; every function below takes them
                                    as ``gate_weight, gate_bias, *, gated, temperature``.
- :func:`gated_attention_map`       the map ``y`` for given gate parameters (torch, one point):
                                    these keys and values bound to
                                    :func:`curvlab.models.attention.gated_attention_point_map`.
- :func:`attention_surface`         the surface on a grid and its Gaussian curvature
                                    (computed by :func:`curvlab.curvature.gaussian_curvature`).
- :func:`plot_attention_surface`    the surface coloured by curvature, next to the curvature map.
- :func:`gate_explorer`             ipywidgets sliders for ``w``, ``b``, ``beta`` and the gate;
                                    they redraw in a running kernel; the initial view is static.
- :func:`gate_animation`            the same sweep as a kernel-free HTML/JavaScript animation with
                                    a slider (matplotlib ``to_jshtml``), for the static site.
"""

from __future__ import annotations

import functools
import io
import math
import re
from dataclasses import dataclass, field

import matplotlib.pyplot as plt
import numpy as np
import torch

from curvlab import arguments
from curvlab.models.attention import gated_attention_point_map
from curvlab.plotting import COLORS, plot_curvature_map, plot_curvature_surface

__all__ = [
    "AttentionSurface",
    "GateSettings",
    "attention_surface",
    "gate_animation",
    "gate_explorer",
    "gated_attention_map",
    "plot_attention_surface",
]

_KEY_ANGLES = (math.pi / 2, math.pi / 2 + 2 * math.pi / 3, math.pi / 2 + 4 * math.pi / 3)
_VALUE_ANGLES = (0.0, 2 * math.pi / 3, 4 * math.pi / 3)


def _real_number(name: str, value: object) -> float:
    if not arguments.is_number(value, (int, float, np.floating, np.integer)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    if not math.isfinite(float(value)):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return float(value)


def _gate_weight(value: object) -> tuple[float, float]:
    try:
        first, second = value  # type: ignore[misc]
    except (TypeError, ValueError) as error:
        raise ValueError(f"gate_weight must be a pair of real numbers, got {value!r}") from error
    return _real_number("gate_weight[0]", first), _real_number("gate_weight[1]", second)


@dataclass(frozen=True)
class GateSettings:
    """The explored head's settings, checked when made (each error names its argument).

    ``gate_weight`` (w₁, w₂) and ``gate_bias`` b of the gate γ = sigmoid(w·x + b), ``gated``
    (False: γ = 1) and the softmax ``temperature`` β > 0.  The functions of this module accept
    the same arguments, in the same order, and build one of these from them.

    >>> GateSettings((1, 2), gated=False)
    GateSettings(gate_weight=(1.0, 2.0), gate_bias=0.0, gated=False, temperature=1.0)
    """

    gate_weight: tuple[float, float] = (1.5, 0.0)
    gate_bias: float = 0.0
    gated: bool = field(default=True, kw_only=True)
    temperature: float = field(default=1.0, kw_only=True)

    def __post_init__(self):
        object.__setattr__(self, "gate_weight", _gate_weight(self.gate_weight))
        object.__setattr__(self, "gate_bias", _real_number("gate_bias", self.gate_bias))
        beta = _real_number("temperature", self.temperature)
        if beta <= 0:
            raise ValueError(f"temperature must be positive, got {self.temperature!r}")
        object.__setattr__(self, "temperature", beta)
        if not isinstance(self.gated, bool):
            raise TypeError(f"gated must be True or False, got {type(self.gated).__name__}")

    def attention_map(self):
        """The map ``x -> y(x)`` of these settings (see :func:`gated_attention_map`)."""
        keys = torch.tensor([[math.cos(t), math.sin(t)] for t in _KEY_ANGLES], dtype=torch.float64)
        values = torch.tensor(
            [[math.cos(t), math.sin(t), 1.0] for t in _VALUE_ANGLES], dtype=torch.float64
        )  # (3 values, 3 coordinates)
        head = functools.partial(
            gated_attention_point_map, keys=keys, values=values, beta=self.temperature
        )
        if not self.gated:
            return functools.partial(head, gate="none")
        return functools.partial(
            head,
            gate="headwise",  # one head: one scalar gate for the whole read-out
            gate_weight=torch.tensor(self.gate_weight, dtype=torch.float64),
            gate_bias=torch.tensor(self.gate_bias, dtype=torch.float64),
        )


def gated_attention_map(*gate, **gate_keywords):
    """The attention map ``x -> y(x)`` of the module docstring, for one point ``x`` of shape (2,).

    ``gate`` and ``gate_keywords`` are the :class:`GateSettings` (``gate_weight=(1.5, 0.0)``,
    ``gate_bias=0.0``, ``*``, ``gated=True``, ``temperature=1.0``).
    ``y = gamma(x) * sum_i softmax(temperature * K x)_i U_i`` with
    ``gamma = sigmoid(gate_weight . x + gate_bias)`` when ``gated``, ``gamma = 1`` otherwise.
    Returns a function of a float64 tensor of shape (2,) giving a tensor of shape (3,).

    >>> f = gated_attention_map(gated=False)
    >>> y = f(torch.zeros(2, dtype=torch.float64))
    >>> [round(float(c), 6) + 0.0 for c in y]  # equal weights: the centroid of the values
    [0.0, 0.0, 1.0]
    >>> g = gated_attention_map((1.0, 0.0), 0.0)
    >>> float(g(torch.zeros(2, dtype=torch.float64))[2])   # sigmoid(0) = 1/2
    0.5
    """
    return GateSettings(*gate, **gate_keywords).attention_map()


@dataclass(frozen=True)
class AttentionSurface:
    """A sampled surface: chart grid ``u, v`` (n, n), points (n, n, 3), curvature (n, n)."""

    u: np.ndarray
    v: np.ndarray
    points: np.ndarray
    curvature: np.ndarray
    gated: bool

    @property
    def max_abs_curvature(self) -> float:
        """``max |K|`` over the grid."""
        return float(np.max(np.abs(self.curvature)))


def attention_surface(
    *gate, extent: float = 2.0, resolution: int = 21, **gate_keywords
) -> AttentionSurface:
    """Sample :func:`gated_attention_map` on ``[-extent, extent]^2`` and compute its curvature.

    ``gate`` and ``gate_keywords`` are the :class:`GateSettings`.  The Gaussian curvature at
    each grid point is :func:`curvlab.curvature.gaussian_curvature` of the map (Gauss equation,
    identity covariance). ``resolution`` points per side.

    >>> flat = attention_surface(gated=False, resolution=5)
    >>> flat.points.shape, flat.curvature.shape, flat.max_abs_curvature < 1e-10
    ((5, 5, 3), (5, 5), True)
    >>> attention_surface((2.0, 0.0), resolution=5).max_abs_curvature > 1e-3
    True
    """
    from curvlab.geometry.curvature import gaussian_curvature

    settings = GateSettings(*gate, **gate_keywords)
    half_width = _real_number("extent", extent)
    if half_width <= 0:
        raise ValueError(f"extent must be positive, got {extent!r}")
    if not arguments.is_integer(resolution) or resolution < 2:
        raise ValueError(f"resolution must be an integer >= 2, got {resolution!r}")
    f = settings.attention_map()
    axis = torch.linspace(-half_width, half_width, resolution, dtype=torch.float64)
    v_grid, u_grid = torch.meshgrid(axis, axis, indexing="ij")
    chart = torch.stack([u_grid, v_grid], dim=-1)  # (n, n, 2)
    points = torch.stack([f(x) for x in chart.reshape(-1, 2)]).reshape(resolution, resolution, 3)
    curvature = gaussian_curvature(f, chart)  # (n, n)
    return AttentionSurface(
        u=u_grid.numpy(),
        v=v_grid.numpy(),
        points=points.detach().numpy(),
        curvature=curvature.detach().numpy(),
        gated=settings.gated,
    )


def _colour_scale(surface: AttentionSurface) -> float:
    """Half-range of the colour scale: the 98th percentile of |K| (1 on a flat surface).

    Near a point where the map almost folds (its Jacobian nearly loses rank) |K| spikes; a
    percentile keeps the rest of the surface readable. The figure title reports the true max.
    """
    scale = float(np.quantile(np.abs(surface.curvature), 0.98))
    return scale if scale > 1e-9 else 1.0


def _title(surface: AttentionSurface) -> str:
    kind = "Gated" if surface.gated else "Ungated"
    if surface.max_abs_curvature < 1e-9:
        return f"{kind} attention: the surface is flat (K = 0)"
    return f"{kind} attention bends the surface (max |K| = {surface.max_abs_curvature:.3g})"


def plot_attention_surface(
    surface: AttentionSurface, *, halfrange: float | None = None, fig: object | None = None
):
    """Draw ``surface`` in 3-D coloured by K, next to the map of K over the input plane.

    Both panels share one colour scale centred at 0: by default up to the 98th percentile of
    |K| (colours saturate beyond it); ``halfrange`` fixes it, e.g. across animation frames.
    The title states whether the surface is flat and its max |K|. Returns the figure.

    >>> fig = plot_attention_surface(attention_surface(gated=False, resolution=5))
    >>> fig.axes[0].name, fig._suptitle.get_text()
    ('3d', 'Ungated attention: the surface is flat (K = 0)')
    >>> plt.close(fig)
    """
    if not isinstance(surface, AttentionSurface):
        raise TypeError(f"surface must be an AttentionSurface, got {type(surface).__name__}")
    if fig is None:
        fig = plt.figure(figsize=(10.5, 4.4))
    else:
        fig.clear()
    scale = halfrange if halfrange is not None else _colour_scale(surface)
    grid = fig.add_gridspec(1, 2, width_ratios=(1.0, 1.15), wspace=0.45)
    surface_axes = fig.add_subplot(grid[0, 0], projection="3d")
    map_axes = fig.add_subplot(grid[0, 1])
    plot_curvature_surface(
        surface.points[..., 0],
        surface.points[..., 1],
        surface.points[..., 2],
        surface.curvature,
        ax=surface_axes,
        halfrange=scale,
        colorbar=False,
    )
    surface_axes.set_title("attention output $y(x)$", fontsize=10)
    _, _, mesh = plot_curvature_map(
        surface.u,
        surface.v,
        surface.curvature,
        ax=map_axes,
        halfrange=scale,
        axis_labels=("input $x_1$", "input $x_2$"),
    )
    map_axes.set_title("Gaussian curvature over the input plane", fontsize=10)
    colour = COLORS["gated"] if surface.gated else COLORS["ungated"]
    fig.suptitle(_title(surface), color=colour, fontweight="bold")
    return fig


def gate_explorer(*gate, resolution: int = 15, **gate_keywords):
    """An ipywidgets explorer: sliders for the gate and the temperature, the surface below.

    The sliders start at the :class:`GateSettings` ``gate``, ``gate_keywords``.

    The figure for the initial values is drawn when the explorer is made, so a page that
    stores widget state (a static site) shows a meaningful view; moving the sliders redraws it
    when a kernel is running. Returns an ``ipywidgets.VBox`` (display it as a cell's last line).

    >>> box = gate_explorer(resolution=5)
    >>> [child.description for child in box.children[0].children]
    ['gate w1', 'gate w2', 'gate bias b', 'temperature', 'gated']
    >>> sorted(box.children[1].outputs[0]["data"])   # the initial view: a figure as PNG
    ['image/png', 'text/plain']
    >>> plt.close("all")
    """
    import ipywidgets as widgets
    from IPython.display import Image

    start = GateSettings(*gate, **gate_keywords)
    w1, w2 = start.gate_weight
    style = {"description_width": "7em"}
    layout = widgets.Layout(width="22em")
    controls = {
        "w1": widgets.FloatSlider(
            value=w1, min=-4, max=4, step=0.25, description="gate w1", style=style, layout=layout
        ),
        "w2": widgets.FloatSlider(
            value=w2, min=-4, max=4, step=0.25, description="gate w2", style=style, layout=layout
        ),
        "bias": widgets.FloatSlider(
            value=start.gate_bias,
            min=-4,
            max=4,
            step=0.25,
            description="gate bias b",
            style=style,
            layout=layout,
        ),
        "temperature": widgets.FloatSlider(
            value=start.temperature,
            min=0.25,
            max=3,
            step=0.25,
            description="temperature",
            style=style,
            layout=layout,
        ),
        "gated": widgets.Checkbox(value=start.gated, description="gated", style=style),
    }
    output = widgets.Output()

    def redraw(w1, w2, bias, temperature, gated):
        try:
            surface = attention_surface(
                (w1, w2), bias, gated=gated, temperature=temperature, resolution=resolution
            )
        except ValueError as error:  # e.g. the map folds (is not an immersion) at a grid point
            output.outputs = ()
            output.append_stdout(f"No surface for these parameters: {error}\n")
            return
        figure = plot_attention_surface(surface)
        png = io.BytesIO()
        figure.savefig(png, format="png", dpi=80, bbox_inches="tight")
        plt.close(figure)
        # A PNG, whatever matplotlib backend the kernel runs; set on the widget itself, so the
        # view is saved with the widget state (and works outside a kernel too).
        output.outputs = ()
        output.append_display_data(Image(data=png.getvalue(), format="png"))

    def redraw_from_controls(change=None):
        redraw(**{name: control.value for name, control in controls.items()})

    redraw_from_controls()
    for control in controls.values():
        control.observe(redraw_from_controls, names="value")
    note = widgets.HTML(
        "<small>The sliders redraw the surface in a running notebook (download or launch "
        "this page). On the static site they show the view saved when the book was built."
        "</small>"
    )
    return widgets.VBox([widgets.VBox(list(controls.values())), output, note])


def gate_animation(
    slopes: object = (0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0),
    *,
    direction: tuple[float, float] = (1.0, 0.0),
    gate_bias: float = 0.0,
    temperature: float = 1.0,
    resolution: int = 15,
    interval_ms: int = 700,
):
    """A kernel-free animation: the gate slope ``s`` (``w = s * direction``) sweeps ``slopes``.

    Each frame is :func:`plot_attention_surface` at one slope, all on one colour scale, so the
    colours compare across frames. At ``s = 0`` the gate is constant and the surface is flat.
    Returns an ``IPython.display.HTML`` object holding the frames and a JavaScript player with a
    slider (matplotlib ``Animation.to_jshtml``): it plays in a static page with no kernel and no
    network.

    >>> html = gate_animation([0.0, 2.0], resolution=5)
    >>> "<script" in html.data and html.data.count("data:image/png;base64") == 2
    True
    >>> "://" in html.data.split("<script")[0]   # nothing loaded from outside the page
    False
    """
    from IPython.display import HTML
    from matplotlib.animation import FuncAnimation

    slope_values = [_real_number("slopes[i]", s) for s in np.asarray(slopes, dtype=object).ravel()]
    if len(slope_values) < 2:
        raise ValueError(f"slopes must hold at least two values, got {len(slope_values)}")
    d1, d2 = _gate_weight(direction)
    surfaces = [
        attention_surface(
            (s * d1, s * d2),
            gate_bias,
            gated=True,
            temperature=temperature,
            resolution=resolution,
        )
        for s in slope_values
    ]
    halfrange = max(_colour_scale(surface) for surface in surfaces)
    fig = plt.figure(figsize=(10.5, 4.4))

    def draw(frame: int):
        plot_attention_surface(surfaces[frame], halfrange=halfrange, fig=fig)
        fig.text(0.01, 0.02, f"gate slope s = {slope_values[frame]:g}", fontsize=11)
        return []

    animation = FuncAnimation(fig, draw, frames=len(surfaces), interval=interval_ms, blit=False)
    html = _offline_player(animation.to_jshtml(default_mode="once"))
    plt.close(fig)
    return HTML(html)


# matplotlib's player links Font Awesome 4 from a CDN for its button icons; the book's theme
# already ships Font Awesome 6, which draws the same buttons under their version-6 names.
_FONT_AWESOME_CDN_LINK = re.compile(r"<link[^>]*font-awesome[^>]*>\s*", re.IGNORECASE)
_FONT_AWESOME_6_NAMES = {
    "fa-fast-backward": "fa-backward-fast",
    "fa-step-backward": "fa-backward-step",
    "fa-step-forward": "fa-forward-step",
    "fa-fast-forward": "fa-forward-fast",
}


def _offline_player(html: str) -> str:
    """matplotlib's JavaScript player with no request outside the page (no CDN stylesheet).

    >>> cdn = '<link rel="stylesheet" href="https://cdn.example/font-awesome.min.css">'
    >>> _offline_player(cdn + '<i class="fa fa-fast-forward">')
    '<i class="fa fa-forward-fast">'
    """
    html = _FONT_AWESOME_CDN_LINK.sub("", html)
    for old, new in _FONT_AWESOME_6_NAMES.items():
        html = html.replace(f'"fa {old}"', f'"fa {new}"')
    return html
