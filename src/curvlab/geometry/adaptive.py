"""Integrals of curvature that converge when K has peaks narrower than a grid cell.

On a trained sheet |K| can be carried by a few spikes a hundredth of a grid cell wide, where
the larger singular value of the Jacobian collapses; a uniform midpoint grid hits or misses
them by chance, so its estimate of ∫|K| dA jumps as the grid is refined.  The rule here refines
where its own error estimate says it is wrong.

What is here::

    adaptive_midpoint(density, low, high)    a quadtree midpoint rule to a relative tolerance
    AdaptiveIntegral                         its result: integral, error estimate, evaluations
    disc_domain(centres, radius)             the union of discs, as a 1-Lipschitz level function

The rule.  The box [low, high] is cut into ``resolution``² cells (the base grid).  A cell C of
area a and centre c has a one-level estimate f(c)·a and a two-level estimate Σᵢ f(cᵢ)·a/4 over
its four quarter cells; the integral is estimated by the sum of every leaf's two-level
estimate, and each leaf's error indicator is |two-level − one-level| (for the midpoint rule, an
upper estimate of the two-level error where f is smooth, and the only honest signal where it is
not).  While the summed indicator exceeds ``tolerance`` × |estimate|, the leaves with the
largest indicators that together hold half of the summed indicator (Dörfler marking, at most
``cells_per_round`` per round) are split: their children become leaves, whose values are
already known, and the children's children are evaluated (16 points per split).  The first
channel of ``density`` drives the refinement; the others are integrated on the same leaves.

The integrals of curvature built on this rule are in :mod:`curvlab.geometry.curvature_integrals`.

The domain's edge.  With ``domain`` φ, a 1-Lipschitz function (a signed distance, or the
distance to a set of points minus a radius) and D = {φ ≤ 0}, the integrand is f · 1_D, and the
rule weighs each sample f(cᵢ) by the area of its quarter cell that lies in D: 1 or 0 for a
quarter whose centre is farther from the edge than its half-diagonal (|φ| ≥ reach: wholly in or
out, by the Lipschitz bound), else the share of a 16 × 16 grid of φ-samples of that quarter
inside D (cheap: φ needs no jets).  So the domain is integrated to 1/16 of a cell's side on
every cell the edge cuts, whatever f does there, and the error indicator measures f alone.  A
cell wholly outside D weighs 0 and is never split.

Everything is batched: boxes of any leading shape (...), each member refined by its own
indicators only, so its result does not depend on the others in the batch.  Deterministic.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from curvlab import arguments

__all__ = [
    "AdaptiveIntegral",
    "as_boxes",
    "adaptive_midpoint",
    "disc_domain",
]


@dataclass(frozen=True)
class AdaptiveIntegral:
    """What :func:`adaptive_midpoint` returns, each tensor with the boxes' leading shape (...).

    ``integral`` (..., c) or (...): the estimate per channel; ``coarse``: the uniform
    ``resolution``² midpoint estimate (same shape; a cell counted whole when its centre is in D),
    for comparison; ``error``: the summed error indicator of channel 0 at the end; ``converged``:
    error ≤ tolerance × |integral| (channel 0); ``evaluations``: the points at which this member's
    density was needed; ``rounds``: the rounds in which it was refined; ``leaves``: its cells at the
    end.
    """

    integral: torch.Tensor
    coarse: torch.Tensor
    error: torch.Tensor
    converged: torch.Tensor
    evaluations: torch.Tensor
    rounds: torch.Tensor
    leaves: torch.Tensor


def as_boxes(low, high) -> tuple[torch.Tensor, torch.Tensor]:
    """Boxes (..., 2) as two float tensors of one dtype, checked: finite, low < high."""
    low, high = torch.as_tensor(low), torch.as_tensor(high)
    if low.ndim < 1 or low.shape[-1] != 2 or high.shape != low.shape:
        raise ValueError(
            f"low, high: expected corners (..., 2) of one shape, got {tuple(low.shape)} and "
            f"{tuple(high.shape)}"
        )
    if not low.is_floating_point():
        low, high = low.double(), high.double()
    high = high.to(low.dtype)
    if not (torch.isfinite(low).all() and torch.isfinite(high).all() and (high > low).all()):
        raise ValueError("low, high: every box must be finite with low < high on both axes")
    return low, high


class _Evaluator:
    """Calls the density (and the domain) on points (E, M, 2), checking what comes back."""

    def __init__(self, density: Callable, domain: Callable | None, leading: torch.Size):
        self.density, self.domain, self.leading = density, domain, leading
        self.channels: int | None = None
        self.single = False

    def _call(self, function: Callable, name: str, points: torch.Tensor) -> torch.Tensor:
        members, count = points.shape[:2]
        values = torch.as_tensor(function(points.reshape(*self.leading, count, 2)))
        if values.shape[: len(self.leading) + 1] != (*self.leading, count):
            raise ValueError(
                f"{name}: expected values {(*self.leading, count)} or "
                f"{(*self.leading, count, 'c')} for points {(*self.leading, count, 2)}, got "
                f"{tuple(values.shape)}"
            )
        values = values.reshape(members, count, *values.shape[len(self.leading) + 1 :])
        if not torch.isfinite(values).all():
            raise ValueError(f"{name}: returned a value that is not finite")
        return values.to(points.dtype)

    def values(self, points: torch.Tensor) -> torch.Tensor:
        """f at the points: (E, M, c)."""
        values = self._call(self.density, "density", points)
        if self.channels is None:
            self.single = values.ndim == 2
            self.channels = 1 if self.single else values.shape[-1]
        if self.single:
            values = values[..., None]
        if values.ndim != 3 or values.shape[-1] != self.channels:
            raise ValueError("density: the number of channels changed between calls")
        return values

    def level(self, points: torch.Tensor) -> torch.Tensor:
        return self._call(self.domain, "domain", points)


_OFFSETS = ((0, 0), (0, 1), (1, 0), (1, 1))
"""The four children of the cell (i, j) at one level: (2i + a, 2j + b) at the next."""
_NEIGHBOURS = tuple((a, b) for a in (-1, 0, 1) for b in (-1, 0, 1) if (a, b) != (0, 0))
_SUBGRID = 16  # φ-samples per axis of a quarter cell that the domain's edge may cut
_KEY_BITS = 28  # resolution · 2^level < 2^28 per axis, so a (level, i, j) key fits in an int64
_LEVEL_BITS = 5


def _split_into(old, new, chosen, split) -> torch.Tensor:
    """Leaves ``old`` (E, L, ...) with child 0 of ``new`` (E, C, 4, ...) in the slots ``chosen``
    (E, C) where ``split``, and children 1-3 appended (E, L + 3C, ...)."""
    rest = new.shape[3:]
    index = chosen.reshape(*chosen.shape, *([1] * len(rest))).expand(-1, -1, *rest)
    mask = split.reshape(*split.shape, *([1] * len(rest)))
    slot = torch.where(mask, new[:, :, 0], old.gather(1, index))
    return torch.cat([old.scatter(1, index, slot), new[:, :, 1:].flatten(1, 2)], 1)


def _keys(index: torch.Tensor, level: torch.Tensor) -> torch.Tensor:
    """One int64 per cell (E, ...) from its integer position (E, ..., 2) and level (E, ...)."""
    flat = (index[..., 0] << _KEY_BITS) + index[..., 1]
    return (flat << _LEVEL_BITS) + level


def _balance(split, index, level, valid, cells_per_axis) -> torch.Tensor:
    """``split`` (E, L) grown so that the quadtree stays 2:1 balanced (adjacent leaves differ
    by at most one level) once every marked leaf is split: a leaf at level ℓ − 1 next to (or
    at a corner of) a marked leaf at level ℓ is marked too, and so on outwards.  Keeping the
    balance is what refines the neighbours of a peak that one cell's samples found, so that a
    peak lying across a cell's edge is not half counted."""
    order_keys = torch.where(valid, _keys(index, level), torch.iinfo(torch.long).max)
    keys, order = order_keys.sort(dim=1)
    fresh = split.clone()
    offsets = torch.tensor(_NEIGHBOURS, dtype=torch.long, device=index.device)  # (8, 2)
    while fresh.any():
        coarse = level - 1  # (E, L): the level of a neighbour that would break the balance
        beside = index[:, :, None, :] + offsets  # (E, L, 8, 2) neighbours at the same level
        size = cells_per_axis * 2**level  # (E, L) cells per axis at that level
        inside = ((beside >= 0) & (beside < size[..., None, None])).all(-1)
        inside &= (fresh & (coarse >= 0))[..., None]
        wanted = _keys(beside.div(2, rounding_mode="floor"), coarse[..., None].expand_as(inside))
        wanted = torch.where(inside, wanted, -1).flatten(1)  # (E, 8L)
        spot = torch.searchsorted(keys, wanted).clamp(max=keys.shape[1] - 1)
        found = keys.gather(1, spot) == wanted
        leaf = torch.where(found, order.gather(1, spot), 0)
        hit = torch.zeros_like(split, dtype=torch.int8)
        hit = hit.scatter_reduce(1, leaf, found.to(torch.int8), reduce="amax").bool()
        fresh = hit & ~split
        split = split | fresh
    return split


def adaptive_midpoint(
    density: Callable[[torch.Tensor], torch.Tensor],
    low,
    high,
    *,
    resolution: int = 64,
    tolerance: float = 0.01,
    domain: Callable[[torch.Tensor], torch.Tensor] | None = None,
    cells_per_round: int = 512,
    max_rounds: int = 64,
    marking: float = 0.5,
    absolute: float = 0.0,
) -> AdaptiveIntegral:
    """∫_{box ∩ D} f du by the quadtree midpoint rule of the module docstring, for boxes
    ``low``, ``high`` of shape (..., 2) (one integral per box, any leading shape).

    ``density(points)`` takes points (..., M, 2) (the box's own points in its row) and returns
    f (..., M), or (..., M, c) for c integrands refined together (channel 0 drives the
    refinement; make it nonnegative, e.g. |K| √det g).  ``domain(points)`` (optional) returns
    φ (..., M), 1-Lipschitz, with D = {φ ≤ 0}.  Refinement stops when the error estimate is at
    most ``tolerance`` × |integral| (channel 0) or at most ``absolute`` (for an integral that
    may be 0, such as ∫|K| dA of a flat sheet), or after ``max_rounds`` rounds; ``converged``
    says which.  ``marking``: the share of the summed indicator whose cells are split (at most
    ``cells_per_round`` of them, before the balance adds their neighbours).

    >>> low, high = torch.zeros(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64)
    >>> peak = lambda x: torch.exp(-((x - 0.3) ** 2).sum(-1) / (2 * 0.002**2))  # mass 2π·4e-6
    >>> out = adaptive_midpoint(peak, low, high, resolution=16, tolerance=0.01)
    >>> mass = 2 * torch.pi * 0.002**2
    >>> float(out.coarse) / mass < 0.01, abs(float(out.integral) / mass - 1) < 0.01
    (True, True)
    >>> bool(out.converged), float(out.error) <= 0.01 * float(out.integral)
    (True, True)
    """
    resolution = arguments.integer("resolution", resolution, 1)
    cells_per_round = arguments.integer("cells_per_round", cells_per_round, 1)
    max_rounds = arguments.integer("max_rounds", max_rounds, 0)
    tolerance = arguments.fraction("tolerance", tolerance)
    marking = arguments.number(  # 1 itself passes, with room for rounding above it
        "marking", marking, low=0, high=1 + 1e-12, low_open=True, high_open=True
    )
    arguments.number("absolute", absolute, low=0, finite=False)
    if resolution >= 2**_KEY_BITS:
        raise ValueError(
            f"resolution: expected fewer than 2**{_KEY_BITS} cells per axis, got {resolution}"
        )
    if not callable(density):
        raise TypeError(f"density: expected a function of points, got {type(density).__name__}")
    if domain is not None and not callable(domain):
        raise TypeError(f"domain: expected a function of points or None, got {type(domain)}")
    deepest = min(2**_LEVEL_BITS - 1, _KEY_BITS - resolution.bit_length())  # no split below it
    low, high = as_boxes(low, high)
    leading = low.shape[:-1]
    low, high = low.reshape(-1, 2), high.reshape(-1, 2)
    members, dtype, device = low.shape[0], low.dtype, low.device
    evaluate = _Evaluator(density, domain, leading)
    side0 = (high - low) / resolution  # (E, 2) sides of a base cell
    offsets = torch.tensor(_OFFSETS, dtype=torch.long, device=device)  # (4, 2)

    def side(level: torch.Tensor) -> torch.Tensor:
        """Sides (E, ..., 2) of cells at ``level`` (E, ...)."""
        scale = 2.0 ** level.to(dtype)[..., None]
        return side0.reshape(members, *([1] * (level.ndim - 1)), 2) / scale

    def centres(index: torch.Tensor, level: torch.Tensor) -> torch.Tensor:
        """Centres (E, ..., 2) of the cells at integer positions ``index`` (E, ..., 2)."""
        corner = low.reshape(members, *([1] * (level.ndim - 1)), 2)
        return corner + (index.to(dtype) + 0.5) * side(level)

    def kids(index: torch.Tensor, level: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Children (E, ..., 4, 2) of cells (E, ..., 2) at ``level`` (E, ...), and theirs."""
        return 2 * index[..., None, :] + offsets, (level + 1)[..., None].expand(*level.shape, 4)

    def flat(points: torch.Tensor) -> torch.Tensor:
        return points.reshape(members, -1, 2)

    sub = (torch.arange(_SUBGRID, dtype=dtype, device=device) + 0.5) / _SUBGRID - 0.5
    sub = torch.stack(torch.meshgrid(sub, sub, indexing="ij"), -1).reshape(-1, 2)  # (S², 2)

    def coverage(index: torch.Tensor, level: torch.Tensor) -> torch.Tensor:
        """The share (E, ...) of each cell (E, ..., 2) at ``level`` that lies in D."""
        if domain is None:
            return torch.ones(level.shape, dtype=dtype, device=device)
        middle, sides = centres(index, level), side(level)
        phi = evaluate.level(flat(middle)).reshape(level.shape)
        share = (phi <= 0).to(dtype)
        cut = (phi.abs() < sides.norm(dim=-1) / 2).reshape(members, -1)  # (E, N)
        count = int(cut.sum(1).max())
        if count == 0:
            return share
        picked, which = cut.to(torch.int8).topk(count, dim=1, sorted=False)  # (E, Q)
        at = which[..., None].expand(-1, -1, 2)
        points = (
            middle.reshape(members, -1, 2).gather(1, at)[:, :, None, :]
            + sub * (sides.reshape(members, -1, 2).gather(1, at)[:, :, None, :])
        )  # (E, Q, S², 2)
        inside = (evaluate.level(flat(points)).reshape(*which.shape, -1) <= 0).to(dtype)
        flat_share = share.reshape(members, -1)
        fine = torch.where(picked.bool(), inside.mean(-1), flat_share.gather(1, which))
        return flat_share.scatter(1, which, fine).reshape(level.shape)

    def sample(index: torch.Tensor, level: torch.Tensor):
        """The density at the centres of the children of cells (E, ..., 2), (E, ..., 4, c),
        and the share of each child in D, (E, ..., 4)."""
        child, child_level = kids(index, level)
        values = evaluate.values(flat(centres(child, child_level)))
        return values.reshape(*level.shape, 4, -1), coverage(child, child_level)

    odd = torch.arange(resolution, device=device)
    index = torch.stack(torch.meshgrid(odd, odd, indexing="ij"), -1).reshape(1, -1, 2)
    index = index.expand(members, -1, -1)  # (E, L, 2) integer positions at level 0
    level = torch.zeros(index.shape[:2], dtype=torch.long, device=device)
    value = evaluate.values(centres(index, level))  # (E, L, c)
    kid_value, kid_share = sample(index, level)  # (E, L, 4, c), (E, L, 4)
    channels = value.shape[-1]
    valid = torch.ones(index.shape[:2], dtype=torch.bool, device=device)
    evaluations = torch.full(
        (members,), 5 * resolution * resolution, dtype=torch.long, device=device
    )
    refined = torch.zeros(members, dtype=torch.long, device=device)
    area0 = side0.prod(-1)  # (E,)
    node_in = torch.ones_like(value[..., 0])  # the uniform rule: a node's cell in D or not
    if domain is not None:
        node_in = (evaluate.level(centres(index, level)) <= 0).to(dtype)
    coarse = (value * (node_in * area0[:, None])[..., None]).sum(1)  # (E, c)

    def state() -> tuple[torch.Tensor, torch.Tensor]:
        """Indicators (E, L) of channel 0 and two-level estimates (E, L, c) of the leaves."""
        area = (area0[:, None] / 4.0**level) * valid
        one = value[..., 0] * area * kid_share.mean(-1)
        two = (kid_value * kid_share[..., None]).sum(-2) * (area / 4)[..., None]
        return (two[..., 0] - one).abs(), two

    for _ in range(max_rounds):
        indicator, pieces = state()
        total = indicator.sum(1)
        active = total > torch.clamp(tolerance * pieces[..., 0].sum(1).abs(), min=absolute)
        splittable = torch.where(level < deepest, indicator, 0.0)
        if not (active & (splittable.amax(1) > 0)).any():
            break
        # Ties (a symmetric peak's mirror cells) are ordered by the cell, never by its slot:
        # the slots depend on the batch's padding, and a box's result must not.
        by_cell = torch.where(valid, _keys(index, level), torch.iinfo(torch.long).max)
        by_cell = by_cell.argsort(dim=1)
        ranked, order = splittable.gather(1, by_cell).sort(dim=1, descending=True, stable=True)
        order = by_cell.gather(1, order)
        # Dörfler marking: the fewest largest cells holding ``marking`` of the summed indicator
        needed = (ranked.cumsum(1) < marking * total[:, None]).sum(1) + 1
        needed = torch.minimum(needed, (ranked > 0).sum(1)).clamp(max=cells_per_round)
        needed = torch.where(active, needed, 0)
        rank = torch.empty_like(order).scatter_(
            1, order, torch.arange(order.shape[1]).expand_as(order)
        )
        marked = _balance(rank < needed[:, None], index, level, valid, resolution)
        marked &= level < deepest
        take = int(marked.sum(1).max())
        split, chosen = marked.to(torch.int8).topk(take, dim=1, sorted=False)
        split = split.bool()  # (E, C): chosen (E, C) holds every marked leaf, padded
        pick = chosen[..., None]
        new_index, new_level = kids(
            index.gather(1, pick.expand(-1, -1, 2)), level.gather(1, chosen)
        )
        new_value = kid_value.gather(1, pick[..., None].expand(-1, -1, 4, channels))
        grand, grand_share = sample(new_index, new_level)  # (E, C, 4, 4, c), (E, C, 4, 4)
        # child 0 takes its parent's slot, children 1-3 are appended (invalid where not split)
        index, level, value, kid_value, kid_share = (
            _split_into(old, new, chosen, split)
            for old, new in (
                (index, new_index),
                (level, new_level),
                (value, new_value),
                (kid_value, grand),
                (kid_share, grand_share),
            )
        )
        valid = torch.cat([valid, split[..., None].expand(-1, -1, 3).flatten(1)], 1)
        evaluations += 16 * split.sum(1)
        refined += active.long()
    indicator, pieces = state()
    integral, error = pieces.sum(1), indicator.sum(1)
    limit = torch.clamp(tolerance * integral[:, 0].abs(), min=absolute)
    if evaluate.single:
        integral, coarse = integral[..., 0], coarse[..., 0]
    shape = (*leading, *integral.shape[1:])
    return AdaptiveIntegral(
        integral=integral.reshape(shape),
        coarse=coarse.reshape(shape),
        error=error.reshape(leading),
        converged=(error <= limit).reshape(leading),
        evaluations=evaluations.reshape(leading),
        rounds=refined.reshape(leading),
        leaves=valid.sum(1).reshape(leading),
    )


def disc_domain(centres: torch.Tensor, radius: float) -> Callable[[torch.Tensor], torch.Tensor]:
    """φ(x) = minᵢ |x − pᵢ| − r, 1-Lipschitz, D = {φ ≤ 0} the union of the discs of radius r
    about the points ``centres`` (..., n, 2) (one set per box of the same leading shape).

    >>> phi = disc_domain(torch.tensor([[0.0, 0.0], [3.0, 0.0]]), 1.0)
    >>> phi(torch.tensor([[0.5, 0.0], [1.5, 0.0]])).tolist()
    [-0.5, 0.5]
    """
    arguments.positive("radius", radius)
    centres = torch.as_tensor(centres)
    if centres.ndim < 2 or centres.shape[-1] != 2 or centres.shape[-2] == 0:
        raise ValueError(f"centres: expected points (..., n, 2), got {tuple(centres.shape)}")

    def level(points: torch.Tensor) -> torch.Tensor:
        held = centres.to(points.dtype)
        return torch.cdist(points, held.expand(*points.shape[:-2], *held.shape[-2:])).amin(-1) - (
            radius
        )

    return level
