"""Laws of the decision study: cached by configuration and code version, deterministic,
complete records, honest statistics."""

import json
import math
import statistics

import pytest
import torch

import curvlab.experiments.cache as cache_module
from curvlab.attention import VARIANTS, build_classifier
from curvlab.experiments import write_csv
from curvlab.experiments.cache import cache_dir, cache_key, cached, code_version
from curvlab.experiments.decision import (
    CURVATURE_METRICS,
    decision_config,
    decision_study,
    paired_comparison,
    pearson_correlation,
    representation_curvature,
    summarize,
)

TINY = {"epochs": 3, "grid": 4, "n_train": 32, "n_test": 32, "device": "cpu"}


def test_cache_hits_on_the_same_config_and_misses_on_a_changed_one(tmp_path):
    calls = []

    def compute(config):
        calls.append(config)
        return {"value": config["x"] * 2}

    kwargs = {"name": "t", "modules": ["curvlab.tasks"], "directory": tmp_path}
    assert cached(compute, {"x": 1}, **kwargs) == {"value": 2}
    assert cached(compute, {"x": 1}, **kwargs) == {"value": 2}
    assert len(calls) == 1
    assert cached(compute, {"x": 2}, **kwargs) == {"value": 4}
    assert len(calls) == 2
    assert cached(compute, {"x": 1}, refresh=True, **kwargs) == {"value": 2}
    assert len(calls) == 3
    stored = json.loads(next(tmp_path.glob("t-*.json")).read_text())
    assert set(stored) == {"config", "result"}


def test_cache_misses_when_the_code_version_changes(tmp_path, monkeypatch):
    calls = []

    def compute(config):
        calls.append(1)
        return len(calls)

    kwargs = {"name": "t", "modules": ["curvlab.tasks"], "directory": tmp_path}
    assert cached(compute, {}, **kwargs) == 1
    monkeypatch.setattr(cache_module, "code_version", lambda modules: "a different source")
    assert cached(compute, {}, **kwargs) == 2
    assert cached(compute, {}, **kwargs) == 2


def test_code_version_depends_on_the_source_of_the_named_modules():
    assert code_version(["curvlab.tasks"]) != code_version(["curvlab.attention"])
    assert code_version(["curvlab.tasks", "curvlab.attention"]) == code_version(
        ["curvlab.attention", "curvlab.tasks"]
    )
    assert cache_key({"a": [1, 2]}, ["curvlab.tasks"]) != cache_key(
        {"a": [2, 1]}, ["curvlab.tasks"]
    )


def test_cache_directory_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("CURVLAB_CACHE", str(tmp_path / "here"))
    assert cache_dir() == tmp_path / "here"
    monkeypatch.delenv("CURVLAB_CACHE")
    assert cache_dir().name == ".curvlab-cache"


def test_cache_rejects_configs_that_are_not_json():
    with pytest.raises(TypeError, match="config"):
        cache_key({"x": object()}, ["curvlab.tasks"])
    with pytest.raises(TypeError, match="config"):
        cache_key({"x": float("nan")}, ["curvlab.tasks"])


@pytest.mark.slow
def test_study_records_are_complete_and_deterministic(tmp_path):
    kwargs = {"tasks": ["xor", "blobs"], "seeds": [1], **TINY}
    first = decision_study(directory=tmp_path / "a", **kwargs)
    second = decision_study(directory=tmp_path / "b", **kwargs)
    assert len(first) == 2 * len(VARIANTS)
    strip = [{k: v for k, v in r.items() if "seconds" not in k} for r in first]
    assert strip == [{k: v for k, v in r.items() if "seconds" not in k} for r in second]
    for record in first:
        for key in ("task", "model", "depth", "seed", "accuracy", "loss", *CURVATURE_METRICS):
            assert key in record
        assert record["curvature_nodes"] + record["non_immersed_nodes"] == 16
        assert record["boundary"] == ("linear" if record["task"] == "blobs" else "nonlinear")
    reread = decision_study(directory=tmp_path / "a", **kwargs)
    assert reread == first  # from the cache, seconds included


def test_a_config_change_recomputes_and_the_cache_reuses_runs(tmp_path):
    kwargs = {"tasks": ["moons"], "models": ["ungated"], "seeds": [0], **TINY}
    decision_study(directory=tmp_path, **kwargs)
    assert len(list(tmp_path.glob("decision-*.json"))) == 1
    decision_study(directory=tmp_path, **kwargs)
    assert len(list(tmp_path.glob("decision-*.json"))) == 1
    decision_study(directory=tmp_path, **{**kwargs, "epochs": 4})
    assert len(list(tmp_path.glob("decision-*.json"))) == 2


def test_representation_curvature_counts_every_node():
    stats = representation_curvature(build_classifier("gated_elementwise"), points_per_axis=5)
    assert stats["curvature_nodes"] + stats["non_immersed_nodes"] == 25
    assert stats["curvature_total_abs"] >= 0 and 0 <= stats["curvature_positive_fraction"] <= 1


def test_curvature_measure_is_zero_on_the_flat_token_sheet():
    stats = representation_curvature(build_classifier("ungated"), layer=0, points_per_axis=4)
    assert stats["curvature_total_abs"] < 1e-12 and stats["non_immersed_nodes"] == 0


def test_summarize_gives_mean_and_sample_std():
    records = [
        {"task": "t", "model": "m", "depth": 1, "accuracy": a, "curvature_total_abs": c}
        for a, c in ((0.5, 1.0), (0.7, 2.0), (0.9, None))
    ]
    (row,) = summarize(records)
    assert math.isclose(row["accuracy_mean"], 0.7) and row["n"] == 3
    assert math.isclose(row["accuracy_std"], statistics.stdev([0.5, 0.7, 0.9]))
    assert row["curvature_total_abs_missing"] == 1


def test_paired_t_test_matches_the_students_t_quantile():
    # t_{0.975, 4} = 2.7764451: differences with mean/(sd/√5) equal to it have p = 0.05
    base = [-1.0, -0.5, 0.0, 0.5, 1.0]
    shift = 2.7764451052 * statistics.stdev(base) / math.sqrt(5)
    records = [
        {"task": "x", "depth": 1, "seed": s, "model": m, "acc": v}
        for s, b in enumerate(base)
        for m, v in (("g", b + shift), ("u", 0.0))
    ]
    result = paired_comparison(records, "acc", "g", "u")
    assert result["n"] == 5 and math.isclose(result["p_t"], 0.05, rel_tol=1e-6)


def test_signed_rank_test_is_exact_for_all_positive_differences():
    records = [
        {"task": "x", "depth": 1, "seed": s, "model": m, "acc": v}
        for s in range(6)
        for m, v in (("g", 1.0 + s), ("u", 0.0))
    ]
    result = paired_comparison(records, "acc", "g", "u")
    assert result["wins"] == 6 and math.isclose(result["p_wilcoxon"], 2 / 2**6)


def test_pearson_correlation_and_its_p_value():
    result = pearson_correlation([1, 2, 3, 4, 5], [2, 4, 6, 8, 10.5])
    assert result["n"] == 5 and result["r"] > 0.99 and result["p"] < 0.001
    # r = 0.8 with n = 4: t = 0.8 √2 / 0.6, two-sided p = 0.2 exactly
    assert math.isclose(pearson_correlation([1, 2, 3, 4], [1, 3, 2, 4])["p"], 0.2, rel_tol=1e-9)
    with pytest.raises(ValueError, match="x, y"):
        pearson_correlation([1, 2], [3, 4])


def test_bad_study_configuration_names_the_field():
    with pytest.raises(ValueError, match="scale"):
        decision_config("huge")
    with pytest.raises(ValueError, match="tasks"):
        decision_config(tasks=["mnist"])
    with pytest.raises(ValueError, match="models"):
        decision_config(models=["gpt"])
    with pytest.raises(ValueError, match="widths"):
        decision_config(widths=[3])
    with pytest.raises(ValueError, match="seeds"):
        decision_config(seeds=[])


def test_write_csv_round_trips_the_columns(tmp_path):
    path = write_csv(
        [{"task": "xor", "accuracy": 0.5}, {"task": "moons", "loss": 1.0}], tmp_path / "out.csv"
    )
    lines = path.read_text().splitlines()
    assert lines[0] == "task,accuracy,loss" and len(lines) == 3


def test_records_do_not_depend_on_the_global_rng(tmp_path):
    kwargs = {"tasks": ["xor"], "models": ["gated_headwise"], "seeds": [2], **TINY}
    torch.manual_seed(0)
    first = decision_study(directory=tmp_path / "a", **kwargs)
    torch.manual_seed(123)
    second = decision_study(directory=tmp_path / "b", **kwargs)
    assert first[0]["accuracy"] == second[0]["accuracy"]
    assert first[0]["curvature_total_abs"] == second[0]["curvature_total_abs"]
