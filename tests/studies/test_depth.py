"""The depth study and its companions: the sheet measures, growth-law fits, Poole anchor and
the structured regime."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from curvlab.analysis import growth
from curvlab.geometry.curvature import gaussian_curvature
from curvlab.measurement import sheets
from curvlab.models.attention import build_classifier, representation_map
from curvlab.studies import depth, graph_law, poole
from curvlab.studies.study import Options, run_study


def _ridge_stack(L: int, gated: bool):
    """(x, L·φ(x)) with φ a ridge function (ungated) or a gate times a ridge (gated)."""
    w = torch.tensor([0.8, -0.6], dtype=torch.float64)
    k = torch.tensor([0.3, 1.1], dtype=torch.float64)

    def f(x):
        phi = 1.5 * torch.sigmoid(k @ x + 0.2) - 0.5
        if gated:
            phi = torch.sigmoid(w @ x + 0.1) * phi
        return torch.cat([x, (L * phi).reshape(1)])

    return f


@pytest.mark.slow
def _depth_runs(directory, **overrides) -> list[dict]:
    options = Options(device="cpu", directory=directory, progress=False)
    return list(run_study(depth.DEPTH, "small", options, **overrides).runs)


def test_depth_study_is_deterministic(tmp_path, tiny_depth):
    kwargs = dict(tiny_depth, regimes=["structured", "generic"], models=["gated_headwise"])
    first = _depth_runs(tmp_path / "a", **kwargs)
    second = _depth_runs(tmp_path / "b", **kwargs)
    strip = [{k: v for k, v in r.items() if k != "seconds"} for r in first]
    assert strip == [{k: v for k, v in r.items() if k != "seconds"} for r in second]
    assert {(r["regime"], r["depth"], r["phase"]) for r in first} == {
        (g, d, p) for g in ("structured", "generic") for d in (1, 2) for p in depth.PHASES
    }


def test_cached_depth_run_equals_fresh_run(tmp_path, tiny_depth):
    kwargs = dict(tiny_depth, regimes=["generic"], models=["ungated"], depths=[1])
    fresh = _depth_runs(tmp_path, **kwargs)
    again = _depth_runs(tmp_path, **kwargs)
    assert fresh == again


def test_structured_stack_of_ridge_increments_is_flat_at_every_depth():
    for L in (1, 2, 4, 8):
        stats = sheets.sheet_curvature(_ridge_stack(L, gated=False), resolution=8)
        assert stats["non_immersed_nodes"] == 0
        assert stats["curvature_total_abs"] < 1e-12
        assert stats["curvature_positive_fraction"] == 0.0


def test_gated_structured_stack_total_curvature_grows_with_depth_at_small_depth():
    totals = [
        sheets.sheet_curvature(_ridge_stack(L, gated=True), resolution=10)["curvature_total_abs"]
        for L in (1, 2, 4, 8)
    ]
    assert totals[0] > 1e-6
    assert all(b > a for a, b in zip(totals, totals[1:], strict=False))


@settings(max_examples=10, deadline=None)
@given(scale=st.floats(min_value=0.05, max_value=20.0))
def test_scaling_a_map_scales_curvature_but_not_the_scale_free_measures(scale):
    f = _ridge_stack(3, gated=True)
    base = sheets.sheet_curvature(f, resolution=6)
    scaled = sheets.sheet_curvature(lambda x: scale * f(x), resolution=6)
    assert math.isclose(
        scaled["curvature_mean_abs"], base["curvature_mean_abs"] / scale**2, rel_tol=1e-8
    )
    assert math.isclose(scaled["sheet_area"], base["sheet_area"] * scale**2, rel_tol=1e-8)
    for name in ("curvature_total_abs", "curvature_dimensionless", "curvature_positive_fraction"):
        assert math.isclose(scaled[name], base[name], rel_tol=1e-8, abs_tol=1e-14)


def test_grassmannian_length_is_scale_free_and_zero_for_affine_maps():
    def bend(x):
        return torch.stack([x[0], x[1], torch.sin(2 * x[0]) * x[1]])

    base = depth.probe_lengths(bend, points=32)
    scaled = depth.probe_lengths(lambda x: 7.0 * bend(x), points=32)
    assert base["grassmannian_length"] > 0.1
    assert math.isclose(scaled["grassmannian_length"], base["grassmannian_length"], rel_tol=1e-9)
    assert math.isclose(scaled["euclidean_length"], 7 * base["euclidean_length"], rel_tol=1e-9)
    affine = depth.probe_lengths(lambda x: torch.stack([x[0] + x[1], 2 * x[1], x[0]]), points=8)
    assert affine["grassmannian_length"] < 1e-12


@settings(max_examples=20, deadline=None)
@given(
    exponent=st.floats(min_value=-3.0, max_value=3.0),
    prefactor=st.floats(min_value=1e-3, max_value=1e3),
)
def test_power_law_fit_recovers_exponent_and_prefactor(exponent, prefactor):
    depths = [1, 2, 4, 8, 16]
    law = growth.fit_power_law(depths, [prefactor * L**exponent for L in depths])
    assert math.isclose(law["exponent"], exponent, abs_tol=1e-9)
    assert math.isclose(law["prefactor"], prefactor, rel_tol=1e-9)
    assert law["r_squared"] > 1 - 1e-9 or abs(exponent) < 1e-6


@settings(max_examples=20, deadline=None)
@given(factor=st.floats(min_value=0.2, max_value=5.0))
def test_exponential_fit_recovers_growth_factor(factor):
    law = growth.fit_exponential([1, 2, 3, 4], [3.0 * factor**L for L in (1, 2, 3, 4)])
    assert math.isclose(law["growth_factor"], factor, rel_tol=1e-9)
    assert math.isclose(law["prefactor"], 3.0, rel_tol=1e-9)


def test_growth_law_fits_reject_values_that_are_not_positive():
    with pytest.raises(ValueError, match="values"):
        growth.fit_power_law([1, 2, 4], [1.0, 0.0, 2.0])
    with pytest.raises(ValueError, match="depths"):
        growth.fit_power_law([0, 2], [1.0, 2.0])
    with pytest.raises(ValueError, match="distinct depths"):
        growth.fit_exponential([2, 2], [1.0, 2.0])


def test_growth_laws_mark_flat_groups_and_fit_the_others():
    records = [{"g": "flat", "depth": L, "m": 1e-15 * L} for L in (1, 2, 4)] + [
        {"g": "square", "depth": L, "m": 0.5 * L**2} for L in (1, 2, 4)
    ]
    rows = {row["g"]: row for row in growth.growth_laws(records, "m", ["g"])}
    assert rows["flat"]["flat"] and rows["flat"]["exponent"] is None
    assert not rows["square"]["flat"] and rows["square"]["increasing"]
    assert math.isclose(rows["square"]["exponent"], 2.0)


def test_mean_field_chi1_separates_the_ordered_and_chaotic_phases():
    ordered, chaotic = (poole.mean_field_chi1(*poole.POOLE_PHASES[p]) for p in poole.POOLE_PHASES)
    assert ordered["chi1"] < 1 < chaotic["chi1"]
    for phase, result in zip(poole.POOLE_PHASES, (ordered, chaotic), strict=True):
        sigma_w2, sigma_b2 = poole.POOLE_PHASES[phase]
        z = torch.randn(400_000, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
        q = result["q_star"]
        monte_carlo = sigma_w2 * float((torch.tanh(math.sqrt(q) * z) ** 2).mean()) + sigma_b2
        assert math.isclose(monte_carlo, q, rel_tol=5e-3)
    with pytest.raises(ValueError, match="sigma_w2"):
        poole.mean_field_chi1(-1.0, 0.3)


def test_random_tanh_network_is_seeded_and_checks_its_layer():
    a = poole.random_tanh_network(8, 3, 4.0, 0.3, seed=5)
    b = poole.random_tanh_network(8, 3, 4.0, 0.3, seed=5)
    x = torch.linspace(-1, 1, 8, dtype=torch.float64)
    assert torch.equal(a(x, 3), b(x, 3)) and torch.equal(a(x, 0), x)
    with pytest.raises(ValueError, match="layer"):
        a(x, 4)


@pytest.mark.slow
def test_poole_chaotic_grassmannian_length_grows_while_ordered_curvature_is_a_scale_artefact(
    tmp_path,
):
    options = Options(directory=tmp_path, progress=False)
    records = run_study(
        poole.POOLE,
        "small",
        options,
        width=32,
        max_depth=6,
        poole_seeds=[0, 1],
        curve_points=64,
        sphere_resolution=6,
    ).runs

    def mean(phase, layer, name):
        values = [r[name] for r in records if r["phase"] == phase and r["depth"] == layer]
        return sum(values) / len(values)

    assert mean("chaotic", 6, "grassmannian_length") > 3 * mean("chaotic", 1, "grassmannian_length")
    assert mean("ordered", 6, "grassmannian_length") < 2 * mean("ordered", 1, "grassmannian_length")
    assert mean("ordered", 6, "curve_curvature_mean") > 3 * mean(
        "ordered", 1, "curve_curvature_mean"
    )
    assert mean("ordered", 6, "curvature_mean_abs") > 10 * mean("ordered", 1, "curvature_mean_abs")
    assert mean("ordered", 6, "curvature_total_abs") < 3 * mean("ordered", 1, "curvature_total_abs")


def test_depth_config_rejects_bad_settings():
    with pytest.raises(ValueError, match="colour"):
        depth.depth_config(colour="red")
    with pytest.raises(ValueError, match="regimes"):
        depth.depth_config(regimes=["tangled"])
    with pytest.raises(ValueError, match="depths"):
        depth.depth_config(depths=[0, 1])
    with pytest.raises(ValueError, match="task"):
        depth.depth_config(task="mnist")
    with pytest.raises(ValueError, match="scale"):
        depth.depth_config("huge")


def test_median_of_selects_by_fields_and_refuses_an_empty_selection():
    rows = [{"phase": p, "depth": 1, "v": v} for p, v in (("a", 1.0), ("a", 3.0), ("b", 9.0))]
    assert growth.median_of(rows, "v", phase="a") == 2.0
    with pytest.raises(ValueError, match="no record"):
        growth.median_of(rows, "v", phase="c")


def test_drawn_structured_layers_are_nondegenerate_and_reproducible():
    for seed in range(10):
        keys, values, gate = graph_law.draw_structured_layer(seed)
        ridge = [keys[0][0] - keys[1][0], keys[0][1] - keys[1][1]]
        assert values[0] != values[1]
        assert gate[0] * ridge[1] != gate[1] * ridge[0]
        assert graph_law.draw_structured_layer(seed) == (keys, values, gate)
    with pytest.raises(ValueError, match="seed"):
        graph_law.draw_structured_layer(-1)


def test_graph_law_equals_the_engine_on_the_structured_stack():
    layer = graph_law.draw_structured_layer(0)
    phi = graph_law.structured_increment(layer)
    points = 0.6 * torch.rand(20, 2, generator=torch.Generator().manual_seed(0)).double()
    for L in (1, 7):
        engine = gaussian_curvature(graph_law.structured_stack_map(layer, L), points)
        law = graph_law.graph_law_curvature(phi, L, points)
        assert torch.allclose(engine, law, rtol=1e-8, atol=1e-12)
        total = sheets.sheet_curvature(graph_law.structured_stack_map(layer, L), resolution=5)
        assert math.isclose(
            total["curvature_total_abs"],
            graph_law.graph_law_curvature_total_abs(phi, L, resolution=5),
            rel_tol=1e-8,
        )


def test_graph_law_tail_is_the_limit_of_L_times_the_total_curvature():
    phi = graph_law.structured_increment(graph_law.draw_structured_layer(1))
    tail = graph_law.graph_law_tail_constant(phi, resolution=6)
    far = 1e4 * graph_law.graph_law_curvature_total_abs(phi, 1e4, resolution=6)
    assert math.isclose(far, tail, rel_tol=1e-3)


def test_alternating_unstructured_writes_cancel_to_a_flat_plane():
    flat = sheets.sheet_curvature(
        graph_law.unstructured_stack_map(
            [[0, 0, 1], [0, 0, -1]], graph_law.draw_structured_layer(0)
        ),
        resolution=5,
    )
    assert flat["curvature_total_abs"] < 1e-12


def test_structured_regime_study_and_its_summary():
    rows = graph_law.structured_regime_study(seeds=[0], depths=[1, 2, 4, 64, 128], resolution=5)
    assert {(r["gated"], r["depth"]) for r in rows} == {
        (g, d) for g in (False, True) for d in (1, 2, 4, 64, 128)
    }
    assert max(r["curvature_total_abs"] for r in rows if not r["gated"]) < 1e-12
    (summary,) = graph_law.structured_growth_summary(rows)
    assert summary["seed"] == 0 and summary["rises_first"]
    assert -1.2 < summary["tail_exponent"] < -0.8
    with pytest.raises(ValueError, match="gated"):
        graph_law.structured_growth_summary([r for r in rows if not r["gated"]])


def test_representation_curvature_counts_every_node():
    stats = sheets.representation_curvature(build_classifier("gated_elementwise"), resolution=5)
    assert stats["curvature_nodes"] + stats["non_immersed_nodes"] == 25
    assert stats["curvature_total_abs"] >= 0 and 0 <= stats["curvature_positive_fraction"] <= 1


def test_representation_curvature_is_zero_on_the_flat_token_sheet():
    model = build_classifier("ungated")
    stats = sheets.representation_curvature(model, layer=0, resolution=4)
    assert stats["curvature_total_abs"] < 1e-12 and stats["non_immersed_nodes"] == 0


def test_representation_curvature_is_the_sheet_curvature_of_the_representation_map():
    model = build_classifier("gated_headwise", seed=3)
    direct = sheets.sheet_curvature(representation_map(model), resolution=5)
    assert sheets.representation_curvature(model, resolution=5) == direct


def test_structured_curvature_total_abs_equals_the_composed_stack_and_the_law():
    """The closed form in L, measured at each depth, is the stack of L composed layers (to
    rounding) and follows the graph law; without the gate it is flat at every depth."""
    layer = graph_law.draw_structured_layer(0)
    phi = graph_law.structured_increment(layer)
    depths = [1, 2, 3]
    totals = graph_law.structured_curvature_total_abs(layer, depths, resolution=5)
    for L, total in zip(depths, totals, strict=True):
        composed = sheets.sheet_curvature(graph_law.structured_stack_map(layer, L), resolution=5)[
            "curvature_total_abs"
        ]
        assert math.isclose(total, composed, rel_tol=1e-9)
        law = graph_law.graph_law_curvature_total_abs(phi, L, resolution=5)
        assert math.isclose(total, law, rel_tol=1e-8)
    assert totals[0] < totals[1] < totals[2]
    flat = graph_law.structured_curvature_total_abs(layer, [1, 64], gated=False, resolution=5)
    assert max(flat) < 1e-12
