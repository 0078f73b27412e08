"""Curvature of a model's representation sheet over a 2-D slice of an input of any shape.

A model that reads token sequences x ∈ ℝ^{T×w} has no input plane to draw; three inputs
p0, p1, p2 (three training sequences of one class) span one.  The **slice**

    s(u) = p0 + u1 (p1 − p0) + u2 (p2 − p0),    u in the triangle Δ = {u1, u2 ≥ 0, u1 + u2 ≤ 1}

passes through the three (s(0, 0) = p0, s(1, 0) = p1, s(0, 1) = p2), and the **sheet** is the
pooled representation over it, u ↦ r(s(u)) ∈ ℝ^d.  Its Gaussian curvature K and area element
√det g come from the Gauss-equation engine (:func:`curvlab.geometry.gauss_equation.jets` of the
composed map, then :func:`curvlab.geometry.gauss_equation.surface_from_jets`); the metric is the
pullback of the representation's Euclidean one, so ∫|K| dA over Δ is intrinsic to the piece of
sheet over the triangle and does not depend on how the slice is parametrised.

The domain is the triangle itself, whatever the resolution: :func:`triangle_nodes` cuts Δ into
P² congruent triangles (P(P + 1)/2 pointing up, P(P − 1)/2 pointing down; each of area
1/(2P²) in u) and the midpoint (centroid) rule sums the integrand at their centroids times that
area.  No cell is masked or clipped: the P-subdivision tiles Δ exactly for every P.  A point
where the sheet is not an immersion (rank-deficient Jacobian) contributes 0, and its share is
reported (``immersed_share``).

:func:`slice_jets` composes the slice with every member of an
:class:`~curvlab.models.ensemble.Ensemble` (``vmap`` over members and over each member's
triangles) and :func:`slice_curvature` integrates.  :func:`draw_triangles` draws the triangles
of one run from a seeded generator.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn
from torch.func import functional_call, vmap

from curvlab import arguments
from curvlab.geometry.gauss_equation import jets
from curvlab.measurement.sheets import sheet_from_jets
from curvlab.models.ensemble import Ensemble

__all__ = ["draw_triangles", "slice_curvature", "slice_jets", "slice_map", "triangle_nodes"]


def triangle_nodes(resolution: int, *, dtype=torch.float64) -> tuple[torch.Tensor, float]:
    """The centroids (P², 2) of the P-subdivision of the triangle Δ (module docstring), P =
    ``resolution``, and the weight 1/(2P²) of each (the u-area of one small triangle; the weights
    sum to |Δ| = 1/2).

    >>> nodes, weight = triangle_nodes(2)
    >>> nodes.shape, weight
    (torch.Size([4, 2]), 0.125)
    >>> bool((nodes.sum(dim=1) < 1).all() and (nodes > 0).all())
    True
    """
    P = arguments.integer("resolution", resolution, 1)
    up = [((i + 1 / 3) / P, (j + 1 / 3) / P) for i in range(P) for j in range(P - i)]
    down = [((i + 2 / 3) / P, (j + 2 / 3) / P) for i in range(P) for j in range(P - 1 - i)]
    return torch.tensor(up + down, dtype=dtype), 1 / (2 * P * P)


def slice_map(represent, corners: torch.Tensor):
    """u (2,) ↦ ``represent``(s(u)), s the slice through ``corners`` (3, *input shape).

    ``represent`` maps one input (*input shape) to a vector (d,).

    >>> f = slice_map(lambda x: x.flatten(), torch.eye(3).reshape(3, 3, 1))
    >>> f(torch.tensor([0.25, 0.5])).tolist()
    [0.25, 0.25, 0.5]
    """
    if not isinstance(corners, torch.Tensor) or corners.ndim < 2 or corners.shape[0] != 3:
        raise ValueError("corners: expected a tensor (3, *input shape), the slice's 3 inputs")
    p0, e1, e2 = corners[0], corners[1] - corners[0], corners[2] - corners[0]

    def on_slice(u: torch.Tensor) -> torch.Tensor:
        return represent(p0 + u[0] * e1 + u[1] * e2)

    return on_slice


class _Representation(nn.Module):
    """A classifier's pooled representation as a module's forward, for ``functional_call``."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        return self.model.representation(inputs)


def slice_jets(
    ens: Ensemble, corners: torch.Tensor, nodes: torch.Tensor, *, chart=None
) -> tuple[torch.Tensor, torch.Tensor]:
    """J (E, M, N, d, 2) and H (E, M, N, d, 2, 2) of every member's sheet over each of its M
    slices, at the N ``nodes`` of u: (N, 2), the same for every slice, or (E, M, N, 2), each
    slice its own; ``corners`` (E, M, 3, *input shape): member e's triangles.  With ``chart``
    (a map of points (..., 2) to u, such as
    :func:`curvlab.measurement.adaptive_slices.collapsed_map`), the sheet is
    v ↦ r(s(chart(v))) and the nodes are points v.  Forward-mode jets of the module itself
    (:func:`slice_map` of the pooled representation under ``functional_call``), in the
    corners' dtype."""
    input_shape = tuple(ens.template.tokenizer.input_shape)
    if (
        not isinstance(corners, torch.Tensor)
        or corners.ndim != 3 + len(input_shape)
        or corners.shape[0] != ens.size
        or tuple(corners.shape[2:]) != (3, *input_shape)
    ):
        raise ValueError(
            f"corners: expected a tensor ({ens.size}, M, 3, {', '.join(map(str, input_shape))})"
        )
    shared = isinstance(nodes, torch.Tensor) and nodes.ndim == 2 and nodes.shape[1] == 2
    own = (
        isinstance(nodes, torch.Tensor)
        and nodes.ndim == 4
        and tuple(nodes.shape[:2]) == tuple(corners.shape[:2])
        and nodes.shape[3] == 2
    )
    if not (shared or own):
        raise ValueError(
            f"nodes: expected a tensor (N, 2) of points u, or ({ens.size}, "
            f"{corners.shape[1]}, N, 2), one set per slice"
        )
    dtype = corners.dtype
    module = _Representation(ens.template)
    params = {"model." + k: v.detach().to(dtype) for k, v in ens.params.items()}
    buffers = {"model." + k: v.to(dtype) for k, v in ens.buffers.items()}
    nodes = nodes.detach().to(dtype)

    def member(p, b, triangles, points):
        def represent(x):
            return functional_call(module, (p, b), (x[None],))[0]  # (d,)

        def one(triangle, at):
            on_slice = slice_map(represent, triangle)
            if chart is None:
                return jets(on_slice, at)
            return jets(lambda v: on_slice(chart(v)), at)

        if shared:
            return vmap(one, in_dims=(0, None))(triangles, points)
        return vmap(one)(triangles, points)

    if shared:
        return vmap(member, in_dims=(0, 0, 0, None))(params, buffers, corners.detach(), nodes)
    return vmap(member)(params, buffers, corners.detach(), nodes)


def slice_curvature(ens: Ensemble, corners: torch.Tensor, resolution: int) -> dict:
    """``curvature_total_abs`` (∫|K| dA), ``curvature_total`` (∫K dA), ``sheet_area`` (∫dA)
    and ``curvature_capped`` (∫ min(|K|, 1/m) dA, m the median of √det g over the slice's nodes:
    :func:`curvlab.measurement.sheets.sheet_from_jets`) of every member's sheet over each of its
    triangles by the midpoint rule on the P-subdivision (P = ``resolution``): tensors (E, M),
    float64; and ``immersed_share`` (E, M), the share of nodes where the sheet is an
    immersion."""
    nodes, weight = triangle_nodes(resolution, dtype=corners.dtype)
    J, H = slice_jets(ens, corners, nodes)
    weights = torch.full(J.shape[:3], weight, dtype=J.dtype, device=J.device)
    sheet = sheet_from_jets(J, H, weights)  # (E, M)
    out = {
        name: sheet[name].to(torch.float64)
        for name in ("curvature_total_abs", "curvature_total", "sheet_area", "curvature_capped")
    }
    out["immersed_share"] = sheet["nodes"].to(torch.float64) / nodes.shape[0]
    return out


def draw_triangles(labels, count: int, seed) -> list[tuple[int, int, int]]:
    """``count`` triangles of three distinct training rows of one class, from
    ``numpy.random.default_rng(seed)``: triangle i takes class i mod 2, its three rows drawn
    without replacement from that class's rows of ``labels`` (n,) in {0, 1}.

    >>> draw_triangles([0, 1, 0, 1, 0, 1, 1, 0], 2, seed=0) == draw_triangles(
    ...     [0, 1, 0, 1, 0, 1, 1, 0], 2, seed=0)
    True
    """
    labels = np.asarray(labels)
    arguments.integer("count", count, 1)
    rows = [np.flatnonzero(labels == c) for c in (0, 1)]
    if min(r.size for r in rows) < 3:
        raise ValueError("labels: each class needs at least 3 rows to span a triangle")
    rng = np.random.default_rng(seed)
    return [tuple(int(i) for i in rng.choice(rows[t % 2], 3, replace=False)) for t in range(count)]
