"""∫|K| dA on a data domain fixed independently of the grid, and the estimate's convergence.

:func:`curvlab.measurement.sheets.data_region_grid` keeps a grid node within 1.5 cell widths of a
training point, so its region shrinks as the grid is refined and the estimand changes with the
resolution.  :func:`data_domain_grid` fixes the domain instead: the points of the data's
bounding box within a radius r of a training point (the same midpoint nodes, weighted by
whether they lie in that domain), so refining the grid converges to one integral;
:func:`grid_convergence` measures how much an estimate per sheet changes when its grid is
doubled, |log(I_P / I_2P)|.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from curvlab import arguments
from curvlab.measurement.sheets import data_region_grid

__all__ = ["DOMAIN_RADIUS", "data_domain_grid", "grid_convergence"]


DOMAIN_RADIUS: float = 0.2
"""The radius r (input units) of the fixed data domain of :func:`data_domain_grid`: about the
mean spacing of 128 training points on [-1, 1]² (2/√128 ≈ 0.18)."""


def data_domain_grid(
    train_points: torch.Tensor, resolution: int = 12, radius: float = DOMAIN_RADIUS
):
    """Midpoint grids on each member's data bounding box, weighted on a domain fixed by the data.

    The domain D = {x in the bounding box of the training points : min_i |x − p_i| ≤ r} does
    not depend on the grid, so Σ_nodes w f → ∫_D f dx as the grid is refined (the midpoint
    rule on the cells whose centre lies in D; the cells cut by ∂D make the error O(1/P)).
    ``train_points`` (E, n, 2), ``radius`` r > 0 in input units.  Returns nodes (E, N, 2) and
    weights (E, N), N = P² for P = ``resolution``, a node's weight the cell area when the
    node lies in D, else 0; weights.sum(-1) is the area of D as this grid sees it.

    >>> points = torch.tensor([[[0.0, 0.0], [1.0, 1.0]]], dtype=torch.float64)
    >>> [round(float(data_domain_grid(points, p, 0.5)[1].sum()), 2) for p in (10, 100, 400)]
    [0.4, 0.39, 0.39]
    """
    what = "a positive number of input units"
    arguments.number("radius", radius, low=0, low_open=True, finite=False, expected=what)
    arguments.number("radius", radius, expected="a finite number")
    if train_points.ndim != 3 or train_points.shape[-1] != 2:
        raise ValueError("train_points: expected a tensor (E, n, 2)")
    arguments.integer("resolution", resolution, 1)
    nodes, _ = data_region_grid(train_points, resolution)  # the same midpoint nodes
    sides = (train_points.amax(dim=1) - train_points.amin(dim=1)) / resolution  # (E, 2)
    nearest = torch.cdist(nodes, train_points).amin(dim=-1)  # (E, N)
    cell = sides.prod(dim=1)  # (E,)
    weights = torch.where(nearest <= radius, cell[:, None], torch.zeros_like(nearest))
    return nodes, weights


def grid_convergence(integral: Callable[[int], torch.Tensor], resolutions) -> dict:
    """How an integral estimate per sheet changes when its grid is doubled.

    ``integral(P)`` gives the estimates I_P (E,) (one per sheet, e.g. ∫|K| dA on
    :func:`data_domain_grid` at resolution P); for each P in ``resolutions``,
    |log(I_P / I_2P)| per sheet and its median over sheets.  Sheets where I_P or I_2P is not
    a positive finite number have no ratio: they are left out of the median and counted.
    Returns a dict P -> {"log_ratio": [per sheet, None where undefined], "median", "undefined"}.

    >>> convergence = grid_convergence(lambda p: torch.tensor([1 + 1 / p, 2 - 1 / p]), [10])
    >>> [round(v, 4) for v in convergence[10]["log_ratio"]], round(convergence[10]["median"], 4)
    ([0.0465, 0.026], 0.0362)
    """
    resolutions = list(resolutions)
    if not resolutions or any(not arguments.is_integer(p) or p < 1 for p in resolutions):
        raise ValueError(
            f"resolutions: expected a nonempty list of integers >= 1, got {resolutions!r}"
        )
    cache: dict[int, torch.Tensor] = {}

    def estimate(p: int) -> torch.Tensor:
        if p not in cache:
            cache[p] = torch.as_tensor(integral(p), dtype=torch.float64).reshape(-1).cpu()
        return cache[p]

    out = {}
    for p in resolutions:
        coarse, fine = estimate(p), estimate(2 * p)
        if coarse.shape != fine.shape:
            raise ValueError(f"integral: {p} and {2 * p} gave different numbers of sheets")
        good = torch.isfinite(coarse) & torch.isfinite(fine) & (coarse > 0) & (fine > 0)
        ratios = torch.where(good, (coarse / fine.where(good, 1.0)).log().abs(), 0.0)
        values = [float(r) if ok else None for r, ok in zip(ratios, good, strict=True)]
        defined = ratios[good]
        if defined.numel() == 0:
            raise ValueError(
                f"integral: no sheet has a positive finite estimate at {p} and {2 * p}"
            )
        out[p] = {
            "log_ratio": values,
            "median": float(defined.quantile(0.5)),  # an even count: the middle two's mean
            "undefined": int((~good).sum()),
        }
    return out
