"""How the adaptive rule calls its density: boxes grouped at the least cost, each call padded
to whole blocks of points and cut to a bounded size, only the needed points evaluated."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from curvlab.geometry.density_calls import CALL_COST, CALL_POINTS, PAD, DensityCalls, group_boxes


def _cost(groups, needed) -> int:
    return sum(CALL_COST + len(g) * max(-(-needed[p] // PAD) * PAD for p in g) for g in groups)


def _partitions(items):
    """Every way of cutting ``items`` into nonempty groups."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for partition in _partitions(rest):
        yield [[first], *partition]
        for k in range(len(partition)):
            yield [*partition[:k], [first, *partition[k]], *partition[k + 1 :]]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 5000), min_size=1, max_size=6))
def test_the_groups_cost_least_of_all_ways_to_group_the_boxes(needed):
    groups = group_boxes(needed)
    wanted = [p for p, n in enumerate(needed) if n > 0]
    assert sorted(p for g in groups for p in g) == wanted  # each box once, none without a need
    assert all(g == sorted(g) for g in groups)
    if wanted:
        assert _cost(groups, needed) == min(_cost(p, needed) for p in _partitions(wanted))


def test_selective_calls_evaluate_the_needed_points_in_whole_blocks():
    calls = []

    def density(points, boxes):
        calls.append((boxes.tolist(), tuple(points.shape)))
        return points[..., 0] + 10 * boxes[:, None]

    points = torch.rand(3, 40, 2, dtype=torch.float64)
    values = DensityCalls(density, "density", torch.Size([3]), True, points[:, 0])(
        points, torch.tensor([0, 2, 5]), torch.tensor([40, 0, 3])
    )
    # one call (cheaper than two), box 2 left out (it needs nothing), 40 points padded to 48
    assert calls == [([0, 5], (2, 48, 2))] and 48 % PAD == 0
    assert torch.equal(values[0], points[0, :, 0])
    assert torch.equal(values[2, :3], points[2, :3, 0] + 50)  # the rest: a value or 0
    assert (values[1] == 0).all()


def test_a_long_row_is_cut_into_calls_of_bounded_size():
    sizes = []

    def density(points, boxes):
        sizes.append(points.shape[0] * points.shape[1])
        return points.sum(-1)

    points = torch.rand(2, 3 * CALL_POINTS // 2 + 5, 2, dtype=torch.float64)
    calls = DensityCalls(density, "density", torch.Size([2]), True, points[:, 0])
    values = calls(points, torch.arange(2), torch.tensor([points.shape[1]] * 2))
    assert torch.equal(values, points.sum(-1)) and len(sizes) > 1
    assert max(sizes) <= CALL_POINTS


def test_without_selective_every_box_is_in_every_call():
    def density(points):  # boxes of leading shape (2, 2)
        assert points.shape[:2] == (2, 2) and points.shape[2] % PAD == 0
        return points[..., 1]

    points = torch.rand(2, 5, 2, dtype=torch.float64)
    filler = torch.full((4, 2), 7.0, dtype=torch.float64)
    values = DensityCalls(density, "density", torch.Size([2, 2]), False, filler)(
        points, torch.tensor([1, 3]), torch.tensor([5, 1])
    )
    assert torch.equal(values, points[..., 1])  # every point evaluated, the rows of 1 and 3


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        (lambda p, b: p[:, :1, 0], "density: expected values"),
        (lambda p, b: p[..., 0] / 0.0, "not finite"),
    ],
)
def test_bad_values_are_named(returned, message):
    points = torch.rand(1, 4, 2, dtype=torch.float64)
    calls = DensityCalls(returned, "density", torch.Size([1]), True, points[:, 0])
    with pytest.raises(ValueError, match=message):
        calls(points, torch.tensor([0]), torch.tensor([4]))
