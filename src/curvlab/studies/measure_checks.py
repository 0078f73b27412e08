"""The study's three curvature measures, checked where the answer is known.

Before they are trusted on trained models, the measures of :mod:`curvlab.measurement.sheets`
(∫|K| dA, the proxy ρ₀ and its extrinsic part ρ_⊥) are computed, with the very functions the
study uses, on surfaces of :mod:`curvlab.geometry.surfaces` whose values are known in closed
form, and
the finite-difference proxy is checked against its h → 0 limit.

:func:`closed_form_checks` returns one row per (surface, measure): ``surface``, ``measure``,
``computed``, ``exact`` and ``error`` (absolute).  The surfaces and their exact values, with
f_a = ∂f/∂x_a and ρ₀(x, u) = ‖H[u, u]‖ / (2‖Ju‖) (module docstring of
:mod:`curvlab.measurement.sheets`):

- the **sphere** of radius r in the chart (θ, φ), over θ ∈ [π/4, 3π/4], φ ∈ [0, π/2]:
  ∫|K| dA = ∫∫ sin θ dθ dφ = (cos π/4 − cos 3π/4) · π/2 = π/√2 (the area of the Gauss image,
  whatever r).  Along u = ∂_θ: f_θθ = −f (radial, hence normal) and ‖f_θ‖ = r, so
  ρ₀ = ρ_⊥ = r/(2r) = 1/2;
- the **cylinder** (r cos φ, r sin φ, z): K = 0, so ∫|K| dA = 0; along ∂_φ, f_φφ is radial and
  ‖f_φ‖ = r: ρ₀ = ρ_⊥ = 1/2.  Intrinsically flat, extrinsically bent;
- the **plane in a bent chart** (x + y², y, 0): K = 0; along ∂_y, f_yy = (2, 0, 0) lies in the
  plane, ‖f_y‖ = √(1 + 4y²): ρ₀ = 1/√(1 + 4y²), ρ_⊥ = 0 (the chart bends, the surface does not).

So the three measures disagree by design: ∫|K| dA sees only the sphere, ρ_⊥ the sphere and the
cylinder, ρ₀ all three.  :func:`rho_step_stability` compares the finite-difference ratio
ρ_h/h (:func:`~curvlab.measurement.sheets.finite_difference_rho`) with the autograd ρ₀ for a
range of steps h on any classifier's representation sheet.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence

import torch
from torch.func import vmap

from curvlab import arguments
from curvlab.geometry.gauss_equation import jets
from curvlab.geometry.quadrature import quadrature_grid
from curvlab.geometry.surfaces import cylinder, sphere
from curvlab.measurement.sheets import direction_measures, finite_difference_rho, sheet_from_jets
from curvlab.models.attention import AttentionClassifier, representation_map

__all__ = ["STEPS", "closed_form_checks", "rho_step_stability"]

STEPS: tuple[float, ...] = (1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6)
"""The steps h of :func:`rho_step_stability` by default."""

_SPHERE_PATCH = ((math.pi / 4, 3 * math.pi / 4), (0.0, math.pi / 2))


def _bent_plane(x: torch.Tensor) -> torch.Tensor:
    """The plane z = 0 in the chart (x, y) ↦ (x + y², y, 0)."""
    return torch.stack([x[0] + x[1] ** 2, x[1], torch.zeros_like(x[0])])


def _measures(f, patch, direction, resolution: int) -> dict:
    """∫|K| dA over ``patch`` and the mean ρ₀, ρ_⊥ along ``direction`` at its nodes."""
    nodes, weights = quadrature_grid(patch, resolution, "midpoint")  # (n, n, 2), (n, n)
    nodes, weights = nodes.reshape(-1, 2), weights.reshape(-1)
    J, H = jets(f, nodes)  # (N, d, 2), (N, d, 2, 2)
    sheet = sheet_from_jets(J[None], H[None], weights[None])
    u = torch.tensor(direction, dtype=torch.float64).expand(1, nodes.shape[0], 1, 2)
    rho = direction_measures(J[None], H[None], u)
    return {
        "∫|K| dA": float(sheet["curvature_total_abs"][0]),
        "ρ₀": float(rho["rho_mean"][0]),
        "ρ⊥": float(rho["rho_normal_mean"][0]),
        "nodes": nodes,
    }


def closed_form_checks(radius: float = 2.0, resolution: int = 32) -> list[dict]:
    """The three measures on the sphere, the cylinder and the bent plane (module docstring),
    beside their exact values: rows ``surface``, ``measure``, ``computed``, ``exact``,
    ``error``.  ∫|K| dA is a midpoint rule (error O(1/resolution²)); ρ₀ and ρ_⊥ are exact
    up to rounding.

    >>> rows = closed_form_checks(resolution=8)
    >>> len(rows), max(r["error"] for r in rows if r["measure"] != "∫|K| dA") < 1e-12
    (9, True)
    """
    arguments.integer("resolution", resolution, 2, type_error=True)
    rows = []

    def add(surface, measured, exact):
        for measure, value in exact.items():
            rows.append(
                {
                    "surface": surface,
                    "measure": measure,
                    "computed": measured[measure],
                    "exact": value,
                    "error": abs(measured[measure] - value),
                }
            )

    ball = sphere(radius)
    on_sphere = _measures(ball, _SPHERE_PATCH, (1.0, 0.0), resolution)
    add(ball.name, on_sphere, {"∫|K| dA": math.pi / math.sqrt(2), "ρ₀": 0.5, "ρ⊥": 0.5})
    tube = cylinder(radius)
    on_cylinder = _measures(tube, ((0.0, math.pi), (-1.0, 1.0)), (1.0, 0.0), resolution)
    add(tube.name, on_cylinder, {"∫|K| dA": 0.0, "ρ₀": 0.5, "ρ⊥": 0.5})
    bent = _measures(_bent_plane, ((-1.0, 1.0), (-1.0, 1.0)), (0.0, 1.0), resolution)
    y = bent["nodes"][:, 1]
    exact_rho = float((1 / torch.sqrt(1 + 4 * y**2)).mean())
    add("plane in the chart (x + y², y, 0)", bent, {"∫|K| dA": 0.0, "ρ₀": exact_rho, "ρ⊥": 0.0})
    return rows


def rho_step_stability(
    model: AttentionClassifier,
    points: torch.Tensor,
    *,
    steps: Sequence[float] = STEPS,
    directions: int = 4,
    seed: int = 0,
) -> list[dict]:
    """ρ_h/h against the autograd limit ρ₀ on ``model``'s representation sheet, per step h.

    At each of ``points`` (N, 2) along ``directions`` random unit directions (seeded), in
    float64: rows ``h``, ``median_gap`` and ``max_gap``, the relative gap |ρ_h/h − ρ₀| / ρ₀.
    The gap falls like h² (truncation) until rounding, which grows like ε/h², takes over.

    >>> from curvlab.models.attention import build_classifier
    >>> rows = rho_step_stability(build_classifier("gated_elementwise", seed=0),
    ...                           torch.zeros(2, 2), steps=(1e-3,), directions=2)
    >>> rows[0]["h"], rows[0]["max_gap"] < 1e-4
    (0.001, True)
    """
    if not isinstance(model, AttentionClassifier):
        raise TypeError(f"model: expected an AttentionClassifier, got {type(model).__name__}")
    if not isinstance(points, torch.Tensor) or points.ndim != 2 or points.shape[-1] != 2:
        raise ValueError("points: expected a tensor of shape (N, 2)")
    if not steps or any(not (isinstance(h, float | int) and h > 0) for h in steps):
        raise ValueError(f"steps: expected positive step sizes, got {steps!r}")
    model = copy.deepcopy(model).double()  # the caller's model keeps its dtype
    points = points.detach().to(torch.float64)
    one = representation_map(model)
    generator = torch.Generator().manual_seed(seed)
    u = torch.randn(points.shape[0], directions, 2, generator=generator, dtype=torch.float64)
    u = u / u.norm(dim=-1, keepdim=True)
    J, H = jets(one, points)
    limit = direction_measures(J, H, u)["rho"]  # (N, M)
    many = vmap(one)
    x = points[:, None].expand_as(u).reshape(-1, 2)
    rows = []
    for h in steps:
        estimate = finite_difference_rho(many, x, u.reshape(-1, 2), float(h)).reshape(limit.shape)
        gap = ((estimate - limit).abs() / limit).flatten()
        rows.append({"h": h, "median_gap": float(gap.median()), "max_gap": float(gap.max())})
    return rows
