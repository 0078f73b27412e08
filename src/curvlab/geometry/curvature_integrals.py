"""∫|K| dA, ∫K dA and the area of a surface by the adaptive rule, from the engine's jets.

What is here::

    curvature_density(J, H)                  |K| √det g, K √det g, √det g from jets (the engine)
    adaptive_curvature(f, low, high)         ∫|K| dA, ∫K dA and the area of a map's surface
    curvature_integrals(jets_at, low, high)  the same for surfaces given by their jets

K and √det g come from the Gauss equation
(:func:`curvlab.geometry.gauss_equation.surface_from_jets`); the integrals from
:func:`curvlab.geometry.adaptive.adaptive_midpoint`, refined on |K| √det g.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from curvlab.geometry.adaptive import adaptive_midpoint, as_boxes
from curvlab.geometry.gauss_equation import PointBatch, jets, surface_from_jets

__all__ = ["adaptive_curvature", "curvature_density", "curvature_integrals"]


def curvature_density(jacobian: torch.Tensor, hessian: torch.Tensor) -> torch.Tensor:
    """The integrands of a surface's curvature from its (whitened) jets, shape (..., 4):
    |K| √det g, K √det g, √det g and 1 where the surface is an immersion; all 0 where it is not
    (:func:`curvlab.geometry.gauss_equation.surface_from_jets`: J (..., d, 2), H (..., d, 2, 2)).
    """
    surface = surface_from_jets(jacobian, hessian)
    dA, K = surface["volume_element"], surface["K"]
    return torch.stack([K.abs() * dA, K * dA, dA, surface["immersed"].to(dA.dtype)], -1)


def adaptive_curvature(
    f: Callable[[torch.Tensor], torch.Tensor],
    low,
    high,
    cov=None,
    *,
    domain: Callable[[torch.Tensor], torch.Tensor] | None = None,
    resolution: int = 64,
    tolerance: float = 0.01,
    cells_per_round: int = 512,
    max_rounds: int = 64,
    absolute: float = 1e-9,
) -> dict:
    """∫|K| dA, ∫K dA and the area of the surface f over boxes (..., 2) (∩ ``domain``), with
    the metric g = Jᵀ Σ⁻¹ J of ``cov`` Σ (identity when None), by :func:`adaptive_midpoint`
    refined on |K| √det g.  ``f`` maps one point (2,) to (d,); K is the engine's (the Gauss
    equation on autodiff jets), 0 where f is not an immersion.  ``absolute``: an error on
    ∫|K| dA (a pure number) accepted whatever the integral, so that a flat surface is not
    refined for round-off.

    Returns tensors of the boxes' leading shape: ``curvature_total_abs`` (∫|K| dA),
    ``curvature_total`` (∫K dA), ``sheet_area`` (∫dA), their uniform ``resolution``² estimates
    ``*_uniform``, ``error`` (the estimate's error indicator for ``curvature_total_abs``),
    ``converged``, ``evaluations``, ``rounds``, and ``non_immersed``, the share of the
    integration domain (in du) where f is not an immersion, by the same rule.

    >>> import math
    >>> from curvlab.geometry.surfaces import sphere
    >>> s = sphere(2.0)
    >>> out = adaptive_curvature(s.f, torch.tensor([0.0, 0.0]), torch.tensor([math.pi, math.pi]))
    >>> round(float(out["curvature_total"]) / (2 * math.pi), 3)  # a hemisphere: 2π, any radius
    1.0
    """
    if not callable(f):
        raise TypeError(f"f: expected a function of one point (2,) -> (d,), got {type(f)}")
    low, high = as_boxes(low, high)
    checked = PointBatch(f, low.reshape(-1, 2)[:1], cov, None)  # d, Σ = L Lᵀ, f's output

    def whitened_jets(points: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        J, H = jets(f, points.reshape(-1, 2))
        J, H = checked.whiten(J), checked.whiten(H)
        return J.reshape(*points.shape[:-1], *J.shape[1:]), H.reshape(
            *points.shape[:-1], *H.shape[1:]
        )

    dtype = checked.flat.dtype
    return curvature_integrals(
        whitened_jets,
        low.to(dtype),
        high.to(dtype),
        domain=domain,
        resolution=resolution,
        tolerance=tolerance,
        cells_per_round=cells_per_round,
        max_rounds=max_rounds,
        absolute=absolute,
    )


def curvature_integrals(
    jets_at: Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]],
    low: torch.Tensor,
    high: torch.Tensor,
    *,
    domain: Callable[[torch.Tensor], torch.Tensor] | None = None,
    **settings,
) -> dict:
    """The integrals of :func:`adaptive_curvature` for surfaces given by their jets:
    ``jets_at(points)`` maps points (..., M, 2) to whitened J (..., M, d, 2) and H
    (..., M, d, 2, 2) (one surface per box: a map's autodiff jets, an ensemble's members);
    ``settings`` are :func:`adaptive_midpoint`'s.  With ``selective=True``,
    ``jets_at(points, boxes)`` is asked for the boxes still refined only: points (A, M, 2) of
    the boxes ``boxes`` (A,) (indices into the boxes' leading shape flattened), J (A, M, d, 2)
    and H (A, M, d, 2, 2); a batch then costs what its boxes cost, whatever its hardest.
    Returns :func:`adaptive_curvature`'s dict."""

    def density(points: torch.Tensor, *boxes) -> torch.Tensor:
        values = curvature_density(*jets_at(points, *boxes))
        ones = torch.ones_like(values[..., :1])  # the domain's own measure
        return torch.cat([values, ones], -1)

    out = adaptive_midpoint(density, low, high, domain=domain, **settings)
    curvature_total_abs, curvature_total, sheet_area, immersed, measure = out.integral.unbind(-1)
    return {
        "curvature_total_abs": curvature_total_abs,
        "curvature_total": curvature_total,
        "sheet_area": sheet_area,
        "curvature_total_abs_uniform": out.coarse[..., 0],
        "curvature_total_uniform": out.coarse[..., 1],
        "sheet_area_uniform": out.coarse[..., 2],
        "error": out.error,
        "converged": out.converged,
        "evaluations": out.evaluations,
        "rounds": out.rounds,
        "non_immersed": 1 - immersed / measure,
    }
