"""Laws of the experiments' plumbing: the on-disk cache keyed by configuration and code
version, and the CSV writer of tidy records."""

import json

import pytest

import curvlab.studies.cache as cache_module
from curvlab.studies import write_csv
from curvlab.studies.cache import cache_dir, cache_key, cached, code_version


def test_cache_hits_on_the_same_config_and_misses_on_a_changed_one(tmp_path):
    calls = []

    def compute(config):
        calls.append(config)
        return {"value": config["x"] * 2}

    kwargs = {"name": "t", "modules": ["curvlab.models.tasks"], "directory": tmp_path}
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

    kwargs = {"name": "t", "modules": ["curvlab.models.tasks"], "directory": tmp_path}
    assert cached(compute, {}, **kwargs) == 1
    monkeypatch.setattr(cache_module, "code_version", lambda modules: "a different source")
    assert cached(compute, {}, **kwargs) == 2
    assert cached(compute, {}, **kwargs) == 2


def test_code_version_depends_on_the_source_of_the_named_modules():
    assert code_version(["curvlab.models.tasks"]) != code_version(["curvlab.models.attention"])
    assert code_version(["curvlab.models.tasks", "curvlab.models.attention"]) == code_version(
        ["curvlab.models.attention", "curvlab.models.tasks"]
    )
    assert cache_key({"a": [1, 2]}, ["curvlab.models.tasks"]) != cache_key(
        {"a": [2, 1]}, ["curvlab.models.tasks"]
    )


def test_cache_directory_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("CURVLAB_CACHE", str(tmp_path / "here"))
    assert cache_dir() == tmp_path / "here"
    monkeypatch.delenv("CURVLAB_CACHE")
    assert cache_dir().name == ".curvlab-cache"


def test_cache_rejects_configs_that_are_not_json():
    with pytest.raises(TypeError, match="config"):
        cache_key({"x": object()}, ["curvlab.models.tasks"])
    with pytest.raises(TypeError, match="config"):
        cache_key({"x": float("nan")}, ["curvlab.models.tasks"])


def test_write_csv_round_trips_the_columns(tmp_path):
    path = write_csv(
        [{"task": "xor", "accuracy": 0.5}, {"task": "moons", "loss": 1.0}], tmp_path / "out.csv"
    )
    lines = path.read_text().splitlines()
    assert lines[0] == "task,accuracy,loss" and len(lines) == 3
