"""The adaptive integrals of a confirmatory cell: one member at a time against all at once.

:func:`benchmark_adaptive` (also ``python -m curvlab adaptive-benchmark``, and ``make bench``)
trains the members of one (task, model) cell of the confirmatory study at the plan's settings
(its first ``seeds`` fresh seeds, its budget, its grids and its adaptive rule), then measures
their final sheets two ways, in turn in one run: the adaptive rule on one member at a time
(:func:`curvlab.studies.cells.adaptive_members` with ``batched=False``, as the study did) and
on all members in one call (``batched=True``, as it does).  It reports the curvature
evaluations per second of each (the adaptive integrals from the plan's base grid and, on the
checked seeds, from its check grid) and the time of the cell each way: the training, the
measurement at the window's start and the final measurement with its adaptive integrals (one
rung of the ladder: the plan's fixed budget).  The two ways must give the same numbers; the
record says how far apart they are.
"""

from __future__ import annotations

import json
import time

import torch

from curvlab.analysis.plan import PLAN_V2
from curvlab.data.tasks import TASKS
from curvlab.models.attention import VARIANTS
from curvlab.models.convergence import window_start
from curvlab.models.ensemble import train_ensemble
from curvlab.models.training import resolve_device
from curvlab.studies.cells import adaptive_members, build_members, measure_members
from curvlab.studies.protocol import ADAPTIVE_BENCHMARK_SCALES, reproduce_config, study_config
from curvlab.studies.reproduce import confirmatory_overrides
from curvlab.studies.result import StudyResult
from curvlab.studies.study import Argument, Cells, Context, Study, positive_int

__all__ = [
    "ADAPTIVE_BENCHMARK",
    "WAYS",
    "adaptive_benchmark_cells",
    "adaptive_benchmark_config",
    "benchmark_adaptive",
]

WAYS: dict[str, bool] = {"one_at_a_time": False, "batched": True}
"""The two ways, by the ``batched`` flag of :func:`~curvlab.studies.cells.adaptive_members`."""


def _cell_config(task: str, model: str, seeds: int, device: str, settings: dict) -> dict:
    """One confirmatory cell's configuration: the plan's, on one task and model."""
    if model not in PLAN_V2.curvature.models:
        raise ValueError(f"model: expected one the plan integrates, {PLAN_V2.curvature.models}")
    overrides = {**confirmatory_overrides(PLAN_V2, seeds), "tasks": [task], **settings}
    config = reproduce_config("small", **overrides)
    return {**config, "model": model, "depth": 1, "device": device}


def benchmark_adaptive(
    *,
    task: str = "xor",
    model: str = "gated_elementwise",
    seeds: int = 16,
    repeats: int = 2,
    settings: dict | None = None,
    device="cpu",
) -> dict:
    """The adaptive integrals of one confirmatory (``task``, ``model``) cell of ``seeds``
    seeds, one member at a time and all at once, each ``repeats`` times in alternating order
    (the fastest of each kept), on ``device``, torch threads as set; ``settings`` override the
    cell's configuration (a tiny run's epochs and grids; None: the plan's).  One record: the
    evaluations, the seconds and evaluations per second of each way and their ratio, the
    seconds of the cell each way (training, window measurement, final measurement) and their
    ratio, and the largest relative difference between the two ways' integrals.

    >>> tiny = {"epochs": 4, "resolution": 8, "resolution_check": 8, "rho_points": 4}
    >>> tiny |= {"adaptive_resolution": 4, "adaptive_resolution_check": 8}
    >>> r = benchmark_adaptive(seeds=2, repeats=1, settings=tiny)
    >>> r["members"], r["max_rel_diff"], r["evaluations"] > 0, sorted(k for k in r if "ratio" in k)
    (2, 0.0, True, ['cell_ratio', 'evaluations_ratio'])
    """
    device = resolve_device(device)
    config = _cell_config(task, model, seeds, device, settings or {})
    members = [(task, s) for s in config["seeds"]]
    stride = config["check_seed_stride"] or 1
    check = [e for e, (_, seed) in enumerate(members) if seed % stride == 0]

    def synchronise():
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    start = time.perf_counter()
    ens, _, train_x, train_y, test_x, _ = build_members(config, model, 1, members)
    t0 = window_start(config["epochs"])
    fitted = train_ensemble(
        ens,
        train_x,
        train_y,
        epochs=config["epochs"],
        learning_rate=config["learning_rate"],
        weight_decay=config["weight_decay"],
        schedule=config["schedule"],
        snapshots=[t0],
    )
    synchronise()
    trained = time.perf_counter() - start
    start = time.perf_counter()
    measure_members(ens.with_params(fitted["snapshots"][t0]), train_x, test_x, config)
    synchronise()
    window = time.perf_counter() - start
    sheets = ens.with_params({k: v.double() for k, v in ens.params.items()})
    sheets.buffers = {k: v.double() for k, v in ens.buffers.items()}
    points = train_x.double()
    grids = ((range(ens.size), config["adaptive_resolution"]),)
    grids += ((check, config["adaptive_resolution_check"]),)
    seconds = {f"{way}_{part}": [] for way in WAYS for part in ("adaptive", "final")}
    found: dict[str, list] = {}
    for repeat in range(repeats):
        for way in WAYS if repeat % 2 == 0 else reversed(WAYS):
            start = time.perf_counter()
            found[way] = [
                adaptive_members(sheets, points, config, chosen, resolution, batched=WAYS[way])
                for chosen, resolution in grids
            ]
            synchronise()
            seconds[f"{way}_adaptive"].append(time.perf_counter() - start)
            start = time.perf_counter()
            measure_members(
                ens, train_x, test_x, config, check=check, final=True, batched=WAYS[way]
            )
            synchronise()
            seconds[f"{way}_final"].append(time.perf_counter() - start)
    best = {key: min(times) for key, times in seconds.items()}
    evaluations = sum(r["evaluations"] for grid in found["batched"] for r in grid.values())
    gaps = [
        abs(r[key] / alone[e][key] - 1) if alone[e][key] else abs(r[key])
        for grid, alone in zip(found["batched"], found["one_at_a_time"], strict=True)
        for e, r in grid.items()
        for key in ("curvature_total_abs", "error")
    ]
    cell = {way: trained + window + best[f"{way}_final"] for way in WAYS}
    return {
        "task": task,
        "model": model,
        "device": device,
        "members": len(members),
        "checked": len(check),
        "epochs": config["epochs"],
        "resolution": config["adaptive_resolution"],
        "resolution_check": config["adaptive_resolution_check"],
        "threads": torch.get_num_threads(),
        "repeats": repeats,
        "evaluations": evaluations,
        **{f"{way}_seconds": best[f"{way}_adaptive"] for way in WAYS},
        **{f"{way}_evaluations_per_second": evaluations / best[f"{way}_adaptive"] for way in WAYS},
        "evaluations_ratio": best["one_at_a_time_adaptive"] / best["batched_adaptive"],
        "train_seconds": trained,
        "window_seconds": window,
        **{f"cell_{way}_seconds": cell[way] for way in WAYS},
        "cell_ratio": cell["one_at_a_time"] / cell["batched"],
        "max_rel_diff": max(gaps, default=0.0),
    }


def adaptive_benchmark_config(scale: str = "small", **overrides) -> dict:
    """The benchmark's settings at ``scale``
    (:data:`~curvlab.studies.protocol.ADAPTIVE_BENCHMARK_SCALES`) with ``overrides``."""
    checks = {"seeds": 1, "repeats": 1, "task": TASKS, "model": VARIANTS}
    if not isinstance(overrides.get("settings", {}), dict):
        raise ValueError("settings: expected a dict of the cell's settings")
    return study_config(
        ADAPTIVE_BENCHMARK_SCALES, scale, overrides, checks, study="adaptive benchmark"
    )


def _benchmark_cell(cell: dict) -> dict:
    return benchmark_adaptive(**cell)


def adaptive_benchmark_cells(config: dict, context: Context) -> list[Cells]:
    """One cell, timed here (a benchmark is never read from a cache)."""
    cell = {**config, "device": context.device}
    return [Cells("adaptive-benchmark", _benchmark_cell, [cell], unit="run", cached=False)]


def _report(result: StudyResult) -> list[str]:
    record = result.runs[0]
    return [json.dumps(record, indent=1)]


ADAPTIVE_BENCHMARK = Study(
    name="adaptive-benchmark",
    help="a confirmatory cell's adaptive integrals, one member at a time vs all at once",
    scales=tuple(ADAPTIVE_BENCHMARK_SCALES),
    configure=adaptive_benchmark_config,
    cells=adaptive_benchmark_cells,
    analyse=lambda config, results, context: StudyResult(
        runs=results[0], names={"runs": "adaptive_benchmark.csv"}
    ),
    arguments=(
        Argument("--seeds", "seeds", "the plan's first fresh seeds", positive_int),
        Argument("--task", "task", "the cell's task", str),
        Argument("--model", "model", "the cell's model (one the plan integrates)", str),
        Argument("--repeats", "repeats", "timings of each way", positive_int),
    ),
    report=_report,
    single_thread=True,
    caches=False,
    parallel=False,
)
"""The adaptive benchmark (:mod:`curvlab.studies.study`): one record of evaluations per
second, cell times and ratios (``adaptive_benchmark.csv``), on one torch thread, as a worker
of the study computes."""
