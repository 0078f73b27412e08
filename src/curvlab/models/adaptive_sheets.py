"""∫|K| dA of trained sheets on the fixed data domain, by the adaptive rule, for an ensemble.

A trained sheet's |K| is carried by spikes far narrower than a cell of a uniform grid (where
the larger singular value of the Jacobian collapses), so the uniform midpoint rule of
:func:`curvlab.models.domains.data_domain_grid` hits or misses them by chance.
:func:`adaptive_sheet` integrates over the same domain, D = {x in the training points'
bounding box : minᵢ |x − pᵢ| ≤ r}, with :func:`curvlab.geometry.adaptive.adaptive_midpoint`
(a 2:1-balanced quadtree refined on |K| √det g to a relative tolerance, the domain's edge
refined), every member of the ensemble refined by its own error estimate.
"""

from __future__ import annotations

import math

import torch

from curvlab.geometry.adaptive import disc_domain
from curvlab.geometry.curvature_integrals import curvature_integrals
from curvlab.models.domains import DOMAIN_RADIUS
from curvlab.models.ensemble import Ensemble, ensemble_jets

__all__ = ["adaptive_sheet"]


def adaptive_sheet(
    ens: Ensemble,
    train_points: torch.Tensor,
    radius: float = DOMAIN_RADIUS,
    *,
    base: int = 64,
    tolerance: float = 0.01,
    cells_per_round: int = 512,
    max_rounds: int = 64,
) -> dict:
    """∫|K| dA, ∫K dA and the area of every member's representation sheet over its data
    domain D (the module docstring; ``radius`` r in input units), K and √det g by the
    Gauss-equation engine on the member's jets (0 where it is not an immersion).

    ``ens`` and ``train_points`` (E, n, 2) in one dtype (float64 for measurement).  The other
    settings are :func:`curvlab.geometry.adaptive.adaptive_midpoint`'s.  Returns the dict of
    :func:`curvlab.geometry.curvature_integrals.adaptive_curvature`, tensors (E,)
    (``*_uniform``: the uniform ``base``² midpoint rule on the same domain, that of
    :func:`curvlab.models.domains.data_domain_grid`).
    """
    if isinstance(radius, bool) or not isinstance(radius, int | float):
        raise ValueError(f"radius: expected a positive number of input units, got {radius!r}")
    if not (math.isfinite(radius) and radius > 0):
        raise ValueError(f"radius: expected a positive finite number, got {radius!r}")
    if not isinstance(train_points, torch.Tensor) or train_points.ndim != 3:
        raise ValueError("train_points: expected a tensor (E, n, 2)")
    if train_points.shape[-1] != 2 or train_points.shape[0] != ens.size:
        raise ValueError(
            f"train_points: expected (E, n, 2) with E = {ens.size} members, got "
            f"{tuple(train_points.shape)}"
        )
    return curvature_integrals(
        lambda points: ensemble_jets(ens, points),
        train_points.amin(dim=1),
        train_points.amax(dim=1),
        domain=disc_domain(train_points, radius),
        base=base,
        tolerance=tolerance,
        cells_per_round=cells_per_round,
        max_rounds=max_rounds,
        absolute=1e-9,
    )
