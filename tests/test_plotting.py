"""Laws of curvlab.plotting: one palette, curvature colours centred at zero, clear errors."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from matplotlib.contour import ContourSet  # noqa: E402

from curvlab import plotting  # noqa: E402

# The palette is a specification (the team spec and the book's figures), not a computed value.
SPEC_COLORS = {
    "ungated": "#0072B2",
    "gated": "#D55E00",
    "gated_headwise": "#D55E00",
    "gated_elementwise": "#CC79A7",
    "ablation": "#009E73",
    "reference": "#000000",
}


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _grid(n=9):
    return np.meshgrid(np.linspace(-1, 1, n), np.linspace(-1, 1, n))


def test_colors_are_the_book_wide_okabe_ito_palette():
    assert plotting.COLORS == SPEC_COLORS


def test_book_style_cycles_ungated_before_gated():
    plotting.use_book_style()
    cycle = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
    assert cycle[:2] == [SPEC_COLORS["ungated"], SPEC_COLORS["gated"]]


def test_book_style_overrides_win_and_bad_overrides_are_rejected():
    assert plotting.use_book_style({"font.size": 9}) is None
    assert matplotlib.rcParams["font.size"] == 9
    with pytest.raises(TypeError, match="overrides"):
        plotting.use_book_style(["font.size", 9])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), min_size=1, max_size=30))
def test_curvature_norm_is_symmetric_and_centred_at_zero(values):
    norm = plotting.curvature_norm(values)
    peak = max(abs(value) for value in values)
    assert norm.vmin == -norm.vmax
    assert norm.vmax == (peak if peak > 0 else 1.0)
    assert float(norm(0.0)) == pytest.approx(0.5)
    assert np.all(np.abs(np.asarray(norm(values)) - 0.5) <= 0.5 + 1e-12)


def test_curvature_norm_rejects_empty_nonfinite_and_bad_halfrange():
    with pytest.raises(ValueError, match="values"):
        plotting.curvature_norm([])
    with pytest.raises(ValueError, match="finite"):
        plotting.curvature_norm([0.0, float("nan")])
    with pytest.raises(ValueError, match="halfrange"):
        plotting.curvature_norm([1.0], halfrange=0.0)


def test_a_flat_surface_is_drawn_white():
    u, v = _grid()
    fig, ax, _ = plotting.plot_curvature_surface(u, v, 0 * u, np.zeros_like(u))
    faces = ax.collections[0].get_facecolor()
    white = matplotlib.colormaps[plotting.CURVATURE_CMAP](0.5)
    assert np.allclose(faces[:, :3], np.asarray(white)[:3])
    assert min(white[:3]) > 0.9


def test_the_sign_of_curvature_reads_as_red_or_blue():
    u, v = _grid()
    positive = plotting.plot_curvature_surface(u, v, u * 0, np.ones_like(u))[1]
    negative = plotting.plot_curvature_surface(u, v, u * 0, -np.ones_like(u))[1]
    red, _, blue = positive.collections[0].get_facecolor()[0, :3]
    assert red > blue
    red, _, blue = negative.collections[0].get_facecolor()[0, :3]
    assert blue > red


def test_surface_colorbar_is_labelled_and_optional():
    u, v = _grid()
    fig, _, _ = plotting.plot_curvature_surface(u, v, u * v, u * v, colorbar_label="K (1/r²)")
    labels = [axes.get_ylabel() for axes in fig.axes[1:]]
    assert labels == ["K (1/r²)"]
    fig, _, _ = plotting.plot_curvature_surface(u, v, u * v, u * v, colorbar=False)
    assert len(fig.axes) == 1


def test_map_draws_the_zero_contour_only_where_the_sign_changes():
    u, v = _grid(21)
    _, saddle_axes, _ = plotting.plot_curvature_map(u, v, u * v)
    rounding = 1e-16 * np.sin(37 * u + 11 * v)
    _, flat_axes, _ = plotting.plot_curvature_map(u, v, rounding)
    assert any(isinstance(artist, ContourSet) for artist in saddle_axes.collections)
    assert not any(isinstance(artist, ContourSet) for artist in flat_axes.collections)


def test_map_and_surface_share_a_fixed_scale_when_asked():
    u, v = _grid()
    _, _, mesh = plotting.plot_curvature_map(u, v, 0.1 * u, halfrange=2.0)
    _, _, mappable = plotting.plot_curvature_surface(u, v, u, 0.1 * u, halfrange=2.0)
    assert (mesh.norm.vmin, mesh.norm.vmax) == (-2.0, 2.0)
    assert (mappable.norm.vmin, mappable.norm.vmax) == (-2.0, 2.0)


def test_plots_accept_torch_tensors_with_gradients():
    u, v = torch.meshgrid(torch.linspace(-1, 1, 5), torch.linspace(-1, 1, 5), indexing="xy")
    curvature = (u * v).requires_grad_()
    _, _, mesh = plotting.plot_curvature_map(u, v, curvature)
    assert mesh.norm.vmax == pytest.approx(1.0)


def test_bad_grids_raise_value_errors_that_name_the_argument():
    u, v = _grid()
    with pytest.raises(ValueError, match="curvature"):
        plotting.plot_curvature_map(u, v, np.zeros((3, 3)))
    with pytest.raises(ValueError, match="u must be a 2-D grid"):
        plotting.plot_curvature_map(u.ravel(), v, u)
    with pytest.raises(ValueError, match="z must contain only finite"):
        plotting.plot_curvature_surface(u, v, np.full_like(u, np.inf), u)
    with pytest.raises(TypeError, match="x must be an array"):
        plotting.plot_curvature_surface("grid", v, u, u)
    _, flat_axes = plt.subplots()
    with pytest.raises(ValueError, match="3-D axes"):
        plotting.plot_curvature_surface(u, v, u, u, ax=flat_axes)
