"""Tensor-product quadrature on a box patch of input space: the nodes every measure integrates on.

What is here::

    as_patch(patch)                          (low, high) pairs, checked
    quadrature_grid(patch, n, rule)          nodes (n, ..., n, k) and weights (n, ..., n)
    QUADRATURE_RULES                         "gauss-legendre", "midpoint"

Gauss–Legendre is exact for polynomials of degree 2n − 1 per axis (spectrally accurate for
smooth integrands such as √det g); the midpoint rule is second order, the better choice for
|K| across K = 0 and for periodic directions.  ``(weights * g(nodes)).sum()`` approximates
∫_patch g du.  Used by :mod:`curvlab.geometry.measures` (which re-exports :func:`quadrature_grid`).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from curvlab import arguments

__all__ = ["QUADRATURE_RULES", "as_patch", "quadrature_grid"]

QUADRATURE_RULES = ("gauss-legendre", "midpoint")


def as_patch(patch) -> list[tuple[float, float]]:
    """A box patch as (low, high) float pairs, finite with low < high (TypeError/ValueError)."""
    try:
        bounds = [(float(low), float(high)) for low, high in patch]
    except (TypeError, ValueError) as error:
        raise TypeError(
            f"patch: expected a sequence of (low, high) pairs, one per coordinate, got {patch!r}"
        ) from error
    if not bounds or any(not (math.isfinite(a) and math.isfinite(b) and a < b) for a, b in bounds):
        raise ValueError(f"patch: every (low, high) must be finite with low < high, got {bounds}")
    return bounds


def _one_axis(low: float, high: float, n: int, rule: str) -> tuple[np.ndarray, np.ndarray]:
    if rule == "gauss-legendre":
        nodes, weights = np.polynomial.legendre.leggauss(n)
        half = (high - low) / 2
        return low + half * (nodes + 1), half * weights
    width = (high - low) / n
    return low + width * (np.arange(n) + 0.5), np.full(n, width)


def quadrature_grid(patch, resolution=32, rule="gauss-legendre", *, dtype=torch.float64):
    """Nodes (n, ..., n, k) and weights (n, ..., n) of a tensor-product rule on a box patch.

    ``patch`` is one (low, high) pair per coordinate (k pairs); ``resolution`` n, the nodes per
    axis; ``rule`` is "gauss-legendre" or "midpoint".  ``(weights * g(nodes)).sum()`` approximates
    ∫_patch g du.

    >>> nodes, weights = quadrature_grid([(0.0, 1.0), (0.0, 2.0)], 3)
    >>> tuple(nodes.shape), round(float(weights.sum()), 12)
    ((3, 3, 2), 2.0)
    """
    bounds = as_patch(patch)
    if not isinstance(resolution, int | np.integer) or resolution < 1:
        raise ValueError(f"resolution: expected a positive integer, got {resolution!r}")
    arguments.one_of("rule", rule, QUADRATURE_RULES)
    axes = [_one_axis(low, high, int(resolution), rule) for low, high in bounds]
    nodes = np.stack(np.meshgrid(*[a[0] for a in axes], indexing="ij"), axis=-1)
    weights = np.ones(())
    for _, w in axes:
        weights = np.multiply.outer(weights, w)
    return torch.as_tensor(nodes, dtype=dtype), torch.as_tensor(weights, dtype=dtype)
