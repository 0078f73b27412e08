"""The real-data study: a tiny configuration runs end to end, writes finite intervals and the
quadrature's convergence, follows its own near-linear rule and verdict rules, refuses bad
settings by name, and gives the same numbers from a fresh cache."""

import json
import math

import pytest
import torch

from curvlab.analysis.stats import verdict_follows
from curvlab.curvature import gaussian_curvature
from curvlab.data.realdata import DATASETS, load_tokens
from curvlab.measurement.slices import (
    draw_triangles,
    slice_curvature,
    slice_jets,
    slice_map,
    triangle_nodes,
)
from curvlab.models.attention import build_classifier, representation_map
from curvlab.models.ensemble import stack
from curvlab.studies.protocol import REALDATA_SCALES
from curvlab.studies.realdata import (
    ANALYSIS,
    PREDICTIONS,
    REALDATA,
    estimated_seconds,
    realdata_config,
)
from curvlab.studies.result import StudyResult
from curvlab.studies.study import Options, run_study

TINY = {
    "datasets": ["wine"],
    "models": ["ungated", "gated_elementwise"],
    "seeds": [0, 1, 2],
    "epochs": 6,
    "triangles": 2,
    "resolution": 3,
    "resolution_check": 6,
}


def _run(directory, progress=False):
    options = Options(device="cpu", directory=directory, progress=progress)
    return run_study(REALDATA, "small", options, **TINY)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("realdata")
    result = _run(root / "cache")
    result.write(root / "out")
    return result, root / "out"


def test_tiny_study_writes_a_finite_interval_or_the_reason_for_none(tiny):
    """Three seeds: the paired claims get t intervals, E3's seed-cluster bootstrap (10
    distinct resamples) none, with the reason; no claim can be decided, and each says so."""
    result, out = tiny
    claims = json.loads((out / "claims.json").read_text())
    assert {c["claim"] for c in claims} >= {"E1", "E3"}
    assert len(claims) == 3  # E1, E2 or E2-linear, E3 for the one dataset
    for claim in claims:
        numbers = [claim[k] for k in ("effect", "p")]
        if claim["claim"] == "E3":
            assert claim["ci_low"] is None and "10 distinct" in claim["interval_reason"]
        else:
            numbers += [claim["ci_low"], claim["ci_high"]]
            assert claim["ci_low"] <= claim["ci_high"]
        assert all(isinstance(v, float) and math.isfinite(v) for v in numbers), claim
        assert claim["verdict"] == "undecidable" and claim["seeds_needed"] > 3
        assert claim["decision_limit"] and claim["family_size"] >= 1
        assert claim["label"] == "exploratory"
        assert claim["prediction"] == PREDICTIONS[claim["claim"]]
        assert verdict_follows(claim, alpha=ANALYSIS["alpha"])
    assert StudyResult.read(out).claims == result.claims


def test_meta_has_the_quadrature_convergence_of_every_run(tiny):
    result, out = tiny
    record = json.loads((out / "meta.json").read_text())["quadrature_convergence"]
    assert record["n_runs"] == len(result.runs) == 2 * 3
    assert (record["resolution"], record["resolution_check"]) == (3, 6)
    assert math.isfinite(record["median_log_ratio"]) and math.isfinite(record["p90_log_ratio"])
    assert record["median_log_ratio"] <= record["p90_log_ratio"]


def test_the_near_linear_call_follows_the_written_rule(tiny):
    result, _ = tiny
    (row,) = result.effects
    runs = [r for r in result.runs if r["dataset"] == "wine"]
    means = {
        m: sum(r["test_accuracy"] for r in runs if r["model"] == m) / 3 for m in TINY["models"]
    }
    assert row["best_accuracy"] == pytest.approx(max(means.values()))
    logistic = [r["test_accuracy"] for r in result.meta["logistic"]]
    assert row["logistic_accuracy"] == pytest.approx(sum(logistic) / len(logistic))
    expected = row["logistic_accuracy"] >= row["best_accuracy"] - ANALYSIS["accuracy_margin"]
    assert row["near_linear"] is expected
    kinds = {c["claim"] for c in result.claims}
    assert ("E2-linear" in kinds) is expected and ("E2" in kinds) is not expected


def test_the_slice_sheet_curvature_is_the_engines_on_the_composed_map():
    task = load_tokens("breast_cancer", seed=0)
    models = [
        build_classifier("gated_headwise", d_model=10, n_tokens=3, token_width=10, seed=s)
        for s in (0, 1)
    ]
    ens = stack(models).to(dtype=torch.float64)
    drawn = [draw_triangles(task.train_labels.numpy(), 2, [7, s]) for s in (0, 1)]
    corners = torch.stack(
        [torch.stack([task.train_tokens[list(t)] for t in per]) for per in drawn]
    )  # (2, 2, 3, 3, 10)
    nodes, _ = triangle_nodes(2)
    J, H = slice_jets(ens, corners, nodes)
    from curvlab.geometry.gauss_equation import surface_from_jets

    K = surface_from_jets(J, H)["K"]  # (E, M, N)
    for e in (0, 1):
        for m in (0, 1):
            f = slice_map(representation_map(models[e]), corners[e, m])
            assert torch.allclose(K[e, m], gaussian_curvature(f, nodes), rtol=1e-8, atol=1e-12)
    assert slice_curvature(ens, corners, 2)["immersed_share"].min() == 1.0


def test_the_triangle_rule_tiles_the_triangle_at_every_resolution():
    for P in (1, 3, 8):
        nodes, weight = triangle_nodes(P)
        assert nodes.shape == (P * P, 2)
        assert weight * P * P == pytest.approx(0.5)  # the weights sum to the triangle's area
        assert bool((nodes > 0).all() and (nodes.sum(dim=1) < 1).all())
        # the centroid rule is exact for affine integrands: ∫_Δ u1 du = 1/6
        assert float(weight * nodes[:, 0].sum()) == pytest.approx(1 / 6)


def test_a_triangle_of_three_rows_of_one_class_drawn_from_the_seed():
    labels = load_tokens("wine", seed=0).train_labels.numpy()
    drawn = draw_triangles(labels, 4, [36, 0])
    assert drawn == draw_triangles(labels, 4, [36, 0]) != draw_triangles(labels, 4, [36, 1])
    for index, rows in enumerate(drawn):
        assert len(set(rows)) == 3 and {int(labels[r]) for r in rows} == {index % 2}


def test_the_scales_name_the_real_datasets_and_a_token_fits_the_width():
    for config in REALDATA_SCALES.values():
        assert config["datasets"] == list(DATASETS)
        assert config["d_model"] >= 10 and config["resolution_check"] == 2 * config["resolution"]
    # P = 8 moved the estimate by up to 0.48 in log against 2P: the small scale starts at 16
    assert REALDATA_SCALES["small"]["resolution"] >= 16
    assert len(REALDATA_SCALES["small"]["seeds"]) >= 3


def test_the_estimate_grows_with_every_part_of_the_work():
    small = realdata_config("small")
    base = estimated_seconds(small)
    assert base > 0
    for key, value in (
        ("seeds", list(range(8))),
        ("epochs", 600),
        ("triangles", 8),
        ("resolution", 24),
        ("resolution_check", 64),
        ("d_model", 16),
    ):
        assert value != small[key], key
        assert estimated_seconds({**small, key: value}) > base, key
    assert estimated_seconds({**small, "datasets": ["wine"]}) < base
    assert estimated_seconds({**small, "models": ["ungated"]}) < base
    assert estimated_seconds(realdata_config("medium")) > base


def test_a_study_prints_its_estimate_before_it_starts(tiny, capsys):
    _, out = tiny
    _run(out.parent / "cache", progress=True)
    err = capsys.readouterr().err
    assert err.startswith("realdata (small): about ")
    assert "min on one core" in err.splitlines()[0]


@pytest.mark.parametrize(
    ("overrides", "name"),
    [
        ({"seeds": [0, 1]}, "seeds"),
        ({"seeds": [0, 0, 1]}, "seeds"),
        ({"datasets": ["iris"]}, "datasets"),
        ({"models": ["gated"]}, "models"),
        ({"d_model": 8}, "d_model"),
        ({"n_heads": 3}, "n_heads"),
        ({"resolution_check": 8}, "resolution_check"),
        ({"learning_rate": 0}, "learning_rate"),
        ({"test_fraction": 1.5}, "test_fraction"),
        ({"backend": "jax"}, "backend"),
        ({"grid": 8}, "grid"),
    ],
)
def test_bad_settings_are_refused_by_name(overrides, name):
    with pytest.raises(ValueError, match=name):
        realdata_config("small", **overrides)


def test_bad_slice_arguments_are_refused_by_name():
    ens = stack([build_classifier("ungated", n_tokens=7, token_width=2, seed=0)])
    with pytest.raises(ValueError, match="corners"):
        slice_jets(ens, torch.zeros(1, 2, 3, 7, 3), triangle_nodes(2)[0])
    with pytest.raises(ValueError, match="nodes"):
        slice_jets(ens, torch.zeros(1, 2, 3, 7, 2), torch.zeros(4, 3))
    with pytest.raises(ValueError, match="resolution"):
        triangle_nodes(0)
    with pytest.raises(ValueError, match="count"):
        draw_triangles([0, 1, 0, 1, 0, 1], 0, seed=0)
    with pytest.raises(ValueError, match="labels"):
        draw_triangles([0, 1, 0, 1], 1, seed=0)
    with pytest.raises(ValueError, match="corners"):
        slice_map(lambda x: x, torch.zeros(2, 4))


def test_the_study_is_deterministic_from_a_fresh_cache(tiny, tmp_path):
    result, _ = tiny
    again = _run(tmp_path / "fresh")
    assert again.runs == result.runs
    assert again.effects == result.effects
    assert again.claims == result.claims
    assert again.meta["quadrature_convergence"] == result.meta["quadrature_convergence"]
