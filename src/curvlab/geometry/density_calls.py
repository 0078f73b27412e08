"""How the adaptive rule calls its density on a batch of boxes: padded, grouped, in chunks.

:func:`curvlab.geometry.adaptive.adaptive_midpoint` asks, each round, for the density at the
points (A, M, 2) of the A boxes it still refines, of which box a needs only its first
``needed[a]`` (the rest pad the array to the box with the most).  :class:`DensityCalls` makes
the calls::

    DensityCalls(function, name, leading, selective, filler)
    calls(points, boxes, needed)         values (A, M, ...), at least the needed points

- ``selective``: ``function(points, boxes)`` on some boxes only.  The boxes are grouped by how
  many points they need (:func:`group_boxes`: one call per group, each box padded to the most
  in its group), so that a box needing a few points does not pay for the one needing many.
- otherwise ``function(points)`` on every box (leading shape (...)), those not asked about at
  their ``filler`` point, every point of every row evaluated.
- Every call carries a multiple of :data:`PAD` points per box and at most about
  :data:`CALL_POINTS` in all (longer rows are cut into chunks).

A value is never changed by the other points of its call: the padding is what keeps it so to
the last bit for the ensemble's jets (:data:`PAD`).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

__all__ = ["CALL_COST", "CALL_POINTS", "PAD", "DensityCalls", "group_boxes"]

PAD = 16
"""A call carries a multiple of this many points per box (the box's first point repeated, its
values dropped).  A vectorised kernel works through an array in blocks of 4 or 8 floats and
finishes the tail in a scalar loop that rounds otherwise, so a point's value could change in
its last bit with the number of points evaluated beside it (the ensemble's jets do, for
counts that are not multiples of 4); with whole blocks it does not."""

CALL_POINTS = 16384
"""The most points (boxes × points per box) in one call.  The ensemble's jets per point are
cheapest from a few thousand to a few ten thousand points a call, and slower above (the
caches; docs/decisions/0014-batched-adaptive-integration.md)."""

CALL_COST = 1024
"""What a call costs beyond its points, in points: the ensemble's jets take a fixed time of
about a thousand points' per call (one CPU thread).  :func:`group_boxes` weighs a call
against the padding it saves by it."""


def group_boxes(needed: list[int], cost: int = CALL_COST) -> list[list[int]]:
    """The boxes (positions in ``needed``) with a point to evaluate, in groups of one call
    each, chosen to minimise Σ (``cost`` + boxes × the most points a box of the group needs,
    padded to :data:`PAD`): the counts sorted, the best cut into runs found by dynamic
    programming.  Each group in ascending order of position.

    >>> group_boxes([16, 0, 3000, 32, 2900])
    [[2, 4], [0, 3]]
    """
    order = sorted((position for position, n in enumerate(needed) if n > 0), key=needed.__getitem__)
    order.reverse()  # the most points first: a run's width is its first box's
    widths = torch.tensor([-(-needed[p] // PAD) * PAD for p in order], dtype=torch.float64)
    steps = torch.arange(len(order), dtype=torch.float64)
    best = torch.zeros(len(order) + 1, dtype=torch.float64)
    start = [0] * (len(order) + 1)
    for end in range(1, len(order) + 1):  # best[end]: the boxes order[:end], cut into runs
        costs = best[:end] + cost + (end - steps[:end]) * widths[:end]
        least, at = costs.min(0)
        best[end], start[end] = least, int(at)
    groups, end = [], len(order)
    while end > 0:
        groups.append(sorted(order[start[end] : end]))
        end = start[end]
    return groups[::-1]


class DensityCalls:
    """Calls ``function`` (the density or the domain, named ``name`` in errors) on the points
    (A, M, 2) of boxes ``boxes`` (A,) (indices into the boxes, flattened from ``leading``, in
    ascending order), checking what comes back: values (A, M) or (A, M, c), finite, in the
    points' dtype.  ``filler`` (E, 2): a point of each box (without ``selective``)."""

    def __init__(
        self,
        function: Callable,
        name: str,
        leading: torch.Size,
        selective: bool,
        filler: torch.Tensor,
    ):
        self.function, self.name, self.leading = function, name, leading
        self.selective, self.filler = selective, filler

    def __call__(
        self, points: torch.Tensor, boxes: torch.Tensor, needed: torch.Tensor | None = None
    ) -> torch.Tensor:
        """The values at ``points`` (A, M, 2) of ``boxes``; with ``needed`` (A,) and
        ``selective``, the first ``needed[a]`` points of row a are evaluated, and the others as
        far as the most a box of its group needs (beyond them: 0)."""
        count = points.shape[1]
        if self.selective and needed is not None:
            groups = [torch.tensor(g) for g in group_boxes(needed.tolist())]
            widths = [int(needed[g].max()) for g in groups]
        else:
            groups, widths = [torch.arange(len(boxes))], [count]
        out = None
        for group, width in zip(groups, widths, strict=True):
            step = max(PAD, CALL_POINTS // len(group) // PAD * PAD)
            for begin in range(0, width, step):
                end = min(begin + step, width)
                values = self._once(points[group, begin:end], boxes[group])
                if out is None:
                    out = values.new_zeros(len(boxes), count, *values.shape[2:])
                out[group, begin:end] = values
        if out is None:  # nothing needed: the shape of a value is not known, and not used
            out = points.new_zeros(len(boxes), count)
        return out

    def _once(self, points: torch.Tensor, boxes: torch.Tensor) -> torch.Tensor:
        """One call on points (A, m, 2), padded to a multiple of :data:`PAD`: (A, m, ...)."""
        members, count = points.shape[:2]
        padded = -(-count // PAD) * PAD
        if padded > count:
            points = torch.cat([points, points[:, :1].expand(-1, padded - count, -1)], 1)
        if self.selective:
            leading, values = (members,), torch.as_tensor(self.function(points, boxes))
        else:
            leading = self.leading
            if members < len(self.filler):  # the boxes not asked about: at their filler point
                full = self.filler[:, None, :].expand(-1, padded, -1).clone()
                full[boxes] = points
                points = full
            values = torch.as_tensor(self.function(points.reshape(*leading, padded, 2)))
        if values.shape[: len(leading) + 1] != (*leading, padded):
            raise ValueError(
                f"{self.name}: expected values {(*leading, padded)} or "
                f"{(*leading, padded, 'c')} for points {(*leading, padded, 2)}, got "
                f"{tuple(values.shape)}"
            )
        values = values.reshape(-1, padded, *values.shape[len(leading) + 1 :])
        if values.shape[0] > members:
            values = values[boxes]
        if not torch.isfinite(values).all():
            raise ValueError(f"{self.name}: returned a value that is not finite")
        return values[:, :count].to(points.dtype)
