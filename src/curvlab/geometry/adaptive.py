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

Everything is batched: boxes of any leading shape (...), each refined by its own indicators
only, round by round together.  A box whose error estimate has met the tolerance (or that
can split no more, or has had ``max_rounds``) leaves the batch with its result; the others
go on, and only their points are evaluated when the density is ``selective`` (called on some
boxes: an ensemble's members), so a batch costs what its members cost, not as many times its
hardest member (:mod:`curvlab.geometry.density_calls` groups them by their needs).  A box's
result does not depend on the others: its leaves are kept in the order of their cells, its
sums are taken in that order, and its ties are broken by the cell, so that given the same
values of its density it is the same to the last bit alone or in any batch (and each value
of the ensemble's jets is: :data:`curvlab.geometry.density_calls.PAD`).  Deterministic.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from curvlab import arguments
from curvlab.geometry.density_calls import DensityCalls

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


_OFFSETS = ((0, 0), (0, 1), (1, 0), (1, 1))
"""The four children of the cell (i, j) at one level: (2i + a, 2j + b) at the next."""
_NEIGHBOURS = tuple((a, b) for a in (-1, 0, 1) for b in (-1, 0, 1) if (a, b) != (0, 0))
_SUBGRID = 16  # φ-samples per axis of a quarter cell that the domain's edge may cut
_KEY_BITS = 28  # resolution · 2^level < 2^28 per axis, so a (level, i, j) key fits in an int64
_LEVEL_BITS = 5
_LAST = torch.iinfo(torch.long).max  # the key of an empty slot: after every cell
_DISTANCES = 2**18  # point-centre distances of disc_domain held at once (in the caches)


def _ordered_sum(values: torch.Tensor) -> torch.Tensor:
    """Σ over axis 1 of (A, L, ...), added one slot after another (a cumulative sum), so that
    empty slots (zeros) anywhere, or after the last leaf, leave every bit of the sum as it is."""
    return values.cumsum(1)[:, -1]


def _split_into(old, new, chosen, split) -> torch.Tensor:
    """Leaves ``old`` (A, L, ...) with child 0 of ``new`` (A, C, 4, ...) in the slots ``chosen``
    (A, C) where ``split``, and children 1-3 appended (A, L + 3C, ...)."""
    rest = new.shape[3:]
    index = chosen.reshape(*chosen.shape, *([1] * len(rest))).expand(-1, -1, *rest)
    mask = split.reshape(*split.shape, *([1] * len(rest)))
    slot = torch.where(mask, new[:, :, 0], old.gather(1, index))
    return torch.cat([old.scatter(1, index, slot), new[:, :, 1:].flatten(1, 2)], 1)


def _keys(index: torch.Tensor, level: torch.Tensor) -> torch.Tensor:
    """One int64 per cell (E, ...) from its integer position (E, ..., 2) and level (E, ...)."""
    flat = (index[..., 0] << _KEY_BITS) + index[..., 1]
    return (flat << _LEVEL_BITS) + level


def _in_cell_order(tree: dict) -> dict:
    """The quadtree ``tree`` (tensors (A, L, ...), its leaves where ``valid``) with every box's
    leaves in the order of their cells' keys and its empty slots after them, trimmed to the
    most leaves a box has.  The order of a box's slots is then its own, whatever the batch and
    its padding: the sums, the marking's ties and the order of the points evaluated follow it."""
    keys = torch.where(tree["valid"], _keys(tree["index"], tree["level"]), _LAST)
    order = keys.sort(dim=1).indices[:, : int(tree["valid"].sum(1).max())]
    return {
        name: t.gather(
            1, order.reshape(*order.shape, *([1] * (t.ndim - 2))).expand_as(t[:, : order.shape[1]])
        )
        for name, t in tree.items()
    }


def _balance(split, index, level, valid, cells_per_axis) -> torch.Tensor:
    """``split`` (A, L) grown so that the quadtree stays 2:1 balanced (adjacent leaves differ
    by at most one level) once every marked leaf is split: a leaf at level ℓ − 1 next to (or
    at a corner of) a marked leaf at level ℓ is marked too, and so on outwards.  Keeping the
    balance is what refines the neighbours of a peak that one cell's samples found, so that a
    peak lying across a cell's edge is not half counted.  The leaves are in cell order
    (:func:`_in_cell_order`), so a cell is found by bisection on the keys."""
    keys = torch.where(valid, _keys(index, level), _LAST)  # (A, L), ascending
    offsets = torch.tensor(_NEIGHBOURS, dtype=torch.long, device=index.device)  # (8, 2)
    fresh = split
    while (count := int(fresh.sum(1).max())) > 0:
        # the leaves marked last round, first in each row: (A, F) slots
        live, at = fresh.to(torch.int8).sort(dim=1, descending=True, stable=True)
        live, at = live[:, :count].bool(), at[:, :count]
        cell, coarse = index.gather(1, at[..., None].expand(-1, -1, 2)), level.gather(1, at) - 1
        beside = cell[:, :, None, :] + offsets  # (A, F, 8, 2) neighbours at the same level
        size = cells_per_axis * 2 ** (coarse + 1)  # (A, F) cells per axis at that level
        inside = ((beside >= 0) & (beside < size[..., None, None])).all(-1)
        inside &= (live & (coarse >= 0))[..., None]  # a neighbour one level coarser breaks it
        wanted = _keys(beside.div(2, rounding_mode="floor"), coarse[..., None].expand_as(inside))
        wanted = torch.where(inside, wanted, -1).flatten(1)  # (A, 8F)
        spot = torch.searchsorted(keys, wanted).clamp(max=keys.shape[1] - 1)
        found = keys.gather(1, spot) == wanted
        hit = torch.zeros_like(split, dtype=torch.int8)
        hit = hit.scatter_reduce(1, spot, found.to(torch.int8), reduce="amax").bool()
        fresh = hit & ~split
        split = split | fresh
    return split


def adaptive_midpoint(
    density: Callable[..., torch.Tensor],
    low,
    high,
    *,
    resolution: int = 64,
    tolerance: float = 0.01,
    domain: Callable[..., torch.Tensor] | None = None,
    cells_per_round: int = 512,
    max_rounds: int = 64,
    marking: float = 0.5,
    absolute: float = 0.0,
    selective: bool = False,
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

    A box that has stopped leaves the batch.  With ``selective``, ``density(points, boxes)``
    and ``domain(points, boxes)`` are called on the boxes still refined only: points (A, M, 2)
    of the A boxes ``boxes`` (A,), their ascending indices in the boxes flattened in C order
    (an ensemble's members: select them); without it every call carries every box, those that
    have stopped at their centres.

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
    if not isinstance(selective, bool):
        raise TypeError(f"selective: expected True or False, got {selective!r}")
    deepest = min(2**_LEVEL_BITS - 1, _KEY_BITS - resolution.bit_length())  # no split below it
    low, high = as_boxes(low, high)
    leading = low.shape[:-1]
    low, high = low.reshape(-1, 2), high.reshape(-1, 2)
    boxes, dtype, device = low.shape[0], low.dtype, low.device
    middle_of_box = (low + high) / 2  # (E, 2): where a box not asked about is evaluated
    density_at = DensityCalls(density, "density", leading, selective, middle_of_box)
    level_at = DensityCalls(domain, "domain", leading, selective, middle_of_box)
    returned: list[int] = []  # the density's channels, once known (0: one, no last axis)
    side0 = (high - low) / resolution  # (E, 2) sides of a base cell
    reach0 = side0.norm(dim=-1) / 2  # (E,) half its diagonal
    area0 = side0.prod(-1)  # (E,)
    offsets = torch.tensor(_OFFSETS, dtype=torch.long, device=device)  # (4, 2)

    def per_cell(tensor: torch.Tensor, rows: torch.Tensor, level: torch.Tensor) -> torch.Tensor:
        """A box's ``tensor`` (E, ...) of the ``rows`` (A,), shaped to broadcast over the
        cells (A, ...) of ``level``."""
        return tensor[rows].reshape(len(rows), *([1] * (level.ndim - 1)), *tensor.shape[1:])

    def side(level: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        """Sides (A, ..., 2) of cells at ``level`` (A, ...)."""
        return per_cell(side0, rows, level) / 2.0 ** level.to(dtype)[..., None]

    def centres(index: torch.Tensor, level: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        """Centres (A, ..., 2) of the cells at integer positions ``index`` (A, ..., 2)."""
        return per_cell(low, rows, level) + (index.to(dtype) + 0.5) * side(level, rows)

    def kids(index: torch.Tensor, level: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Children (A, ..., 4, 2) of cells (A, ..., 2) at ``level`` (A, ...), and theirs."""
        return 2 * index[..., None, :] + offsets, (level + 1)[..., None].expand(*level.shape, 4)

    def flat(points: torch.Tensor) -> torch.Tensor:
        return points.reshape(points.shape[0], -1, 2)

    sub = (torch.arange(_SUBGRID, dtype=dtype, device=device) + 0.5) / _SUBGRID - 0.5
    sub = torch.stack(torch.meshgrid(sub, sub, indexing="ij"), -1).reshape(-1, 2)  # (S², 2)

    def values(points: torch.Tensor, rows: torch.Tensor, needed: torch.Tensor) -> torch.Tensor:
        """f (A, M, c) at the points (A, M, 2) of the boxes ``rows``, the first ``needed`` (A,)
        of each row evaluated at least."""
        out = density_at(points, rows, needed)
        if not returned:
            returned.append(0 if out.ndim == 2 else out.shape[-1])
        out = out[..., None] if returned[0] == 0 else out
        if out.ndim != 3 or out.shape[-1] != max(returned[0], 1):
            raise ValueError("density: the number of channels changed between calls")
        return out

    def coverage(index, level, rows, needed) -> torch.Tensor:
        """The share (A, ...) of each cell (A, ..., 2) at ``level`` that lies in D, for the
        first ``needed`` (A,) cells of each row (flattened; the others: anything)."""
        if domain is None:
            return torch.ones(level.shape, dtype=dtype, device=device)
        middle, sides = centres(index, level, rows), side(level, rows)
        phi = level_at(flat(middle), rows, needed).reshape(level.shape)
        share = (phi <= 0).to(dtype)
        reach = per_cell(reach0, rows, level) / 2.0 ** level.to(dtype)
        cut = (phi.abs() < reach).reshape(len(rows), -1)  # (A, N)
        cut &= torch.arange(cut.shape[1], device=device) < needed[:, None]
        count = int(cut.sum(1).max())
        if count == 0:
            return share
        picked, which = cut.to(torch.int8).sort(dim=1, descending=True, stable=True)
        picked, which = picked[:, :count].bool(), which[:, :count]  # (A, Q): cut cells first
        at = which[..., None].expand(-1, -1, 2)
        points = (
            flat(middle).gather(1, at)[:, :, None, :]
            + sub * flat(sides).gather(1, at)[:, :, None, :]
        )  # (A, Q, S², 2)
        phi = level_at(flat(points), rows, cut.sum(1) * _SUBGRID**2)
        inside = (phi.reshape(*which.shape, -1) <= 0).to(dtype)
        flat_share = share.reshape(len(rows), -1)
        fine = torch.where(picked, inside.mean(-1), flat_share.gather(1, which))
        return flat_share.scatter(1, which, fine).reshape(level.shape)

    def sample(index: torch.Tensor, level: torch.Tensor, rows: torch.Tensor, needed):
        """The density at the centres of the children of cells (A, ..., 2), (A, ..., 4, c),
        and the share of each child in D, (A, ...,  4), for the first ``needed`` (A,) cells
        of each row (flattened)."""
        child, child_level = kids(index, level)
        found = values(flat(centres(child, child_level, rows)), rows, 4 * needed)
        return found.reshape(*level.shape, 4, -1), coverage(child, child_level, rows, 4 * needed)

    def state(tree: dict, rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Indicators (A, L) of channel 0 and two-level estimates (A, L, c) of the leaves."""
        area = (area0[rows][:, None] / 4.0 ** tree["level"]) * tree["valid"]
        one = tree["value"][..., 0] * area * tree["kid_share"].mean(-1)  # shares: exact sums
        four = tree["kid_value"] * tree["kid_share"][..., None]  # (A, L, 4, c)
        two = ((four[:, :, 0] + four[:, :, 1]) + (four[:, :, 2] + four[:, :, 3])) * (area / 4)[
            ..., None
        ]
        return (two[..., 0] - one).abs(), two

    rows = torch.arange(boxes, device=device)  # the boxes still refined
    odd = torch.arange(resolution, device=device)
    index = torch.stack(torch.meshgrid(odd, odd, indexing="ij"), -1).reshape(1, -1, 2)
    index = index.expand(boxes, -1, -1)  # (E, L, 2) integer positions at level 0, in key order
    level = torch.zeros(index.shape[:2], dtype=torch.long, device=device)
    every = torch.full((boxes,), resolution**2, device=device)
    value = values(centres(index, level, rows), rows, every)  # (E, L, c)
    kid_value, kid_share = sample(index, level, rows, every)  # (E, L, 4, c), (E, L, 4)
    channels = value.shape[-1]
    tree = {
        "index": index,
        "level": level,
        "value": value,
        "kid_value": kid_value,
        "kid_share": kid_share,
        "valid": torch.ones(index.shape[:2], dtype=torch.bool, device=device),
    }
    node_in = torch.ones_like(value[..., 0])  # the uniform rule: a node's cell in D or not
    if domain is not None:
        node_in = (level_at(centres(index, level, rows), rows, every) <= 0).to(dtype)
    coarse = _ordered_sum(value * (node_in * area0[:, None])[..., None])  # (E, c)
    integral = torch.zeros(boxes, channels, dtype=dtype, device=device)
    error = torch.zeros(boxes, dtype=dtype, device=device)
    leaves = torch.zeros(boxes, dtype=torch.long, device=device)
    evaluations = torch.full((boxes,), 5 * resolution**2, dtype=torch.long, device=device)
    refined = torch.zeros(boxes, dtype=torch.long, device=device)

    for round_ in range(max_rounds + 1):
        indicator, pieces = state(tree, rows)
        total, sums = _ordered_sum(indicator), _ordered_sum(pieces)  # (A,), (A, c)
        splittable = torch.where(tree["level"] < deepest, indicator, 0.0)
        going = total > torch.clamp(tolerance * sums[:, 0].abs(), min=absolute)
        going &= (splittable.amax(1) > 0) & (round_ < max_rounds)
        if not going.all():  # the boxes that stop here leave the batch, their results kept
            done = rows[~going]
            integral[done], error[done] = sums[~going], total[~going]
            leaves[done] = tree["valid"][~going].sum(1)
            width = int(tree["valid"][going].sum(1).max()) if going.any() else 0
            rows, total, splittable = rows[going], total[going], splittable[going, :width]
            tree = {name: t[going, :width] for name, t in tree.items()}  # still in cell order
            if len(rows) == 0:
                break
        index, level, valid = tree["index"], tree["level"], tree["valid"]
        # A box's slots are in the order of its cells, so ties (a symmetric peak's mirror cells)
        # fall to the cell, never to the batch: a stable sort keeps that order.
        ranked, order = splittable.sort(dim=1, descending=True, stable=True)
        # Dörfler marking: the fewest largest cells holding ``marking`` of the summed indicator
        needed = (ranked.cumsum(1) < marking * total[:, None]).sum(1) + 1
        needed = torch.minimum(needed, (ranked > 0).sum(1)).clamp(max=cells_per_round)
        rank = torch.empty_like(order).scatter_(
            1, order, torch.arange(order.shape[1], device=device).expand_as(order)
        )
        marked = _balance(rank < needed[:, None], index, level, valid, resolution)
        marked &= level < deepest
        take = int(marked.sum(1).max())
        split, chosen = marked.to(torch.int8).sort(dim=1, descending=True, stable=True)
        split, chosen = split[:, :take].bool(), chosen[:, :take]  # (A, C): marked first, padded
        pick = chosen[..., None]
        new_index, new_level = kids(
            index.gather(1, pick.expand(-1, -1, 2)), level.gather(1, chosen)
        )
        new_value = tree["kid_value"].gather(1, pick[..., None].expand(-1, -1, 4, channels))
        splits = split.sum(1)  # (A,): the cells each row splits, first among its chosen
        grand, grand_share = sample(new_index, new_level, rows, 4 * splits)  # (A, C, 4, 4[, c])
        # child 0 takes its parent's slot, children 1-3 are appended (invalid where not split)
        tree = {
            name: _split_into(tree[name], new, chosen, split)
            for name, new in (
                ("index", new_index),
                ("level", new_level),
                ("value", new_value),
                ("kid_value", grand),
                ("kid_share", grand_share),
            )
        }
        tree["valid"] = torch.cat([valid, split[..., None].expand(-1, -1, 3).flatten(1)], 1)
        tree = _in_cell_order(tree)
        evaluations[rows] += 16 * splits
        refined[rows] += 1
    limit = torch.clamp(tolerance * integral[:, 0].abs(), min=absolute)
    converged = error <= limit
    if returned[0] == 0:
        integral, coarse = integral[..., 0], coarse[..., 0]
    shape = (*leading, *integral.shape[1:])
    return AdaptiveIntegral(
        integral=integral.reshape(shape),
        coarse=coarse.reshape(shape),
        error=error.reshape(leading),
        converged=converged.reshape(leading),
        evaluations=evaluations.reshape(leading),
        rounds=refined.reshape(leading),
        leaves=leaves.reshape(leading),
    )


def disc_domain(centres: torch.Tensor, radius: float) -> Callable[..., torch.Tensor]:
    """φ(x) = minᵢ |x − pᵢ| − r, 1-Lipschitz, D = {φ ≤ 0} the union of the discs of radius r
    about the points ``centres`` (..., n, 2) (one set per box of the same leading shape).
    ``φ(points)`` takes points (..., M, 2); ``φ(points, boxes)`` the points (A, M, 2) of the
    boxes ``boxes`` (A,), indices into the flattened leading shape (``selective``).

    >>> phi = disc_domain(torch.tensor([[0.0, 0.0], [3.0, 0.0]]), 1.0)
    >>> phi(torch.tensor([[0.5, 0.0], [1.5, 0.0]])).tolist()
    [-0.5, 0.5]
    """
    arguments.positive("radius", radius)
    centres = torch.as_tensor(centres)
    if centres.ndim < 2 or centres.shape[-1] != 2 or centres.shape[-2] == 0:
        raise ValueError(f"centres: expected points (..., n, 2), got {tuple(centres.shape)}")

    def level(points: torch.Tensor, boxes: torch.Tensor | None = None) -> torch.Tensor:
        held = centres.to(points.dtype)
        if boxes is not None:
            held = held.reshape(-1, *held.shape[-2:])[boxes]
        held = held.expand(*points.shape[:-2], *held.shape[-2:])  # (..., n, 2)
        step = max(1, _DISTANCES // held[..., 0].numel())  # points per row at a time
        nearest = []
        for start in range(0, points.shape[-2], step):
            part = points[..., start : start + step, None, :]  # (..., m, 1, 2)
            squared = (part[..., 0] - held[..., None, :, 0]).square()  # (..., m, n)
            squared += (part[..., 1] - held[..., None, :, 1]).square()
            nearest.append(squared.amin(-1))
        return torch.cat(nearest, -1).sqrt() - radius

    return level
