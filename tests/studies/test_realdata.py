"""The real-data study: a tiny configuration runs end to end, writes finite intervals and both
quadratures' convergence, follows its own near-linear rule (on training rows only) and verdict
rules, refuses bad settings by name, and gives the same numbers from a fresh cache; the small
scale's seeds can decide every claim and its matched control is matched."""

import json
import math
import random

import pytest
import torch

from curvlab.analysis.realdata_claims import analyse_realdata, near_linear_effect
from curvlab.analysis.stats import verdict_follows
from curvlab.curvature import gaussian_curvature
from curvlab.data.realdata import DATASETS, TOKEN_SHAPES, load_tokens
from curvlab.measurement.slices import (
    draw_triangles,
    slice_curvature,
    slice_jets,
    slice_map,
    triangle_nodes,
)
from curvlab.models.attention import build_classifier, parameter_count, representation_map
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
    "models": ["ungated", "ungated_wide", "gated_elementwise"],
    "seeds": [0, 1, 2],
    "epochs": 6,
    "d_model": 10,
    "triangles": 2,
    "adaptive_resolution": 2,
    "adaptive_resolution_check": 3,
    "adaptive_tolerance": 0.3,
    "resolution": 3,
    "resolution_check": 6,
    "validation_folds": 3,
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
    assert {c["claim"] for c in claims} >= {"E1", "E1-wide", "E3"}
    assert len(claims) == 5  # E1, E2 or E2-linear, each against both baselines, and E3
    assert {c["baseline"] for c in claims} == {"ungated", "ungated_wide", None}
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
        assert claim["prediction"].startswith(PREDICTIONS[claim["kind"]])
        assert verdict_follows(claim, alpha=ANALYSIS["alpha"])
    assert StudyResult.read(out).claims == result.claims


def test_meta_has_the_convergence_of_both_quadratures_on_every_run(tiny):
    result, out = tiny
    meta = json.loads((out / "meta.json").read_text())
    record = meta["quadrature_convergence"]
    assert record["n_runs"] == len(result.runs) == 3 * 3
    assert (record["resolution"], record["resolution_check"]) == (2, 3)  # the two starts
    assert math.isfinite(record["median_log_ratio"]) and math.isfinite(record["p90_log_ratio"])
    assert record["median_log_ratio"] <= record["p90_log_ratio"]
    assert meta["quadrature_convergence_by_dataset"]["wine"]["n_runs"] == 9
    capped = meta["capped_convergence"]
    assert (capped["measure"], capped["resolution_check"]) == ("curvature_capped", 6)
    for run in result.runs:  # the rule's own error bound, start against start
        assert run["adaptive_evaluations"] > 0 and run["adaptive_evaluations_check"] > 0
        assert run["curvature_capped"] <= run["curvature_total_abs_uniform"] * (1 + 1e-9)
    claims = {c["claim"]: c for c in result.claims}
    flag = meta["quadrature_convergence_by_dataset"]["wine"]["converged"]
    assert (
        claims["E1"]["curvature_converged"] is flag and claims["E3"]["curvature_converged"] is flag
    )


def test_the_near_linear_call_follows_the_written_rule_on_training_rows(tiny):
    result, _ = tiny
    (row,) = result.effects
    reference = result.meta["reference"]
    linear = sum(r["logistic_validation"] for r in reference) / len(reference)
    nonlinear = sum(r["reference_validation"] for r in reference) / len(reference)
    assert row["logistic_validation"] == pytest.approx(linear)
    assert row["reference_validation"] == pytest.approx(nonlinear)
    expected = linear >= nonlinear - ANALYSIS["accuracy_margin"]
    assert row["near_linear"] is expected
    kinds = {c["claim"] for c in result.claims}
    assert ("E2-linear" in kinds) is expected and ("E2" in kinds) is not expected


def test_the_near_linear_call_reads_no_test_accuracy(tiny):
    """Move every test accuracy, the models' and the logistic regression's: the call and
    every validation number stay; only the descriptive test columns move."""
    result, _ = tiny
    runs = [{**r, "test_accuracy": 1 - r["test_accuracy"]} for r in result.runs]
    reference = [{**r, "test_accuracy": 0.0} for r in result.meta["reference"]]
    moved = near_linear_effect(runs, reference, "wine")
    (row,) = result.effects
    for key in ("logistic_validation", "reference_validation", "gap", "near_linear"):
        assert moved[key] == row[key], key
    assert moved["logistic_test_accuracy"] != row["logistic_test_accuracy"]


def _synthetic_runs(seeds, datasets=("digits", "breast_cancer", "wine")):
    rng = random.Random(5)
    return [
        {
            "task": d,
            "depth": 1,
            "dataset": d,
            "model": m,
            "seed": s,
            "test_accuracy": 0.9 + 0.05 * rng.random() + (0.02 if m == "gated_elementwise" else 0),
            "log_curvature_total_abs": rng.gauss(0, 1) + (2 if m == "gated_elementwise" else 0),
            "trained": True,
        }
        for d in datasets
        for m in ("ungated", "ungated_wide", "gated_elementwise")
        for s in seeds
    ]


def test_the_small_scale_seeds_let_every_claim_of_the_family_reach_alpha():
    """At the small scale's seeds, every claim of the three datasets (both baselines, the
    largest Holm family: no dataset near-linear) is decidable; at 8 seeds the sign-flip floor
    2 · 2⁻⁸ times the twelve paired claims' Holm factor is above α."""
    seeds = REALDATA_SCALES["small"]["seeds"]
    reference = [
        {"dataset": d, "seed": s, "logistic_validation": 0.8, "reference_validation": 0.95,
         "test_accuracy": 0.8}
        for d in ("digits", "breast_cancer", "wine")
        for s in seeds
    ]  # fmt: skip
    convergence = {d: {"converged": True} for d in ("digits", "breast_cancer", "wine")}
    _, claims = analyse_realdata(_synthetic_runs(seeds), reference, seeds, convergence)
    assert len(claims) == 15 and all(c["family_size"] == 15 for c in claims)
    assert all(c["decidable"] for c in claims), [c["decision_limit"] for c in claims]
    fewer = seeds[:8]
    _, claims = analyse_realdata(_synthetic_runs(fewer), reference, fewer, convergence)
    assert not all(c["decidable"] for c in claims)


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
        assert config["adaptive_resolution_check"] == 2 * config["adaptive_resolution"]


@pytest.mark.parametrize("scale", sorted(REALDATA_SCALES))
def test_the_width_matched_control_is_within_two_percent_of_the_gate(scale):
    config = REALDATA_SCALES[scale]
    assert "ungated_wide" in config["models"]
    for dataset in config["datasets"]:
        n_tokens, width = TOKEN_SHAPES[dataset]

        def count(variant, n_tokens=n_tokens, width=width):
            return parameter_count(
                build_classifier(
                    variant,
                    d_model=config["d_model"],
                    n_heads=config["n_heads"],
                    n_tokens=n_tokens,
                    token_width=width,
                    seed=0,
                )
            )

        gated, matched = count("gated_elementwise"), count("ungated_wide")
        assert abs(matched / gated - 1) <= 0.02, (dataset, matched, gated)
        assert count("ungated") < 0.9 * gated  # the plain model is not matched


def test_the_estimate_grows_with_every_part_of_the_work():
    small = realdata_config("small")
    base = estimated_seconds(small)
    assert base > 0
    for key, value in (
        ("seeds", list(range(12))),
        ("epochs", 900),
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
        ({"n_heads": 5}, "n_heads"),
        ({"resolution_check": 8}, "resolution_check"),
        ({"adaptive_resolution_check": 4}, "adaptive_resolution_check"),
        ({"adaptive_tolerance": 0}, "adaptive_tolerance"),
        ({"trained_accuracy": 2}, "trained_accuracy"),
        ({"models": ["ungated", "ungated_wide"]}, "models"),
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
