"""A study's result: a frozen object whose files are one method of it, read back equal."""

import dataclasses

import pytest

from curvlab.studies.result import StudyResult

RUNS = [
    {"task": "xor", "seed": 0, "converged": True, "test_accuracy": 0.1 + 0.2, "rho": None},
    {"task": "moons", "seed": 1, "converged": False, "test_accuracy": 1.0, "rho": 1e-300},
]
CLAIMS = [
    {"claim": "T1", "checks": {"flat": True}, "passed": 1, "n_checks": 1, "verdict": "reproduced"},
    {"claim": "E2", "effect": -0.25, "ci_low": None, "verdict": "inconclusive"},
]


def _full():
    return StudyResult(
        runs=RUNS,
        curves=[{"task": "xor", "epoch": e, "loss": 1 / (e + 3)} for e in range(3)],
        claims=CLAIMS,
        effects=[{"task": "xor", "measure": "test_accuracy", "effect": 0.125, "mde_80": None}],
        correlations=[{"pooled": {"n": 4, "pearson_r": 0.5}, "depth": 1}],
        meta={"scale": "small", "config": {"seeds": [0, 1]}, "seconds": 1.5},
    )


def test_a_result_round_trips_through_its_files_exactly(tmp_path):
    result = _full()
    paths = result.write(tmp_path / "out")
    assert {p.name for p in paths.values()} == {
        "runs.csv",
        "loss_curves.csv",
        "claims.json",
        "effects.csv",
        "correlations.json",
        "meta.json",
    }
    again = StudyResult.read(tmp_path / "out")
    assert again == result
    assert again.runs[0]["test_accuracy"] == 0.1 + 0.2  # floats exactly, types kept
    assert again.runs[1]["converged"] is False and again.runs[0]["rho"] is None


def test_a_study_without_some_tables_writes_only_what_it_has(tmp_path):
    depth = StudyResult(runs=RUNS, meta={"scale": "small"}, names={"runs": "depth.csv"})
    assert {p.name for p in depth.write(tmp_path).values()} == {"depth.csv", "meta.json"}
    again = StudyResult.read(tmp_path, names={"runs": "depth.csv"})
    assert again == depth and again.claims == () and again.curves == ()
    with pytest.raises(ValueError, match="directory"):
        StudyResult.read(tmp_path / "nowhere")


def test_a_result_is_frozen_and_checks_its_fields():
    result = _full()
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.runs = ()
    assert isinstance(result.runs, tuple)
    with pytest.raises(TypeError, match="runs"):
        StudyResult(runs=[1, 2])
    with pytest.raises(TypeError, match="meta"):
        StudyResult(meta=[("a", 1)])
    for names in ({"runs": "../x.csv"}, {"runs": "x.json"}, {"table": "x.csv"}):
        with pytest.raises(ValueError, match="names"):
            StudyResult(names=names)
