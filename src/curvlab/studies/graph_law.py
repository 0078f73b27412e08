"""The structured regime in closed form: h_L = (x, L·φ(x)), and the law its curvature obeys.

One two-key gated layer of :func:`curvlab.symbolic.structured_stack`, tied over L layers, reads
the input coordinates and writes along one fixed direction, so the stack is the graph of L·φ
with φ = γ a (gate times attention increment).  The Gaussian curvature of a graph gives

    K_L = L² det∇²φ / (1 + L²|∇φ|²)²,
    𝒦(L) = ∫_P |K_L| dA = ∫_P L² |det∇²φ| / (1 + L²|∇φ|²)^{3/2} dx,

rising like L² for small L and falling like (∫_P |det∇²φ| |∇φ|⁻³ dx) / L for large L; without
the gate φ is a ridge function (det∇²φ = 0) and the stack is flat.

- layers: :data:`StructuredLayer`, :func:`draw_structured_layer` (the book's random draw).
- maps: :func:`structured_stack_in_x` (SymPy, in x), :func:`structured_stack_map` and
  :func:`unstructured_stack_map` (torch, for the engine), :func:`structured_increment` (φ).
- the engine on the closed form: :func:`structured_curvature_total_abs` (∫|K| dA of the stack
  at many depths L, from one symbolic build).
- the law: :func:`graph_law_curvature`, :func:`graph_law_curvature_total_abs`,
  :func:`graph_law_tail_constant` (autodiff derivatives of φ, midpoint rule on P = [-1, 1]²).
- the study: :func:`structured_regime_study` (engine against law over seeds and depths) and
  :func:`structured_growth_summary` (its shape in L per seed).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np
import torch

from curvlab import arguments
from curvlab.analysis.growth import fit_power_law
from curvlab.geometry.measures import quadrature_grid
from curvlab.measurement.sheets import PATCH, sheet_curvature

__all__ = [
    "StructuredLayer",
    "draw_structured_layer",
    "graph_law_curvature",
    "graph_law_curvature_total_abs",
    "graph_law_tail_constant",
    "structured_curvature_total_abs",
    "structured_growth_summary",
    "structured_increment",
    "structured_regime_study",
    "structured_stack_in_x",
    "structured_stack_map",
    "unstructured_stack_map",
]

StructuredLayer = tuple[list[list[int]], list, list[int]]
"""(keys 2×2, values (u₁, u₂), gate weights w) of one two-key layer of
:func:`curvlab.symbolic.structured_stack`."""


def _input_symbols():
    import sympy as sp

    return sp.symbols("x1 x2", real=True)


def draw_structured_layer(seed: int) -> StructuredLayer:
    """Keys, values and gate weights of one nondegenerate two-key layer, drawn from ``seed``.

    Keys and gate weights are integers in −2..2, values half-integers in −1..1; a draw is kept
    when u₁ ≠ u₂ and w ∦ k₁ − k₂ (else the gated increment is a ridge, and the stack flat).
    This is the book's choice of layers, not the paper's.

    >>> keys, values, gate = draw_structured_layer(0)
    >>> len(keys), len(values), len(gate), values[0] != values[1]
    (2, 2, 2, True)
    """
    import sympy as sp

    arguments.integer("seed", seed, 0)
    generator = torch.Generator().manual_seed(seed)
    while True:
        keys = torch.randint(-2, 3, (2, 2), generator=generator)
        gate = torch.randint(-2, 3, (2,), generator=generator)
        values = torch.randint(-2, 3, (2,), generator=generator)
        ridge = keys[0] - keys[1]
        if values[0] != values[1] and gate[0] * ridge[1] != gate[1] * ridge[0]:
            halves = [sp.Rational(int(v), 2) for v in values]
            return keys.tolist(), halves, gate.tolist()


def structured_stack_in_x(depth, layer: StructuredLayer, gated: bool = True):
    """The weight-tied stack of :func:`curvlab.symbolic.structured_stack`, written in x.

    The library builds it in the rational chart t = eˣ; this substitutes t_i = exp(x_i), so the
    result is the map x ∈ ℝ² ↦ h_L(x) ∈ ℝ³ (a SymPy column in the symbols x1, x2).
    ``depth`` may be a SymPy symbol (the closed form in L) or a positive integer.
    """
    import sympy as sp

    from curvlab.symbolic import structured_stack

    keys, values, gate = layer
    embedding, coords = structured_stack(depth, keys, values, gate if gated else None)
    x1, x2 = _input_symbols()
    return embedding.subs({coords[0]: sp.exp(x1), coords[1]: sp.exp(x2)})


def structured_stack_map(layer: StructuredLayer, depth: int, gated: bool = True) -> Callable:
    """The stack of depth L as a torch map x (2,) → h_L (3,), for the curvature engine.

    >>> f = structured_stack_map(draw_structured_layer(0), 4, gated=False)
    >>> f(torch.zeros(2, dtype=torch.float64)).shape
    torch.Size([3])
    """
    from curvlab.geometry.curvature import lambdify_map

    return lambdify_map(structured_stack_in_x(depth, layer, gated), _input_symbols())


def structured_curvature_total_abs(
    layer: StructuredLayer, depths: Iterable[int], gated: bool = True, resolution: int = 12
) -> list[float]:
    """∫_P |K| dA of the weight-tied stack of ``layer`` at each of ``depths``, by the engine.

    The stack is built once in closed form in L (:func:`structured_stack_in_x` with a symbolic
    depth, h_L = (x, L·φ(x))), then each depth is substituted and its sheet measured by
    :func:`sheet_curvature` on the ``resolution``² midpoint grid of P = [-1, 1]²; no
    composition of L layers is needed, so L = 256 costs what L = 1 does.

    >>> layer = draw_structured_layer(0)
    >>> flat = structured_curvature_total_abs(layer, [1, 4], gated=False, resolution=4)
    >>> max(flat) < 1e-12  # ungated: a cylinder at every depth
    True
    """
    import sympy as sp

    from curvlab.geometry.curvature import lambdify_map

    L = sp.Symbol("L", positive=True)
    in_x = structured_stack_in_x(L, layer, gated)
    return [
        sheet_curvature(lambdify_map(in_x.subs(L, depth), _input_symbols()), resolution=resolution)[
            "curvature_total_abs"
        ]
        for depth in depths
    ]


def unstructured_stack_map(
    write_directions: Sequence[Sequence[int]], layer: StructuredLayer
) -> Callable:
    """Untied layers of one gated layer's weights, layer ℓ writing along ``write_directions[ℓ]``.

    :func:`curvlab.symbolic.unstructured_stack` in x, as a torch map x (2,) → h (2 + m,).
    """
    import sympy as sp

    from curvlab.geometry.curvature import lambdify_map
    from curvlab.symbolic import unstructured_stack

    keys, values, gate = layer
    embedding, coords = unstructured_stack([list(v) for v in write_directions], keys, values, gate)
    x1, x2 = _input_symbols()
    in_x = embedding.subs({coords[0]: sp.exp(x1), coords[1]: sp.exp(x2)})
    return lambdify_map(in_x, (x1, x2))


def structured_increment(layer: StructuredLayer) -> Callable:
    """φ = γ a, one gated layer's increment along the write direction: x (2,) → () (torch)."""
    import sympy as sp

    from curvlab.geometry.curvature import lambdify_map

    L = sp.Symbol("L", positive=True)
    third = structured_stack_in_x(L, layer, gated=True)[2].subs(L, 1)
    phi = lambdify_map(sp.Matrix([third]), _input_symbols())
    return lambda x: phi(x)[0]


def _increment_derivatives(phi: Callable, nodes: torch.Tensor):
    """|∇φ|² and det ∇²φ at ``nodes`` (n, 2), by autodiff."""
    from torch.func import grad, hessian, vmap

    slope2 = vmap(grad(phi))(nodes).square().sum(dim=-1)  # (n,)
    det = torch.linalg.det(vmap(hessian(phi))(nodes))  # (n,)
    return slope2, det


def graph_law_curvature(phi: Callable, depth: float, points: torch.Tensor) -> torch.Tensor:
    """K_L = L² det∇²φ / (1 + L²|∇φ|²)² of the graph of Lφ at ``points`` (n, 2), float64.

    >>> saddle = lambda x: x[0] * x[1]
    >>> float(graph_law_curvature(saddle, 1.0, torch.zeros(1, 2, dtype=torch.float64))[0])
    -1.0
    """
    points = torch.as_tensor(points, dtype=torch.float64)
    if points.ndim != 2 or points.shape[-1] != 2:
        raise ValueError(f"points: expected shape (n, 2), got {tuple(points.shape)}")
    slope2, det = _increment_derivatives(phi, points)
    return depth**2 * det / (1 + depth**2 * slope2) ** 2


def _patch_nodes(patch, resolution: int):
    nodes, weights = quadrature_grid(patch, resolution, rule="midpoint")
    return nodes.reshape(-1, 2), weights.reshape(-1)


def graph_law_curvature_total_abs(
    phi: Callable, depth: float, resolution: int = 12, patch=PATCH
) -> float:
    """𝒦(L) = ∫_P L²|det∇²φ| / (1 + L²|∇φ|²)^{3/2} dx, the law of the structured regime.

    Midpoint rule on ``patch`` (the grid of :func:`sheet_curvature`, so the two agree to
    rounding, not only to quadrature error).

    >>> bowl = lambda x: (x[0] ** 2 + x[1] ** 2) / 2
    >>> round(graph_law_curvature_total_abs(bowl, 1e-3, 8) / 1e-6, 4)  # L² ∫|det| dx = 4 L²
    4.0
    """
    nodes, weights = _patch_nodes(patch, resolution)
    slope2, det = _increment_derivatives(phi, nodes)
    return float((weights * depth**2 * det.abs() / (1 + depth**2 * slope2) ** 1.5).sum())


def graph_law_tail_constant(phi: Callable, resolution: int = 12, patch=PATCH) -> float:
    """lim L·𝒦(L) = ∫_P |det∇²φ| |∇φ|⁻³ dx (finite when ∇φ has no zero on P): the 1/L tail."""
    nodes, weights = _patch_nodes(patch, resolution)
    slope2, det = _increment_derivatives(phi, nodes)
    return float((weights * det.abs() / slope2**1.5).sum())


def structured_regime_study(
    seeds: Sequence[int] = (0, 1, 2, 3, 4),
    depths: Sequence[int] = (1, 2, 4, 8, 16, 32, 64, 128, 256),
    resolution: int = 12,
) -> list[dict]:
    """The exact structured regime, measured by the engine and by its law; tidy records.

    For every seed (a layer of :func:`draw_structured_layer`), depth and gate (gated or not):
    ``curvature_total_abs`` of the engine (:func:`sheet_curvature` of
    :func:`structured_stack_map`), ``law`` (:func:`graph_law_curvature_total_abs`; 0 for the
    ungated stack, a cylinder) and, per seed, ``tail_constant``
    (:func:`graph_law_tail_constant`).

    >>> rows = structured_regime_study(seeds=[0], depths=[1, 2], resolution=3)
    >>> [(r["gated"], r["depth"]) for r in rows]
    [(False, 1), (False, 2), (True, 1), (True, 2)]
    """
    records = []
    for seed in seeds:
        layer = draw_structured_layer(seed)
        phi = structured_increment(layer)
        tail = graph_law_tail_constant(phi, resolution)
        for gated in (False, True):
            for depth in depths:
                sheet = sheet_curvature(
                    structured_stack_map(layer, depth, gated), resolution=resolution
                )
                law = graph_law_curvature_total_abs(phi, depth, resolution) if gated else 0.0
                records.append(
                    {
                        "seed": seed,
                        "gated": gated,
                        "depth": depth,
                        "curvature_total_abs": sheet["curvature_total_abs"],
                        "non_immersed_nodes": sheet["non_immersed_nodes"],
                        "law": law,
                        "tail_constant": tail,
                    }
                )
    return records


def structured_growth_summary(structured: Iterable[dict]) -> list[dict]:
    """Per seed, the shape in L of the gated stack's ∫|K| dA from :func:`structured_regime_study`.

    Row: ``seed``, ``small_exponent`` (the power-law exponent over the first two depths; the
    law's small-L limit is 2), ``tail_exponent`` (over the last two; the law's limit is −1),
    ``peak_depth`` (the depth of the largest value), ``tail_ratio`` (L·𝒦(L) at the largest
    depth over the tail constant; → 1) and ``rises_first`` (strictly increasing over the first
    three depths).

    >>> rows = [{"seed": 0, "gated": True, "depth": d, "curvature_total_abs": v,
    ...          "tail_constant": 8.0} for d, v in ((1, 1.0), (2, 4.0), (4, 3.0), (8, 1.0))]
    >>> summary = structured_growth_summary(rows)[0]
    >>> round(summary["small_exponent"], 12), summary["peak_depth"], summary["tail_ratio"]
    (2.0, 2, 1.0)
    """
    by_seed: dict = {}
    for record in structured:
        if record["gated"]:
            by_seed.setdefault(record["seed"], []).append(record)
    if not by_seed:
        raise ValueError("structured: expected records of gated stacks (gated=True)")
    rows = []
    for seed, members in by_seed.items():
        members = sorted(members, key=lambda r: r["depth"])
        depths = [r["depth"] for r in members]
        totals = [r["curvature_total_abs"] for r in members]
        if len(depths) < 3:
            raise ValueError(f"structured: seed {seed} needs at least 3 depths, got {depths}")
        rows.append(
            {
                "seed": seed,
                "small_exponent": fit_power_law(depths[:2], totals[:2])["exponent"],
                "tail_exponent": fit_power_law(depths[-2:], totals[-2:])["exponent"],
                "peak_depth": depths[int(np.argmax(totals))],
                "tail_ratio": totals[-1] * depths[-1] / members[0]["tail_constant"],
                "rises_first": totals[0] < totals[1] < totals[2],
            }
        )
    return rows
