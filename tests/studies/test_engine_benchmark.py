"""The benchmark at a tiny size: its records are complete and both methods agree."""

from __future__ import annotations

import pytest
import torch

from curvlab.geometry.curvature import scalar_curvature
from curvlab.geometry.surfaces import gallery
from curvlab.studies.engine_benchmark import (
    benchmark_maps,
    format_table,
    gallery_accuracy,
    jacfwd_loop_scalar_curvature,
    loop_scalar_curvature,
    main,
    run_benchmark,
)

FIELDS = {
    "map",
    "k",
    "d",
    "points",
    "curvlab_s",
    "curvlab_ms_per_point",
    "loop_points",
    "loop_s",
    "loop_ms_per_point",
    "speedup",
    "jacfwd_loop_ms_per_point",
    "jacfwd_loop_speedup",
    "max_abs_diff",
    "max_rel_diff",
    "threads",
    "device",
}


def test_benchmark_maps_go_from_two_and_three_dimensions_to_64():
    maps = benchmark_maps()
    assert sorted(k for k, _ in maps.values()) == [2, 2, 3, 3]
    for k, f in maps.values():
        assert f(torch.zeros(k, dtype=torch.float64)).shape == (64,)


@pytest.mark.slow
def test_tiny_benchmark_records_are_complete_and_results_agree():
    names = ["gated attention, R^3 -> R^64"]
    records = run_benchmark(points=6, loop_points=2, maps=names)
    (record,) = records
    assert set(record) == FIELDS
    assert record["map"] == names[0] and record["k"] == 3 and record["d"] == 64
    assert record["points"] == 6 and record["loop_points"] == 2
    assert record["max_rel_diff"] < 1e-8 and record["max_abs_diff"] < 1e-8
    assert record["curvlab_s"] > 0 and record["loop_s"] > 0 and record["speedup"] > 0
    table = format_table(records)
    assert names[0] in table and "first 'loop: points'" in table


def test_the_loops_compute_the_same_scalar_curvature_as_curvlab():
    k, f = benchmark_maps()["MLP tanh/GELU, R^2 -> R^64"]
    u = torch.rand(3, k, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    reference = scalar_curvature(f, u)
    torch.testing.assert_close(loop_scalar_curvature(f, u), reference, rtol=1e-8, atol=1e-12)
    torch.testing.assert_close(jacfwd_loop_scalar_curvature(f, u), reference, rtol=1e-8, atol=1e-12)


def test_bad_sizes_and_names_raise():
    with pytest.raises(ValueError, match="points"):
        run_benchmark(points=0)
    with pytest.raises(ValueError, match="loop_points"):
        run_benchmark(points=3, loop_points=5)
    with pytest.raises(ValueError, match="maps"):
        run_benchmark(points=3, loop_points=1, maps=["no such map"])
    with pytest.raises(ValueError, match="repeats"):
        run_benchmark(points=3, loop_points=1, repeats=0)


@pytest.mark.slow
def test_command_line_prints_the_table(capsys):
    main(["--points", "2", "--loop-points", "1", "--gallery-points", "4"])
    out = capsys.readouterr().out
    assert "speedup" in out and out.count("R^64") == 4
    assert "enneper" in out and "three_sphere" in out


def test_gallery_accuracy_checks_every_closed_form_surface():
    records = gallery_accuracy(points=16, seed=1)
    assert [r["surface"] for r in records] == [s.name for s in gallery()]
    assert all(r["max_rel_error"] < 1e-10 and r["points"] == 16 for r in records)
    with pytest.raises(ValueError, match="points"):
        gallery_accuracy(points=0)
