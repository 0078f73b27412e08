"""The study contract and its driver: a toy study run through the run cache, each cell's key
computed once, the config built once, the meta every study carries, refusals before any cell."""

import pytest
import torch

from curvlab.studies import pool
from curvlab.studies.protocol import study_config
from curvlab.studies.result import StudyResult
from curvlab.studies.study import Argument, Cells, Context, Options, Study, run_study

SCALES = {"small": {"seeds": [0, 1, 2], "factor": 2}, "medium": {"seeds": [0, 1], "factor": 3}}
MEASURED: list[dict] = []
CONFIGURED: list[dict] = []


def _square(cell: dict) -> dict:
    MEASURED.append(cell)
    return {"seed": cell["seed"], "value": cell["factor"] * cell["seed"] ** 2}


def _configure(scale: str, **overrides) -> dict:
    config = study_config(SCALES, scale, overrides, {"seeds": 0, "factor": 1}, study="toy")
    CONFIGURED.append(config)
    return config


def _cells(config: dict, context: Context) -> list[Cells]:
    base = {"factor": config["factor"], "device": context.device}
    configs = [{**base, "seed": seed} for seed in config["seeds"]]
    return [Cells("toy", _square, configs, entry="curvlab.data.tasks")]


def _analyse(config: dict, results: list, context: Context) -> StudyResult:
    (values,) = results
    return StudyResult(
        runs=values, meta={"config": config, "total": sum(v["value"] for v in values)}
    )


TOY = Study(
    name="toy",
    help="squares of seeds",
    scales=tuple(SCALES),
    configure=_configure,
    cells=_cells,
    analyse=_analyse,
    arguments=(Argument("--seeds", "seeds", "seeds 0..n-1", convert=lambda n: list(range(n))),),
    entry="curvlab.data.tasks",
)


@pytest.fixture
def options(tmp_path):
    MEASURED.clear()
    CONFIGURED.clear()
    return Options(device="cpu", directory=tmp_path, progress=False, jobs=1)


def test_a_study_runs_through_the_cache_and_carries_the_common_meta(options):
    result = run_study(TOY, "small", options)
    assert [r["value"] for r in result.runs] == [0, 2, 8] and result.meta["total"] == 10
    for key in ("scale", "device", "jobs", "cpu_count", "code_version", "cells_seconds", "seconds"):
        assert key in result.meta
    assert result.meta["scale"] == "small" and result.meta["device"] == "cpu"
    assert len(MEASURED) == 3 and len(CONFIGURED) == 1  # the config is built once
    again = run_study(TOY, "small", options)
    assert again.runs == result.runs and len(MEASURED) == 3  # read back, nothing measured
    run_study(TOY, "small", Options(**{**options.__dict__, "refresh": True}))
    assert len(MEASURED) == 6


def test_each_cells_key_is_computed_once(options, monkeypatch):
    paths = []
    original = pool.cache_path

    def counting(*args, **kwargs):
        paths.append(args[1])
        return original(*args, **kwargs)

    monkeypatch.setattr(pool, "cache_path", counting)
    run_study(TOY, "small", options)
    assert len(paths) == 3
    paths.clear()
    run_study(TOY, "small", options)  # all cached: still one key per cell
    assert len(paths) == 3


def test_overrides_change_the_config_and_bad_ones_are_refused_before_any_cell(options):
    result = run_study(TOY, "medium", options, seeds=[4])
    assert [r["value"] for r in result.runs] == [48]
    MEASURED.clear()
    with pytest.raises(ValueError, match="scale"):
        run_study(TOY, "large", options)
    with pytest.raises(ValueError, match="colour"):
        run_study(TOY, "small", options, colour="red")
    with pytest.raises(ValueError, match="seeds"):
        run_study(TOY, "small", options, seeds=[-1])
    assert MEASURED == []


@pytest.mark.parametrize(
    ("make", "name"),
    [
        (lambda: Options(device="tpu"), "device"),
        (lambda: Options(progress=1), "progress"),
        (lambda: Options(jobs=0), "jobs"),
        (lambda: Options(directory=3), "directory"),
        (lambda: run_study("toy"), "study"),
        (lambda: run_study(TOY, "small", {"device": "cpu"}), "options"),
        (lambda: Cells("toy", None, []), "measure"),
    ],
)
def test_bad_options_are_named(make, name):
    with pytest.raises(ValueError, match=name):
        make()


def test_a_single_thread_study_restores_the_threads(options):
    threads = torch.get_num_threads()
    seen = []

    def cells(config, context):
        seen.append(torch.get_num_threads())
        return _cells(config, context)

    study = Study(
        "toy",
        "h",
        ("small",),
        _configure,
        cells,
        _analyse,
        single_thread=True,
        entry="curvlab.data.tasks",
    )
    run_study(study, "small", options)
    assert seen == [1] and torch.get_num_threads() == threads
