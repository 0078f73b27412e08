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


# ---------------------------------------------------------------------------------------------
# the table of checks


def test_check_table_records_passing_checks_with_the_rule_it_applied():
    table = plotting.CheckTable("t")
    table.below("a", 1e-9, 1e-8)
    table.above("b", np.float64(3.0), 2)
    table.between("c", torch.tensor(0.5), 0, 1)
    table.holds("d", True, "all of them")
    assert [row["rule"] for row in table.rows] == ["< 1e-08", "> 2", "in [0, 1]", "holds"]
    assert all(row["outcome"] == "✓" for row in table.rows)
    html = table._repr_html_()
    assert html.count("<tr>") == 5 and "<caption>t</caption>" in html
    assert str(table).splitlines()[0] == "t"


@pytest.mark.parametrize(
    "method, args",
    [("below", (2.0, 1.0)), ("above", (0.0, 1.0)), ("between", (2.0, 0.0, 1.0))],
)
def test_a_failing_check_raises_and_is_recorded_as_failed(method, args):
    table = plotting.CheckTable()
    with pytest.raises(AssertionError, match="check failed: claim"):
        getattr(table, method)("claim", *args)
    assert table.rows[-1]["outcome"] == "✗"


def test_check_table_rejects_a_nan_as_passing_and_non_numbers():
    table = plotting.CheckTable()
    with pytest.raises(AssertionError):
        table.below("nan is not small", float("nan"), 1.0)
    with pytest.raises(TypeError, match="real number"):
        table.below("a string", "1", 1.0)
    with pytest.raises(TypeError, match="bool"):
        table.holds("a number is not a condition", 1)
    with pytest.raises(AssertionError):
        table.holds("false", False)


def test_identity_decides_exact_identities_of_scalars_matrices_and_arrays():
    import sympy as sp

    s = sp.Symbol("sigma", positive=True)
    table = plotting.CheckTable()
    table.identity("scalar", sp.log(s**2), 2 * sp.log(s))
    table.identity("matrix", sp.Matrix([[1 / s**2, 0], [0, 2 / s**2]]), sp.diag(1, 2) / s**2)
    table.identity("every component vanishes", sp.Array([[s - s, 0], [0, 0]]))
    table.identity("nested lists", [[s / s, 0]], [[1, 0]], by=sp.cancel)
    metric = sp.Matrix([[1, s], [s, 2]])
    table.identity(
        "a list of matrices", [metric.diff(s), metric.diff(s, 2)], [[[0, 1], [1, 0]], sp.zeros(2)]
    )
    assert [row["measured"] for row in table.rows] == [
        "0",
        "0 (2×2)",
        "0 (2×2)",
        "0 (1×2)",
        "0 (2×2×2)",
    ]
    assert [row["rule"] for row in table.rows][2:4] == [
        "simplify(lhs - rhs) = 0",
        "cancel(lhs - rhs) = 0",
    ]
    assert all(row["outcome"] == "✓" for row in table.rows)


@pytest.mark.parametrize(
    "lhs, rhs, measured",
    [
        ("x**2", "x", "x*(x - 1)"),  # a scalar that does not cancel
        ("Matrix([[1, 0], [0, x]])", "eye(2)", "x - 1"),  # one wrong entry of a matrix
        ("Matrix([1, 0])", "Matrix([[1, 0]])", "shapes (2, 1) and (1, 2)"),  # shapes differ
    ],
)
def test_a_false_identity_raises_and_shows_what_is_left(lhs, rhs, measured):
    import sympy as sp

    table = plotting.CheckTable()
    with pytest.raises(AssertionError, match="check failed: false"):
        table.identity("false", sp.sympify(lhs), sp.sympify(rhs))
    assert table.rows[-1]["outcome"] == "✗" and table.rows[-1]["measured"] == measured


def test_equal_compares_exactly_and_refuses_what_does_not_give_one_bool():
    import sympy as sp

    table = plotting.CheckTable()
    table.equal("K of the hyperbolic plane", sp.Rational(-1, 2), sp.Rational(-1, 2))
    table.equal("a dict", {"a": 1}, {"a": 1})
    assert [row["rule"] for row in table.rows] == ["= -1/2", "= {'a': 1}"]
    with pytest.raises(AssertionError, match=r"check failed: unexpanded: x\*\(x \+ 1\) is not"):
        x = sp.Symbol("x")
        table.equal("unexpanded", x * (x + 1), x**2 + x)  # structure, not value: see identity
    assert table.rows[-1]["outcome"] == "✗"
    with pytest.raises(TypeError, match="bool"):
        table.equal("an array", np.array([1, 2]), np.array([1, 2]))


# ---------------------------------------------------------------------------------------------
# Part II figures


def _claims():
    return [
        {"claim": "E1", "effect": 0.4, "ci_low": 0.1, "ci_high": 0.7, "verdict": "supported"},
        {"claim": "E2", "effect": -0.1, "ci_low": -0.3, "ci_high": 0.2, "verdict": "inconclusive"},
        {"claim": "E3", "effect": -0.5, "ci_low": -0.8, "ci_high": -0.2, "verdict": "contradicted"},
    ]


def test_forest_plot_has_one_row_per_record_in_order_and_colours_by_the_interval():
    fig, ax = plotting.plot_forest(_claims(), margin=0.1)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["E1", "E2", "E3"]
    bars = [
        line
        for line in ax.lines
        if len(line.get_xdata()) == 2 and line.get_ydata()[0] == line.get_ydata()[1]
    ]
    colors = [bar.get_color() for bar in bars]
    assert colors == [plotting.COLORS["gated"], "#777777", plotting.COLORS["ungated"]]
    verdicts = [t.get_text() for t in ax.texts]
    assert verdicts == ["supported", "inconclusive", "contradicted"]


def test_forest_plot_rejects_an_effect_outside_its_interval():
    bad = [{"claim": "E1", "effect": 1.0, "ci_low": 0.1, "ci_high": 0.7}]
    with pytest.raises(ValueError, match="ci_low <= effect <= ci_high"):
        plotting.plot_forest(bad)
    with pytest.raises(ValueError, match="lacks"):
        plotting.plot_forest([{"claim": "E1", "effect": 0.0}])
    with pytest.raises(ValueError, match="margin"):
        plotting.plot_forest(_claims(), margin=-1)


def test_linear_fit_band_matches_scipy_and_contains_the_fit():
    from scipy import stats

    rng = np.random.default_rng(0)
    x = rng.normal(size=40)
    y = 0.3 * x + rng.normal(scale=0.5, size=40)
    band = plotting.linear_fit_band(x, y)
    reference = stats.linregress(x, y)
    assert np.isclose(band["slope"], reference.slope) and np.isclose(
        band["intercept"], reference.intercept
    )
    assert np.all(band["low"] < band["fit"]) and np.all(band["fit"] < band["high"])
    # at the mean of x the half-width is t * s / sqrt(n)
    s = np.sqrt(((y - reference.intercept - reference.slope * x) ** 2).sum() / 38)
    at_mean = plotting.linear_fit_band(x, y, grid=[x.mean()])
    half = float(at_mean["high"][0] - at_mean["fit"][0])
    assert np.isclose(half, stats.t.ppf(0.975, 38) * s / np.sqrt(40))


@settings(max_examples=20, deadline=None)
@given(slope=st.floats(-5, 5), intercept=st.floats(-5, 5))
def test_linear_fit_band_recovers_an_exact_line_with_zero_width(slope, intercept):
    x = np.linspace(-1, 1, 7)
    band = plotting.linear_fit_band(x, intercept + slope * x)
    assert np.isclose(band["slope"], slope, atol=1e-9)
    assert np.allclose(band["high"] - band["low"], 0, atol=1e-7)


def test_linear_fit_band_rejects_too_few_or_constant_x():
    with pytest.raises(ValueError, match="at least 3"):
        plotting.linear_fit_band([1, 1, 1], [0, 1, 2])
    with pytest.raises(ValueError, match="same length"):
        plotting.linear_fit_band([1, 2, 3], [0, 1])


def test_curvature_accuracy_plot_skips_missing_values_and_colours_by_model():
    rows = [
        {"model": m, "log_curvature": float(i), "test_accuracy": 0.6 + 0.02 * i}
        for i, m in enumerate(["gated_headwise", "ungated"] * 3)
    ]
    rows.append({"model": "ungated", "log_curvature": None, "test_accuracy": 0.5})
    fig, ax, band = plotting.plot_curvature_accuracy(rows)
    assert np.isclose(band["slope"], 0.02)
    colors = {c.get_label(): c.get_facecolor()[0][:3] for c in ax.collections[:2]}
    assert np.allclose(colors["ungated"], matplotlib.colors.to_rgb(plotting.COLORS["ungated"]))
    assert np.allclose(colors["gated_headwise"], matplotlib.colors.to_rgb(plotting.COLORS["gated"]))


def test_decision_boundaries_draw_the_half_probability_line_of_each_model():
    points = np.array([[0.5, 0.5], [-0.5, -0.5]])
    models = {"ungated": lambda p: p[:, 0], "gated": torch.nn.Linear(2, 1).double()}
    models["gated"] = lambda p, layer=models["gated"]: layer(p.double()).squeeze(-1)
    fig, axes = plotting.plot_decision_boundaries(models, points, [1, 0], resolution=25)
    assert [ax.get_title() for ax in axes] == ["ungated", "gated"]
    boundary = [c for c in axes[0].collections if isinstance(c, ContourSet) and c.levels[0] == 0.5]
    assert boundary, "the σ = 1/2 contour of a linear classifier crossing the square"
    with pytest.raises(ValueError, match="one entry per point"):
        plotting.plot_decision_boundaries(models, points, [1, 0, 1])
    with pytest.raises(TypeError, match="callables"):
        plotting.plot_decision_boundaries({"x": 3}, points, [1, 0])


def test_loss_curves_draw_the_median_over_seeds_per_model_in_the_book_colours():
    rows = [
        {"task": "xor", "model": m, "depth": 1, "epoch": e, "budget": 4, "loss": s * (4 - e)}
        for m in ("ungated", "gated_elementwise")
        for s in (1.0, 2.0, 3.0)
        for e in range(4)
    ]
    fig, axes = plotting.plot_loss_curves(rows)
    ax = axes.flat[0]
    assert [line.get_label() for line in ax.lines] == ["ungated", "gated_elementwise"]
    assert np.allclose(ax.lines[0].get_ydata(), [8.0, 6.0, 4.0, 2.0])  # median over seeds
    assert ax.lines[0].get_color() == plotting.COLORS["ungated"]
    assert ax.get_yscale() == "log"
    with pytest.raises(ValueError, match="depth 2"):
        plotting.plot_loss_curves(rows, depth=2)


def test_centring_removes_the_cell_means_before_the_fit():
    rows = [
        {"task": t, "model": "gated", "log_curvature": x + shift, "test_accuracy": 0.1 * x + shift}
        for t, shift in (("a", 0.0), ("b", 5.0))
        for x in (0.0, 1.0, 2.0)
    ]
    _, _, pooled = plotting.plot_curvature_accuracy(rows)
    _, ax, within = plotting.plot_curvature_accuracy(rows, center_by=("task",))
    assert abs(within["slope"] - 0.1) < 1e-12 and pooled["slope"] > 0.5
    assert ax.get_xlabel().endswith("− task mean")


def test_step_error_plot_leaves_a_gap_where_the_estimate_failed():
    h = np.logspace(-6, -1, 6)
    errors = {"float64": h**2, "float32": np.where(h < 1e-4, np.nan, h)}
    fig, ax = plotting.plot_step_errors(h, errors, guides={"h^2": h**2}, best={"float32": 1e-2})
    lines = {line.get_label(): line for line in ax.lines}
    assert np.isnan(lines["float32"].get_ydata()).sum() == 2
    assert lines["float64"].get_color() == plotting.COLORS["ungated"]
    with pytest.raises(ValueError, match="one value per step"):
        plotting.plot_step_errors(h, {"float64": h[:3]})


def test_the_spike_figure_has_its_three_panels_and_refuses_other_dicts():
    import numpy as np

    from curvlab.plotting import plot_curvature_spikes

    x = y = np.linspace(0.0, 1.0, 16)
    K = np.outer(y, x) + 1e-3
    K[0, 0] = np.nan  # outside the domain
    spikes = {
        "x": x,
        "y": y,
        "K_abs": K,
        "sigma_max": K + 1.0,
        "evaluated": np.random.default_rng(0).random((50, 2)),
        "peak": (1.0, 1.0),
    }
    fig, axes = plot_curvature_spikes(spikes, title="t")
    assert len(axes) == 3 and "50" in axes[2].get_title()
    plt.close(fig)
    with pytest.raises(ValueError, match="spikes"):
        plot_curvature_spikes({"x": x})
    with pytest.raises(ValueError, match="domain"):
        plot_curvature_spikes({**spikes, "K_abs": np.full((16, 16), np.nan)})


def test_the_spike_counts_have_one_row_per_model_and_refuse_runs_without_the_integral():
    from curvlab.plotting import plot_spike_counts

    runs = [
        {"model": m, "curvature_adaptive": v}
        for m, v in (("ungated", 2.0), ("gated_elementwise", 20.0), ("ungated", None))
    ]
    fig, ax = plot_spike_counts(runs)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["ungated", "gated_elementwise"]
    assert sum(len(c.get_offsets()) for c in ax.collections) == 2  # the None run left out
    plt.close(fig)
    with pytest.raises(ValueError, match="runs"):
        plot_spike_counts([{"model": "ungated", "curvature_adaptive": None}])
