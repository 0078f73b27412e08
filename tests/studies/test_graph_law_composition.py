"""Facts the composition chapter states about truly composing stacks, checked on the library."""

import math

import sympy as sp
import torch

from curvlab.geometry.curvature import lambdify_map
from curvlab.symbolic import composing_layer

VALUES = [1, sp.Rational(-1, 2)]


def _stack(k, depth):
    layer, state = composing_layer([[2, 1, k], [-1, 0, 0]], VALUES, [-1, 1, 0], sp.log(2))
    step = lambdify_map(layer, state)

    def f(x):
        h = torch.cat([x, x[:1] * 0])
        for _ in range(depth):
            h = step(h)
        return h

    return f


def test_negative_feedback_pulls_the_stack_onto_the_plane_where_a_vanishes():
    # a(x, z) = 0 where softmax weights are (1/3, 2/3): 3 x1 + x2 + k z + log 2 = 0.
    grid = torch.cartesian_prod(*[torch.linspace(-2, 2, 9, dtype=torch.float64)] * 2)
    plane = (3 * grid[:, 0] + grid[:, 1] + math.log(2)) / 4
    gaps = [
        float((torch.func.vmap(_stack(-4, depth))(grid)[:, 2] - plane).abs().max())
        for depth in (1, 2, 4, 8, 16, 32)
    ]
    assert all(deeper < shallower for shallower, deeper in zip(gaps, gaps[1:], strict=False))


def test_the_read_part_of_the_state_never_changes():
    x = torch.tensor([0.3, -0.2], dtype=torch.float64)
    assert torch.equal(_stack(1, 5)(x)[:2], x)
