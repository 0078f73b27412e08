"""Laws of curvlab.plotting.sheet_explorers: the perspective reason, the depth sheets."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import sympy as sp  # noqa: E402
import torch  # noqa: E402
from hypothesis import example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from curvlab.curvature import lambdify_map  # noqa: E402
from curvlab.geometry.measures import surface_measures  # noqa: E402
from curvlab.plotting import sheet_explorers, widgets  # noqa: E402
from curvlab.symbolic import structured_stack  # noqa: E402

STACK = ([[2, 1], [-1, 0]], [1, sp.Rational(-1, 2)], [-1, 1], sp.log(2))
weights = st.floats(min_value=-3.0, max_value=3.0, allow_nan=False).filter(lambda w: abs(w) > 0.1)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_perspective_map_sends_the_gated_surface_onto_the_graph_of_one_over_the_gate():
    gated = widgets.gated_attention_map((1.5, -0.5), 0.25)
    graph = sheet_explorers.perspective_graph_map((1.5, -0.5), 0.25)
    for x in torch.tensor([[0.3, -1.2], [1.0, 0.5], [-0.7, 0.0]], dtype=torch.float64):
        y = gated(x)
        projected = torch.stack([y[0] / y[2], y[1] / y[2], 1 / y[2]])
        assert torch.allclose(projected, graph(x))


@settings(max_examples=6, deadline=None)
@given(weights, weights, st.floats(min_value=-1.0, max_value=1.0))
@example(3.0, 3.0, 0.0)  # the gate saturates at a corner: the graph of 1/gate is not immersed
def test_the_gated_surface_has_the_sign_of_its_perspective_graph(w1, w2, bias):
    signs = sheet_explorers.gate_sign_shares((w1, w2), bias, resolution=5)
    assert signs.positive + signs.negative > 0  # a sloped gate bends the surface
    assert signs.perspective_agrees == 1.0


def test_the_gate_weights_set_the_sign_of_K():
    assert sheet_explorers.gate_sign_shares((1.0, 0.0), resolution=7).negative == 1.0
    assert sheet_explorers.gate_sign_shares((2.0, 2.0), resolution=7).positive > 0.5


def test_gate_explorer_has_a_frame_per_weight_pair_and_a_constant_gate_is_flat():
    explorer = sheet_explorers.gate_weight_explorer((-1, 0, 1), (0, 1), resolution=5, dpi=20)
    assert len(explorer.frames) == 6
    assert "flat (K = 0)" in explorer.frames["0,0"][1]
    assert "K < 0 on 100%" in explorer.frames["1,0"][1]
    assert "same sign at 100%" in explorer.frames["1,1"][1]


def test_depth_explorer_integrates_the_composed_stack():
    explorer = sheet_explorers.depth_explorer(
        *STACK, depths=(1, 2, 4), resolution=12, chart_resolution=5, dpi=20
    )
    f_two, x = structured_stack(2, *STACK, rational=False)  # composed layer by layer
    composed = surface_measures(lambdify_map(f_two, x), [(-2, 2), (-2, 2)], resolution=12)
    total = explorer.curvature_total_abs
    assert total[2] == pytest.approx(composed.curvature_total_abs, rel=1e-9)
    assert total[1] < total[2] < total[4]  # amplification over the first depths
    assert len(explorer.frames) == 3 and "L = 4" in explorer.frames["4"][1]


def test_landing_figure_puts_a_flat_sheet_beside_a_curved_one():
    fig, flat, bent = sheet_explorers.plot_flat_and_gated(resolution=5)
    titles = [ax.get_title() for ax in fig.axes if ax.name == "3d"]
    assert titles == ["ungated: K = 0", "gated, w = (1, 0): K < 0"]
    assert flat.max_abs_curvature < 1e-10 and np.all(bent.curvature < 0)


def test_engine_check_figure_reports_the_error_of_K_against_a_closed_form():
    import math

    from curvlab.plotting import plot_curvature_against_closed_form

    def torus(x):
        ring = 3 + torch.cos(x[1])
        return torch.stack([ring * torch.cos(x[0]), ring * torch.sin(x[0]), torch.sin(x[1])])

    fig, worst = plot_curvature_against_closed_form(
        {"torus": (torus, lambda u, v: torch.cos(v) / (3 + torch.cos(v)), ((0, math.pi), (-1, 1)))},
        resolution=7,
    )
    assert worst["torus"] < 1e-10
    assert [ax.name for ax in fig.axes][:2] == ["3d", "rectilinear"]
    with pytest.raises(ValueError, match="surfaces"):
        plot_curvature_against_closed_form({})
