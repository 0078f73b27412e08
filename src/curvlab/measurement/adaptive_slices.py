"""∫|K| dA of the sheet over a triangle of inputs by Part II's adaptive rule, the triangle exact.

The sheet over a slice (:mod:`curvlab.measurement.slices`) lives over the triangle
Δ = {u1, u2 ≥ 0, u1 + u2 ≤ 1}; Part II's adaptive rule
(:func:`curvlab.geometry.adaptive.adaptive_midpoint`) refines a quadtree of squares.  The
**collapsed map** (Duffy's)

    c(s, t) = (s, t (1 − s)),    (s, t) in the unit square Q = [0, 1]²,

takes the open square one to one onto the open triangle (the edge s = 1 collapses onto the
corner u = (1, 0), a set of measure zero), so the sheet over Q, (s, t) ↦ r(slice(c(s, t))), is
a reparametrisation of the sheet over Δ: its K is the same at corresponding points and its
area element carries the factor det ∂c = 1 − s, so ∫|K| dA, ∫K dA and the area over Q equal
those over Δ exactly.  The domain is the triangle for every base grid and every refinement:
no cell is cut by an edge, no cell is masked.

:func:`collapsed_slice_jets` gives the jets of that sheet (J, H with respect to (s, t), through
the collapsed map, the slice and the module: :func:`curvlab.measurement.slices.slice_jets`
with the collapsed map as its chart), and :func:`adaptive_slice_curvature`
integrates every member's sheet over each of its triangles by the adaptive rule.
"""

from __future__ import annotations

import torch

from curvlab import arguments
from curvlab.geometry.curvature_integrals import curvature_integrals
from curvlab.measurement.slices import slice_jets
from curvlab.models.ensemble import Ensemble

__all__ = ["JET_NODES", "adaptive_slice_curvature", "collapsed_map", "collapsed_slice_jets"]


def collapsed_map(points: torch.Tensor) -> torch.Tensor:
    """u = c(s, t) = (s, t (1 − s)) for points (..., 2) of the unit square: the square onto the
    triangle Δ, with Jacobian determinant 1 − s.

    >>> collapsed_map(torch.tensor([[0.5, 0.5], [1.0, 0.3], [0.0, 1.0]])).tolist()
    [[0.5, 0.25], [1.0, 0.0], [0.0, 1.0]]
    """
    s, t = points[..., 0], points[..., 1]
    return torch.stack([s, t * (1 - s)], -1)


JET_NODES = 16384
"""Nodes (slices × nodes per slice) in one call of :func:`collapsed_slice_jets`' vmapped
jets: a call carries many nodes to pay its fixed dispatch time, but not so many that its
intermediate tensors leave the caches."""


def collapsed_slice_jets(
    ens: Ensemble, corners: torch.Tensor, points: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """J (E, M, N, d, 2) and H (E, M, N, d, 2, 2) with respect to (s, t) of member e's sheet
    over its triangle m, (s, t) ↦ r_e(slice_m(c(s, t))), at its points ``points`` (E, M, N, 2)
    of the unit square; ``corners`` (E, M, 3, *input shape).  :func:`slice_jets` through
    :func:`collapsed_map`, :data:`JET_NODES` nodes at a time."""
    if not isinstance(points, torch.Tensor) or points.ndim != 4:
        raise ValueError("points: expected a tensor (E, M, N, 2) of points of the unit square")
    slices = points.shape[0] * points.shape[1]
    step = max(1, JET_NODES // max(1, slices))
    parts = [
        slice_jets(ens, corners, points[:, :, i : i + step], chart=collapsed_map)
        for i in range(0, points.shape[2], step)
    ]
    if len(parts) == 1:
        return parts[0]
    return torch.cat([J for J, _ in parts], dim=2), torch.cat([H for _, H in parts], dim=2)


def adaptive_slice_curvature(
    ens: Ensemble,
    corners: torch.Tensor,
    *,
    resolution: int,
    tolerance: float,
    cells_per_round: int = 512,
    max_rounds: int = 64,
) -> dict:
    """∫|K| dA, ∫K dA and the area of every member's sheet over each of its triangles
    ``corners`` (E, M, 3, *input shape), by :func:`curvlab.geometry.adaptive.adaptive_midpoint`
    on the unit square through the collapsed map (module docstring) from a ``resolution``² base
    grid to the relative ``tolerance`` (refined on |K| √det g; 0 where the sheet is not an
    immersion).  Returns :func:`curvlab.geometry.curvature_integrals.curvature_integrals`'s dict,
    tensors (E, M): ``curvature_total_abs``, ``curvature_total``, ``sheet_area``, ``error``,
    ``converged``, ``evaluations``, ``rounds``, ``non_immersed`` and the ``*_uniform`` estimates.
    """
    arguments.integer("resolution", resolution, 1)
    if not isinstance(corners, torch.Tensor) or corners.ndim < 4 or corners.shape[2] != 3:
        raise ValueError("corners: expected a tensor (E, M, 3, *input shape), three per slice")
    members, triangles = corners.shape[:2]
    dtype = corners.dtype
    flat = corners.reshape(members * triangles, 1, *corners.shape[2:])  # a box per slice

    def boxes_jets(points: torch.Tensor, boxes: torch.Tensor):
        # points (A, N, 2) of the boxes still refined, box b = member b // M, slice b % M
        chosen = ens.select((boxes // triangles).tolist())
        J, H = collapsed_slice_jets(chosen, flat[boxes], points[:, None])
        return J[:, 0], H[:, 0]

    low = torch.zeros(members, triangles, 2, dtype=dtype, device=corners.device)
    return curvature_integrals(
        boxes_jets,
        low,
        torch.ones_like(low),
        resolution=resolution,
        tolerance=tolerance,
        cells_per_round=cells_per_round,
        max_rounds=max_rounds,
        absolute=1e-9,
        selective=True,
    )
