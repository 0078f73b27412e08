"""Laws of curvlab.plotting.widgets: the attention surface, its curvature, the explorers."""

import base64
import math
import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from curvlab.plotting import widgets  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
gate_numbers = st.floats(min_value=-3.0, max_value=3.0, allow_nan=False)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _classical_gaussian_curvature(f, x, step=1e-4):
    """K = (LN - M²) / (EG - F²) from central differences of f: independent of curvlab.curvature."""
    x = torch.as_tensor(x, dtype=torch.float64)
    e = torch.eye(2, dtype=torch.float64) * step
    first = [(f(x + e[i]) - f(x - e[i])) / (2 * step) for i in range(2)]
    second = [
        [
            (f(x + e[i] + e[j]) - f(x + e[i] - e[j]) - f(x - e[i] + e[j]) + f(x - e[i] - e[j]))
            / (4 * step * step)
            for j in range(2)
        ]
        for i in range(2)
    ]
    normal = torch.linalg.cross(first[0], first[1])
    normal = normal / torch.linalg.norm(normal)
    metric = torch.tensor([[float(first[i] @ first[j]) for j in range(2)] for i in range(2)])
    shape = torch.tensor([[float(normal @ second[i][j]) for j in range(2)] for i in range(2)])
    return float(torch.linalg.det(shape) / torch.linalg.det(metric))


@settings(max_examples=8, deadline=None)
@given(gate_numbers, gate_numbers, gate_numbers, st.floats(min_value=0.25, max_value=3.0))
def test_ungated_attention_surface_is_flat_for_any_parameters(w1, w2, bias, temperature):
    surface = widgets.attention_surface(
        (w1, w2), bias, gated=False, temperature=temperature, resolution=5
    )
    assert np.allclose(surface.points[..., 2], 1.0)  # every output lies in the values' plane
    assert surface.max_abs_curvature < 1e-8


@settings(max_examples=6, deadline=None)
@given(gate_numbers)
def test_a_constant_gate_only_rescales_the_plane_and_leaves_it_flat(bias):
    surface = widgets.attention_surface((0.0, 0.0), bias, resolution=5)
    gate = 1 / (1 + math.exp(-bias))
    assert np.allclose(surface.points[..., 2], gate)
    assert surface.max_abs_curvature < 1e-8


def test_a_sloped_gate_bends_the_surface():
    surface = widgets.attention_surface((2.0, 0.0), 0.0, resolution=7)
    assert surface.max_abs_curvature > 1e-2


@pytest.mark.parametrize("row, column", [(1, 3), (2, 2), (4, 0), (3, 1)])
def test_curvature_agrees_with_the_classical_fundamental_forms(row, column):
    gate_weight, bias = (1.5, -0.5), 0.25
    surface = widgets.attention_surface(gate_weight, bias, extent=2.0, resolution=5)
    point = (surface.u[row, column], surface.v[row, column])
    classical = _classical_gaussian_curvature(widgets.gated_attention_map(gate_weight, bias), point)
    assert abs(classical) > 1e-3  # a curved point: the comparison is not 0 == 0
    assert surface.curvature[row, column] == pytest.approx(classical, rel=1e-4, abs=1e-6)


def test_attention_map_matches_its_formula_at_a_point():
    x = torch.tensor([0.4, -0.2], dtype=torch.float64)
    f = widgets.gated_attention_map((1.0, 2.0), 0.5, temperature=2.0)
    keys = torch.tensor([[math.cos(t), math.sin(t)] for t in widgets._KEY_ANGLES])
    values = torch.tensor([[math.cos(t), math.sin(t), 1.0] for t in widgets._VALUE_ANGLES])
    weights = torch.softmax(2.0 * keys.double() @ x, dim=0)
    gate = torch.sigmoid(torch.tensor(1.0 * 0.4 + 2.0 * -0.2 + 0.5, dtype=torch.float64))
    assert torch.allclose(f(x), gate * (weights @ values.double()))


def test_bad_parameters_raise_errors_that_name_them():
    with pytest.raises(ValueError, match="gate_weight"):
        widgets.gated_attention_map((1.0,))
    with pytest.raises(ValueError, match="temperature"):
        widgets.gated_attention_map(temperature=0.0)
    with pytest.raises(ValueError, match="gate_bias"):
        widgets.gated_attention_map(gate_bias=float("inf"))
    with pytest.raises(TypeError, match="gated"):
        widgets.gated_attention_map(gated="yes")
    with pytest.raises(ValueError, match="resolution"):
        widgets.attention_surface(resolution=1)
    with pytest.raises(ValueError, match="extent"):
        widgets.attention_surface(extent=-1.0)
    with pytest.raises(TypeError, match="AttentionSurface"):
        widgets.plot_attention_surface(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="slopes"):
        widgets.gate_animation([1.0])


def test_figure_title_states_whether_the_surface_is_flat():
    flat = widgets.plot_attention_surface(widgets.attention_surface(gated=False, resolution=5))
    bent = widgets.plot_attention_surface(widgets.attention_surface((2.0, 0.0), resolution=5))
    assert "flat" in flat._suptitle.get_text()
    assert "bends" in bent._suptitle.get_text()


def test_explorer_starts_with_the_figure_for_its_initial_parameters():
    box = widgets.gate_explorer((1.0, -0.5), 0.75, temperature=2.0, resolution=5)
    sliders = {control.description: control.value for control in box.children[0].children}
    assert sliders == {
        "gate w1": 1.0,
        "gate w2": -0.5,
        "gate bias b": 0.75,
        "temperature": 2.0,
        "gated": True,
    }
    (view,) = box.children[1].outputs
    assert base64.b64decode(view["data"]["image/png"]).startswith(PNG_MAGIC)


def test_explorer_redraws_when_a_slider_moves():
    box = widgets.gate_explorer(resolution=5)
    before = box.children[1].outputs[0]["data"]["image/png"]
    gated_checkbox = box.children[0].children[-1]
    gated_checkbox.value = False
    (after,) = box.children[1].outputs
    assert after["data"]["image/png"] != before


def test_animation_is_a_self_contained_player_with_one_frame_per_slope():
    html = widgets.gate_animation([0.0, 1.0, 2.0], resolution=5).data
    assert html.count("data:image/png;base64") == 3
    assert "<script" in html and 'type="range"' in html  # the slider
    assert not re.search(r'(src|href)\s*=\s*"(https?:)?//', html), "loads from outside the page"


def test_every_function_reads_one_gate_settings():
    settings = widgets.GateSettings((1.0, -0.5), 0.25, temperature=2.0)
    x = torch.tensor([0.3, -0.7], dtype=torch.float64)
    direct = widgets.gated_attention_map((1.0, -0.5), 0.25, temperature=2.0)(x)
    assert torch.equal(settings.attention_map()(x), direct)
    surface = widgets.attention_surface((1.0, -0.5), 0.25, temperature=2.0, resolution=3)
    assert np.allclose(surface.points[1, 1], settings.attention_map()(torch.zeros(2)).numpy())
    with pytest.raises(ValueError, match="temperature"):
        widgets.gate_explorer(temperature=-1.0, resolution=5)
    with pytest.raises(TypeError, match="colour"):
        widgets.attention_surface(colour="red")
    with pytest.raises(TypeError):
        widgets.GateSettings((1.0, 0.0), 0.0, False)  # gated and temperature are keywords only
