"""The adaptive benchmark at a tiny size, through the study driver as the command line runs
it: one record, both ways timed, the same integrals both ways."""

import math

import pytest

from curvlab.studies.adaptive_benchmark import ADAPTIVE_BENCHMARK, WAYS, benchmark_adaptive
from curvlab.studies.study import Options, run_study

TINY = {
    "epochs": 4,
    "resolution": 8,
    "resolution_check": 8,
    "rho_points": 4,
    "adaptive_resolution": 4,
    "adaptive_resolution_check": 8,
}


def test_the_benchmark_times_both_ways_of_a_tiny_cell(tmp_path):
    options = Options(device="cpu", directory=tmp_path / "cache", progress=False)
    result = run_study(ADAPTIVE_BENCHMARK, "small", options, seeds=5, repeats=2, settings=TINY)
    assert result.meta["scale"] == "small"
    record = result.runs[0]
    assert (record["members"], record["checked"], record["repeats"]) == (5, 2, 2)  # stride 4
    assert record["threads"] == 1  # as a worker of the study computes


def test_a_tiny_record_is_complete_and_consistent():
    record = benchmark_adaptive(seeds=2, repeats=1, settings=TINY)
    assert record["members"] == 2 and record["evaluations"] > 0
    for way in WAYS:
        assert record[f"{way}_seconds"] > 0
        assert math.isclose(
            record[f"{way}_evaluations_per_second"],
            record["evaluations"] / record[f"{way}_seconds"],
        )
        assert record[f"cell_{way}_seconds"] > record["train_seconds"] + record["window_seconds"]
    assert math.isclose(
        record["evaluations_ratio"], record["one_at_a_time_seconds"] / record["batched_seconds"]
    )
    assert record["max_rel_diff"] <= 1e-12
    with pytest.raises(ValueError, match="model"):
        benchmark_adaptive(model="ungated_wide", seeds=1, repeats=1, settings=TINY)
