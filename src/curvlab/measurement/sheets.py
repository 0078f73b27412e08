"""Three curvature measures of a trained classifier's representation sheet x ∈ ℝ² ↦ r(x) ∈ ℝ^d.

From the Jacobian J = ∂r/∂x (d×2) and the second derivatives H_ij = ∂²r/∂x_i∂x_j (d-vectors),
with metric g = JᵀJ and P_⊥ = I − J g⁻¹ Jᵀ the projection onto the normal space:

- **sheet** (intrinsic): Gaussian curvature by the Gauss equation,
  K = (⟨II₁₁, II₂₂⟩ − ‖II₁₂‖²) / det g with II_ij = P_⊥ H_ij, integrated as ∫|K| dA,
  dA = √det g du, over the region where the data lie (midpoint grid on the bounding box of the
  training points, nodes within 1.5 grid spacings of a training point); nodes where r is not
  an immersion (σ_min/σ_max of J below
  :data:`curvlab.geometry.gauss_equation.IMMERSION_TOLERANCE`) are excluded and counted.
  K, II and the immersion test are the engine's
  (:func:`curvlab.geometry.gauss_equation.surface_from_jets`).  K = 0 on a cylinder.
- **proxy** ρ: the finite-difference ratio
  ρ_h(x, u) = ‖r(x+hu) − 2r(x) + r(x−hu)‖ / ‖r(x+hu) − r(x−hu)‖, normalised by h, in its
  limit h → 0: ρ₀(x, u) = ‖H[u, u]‖ / (2‖Ju‖), averaged over test points x and random unit
  directions u.  It sees any second derivative, including reparametrisation along the sheet.
- **extrinsic** ρ_⊥: the same with the tangential (secant) component removed,
  ρ_⊥(x, u) = ‖P_⊥ H[u, u]‖ / (2‖Ju‖): the bending of the sheet in its ambient space, which a
  linear read-out turns into a curved boundary and which intrinsic K does not see.

:func:`finite_difference_rho` is ρ_h/h itself (for checking the limit and its stability in h).
All three are invariant under r ↦ c·r; ρ₀ and ρ_⊥ have units of 1/input length.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from curvlab.geometry.gauss_equation import surface_from_jets
from curvlab.geometry.measures import sheet_measures
from curvlab.models.attention import AttentionClassifier, representation_map

__all__ = [
    "data_region_grid",
    "direction_measures",
    "finite_difference_rho",
    "sheet_from_jets",
]


def sheet_from_jets(J: torch.Tensor, H: torch.Tensor, weights: torch.Tensor) -> dict:
    """∫|K| dA and companions from jets at quadrature nodes.

    J (..., N, d, 2), H (..., N, d, 2, 2), ``weights`` (..., N) the quadrature weights in the input
    plane (0 for nodes outside the region).  K, √det g and the immersion test come from the
    Gauss-equation engine (:func:`curvlab.geometry.gauss_equation.surface_from_jets`).  Returns
    tensors (...): ``curvature_total_abs`` (∫|K| dA), ``curvature_total`` (∫K dA), ``sheet_area``
    (∫dA), ``curvature_capped`` (∫ min(|K|, 1/m) dA, m the median of √det g over the nodes used: the
    spread-out curvature, blind to spikes of |K| above the sheet's own scale 1/m; invariant, like
    ∫|K| dA, under a rescaling of the representation, since K scales as 1/c² and √det g as c²),
    ``non_immersed`` (count of excluded nodes with positive weight), ``nodes`` (nodes used) and
    ``K`` (..., N) (0 at the nodes not used).
    """
    surface = surface_from_jets(J, H)
    good = surface["immersed"] & (weights > 0)
    K = torch.where(good, surface["K"], torch.zeros_like(surface["K"]))
    dA = surface["volume_element"] * weights * good
    scale = torch.where(good, surface["volume_element"], torch.full_like(K, torch.nan))
    cap = 1 / scale.nanmedian(dim=-1, keepdim=True).values  # NaN where no node is used
    capped = torch.minimum(K.abs(), torch.nan_to_num(cap, nan=0.0))
    return {
        "curvature_total_abs": (K.abs() * dA).sum(-1),
        "curvature_capped": (capped * dA).sum(-1),
        "curvature_total": (K * dA).sum(-1),
        "sheet_area": dA.sum(-1),
        "non_immersed": ((~good) & (weights > 0)).sum(-1),
        "nodes": good.sum(-1),
        "K": K,
    }


def direction_measures(J: torch.Tensor, H: torch.Tensor, directions: torch.Tensor) -> dict:
    """ρ₀ and ρ_⊥ (module docstring) at every point and direction, and their means.

    J (..., N, d, 2), H (..., N, d, 2, 2), ``directions`` (..., N, M, 2) unit vectors.
    Returns ``rho`` and ``rho_normal`` of shape (..., N, M) and their means over N and M
    (``rho_mean``, ``rho_normal_mean``, shape (...)); points that are not immersions (by
    :func:`curvlab.geometry.gauss_equation.surface_from_jets`) are left out of the means (and
    counted in ``non_immersed``).  P_⊥ H[u, u] = Σ u_a u_b II_ab, II the engine's normal part.
    """
    surface = surface_from_jets(J, H)
    good = surface["immersed"]  # (..., N)
    plane = torch.eye(J.shape[-2], 2, dtype=J.dtype, device=J.device)
    safe_J = torch.where(good[..., None, None], J, plane)
    Ju = torch.einsum("...dk,...mk->...md", safe_J, directions)  # (..., N, M, d)
    Huu = torch.einsum("...dij,...mi,...mj->...md", H, directions, directions)
    normal = torch.einsum("...ijd,...mi,...mj->...md", surface["second"], directions, directions)
    speed = 2 * Ju.norm(dim=-1)
    rho = Huu.norm(dim=-1) / speed
    rho_normal = normal.norm(dim=-1) / speed
    weight = good[..., None].to(rho.dtype).expand_as(rho)
    count = weight.sum((-1, -2)).clamp_min(1)
    return {
        "rho": rho,
        "rho_normal": rho_normal,
        "rho_mean": (rho * weight).sum((-1, -2)) / count,
        "rho_normal_mean": (rho_normal * weight).sum((-1, -2)) / count,
        "non_immersed": (~good).sum(-1),
    }


def finite_difference_rho(
    f: Callable[[torch.Tensor], torch.Tensor], points: torch.Tensor, directions, h: float
) -> torch.Tensor:
    """ρ_h(x, u) / h = ‖f(x+hu) − 2f(x) + f(x−hu)‖ / (h ‖f(x+hu) − f(x−hu)‖).

    ``f`` maps points (N, 2) to (N, d); ``directions`` (N, 2) unit vectors; returns (N,).
    Tends to ρ₀ = ‖H[u,u]‖/(2‖Ju‖) as h → 0 (error O(h²) plus rounding ~ ε/h²).

    >>> f = lambda x: torch.stack([x[:, 0], x[:, 1], 0.5 * (x ** 2).sum(1)], dim=1)
    >>> x = torch.zeros(1, 2, dtype=torch.float64)
    >>> u = torch.tensor([[1.0, 0.0]], dtype=torch.float64)
    >>> round(float(finite_difference_rho(f, x, u, 1e-3)[0]), 6)
    0.5
    """
    if not (isinstance(h, float | int) and h > 0):
        raise ValueError(f"h: expected a step > 0, got {h!r}")
    plus, centre, minus = f(points + h * directions), f(points), f(points - h * directions)
    return (plus - 2 * centre + minus).norm(dim=-1) / (h * (plus - minus).norm(dim=-1))


def data_region_grid(train_points: torch.Tensor, resolution: int = 12):
    """Midpoint grids on each member's data bounding box, weighted only near the data.

    ``train_points`` (E, n, 2).  Returns nodes (E, N, 2) and weights (E, N), N = ``resolution``², a
    node's weight the cell area if a training point lies within 1.5 cell widths, else 0.
    """
    if train_points.ndim != 3 or train_points.shape[-1] != 2:
        raise ValueError("train_points: expected a tensor (E, n, 2)")
    low = train_points.amin(dim=1)  # (E, 2)
    high = train_points.amax(dim=1)
    steps = (high - low) / resolution  # (E, 2)
    centres = (
        torch.arange(resolution, dtype=train_points.dtype, device=train_points.device) + 0.5
    )  # (P,)
    axes = low[:, None, :] + centres[None, :, None] * steps[:, None, :]  # (E, P, 2)
    gx = axes[:, None, :, 0].expand(-1, resolution, -1)
    gy = axes[:, :, None, 1].expand(-1, -1, resolution)
    nodes = torch.stack([gx.reshape(gx.shape[0], -1), gy.reshape(gy.shape[0], -1)], dim=-1)
    radius = 1.5 * steps.amax(dim=1)  # (E,)
    nearest = torch.cdist(nodes, train_points).amin(dim=-1)  # (E, N)
    cell = steps.prod(dim=1)  # (E,)
    weights = torch.where(nearest <= radius[:, None], cell[:, None], torch.zeros_like(nearest))
    return nodes, weights


# ---------------------------------------------------------------------------------------------
# the sheet statistics of any surface, and of a classifier's representation sheet

__all__ += ["PATCH", "SHEET_METRICS", "representation_curvature", "sheet_curvature"]

PATCH: tuple[tuple[float, float], tuple[float, float]] = ((-1.0, 1.0), (-1.0, 1.0))
"""The fixed input patch P = [-1, 1]² over which representation curvature is integrated."""

SHEET_METRICS: tuple[str, ...] = (
    "curvature_total_abs",
    "curvature_dimensionless",
    "curvature_positive_fraction",
    "curvature_mean_abs",
)
"""The sheet statistics of :func:`sheet_curvature`, under these names in every study's records:
∫_P |K| dA (scale-free, the headline), K̄ · A (scale-free), the share of the image area with
K > 0, and mean |K| over P (raw, NOT scale-free)."""


def sheet_curvature(
    f: Callable, patch=PATCH, resolution: int = 12, cov=None, *, device=None
) -> dict:
    """Curvature statistics of any surface f: (2,) -> (d,) over ``patch`` (midpoint grid).

    One pass of :func:`curvlab.geometry.measures.sheet_measures` (Σ = ``cov``, default I),
    returned as a flat record: the :data:`SHEET_METRICS`, ``sheet_area`` and the node counts
    ``curvature_nodes`` and ``non_immersed_nodes`` (nodes where f is not an immersion are
    excluded and counted, the curvature entries None when no node is one).  Scaling f by c
    multiplies K by 1/c² and A by c², so only ``curvature_mean_abs`` and ``sheet_area`` change.

    >>> sphere = lambda x: 2 * torch.stack([torch.sin(x[0]) * torch.cos(x[1]),
    ...                                     torch.sin(x[0]) * torch.sin(x[1]), torch.cos(x[0])])
    >>> stats = sheet_curvature(sphere, [(0.5, 2.5), (0.0, 3.0)], 16)
    >>> round(stats["curvature_mean_abs"], 12), stats["curvature_positive_fraction"]
    (0.25, 1.0)
    """
    sheet = sheet_measures(f, patch, resolution, cov, rule="midpoint", device=device)
    return {
        "curvature_nodes": sheet.immersed_nodes,
        "non_immersed_nodes": sheet.non_immersed_nodes,
        "curvature_total_abs": sheet.curvature_total_abs,
        "curvature_dimensionless": sheet.dimensionless_curvature,
        "curvature_positive_fraction": sheet.positive_fraction,
        "curvature_mean_abs": sheet.mean_abs_curvature,
        "sheet_area": sheet.sheet_area,
    }


def representation_curvature(
    model: AttentionClassifier, *, layer: int = -1, patch=PATCH, resolution: int = 12
) -> dict:
    """:func:`sheet_curvature` of the sheet x ∈ ``patch`` ↦ pooled representation after ``layer``.

    The map is :func:`curvlab.models.attention.representation_map` (Σ = I), evaluated on the model's
    device; ``resolution``² midpoint nodes.

    >>> from curvlab.models.attention import build_classifier
    >>> stats = representation_curvature(build_classifier("gated_headwise", seed=0),
    ...                                  resolution=4)
    >>> stats["curvature_nodes"] + stats["non_immersed_nodes"], stats["curvature_total_abs"] > 0
    (16, True)
    """
    device = next(model.parameters()).device
    f = representation_map(model, layer)
    return sheet_curvature(f, patch, resolution, device=device)
