"""The search for a curved ungated input slice (curvlab.studies.input_slices)."""

import math

import pytest
import torch

from curvlab.geometry.curvature import gaussian_curvature, lambdify_map
from curvlab.studies.input_slices import chart_points, curved_ungated_slice
from curvlab.symbolic import input_attention_mean


def test_chart_points_lie_in_the_rational_chart_of_the_square():
    t = chart_points(200, half_width=0.8, seed=3)
    assert t.shape == (200, 2) and t.dtype == torch.float64
    assert float(t.min()) >= math.exp(-0.8) and float(t.max()) <= math.exp(0.8)
    assert torch.equal(t, chart_points(200, half_width=0.8, seed=3))
    assert not torch.equal(t, chart_points(200, half_width=0.8, seed=4))


def test_the_slice_found_is_curved_and_the_search_is_seeded():
    K = curved_ungated_slice(4, 3, seed=0)
    assert K.shape == (100,)
    assert float(K.abs().max()) > 1e-3
    assert torch.equal(K, curved_ungated_slice(4, 3, seed=0))


def test_the_slice_found_is_the_first_curved_draw():
    """Replaying the seed's draws: every draw before the returned one is flat."""
    points = chart_points(30)
    K = curved_ungated_slice(4, 3, seed=0, points=points)
    g = torch.Generator().manual_seed(0)
    while True:
        values = torch.randint(-2, 3, (4, 3), generator=g).tolist()
        keys = torch.randint(-2, 3, (4, 2), generator=g).tolist()
        drawn = gaussian_curvature(lambdify_map(*input_attention_mean(values, keys)), points)
        if float(drawn.abs().max()) > 1e-3:
            break
    assert torch.allclose(K, drawn, rtol=0, atol=0)


@pytest.mark.slow
def test_six_ungated_values_in_r5_reach_positive_curvature():
    """The counterexample of the reproduction's T3: ungated, input-parametrized, K > 0."""
    K = curved_ungated_slice(6, 5, seed=2)
    assert float(K.max()) > 1e-3
