"""Scale-free summaries of curvature, for comparing layers, depths and models.

K has units of 1/length², so a layer that merely shrinks its input looks "more curved".  The
summaries here are unchanged when the image is rescaled (MATH-NOTES §4.3):

Surfaces (k = 2), over a fixed input patch P = [a₀, b₀] × [a₁, b₁], with dA = √det g du::

    sheet_area                 A = ∫_P √det g du                     (scales like c²)
    curvature_total            ∫_P K dA                              (Gauss–Bonnet: 2πχ if closed)
    curvature_total_abs        ∫_P |K| dA   (area of the Gauss image, with multiplicity)
    mean_curvature             K̄ = ∫_P K du / ∫_P du   (plain average over the input patch)
    dimensionless_curvature    K̄ · A                                 (scale-free)
    positive_fraction          ∫_{K·A > tol} dA / A   (share of the image area where K > 0)

Sheets (:func:`sheet_measures`, the measure every experiment uses): the same integrals over
the nodes where the map is an immersion (the others are excluded and counted), optionally only
inside a ``region``, plus ∫_{K>0} dA, ∫_{K<0} dA, max |K| and mean |K|, as a
:class:`SheetMeasures`.  :func:`surface_measures` instead requires an immersion at every node.

Curves (Poole et al. 2016), for h(θ) = f(x(θ)) with velocity v and acceleration a::

    κ = ‖a − (a·v̂) v̂‖ / ‖v‖²     L_E = ∫ ‖v‖ dθ     L_G = ∫ κ ‖v‖ dθ
    (L_G is the length of the unit-tangent curve: 2π for a circle of any radius)

Quadrature: :func:`quadrature_grid` (from :mod:`curvlab.geometry.quadrature`, re-exported here),
tensor-product Gauss–Legendre or midpoint nodes on the box patch.  Closed curves use the
periodic trapezoid rule.  Pure functions: either
a map ``f`` (one point (k,) -> (d,), as in :mod:`curvlab.curvature`) or precomputed grids.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch.func import jacfwd, vmap

from curvlab import arguments
from curvlab.geometry.curvature import gaussian_curvature, metric
from curvlab.geometry.gauss_equation import (
    PointBatch,
    describe_indices,
    jets,
    surface_from_jets,
    whitening_factor,
)
from curvlab.geometry.quadrature import as_patch, quadrature_grid

__all__ = [
    "CurveMeasures",
    "SheetMeasures",
    "SurfaceMeasures",
    "area",
    "curve_curvature",
    "curve_measures",
    "curve_measures_from_samples",
    "quadrature_grid",
    "sheet_measures",
    "surface_measures",
    "surface_measures_from_grid",
]


@dataclass(frozen=True)
class SurfaceMeasures:
    """Scale-free curvature summaries of a surface over a fixed input patch (floats)."""

    sheet_area: float
    curvature_total: float
    curvature_total_abs: float
    mean_curvature: float
    dimensionless_curvature: float
    positive_fraction: float


@dataclass(frozen=True)
class SheetMeasures:
    """Curvature of a 2-D sheet over the immersed nodes of a patch (see :func:`sheet_measures`).

    The float fields are None when no node is an immersion.  Scale-free: ``curvature_total``,
    ``curvature_total_abs``, ``dimensionless_curvature``, ``positive_fraction``; raw
    (units of 1/length² or length²): ``sheet_area``, ``positive_area``, ``negative_area``,
    ``max_abs_curvature``, ``mean_abs_curvature``.
    """

    sheet_area: float | None
    curvature_total: float | None  # ∫ K dA
    curvature_total_abs: float | None  # ∫ |K| dA
    positive_area: float | None  # ∫_{K > 0} dA
    negative_area: float | None  # ∫_{K < 0} dA
    max_abs_curvature: float | None  # max |K| over the nodes
    mean_abs_curvature: float | None  # ∫ |K| du / ∫ du, the plain average over the patch
    dimensionless_curvature: float | None  # K̄ · A, K̄ = ∫ K du / ∫ du
    positive_fraction: float | None  # positive_area / sheet_area
    immersed_nodes: int
    non_immersed_nodes: int

    def as_dict(self) -> dict:
        """The fields as a plain dict (for tidy records and CSV rows)."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class CurveMeasures:
    """Poole-style summaries of a curve's image: lengths and curvature (floats)."""

    euclidean_length: float
    grassmannian_length: float
    mean_curvature: float  # L_G / L_E, the arclength average of κ
    max_curvature: float


def area(f, patch, resolution=32, cov=None, *, rule="gauss-legendre") -> float:
    """The k-dimensional area A = ∫_patch √det g du of f's image (g = Jᵀ Σ⁻¹ J).

    >>> import math, torch
    >>> sphere = lambda x: torch.stack([torch.sin(x[0]) * torch.cos(x[1]),
    ...                                 torch.sin(x[0]) * torch.sin(x[1]), torch.cos(x[0])])
    >>> math.isclose(area(sphere, [(0, math.pi), (0, 2 * math.pi)]), 4 * math.pi, rel_tol=1e-12)
    True
    """
    nodes, weights = quadrature_grid(patch, resolution, rule)
    volume_element = torch.sqrt(torch.linalg.det(metric(f, nodes, cov)))
    return float((weights * volume_element).sum())


def _common_grid(**tensors) -> list[torch.Tensor]:
    """The named tensors as float64 on the CPU, checked to share one shape and be finite."""
    values = [torch.as_tensor(t, dtype=torch.float64).detach().cpu() for t in tensors.values()]
    if len({tuple(t.shape) for t in values}) != 1:
        shapes = ", ".join(str(tuple(t.shape)) for t in values)
        raise ValueError(f"{', '.join(tensors)}: expected one common shape, got {shapes}")
    for name, tensor in zip(tensors, values, strict=True):
        if not torch.isfinite(tensor).all():
            raise ValueError(f"{name}: must be finite (found NaN or inf)")
    return values


def surface_measures_from_grid(K, volume_element, weights, *, positive_tolerance=1e-9):
    """:class:`SurfaceMeasures` from K, √det g and quadrature weights on the same grid.

    The three arguments are tensors (or arrays) of one common shape.  A point counts as
    positively curved when the dimensionless K·A exceeds ``positive_tolerance``, so that
    round-off on a flat surface (|K| ~ 1e-16) does not count as curvature.

    >>> import torch
    >>> ones = torch.ones(4, 4, dtype=torch.float64)
    >>> surface_measures_from_grid(ones, ones, ones / 16).curvature_total_abs
    1.0
    """
    K, volume_element, weights = _common_grid(K=K, volume_element=volume_element, weights=weights)
    if (volume_element < 0).any() or (weights < 0).any() or weights.sum() <= 0:
        raise ValueError("volume_element, weights: must be nonnegative, with positive total weight")
    dA = weights * volume_element
    total_area = float(dA.sum())
    if total_area <= 0:
        raise ValueError("volume_element: the image has zero area over the patch")
    mean_K = float((weights * K).sum() / weights.sum())
    positive = K * total_area > positive_tolerance
    return SurfaceMeasures(
        sheet_area=total_area,
        curvature_total=float((K * dA).sum()),
        curvature_total_abs=float((K.abs() * dA).sum()),
        mean_curvature=mean_K,
        dimensionless_curvature=mean_K * total_area,
        positive_fraction=float(dA[positive].sum() / total_area),
    )


def surface_measures(
    f, patch, resolution=32, cov=None, *, rule="gauss-legendre", positive_tolerance=1e-9
) -> SurfaceMeasures:
    """Scale-free curvature summaries of a surface f over a fixed 2-D input ``patch``.

    K by :func:`curvlab.curvature.gaussian_curvature` (so f must be an immersion at every
    node), √det g by :func:`curvlab.curvature.metric`, integrals by :func:`quadrature_grid`.

    >>> import math, torch
    >>> sphere = lambda x: 3 * torch.stack([torch.sin(x[0]) * torch.cos(x[1]),
    ...                                     torch.sin(x[0]) * torch.sin(x[1]), torch.cos(x[0])])
    >>> m = surface_measures(sphere, [(0, math.pi), (0, 2 * math.pi)])
    >>> math.isclose(m.curvature_total, 4 * math.pi, rel_tol=1e-10), m.positive_fraction
    (True, 1.0)
    """
    bounds = as_patch(patch)
    if len(bounds) != 2:
        raise ValueError(f"patch: surface measures need a 2-D patch, got {len(bounds)} pairs")
    nodes, weights = quadrature_grid(bounds, resolution, rule)
    K = gaussian_curvature(f, nodes, cov)
    volume_element = torch.sqrt(torch.linalg.det(metric(f, nodes, cov)))
    return surface_measures_from_grid(
        K, volume_element, weights, positive_tolerance=positive_tolerance
    )


def sheet_measures(
    f,
    patch,
    resolution=12,
    cov=None,
    *,
    rule="midpoint",
    region=None,
    positive_tolerance=1e-9,
    dtype=torch.float64,
    device=None,
    chunk_size=None,
) -> SheetMeasures:
    """Curvature of the sheet f: (2,) -> (d,) over a 2-D ``patch``, where f is an immersion.

    The one sheet-curvature measure of the library.  K and √det g (g = Jᵀ Σ⁻¹ J, Σ = ``cov``)
    come from one pass of the Gauss-equation engine (:mod:`curvlab.geometry.gauss_equation`) at the
    nodes of :func:`quadrature_grid` (``rule``, midpoint by default: |K| is not smooth where K
    changes sign).  Nodes where f is not an immersion (σ_min/σ_max of the whitened Jacobian
    below :data:`curvlab.curvature.IMMERSION_TOLERANCE`, or a derivative not finite) are
    excluded and counted in ``non_immersed_nodes``; the integrals run over the others.
    ``region``, if given, maps the nodes (n, 2) to a bool tensor (n,): only nodes where it is
    True are used or counted (to integrate where the data lie).  A node counts as positively
    (negatively) curved when K·A > ``positive_tolerance`` (< −``positive_tolerance``), so
    round-off on a flat sheet is not curvature.  ``device``: where the nodes are placed (that
    of f's parameters); ``dtype``, ``chunk_size`` as in :mod:`curvlab.curvature`.

    >>> import math
    >>> from curvlab.geometry.surfaces import sphere
    >>> m = sheet_measures(sphere(2.0), [(0.5, 2.5), (0.0, 3.0)], 16)
    >>> round(m.mean_abs_curvature, 12), m.positive_fraction, m.non_immersed_nodes
    (0.25, 1.0, 0)
    """
    bounds = as_patch(patch)
    if len(bounds) != 2:
        raise ValueError(f"patch: sheet measures need a 2-D patch, got {len(bounds)} pairs")
    nodes, weights = quadrature_grid(bounds, resolution, rule, dtype=dtype)
    nodes, weights = nodes.reshape(-1, 2), weights.reshape(-1)
    if device is not None:
        nodes, weights = nodes.to(device), weights.to(device)
    if region is not None:
        inside = _region_mask(region, nodes)
        nodes, weights = nodes[inside], weights[inside]
    batch = PointBatch(f, nodes, cov, dtype)
    jacobian, hessian = jets(f, batch.flat, chunk_size)
    surface = surface_from_jets(batch.whiten(jacobian), batch.whiten(hessian), batch.tolerance)
    good = surface["immersed"]
    counts = {"immersed_nodes": int(good.sum()), "non_immersed_nodes": int((~good).sum())}
    if not good.any():
        empty = [field.name for field in dataclasses.fields(SheetMeasures)][:-2]
        return SheetMeasures(**dict.fromkeys(empty), **counts)
    K, volume_element, weights = surface["K"][good], surface["volume_element"][good], weights[good]
    K, dA, weights = (t.detach().cpu().double() for t in (K, weights * volume_element, weights))
    total_area = float(dA.sum())
    mean_K = float((weights * K).sum() / weights.sum())
    positive, negative = K * total_area > positive_tolerance, K * total_area < -positive_tolerance
    return SheetMeasures(
        sheet_area=total_area,
        curvature_total=float((K * dA).sum()),
        curvature_total_abs=float((K.abs() * dA).sum()),
        positive_area=float(dA[positive].sum()),
        negative_area=float(dA[negative].sum()),
        max_abs_curvature=float(K.abs().max()),
        mean_abs_curvature=float((weights * K.abs()).sum() / weights.sum()),
        dimensionless_curvature=mean_K * total_area,
        positive_fraction=float(dA[positive].sum()) / total_area,
        **counts,
    )


def _region_mask(region, nodes: torch.Tensor) -> torch.Tensor:
    if not callable(region):
        raise TypeError(f"region: expected a callable nodes (n, 2) -> bool (n,), got {region!r}")
    mask = region(nodes)
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise TypeError(f"region: must return a bool tensor, got {_describe(mask)}")
    if mask.shape != nodes.shape[:1]:
        raise ValueError(
            f"region: must return shape ({nodes.shape[0]},), one flag a node, got "
            f"{tuple(mask.shape)}"
        )
    if not mask.any():
        raise ValueError("region: selects no node of the patch")
    return mask.to(nodes.device)


def _describe(value) -> str:
    if isinstance(value, torch.Tensor):
        return f"a tensor of dtype {value.dtype}"
    return type(value).__name__


def curve_curvature(f, curve: Callable, theta, cov=None, *, dtype=torch.float64):
    """Curvature κ and speed ‖v‖ of θ ↦ f(curve(θ)) at each θ, two tensors of θ's shape.

    ``curve`` maps a 0-dim tensor θ to an input point (k,); v and a are its first and second
    θ-derivatives after f (forward-mode autodiff), whitened by Σ = ``cov``.
    κ = ‖a − (a·v̂) v̂‖ / ‖v‖².  Raises ValueError (listing them) at θ where v = 0.

    >>> import torch
    >>> circle = lambda t: 2 * torch.stack([torch.cos(t), torch.sin(t)])
    >>> kappa, speed = curve_curvature(lambda x: x, circle, torch.linspace(0, 1, 3))
    >>> kappa.tolist(), speed.tolist()
    ([0.5, 0.5, 0.5], [2.0, 2.0, 2.0])
    """
    if not callable(f) or not callable(curve):
        raise TypeError("f, curve: expected callables (curve: θ -> (k,), f: (k,) -> (d,))")
    theta = torch.as_tensor(theta, dtype=dtype)
    if not torch.isfinite(theta).all() or theta.numel() == 0:
        raise ValueError("theta: expected a nonempty tensor of finite parameter values")
    flat = theta.reshape(-1)

    def image(t):
        return f(curve(t))

    probe = image(flat[0])
    if not isinstance(probe, torch.Tensor) or probe.ndim != 1:
        raise ValueError("f, curve: f(curve(θ)) must be a tensor of shape (d,)")
    factor = whitening_factor(cov, probe.shape[0], probe)

    def velocity_twice(t):
        v = jacfwd(image)(t)
        return v, v

    acceleration, velocity = vmap(jacfwd(velocity_twice, has_aux=True))(flat)  # (n, d) each
    if factor is not None:
        velocity = torch.linalg.solve_triangular(factor, velocity.T, upper=False).T
        acceleration = torch.linalg.solve_triangular(factor, acceleration.T, upper=False).T
    speed = torch.linalg.vector_norm(velocity, dim=-1)
    stalled = ~(speed > 0) | ~torch.isfinite(acceleration).all(dim=-1)
    if stalled.any():
        raise ValueError(
            f"theta: the curve's image has zero speed or is not finite at "
            f"{describe_indices(stalled, theta.shape)}; κ is undefined there"
        )
    unit = velocity / speed[:, None]
    normal = acceleration - (acceleration * unit).sum(-1, keepdim=True) * unit
    kappa = torch.linalg.vector_norm(normal, dim=-1) / speed**2
    return kappa.reshape(theta.shape), speed.reshape(theta.shape)


def curve_measures_from_samples(kappa, speed, weights) -> CurveMeasures:
    """:class:`CurveMeasures` from κ, ‖v‖ and quadrature weights in θ (one common shape).

    >>> import torch
    >>> n = torch.ones(8, dtype=torch.float64)
    >>> curve_measures_from_samples(n, 2 * n, n / 8).grassmannian_length
    2.0
    """
    kappa, speed, weights = _common_grid(kappa=kappa, speed=speed, weights=weights)
    for name, tensor in (("kappa", kappa), ("speed", speed), ("weights", weights)):
        if (tensor < 0).any():
            raise ValueError(f"{name}: must be finite and nonnegative")
    euclidean = float((weights * speed).sum())
    if euclidean <= 0:
        raise ValueError("speed: the curve's image has zero length")
    grassmannian = float((weights * kappa * speed).sum())
    return CurveMeasures(
        euclidean_length=euclidean,
        grassmannian_length=grassmannian,
        mean_curvature=grassmannian / euclidean,
        max_curvature=float(kappa.max()),
    )


def curve_measures(
    f,
    curve: Callable,
    interval: Sequence[float] = (0.0, 2 * math.pi),
    points=256,
    *,
    closed=True,
    cov=None,
) -> CurveMeasures:
    """Poole-style measures (κ, L_E, L_G) of the image of a 1-D input curve under f.

    θ runs over ``interval``; a ``closed`` curve (the default: a loop, such as Poole et al.'s
    great circle) uses the periodic trapezoid rule on ``points`` equally spaced θ, an open one
    Gauss–Legendre nodes.  A circle of any radius has L_G = 2π.

    >>> import math, torch
    >>> circle = lambda t: 5 * torch.stack([torch.cos(t), torch.sin(t), 0 * t])
    >>> m = curve_measures(lambda x: x, circle)
    >>> math.isclose(m.grassmannian_length, 2 * math.pi)
    True
    >>> math.isclose(m.euclidean_length, 10 * math.pi)
    True
    """
    ((low, high),) = as_patch([interval])
    arguments.integer("points", points, 2, kinds=(int, np.integer))
    if closed:
        theta = low + (high - low) * torch.arange(points, dtype=torch.float64) / points
        weights = torch.full((points,), (high - low) / points, dtype=torch.float64)
    else:
        nodes, weights = quadrature_grid([(low, high)], int(points))
        theta, weights = nodes[:, 0], weights
    kappa, speed = curve_curvature(f, curve, theta, cov)
    return curve_measures_from_samples(kappa, speed, weights)
