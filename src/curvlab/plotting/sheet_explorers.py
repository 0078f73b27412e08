"""The book's explorers and its landing figure: a control moved, a sheet redrawn.

- :func:`perspective_graph_map`  the gated head of :mod:`curvlab.plotting.widgets` seen in
  perspective: ``x -> (mu_1, mu_2, 1/gamma)``, the graph of ``1/gamma`` over the flat ungated
  image. The projective map ``P(y) = (y_1/y_3, y_2/y_3, 1/y_3)`` sends the gated surface
  ``gamma * mu`` (with ``mu_3 = 1``) onto this graph, and a projective map keeps the sign of the
  Gaussian curvature (elliptic points stay elliptic, hyperbolic ones hyperbolic): the gated
  surface is curved like the graph of ``1/gamma`` over the flat image, which a constant gate
  leaves flat.
- :func:`gate_sign_shares`       the shares of a sampled input square where K > 0 and K < 0,
  and the share where the perspective graph has the same sign.
- :func:`gate_weight_explorer`   gate weights ``w`` -> the gated image surface, coloured by the
  sign of K, next to its perspective graph (a :class:`FrameExplorer`).
- :func:`depth_explorer`         depth ``L`` of the structured stack -> the sheet ``(x, L phi)``
  and its total absolute curvature over the patch (a :class:`FrameExplorer`).
- :func:`plot_flat_and_gated`    the landing page's figure: the flat ungated image beside a
  curved gated one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
import torch

from curvlab.geometry.curvature import gaussian_curvature, immersion_mask, lambdify_map
from curvlab.geometry.measures import surface_measures
from curvlab.plotting.curvature_maps import plot_curvature_surface
from curvlab.plotting.explorers import FrameExplorer, Slider
from curvlab.plotting.style import COLORS
from curvlab.plotting.widgets import GateSettings, attention_surface
from curvlab.symbolic import structured_stack

__all__ = [
    "GateSigns",
    "depth_explorer",
    "gate_sign_shares",
    "gate_weight_explorer",
    "perspective_graph_map",
    "plot_flat_and_gated",
]

# |K| below this counts as 0 (a constant gate gives K of order 1e-28, round-off).
FLAT_TOLERANCE = 1e-8
SIGN_LABEL = r"sign(K) log(1 + |K|)"


def perspective_graph_map(*gate, **gate_keywords):
    """``x -> (mu_1(x), mu_2(x), 1/gamma(x))`` for the :class:`GateSettings` ``gate``.

    >>> f = perspective_graph_map((1.0, 0.0), 0.0)
    >>> [round(float(c), 6) + 0.0 for c in f(torch.zeros(2, dtype=torch.float64))]
    [0.0, 0.0, 2.0]
    """
    settings = GateSettings(*gate, **gate_keywords)
    ungated = GateSettings(gated=False, temperature=settings.temperature).attention_map()
    weight = torch.tensor(settings.gate_weight, dtype=torch.float64)

    def graph(x):
        y = ungated(x)  # (3,), y_3 = 1
        gate = torch.sigmoid(weight @ x + settings.gate_bias)
        return torch.stack([y[0], y[1], 1 / gate])

    return graph


@dataclass(frozen=True)
class GateSigns:
    """Shares of the sampled input square where K > 0, K < 0, and where the perspective graph
    has the sign of K (among the curved points; 1.0 when none is curved).  A point where either
    surface is not numerically an immersion (a gate saturated at a corner of the square makes
    the graph of 1/gate nearly vertical) has no K and counts in neither share."""

    positive: float
    negative: float
    perspective_agrees: float


def _chart(extent: float, resolution: int) -> torch.Tensor:
    axis = torch.linspace(-extent, extent, resolution, dtype=torch.float64)
    v, u = torch.meshgrid(axis, axis, indexing="ij")
    return torch.stack([u, v], dim=-1)  # (n, n, 2)


def _gate_grids(gate_weight, bias, extent, resolution):
    """The gated surface, its perspective graph and both curvatures on the sampled square."""
    settings = GateSettings(gate_weight, bias)
    chart = _chart(extent, resolution)
    gated, graph = settings.attention_map(), perspective_graph_map(gate_weight, bias)
    flat_chart = chart.reshape(-1, 2)
    shape = (*chart.shape[:2], 3)
    defined = immersion_mask(gated, chart) & immersion_mask(graph, chart)

    def curvature(f):  # K where both surfaces are immersions, NaN elsewhere
        K = torch.full(chart.shape[:2], float("nan"), dtype=torch.float64)
        K[defined] = gaussian_curvature(f, chart[defined])
        return K.numpy()

    return (
        torch.stack([gated(x) for x in flat_chart]).reshape(shape).numpy(),
        curvature(gated),
        torch.stack([graph(x) for x in flat_chart]).reshape(shape).numpy(),
        curvature(graph),
    )


def _signs(K: np.ndarray, K_graph: np.ndarray) -> GateSigns:
    curved = np.abs(K) > FLAT_TOLERANCE
    agrees = float(np.mean(np.sign(K[curved]) == np.sign(K_graph[curved]))) if curved.any() else 1.0
    return GateSigns(
        positive=float(np.mean(K > FLAT_TOLERANCE)),
        negative=float(np.mean(K < -FLAT_TOLERANCE)),
        perspective_agrees=agrees,
    )


def gate_sign_shares(gate_weight, gate_bias=0.0, *, extent: float = 2.0, resolution: int = 13):
    """The :class:`GateSigns` of the gated surface on ``[-extent, extent]^2``.

    >>> signs = gate_sign_shares((1.0, 0.0), resolution=5)
    >>> signs.negative, signs.perspective_agrees
    (1.0, 1.0)
    >>> gate_sign_shares((0.0, 0.0), resolution=5)   # a constant gate: flat
    GateSigns(positive=0.0, negative=0.0, perspective_agrees=1.0)
    """
    _, K, _, K_graph = _gate_grids(gate_weight, gate_bias, extent, resolution)
    return _signs(K, K_graph)


def _signed_log(K: np.ndarray) -> np.ndarray:
    """sign(K) log(1 + |K|), 0 where flat, NaN (not drawn) where K is undefined."""
    signed = np.sign(K) * np.log1p(np.abs(K))
    return np.where(np.abs(K) > FLAT_TOLERANCE, signed, np.where(np.isnan(K), np.nan, 0.0))


def _gate_frame(w1: float, w2: float, grids):
    points, K, graph, K_graph = grids
    fig = plt.figure(figsize=(9.0, 4.0))
    for column, (xyz, curvature, title, label) in enumerate(
        [
            (points, K, "gated image $\\gamma\\,\\mu(x)$", "$y_3$"),
            (graph, K_graph, "perspective: $1/\\gamma$ over the flat image", "$1/\\gamma$"),
        ]
    ):
        ax = fig.add_subplot(1, 2, column + 1, projection="3d")
        plot_curvature_surface(
            xyz[..., 0],
            xyz[..., 1],
            xyz[..., 2],
            _signed_log(curvature),
            ax=ax,
            halfrange=3.0,
            colorbar=column == 1,
            colorbar_label=SIGN_LABEL,
            axis_labels=("$y_1$", "$y_2$", label),
        )
        ax.set_title(title, fontsize=10)
    fig.suptitle(f"gate weights w = ({w1:g}, {w2:g})", color=COLORS["gated"])
    return fig


def gate_weight_explorer(
    w1_values: Sequence[float] = (-2, -1, 0, 1, 2),
    w2_values: Sequence[float] = (-2, 0, 2),
    *,
    start: tuple[float, float] = (1, 0),
    bias: float = 0.0,
    extent: float = 2.0,
    resolution: int = 11,
    dpi: int = 60,
) -> FrameExplorer:
    """Sliders for the gate weights ``w = (w1, w2)`` of the explored head (bias ``bias``).

    Each frame shows the gated image surface over ``[-extent, extent]^2`` coloured by the sign
    of K, beside its perspective graph (:func:`perspective_graph_map`); its caption gives the
    shares of K > 0 and K < 0 and where the two signs agree (:func:`gate_sign_shares`).
    """
    cache = {}

    def grids(w1, w2):
        if (w1, w2) not in cache:
            cache[w1, w2] = _gate_grids((w1, w2), bias, extent, resolution)
        return cache[w1, w2]

    def caption(w1, w2):
        _, K, _, K_graph = grids(w1, w2)
        signs = _signs(K, K_graph)
        if signs.positive == signs.negative == 0:
            return f"w = ({w1:g}, {w2:g}): a constant gate; the surface is flat (K = 0)."
        return (
            f"w = ({w1:g}, {w2:g}): K > 0 on {signs.positive:.0%} and K < 0 on "
            f"{signs.negative:.0%} of the input square; the perspective graph has the same "
            f"sign at {signs.perspective_agrees:.0%} of the curved points."
        )

    sliders = [
        Slider("w1", "gate weight w1", tuple(w1_values), start=start[0], live_step=0.25),
        Slider("w2", "gate weight w2", tuple(w2_values), start=start[1], live_step=0.25),
    ]
    return FrameExplorer(
        lambda w1, w2: _gate_frame(w1, w2, grids(w1, w2)), sliders, caption=caption, dpi=dpi
    )


def depth_explorer(
    keys,
    values,
    gate_weights,
    gate_bias,
    depths: Sequence[int] = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32),
    *,
    patch: float = 2.0,
    resolution: int = 24,
    chart_resolution: int = 21,
    dpi: int = 60,
) -> FrameExplorer:
    """A slider for the depth ``L`` of :func:`curvlab.symbolic.structured_stack` (these keys,
    values and gate): the sheet ``(x, L phi(x))`` over ``[-patch, patch]^2`` coloured by K
    (drawn at ``chart_resolution`` points per side), and ``∫|K| dA`` over the patch against
    depth with the current depth marked. The integrals come from
    :func:`curvlab.geometry.measures.surface_measures` (Gauss–Legendre, ``resolution`` nodes
    per axis); the explorer carries them as ``curvature_total_abs`` {depth: ∫|K| dA}."""
    f_one, x = structured_stack(1, keys, values, gate_weights, gate_bias, rational=False)
    one_layer = lambdify_map(f_one, x)

    def stack(depth):
        scale = torch.tensor([1.0, 1.0, float(depth)], dtype=torch.float64)
        return lambda point: one_layer(point) * scale

    bounds = [(-patch, patch), (-patch, patch)]
    measures = {
        depth: surface_measures(stack(depth), bounds, resolution=resolution) for depth in depths
    }
    total = np.array([measures[d].curvature_total_abs for d in depths])
    chart = _chart(patch, chart_resolution)

    def render(L):
        f = stack(L)
        points = torch.stack([f(p) for p in chart.reshape(-1, 2)]).reshape(*chart.shape[:2], 3)
        K = gaussian_curvature(f, chart).numpy()
        fig = plt.figure(figsize=(9.0, 3.8))
        ax = fig.add_subplot(1, 2, 1, projection="3d")
        points = points.numpy()
        plot_curvature_surface(
            points[..., 0],
            points[..., 1],
            points[..., 2],
            _signed_log(K),
            ax=ax,
            halfrange=1.0,
            colorbar_label=SIGN_LABEL,
            axis_labels=("$x_1$", "$x_2$", r"$L\varphi$"),
        )
        ax.set_zlim(-0.6 * max(depths), 0.6 * max(depths))
        ax.set_title(f"the depth-{L} sheet", fontsize=10)
        curve = fig.add_subplot(1, 2, 2)
        curve.semilogx(depths, total, "o-", color=COLORS["gated"], ms=3)
        curve.semilogx(
            [L],
            [measures[L].curvature_total_abs],
            "o",
            ms=10,
            mfc="none",
            color=COLORS["reference"],
        )
        curve.set(xlabel="depth L", ylabel=r"$\int_P |K|\,dA$", title="total absolute curvature")
        fig.tight_layout()
        return fig

    def caption(L):
        best = int(depths[int(np.argmax(total))])
        return (
            f"L = {L}: ∫|K| dA = {measures[L].curvature_total_abs:.3f} over the patch "
            f"[-{patch:g}, {patch:g}]²; the largest of these depths is L = {best} "
            f"({total.max():.3f})."
        )

    explorer = FrameExplorer(
        render, [Slider("L", "depth L", tuple(int(d) for d in depths))], caption=caption, dpi=dpi
    )
    explorer.curvature_total_abs = dict(zip(depths, total.tolist(), strict=True))
    return explorer


def plot_flat_and_gated(gate_weight=(1.0, 0.0), gate_bias: float = 0.0, *, resolution: int = 15):
    """The ungated image (flat) beside the gated one (curved), coloured by K on one scale.

    Returns ``(fig, ungated, gated)``, the two :class:`AttentionSurface` drawn.

    >>> fig, flat, bent = plot_flat_and_gated(resolution=5)
    >>> flat.max_abs_curvature < 1e-10 < bent.max_abs_curvature
    True
    >>> plt.close(fig)
    """
    ungated = attention_surface(gated=False, resolution=resolution)
    gated = attention_surface(gate_weight, gate_bias, resolution=resolution)
    halfrange = float(np.quantile(np.abs(gated.curvature), 0.98)) or 1.0
    fig = plt.figure(figsize=(9.5, 4.2))
    signs = {1: "K > 0", -1: "K < 0"}
    bent = set(np.sign(gated.curvature[np.abs(gated.curvature) > FLAT_TOLERANCE]).astype(int))
    shape = " and ".join(signs[s] for s in sorted(bent, reverse=True)) or "K = 0"
    flat = "K = 0" if ungated.max_abs_curvature < FLAT_TOLERANCE else "curved"
    w = ", ".join(f"{c:g}" for c in gate_weight)
    for column, (surface, title, colour) in enumerate(
        [
            (ungated, f"ungated: {flat}", COLORS["ungated"]),
            (gated, f"gated, w = ({w}): {shape}", COLORS["gated"]),
        ]
    ):
        ax = fig.add_subplot(1, 2, column + 1, projection="3d")
        plot_curvature_surface(
            surface.points[..., 0],
            surface.points[..., 1],
            surface.points[..., 2],
            surface.curvature,
            ax=ax,
            halfrange=halfrange,
            colorbar=column == 1,
        )
        ax.set_title(title, color=colour, fontsize=11)
    return fig, ungated, gated
