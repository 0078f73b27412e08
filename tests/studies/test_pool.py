"""The studies' worker pool: the same numbers for every number of workers, in order, cached."""

from __future__ import annotations

import json

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from curvlab.studies.cache import cache_path, cached
from curvlab.studies.cells import measure_cell
from curvlab.studies.pool import cached_map, resolve_jobs
from curvlab.studies.protocol import reproduce_config
from curvlab.studies.reproduce import cell_configs


def tiny_cells() -> list[dict]:
    """Three reproduction cells small enough for a test (a few seconds each on one thread)."""
    config = reproduce_config(
        "small",
        seeds=[0, 1],
        epochs=4,
        retrain_doublings=0,
        tasks=["blobs", "xor"],
        resolution=6,
        resolution_check=8,
        rho_points=8,
        models=["ungated", "gated_headwise", "ablation"],
    )
    cells = cell_configs(config, "cpu")
    assert len(cells) == 3
    return cells


def _without_wall_time(results: list[dict]) -> str:
    """The results as JSON text (floats round-trip exactly), less each cell's wall time."""
    return json.dumps([{k: v for k, v in r.items() if k != "seconds"} for r in results])


def test_workers_give_the_numbers_of_one_process_bit_for_bit(tmp_path):
    cells = tiny_cells()
    # the first cell the longest, so that the cells finish in another order than they start
    cells[0] = {**cells[0], "epochs": 200, "seeds": list(range(6))}
    serial = cached_map(measure_cell, cells, name="reproduce", directory=tmp_path / "one", jobs=1)
    pooled = cached_map(measure_cell, cells, name="reproduce", directory=tmp_path / "two", jobs=2)
    assert _without_wall_time(pooled) == _without_wall_time(serial)
    assert [r["runs"][0]["model"] for r in pooled] == ["ungated", "gated_headwise", "ablation"]
    assert all(r["seconds"] > 0 for r in pooled)


def test_a_cell_gives_the_same_numbers_on_one_and_on_two_threads():
    # large enough (8 members of 128 points, a 16² grid) that torch splits work over threads
    cell = {**tiny_cells()[1], "seeds": list(range(8)), "epochs": 60, "resolution": 16}
    before = torch.get_num_threads()
    results = []
    try:
        for threads in (1, 2):
            torch.set_num_threads(threads)
            results.append(measure_cell(cell))
    finally:
        torch.set_num_threads(before)
    assert _without_wall_time(results[:1]) == _without_wall_time(results[1:])


def test_what_the_workers_computed_is_what_the_cache_holds(tmp_path):
    cells = tiny_cells()[:2]
    pooled = cached_map(measure_cell, cells, name="reproduce", directory=tmp_path, jobs=2)
    for config, result in zip(cells, pooled, strict=True):
        path = cache_path(measure_cell, config, name="reproduce", directory=tmp_path)
        assert json.loads(path.read_text())["result"] == result


def _refuses(config):
    raise AssertionError("a cached cell was computed again")


def test_cached_cells_are_read_not_computed(tmp_path):
    configs = [{"x": 1}, {"x": 2}, {"x": 3}]
    entry = "curvlab.data.tasks"
    cached(lambda c: {"y": 10 * c["x"]}, configs[0], name="t", entry=entry, directory=tmp_path)
    cached(lambda c: {"y": 10 * c["x"]}, configs[2], name="t", entry=entry, directory=tmp_path)
    with pytest.raises(AssertionError, match="computed again"):
        cached_map(_refuses, configs, name="t", entry=entry, directory=tmp_path, progress=False)
    cached(lambda c: {"y": 10 * c["x"]}, configs[1], name="t", entry=entry, directory=tmp_path)
    done = cached_map(_refuses, configs, name="t", entry=entry, directory=tmp_path, jobs=2)
    assert done == [{"y": 10}, {"y": 20}, {"y": 30}]


def test_a_cell_that_fails_in_a_worker_raises_its_own_error_here(tmp_path):
    cells = tiny_cells()[:2]
    cells[1] = {**cells[1], "model": "no_such_model"}
    with pytest.raises(ValueError, match="no_such_model"):
        cached_map(
            measure_cell, cells, name="reproduce", directory=tmp_path, jobs=2, progress=False
        )


@settings(max_examples=50, deadline=None)
@given(st.text(max_size=6))
def test_jobs_are_a_positive_integer_or_refused_naming_their_source(text):
    environ = {"CURVLAB_JOBS": text}
    if text.strip().isascii() and text.strip().isdigit() and int(text.strip()) >= 1:
        assert resolve_jobs(None, environ) == int(text.strip())
    elif not text.strip():
        assert resolve_jobs(None, environ) == 1
    else:
        with pytest.raises(ValueError, match="CURVLAB_JOBS: expected a positive integer"):
            resolve_jobs(None, environ)
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="jobs: expected a positive integer"):
            resolve_jobs(bad)
