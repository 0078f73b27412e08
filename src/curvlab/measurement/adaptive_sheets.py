"""∫|K| dA of trained sheets on the fixed data domain, by the adaptive rule, for an ensemble.

A trained sheet's |K| is carried by spikes far narrower than a cell of a uniform grid (where
the larger singular value of the Jacobian collapses), so the uniform midpoint rule of
:func:`curvlab.measurement.domains.data_domain_grid` hits or misses them by chance.
:func:`adaptive_sheet` integrates over the same domain, D = {x in the training points'
bounding box : minᵢ |x − pᵢ| ≤ r}, with :func:`curvlab.geometry.adaptive.adaptive_midpoint`
(a 2:1-balanced quadtree refined on |K| √det g to a relative tolerance, the domain's edge
refined), every member of the ensemble refined by its own error estimate.
"""

from __future__ import annotations

import torch

from curvlab import arguments
from curvlab.geometry.adaptive import disc_domain
from curvlab.geometry.curvature_integrals import curvature_integrals
from curvlab.geometry.gauss_equation import singular_values, surface_from_jets
from curvlab.measurement.domains import DOMAIN_RADIUS, data_domain_grid
from curvlab.models.ensemble import Ensemble, ensemble_jets

__all__ = ["adaptive_sheet", "spike_map"]


def adaptive_sheet(
    ens: Ensemble,
    train_points: torch.Tensor,
    radius: float = DOMAIN_RADIUS,
    *,
    resolution: int = 64,
    tolerance: float = 0.01,
    cells_per_round: int = 512,
    max_rounds: int = 64,
) -> dict:
    """∫|K| dA, ∫K dA and the sheet's area of every member's representation sheet over its data
    domain D (the module docstring; ``radius`` r in input units), K and √det g by the
    Gauss-equation engine on the member's jets (0 where it is not an immersion).

    ``ens`` and ``train_points`` (E, n, 2) in one dtype (float64 for measurement).  The other
    settings are :func:`curvlab.geometry.adaptive.adaptive_midpoint`'s.  Returns the dict of
    :func:`curvlab.geometry.curvature_integrals.adaptive_curvature`, tensors (E,)
    (``*_uniform``: the uniform ``resolution``² midpoint rule on the same domain, that of
    :func:`curvlab.measurement.domains.data_domain_grid`).
    """
    _check(ens, train_points, radius)

    def members_jets(points: torch.Tensor, members: torch.Tensor):
        chosen = ens if len(members) == ens.size else ens.select(members.tolist())
        return ensemble_jets(chosen, points)

    return curvature_integrals(
        members_jets,
        train_points.amin(dim=1),
        train_points.amax(dim=1),
        domain=disc_domain(train_points, radius),
        resolution=resolution,
        tolerance=tolerance,
        cells_per_round=cells_per_round,
        max_rounds=max_rounds,
        absolute=1e-9,
        selective=True,
    )


def _check(ens: Ensemble, train_points, radius) -> None:
    arguments.number(
        "radius",
        radius,
        low=0,
        low_open=True,
        expected="a positive finite number",
        type_expected="a positive number of input units",
    )
    if not isinstance(train_points, torch.Tensor) or train_points.ndim != 3:
        raise ValueError("train_points: expected a tensor (E, n, 2)")
    if train_points.shape[-1] != 2 or train_points.shape[0] != ens.size:
        raise ValueError(
            f"train_points: expected (E, n, 2) with E = {ens.size} members, got "
            f"{tuple(train_points.shape)}"
        )


def spike_map(
    ens: Ensemble,
    train_points: torch.Tensor,
    radius: float = DOMAIN_RADIUS,
    *,
    resolution: int = 256,
    adaptive_resolution: int = 32,
    tolerance: float = 0.03,
) -> dict:
    """Where one trained sheet's ∫|K| dA lives: |K|, the Jacobian's singular values σ_max ≥
    σ_min and the domain on a ``resolution``² midpoint grid of the data's bounding box, and the
    points at which the adaptive rule (:func:`adaptive_sheet` from ``adaptive_resolution``²,
    ``tolerance``) evaluated the sheet.  ``ens`` holds one member, ``train_points`` (1, n, 2),
    float64.

    Returns NumPy arrays ``x``, ``y`` (resolution,) (node coordinates), ``K_abs``,
    ``sigma_max``, ``sigma_min`` (resolution, resolution) (NaN outside D or where the sheet is
    not an immersion, row i at y[i]), ``evaluated`` (M, 2) and floats: ``curvature_total_abs``
    (the adaptive ∫|K| dA), ``curvature_total_abs_uniform`` (the grid's midpoint sum),
    ``top_share`` (the share of the grid's sum held by its largest 1% of cells), ``peak_K``
    (the largest |K| on the grid), ``peak_sigma_max`` / ``median_sigma_max`` and
    ``peak_sigma_min`` / ``median_sigma_min`` (at that node and over D), ``peak`` (its
    coordinates).
    """
    _check(ens, train_points, radius)
    if ens.size != 1:
        raise ValueError(f"ens: expected one member, got {ens.size}")
    arguments.integer("resolution", resolution, 8)
    nodes, weights = data_domain_grid(train_points, resolution, radius)
    J, H = ensemble_jets(ens, nodes)
    surface = surface_from_jets(J, H)
    good = (surface["immersed"] & (weights > 0))[0]
    K_abs = surface["K"][0].abs()
    sigma = singular_values(J[0])  # (N, 2), descending
    cell = K_abs * surface["volume_element"][0] * weights[0] * good
    ranked = cell.sort(descending=True).values
    top = max(1, int(good.sum()) // 100)
    masked = {
        "K_abs": K_abs,
        "sigma_max": sigma[:, 0],
        "sigma_min": sigma[:, 1],
    }
    peak = int(torch.where(good, K_abs, torch.zeros_like(K_abs)).argmax())
    evaluated = []

    def recorded(points: torch.Tensor):
        evaluated.append(points.reshape(-1, 2).detach().clone())
        return ensemble_jets(ens, points)

    adaptive = curvature_integrals(
        recorded,
        train_points.amin(dim=1),
        train_points.amax(dim=1),
        domain=disc_domain(train_points, radius),
        resolution=adaptive_resolution,
        tolerance=tolerance,
        absolute=1e-9,
    )
    # data_domain_grid's node i·resolution + j lies at (x[j], y[i]): rows along y, as imshow draws
    xy = nodes[0].reshape(resolution, resolution, 2)
    out = {
        "x": xy[0, :, 0].numpy(),
        "y": xy[:, 0, 1].numpy(),
        "evaluated": torch.cat(evaluated).numpy(),
        "curvature_total_abs": float(adaptive["curvature_total_abs"][0]),
        "curvature_total_abs_uniform": float(cell.sum()),
        "top_share": float(ranked[:top].sum() / cell.sum()) if float(cell.sum()) > 0 else 0.0,
        "peak_K": float(K_abs[peak]),
        "peak": tuple(float(v) for v in nodes[0, peak]),
        "peak_sigma_max": float(sigma[peak, 0]),
        "median_sigma_max": float(sigma[good, 0].median()),
        "peak_sigma_min": float(sigma[peak, 1]),
        "median_sigma_min": float(sigma[good, 1].median()),
    }
    for name, values in masked.items():
        shown = torch.where(good, values, torch.full_like(values, float("nan")))
        out[name] = shown.reshape(resolution, resolution).numpy()
    return out
