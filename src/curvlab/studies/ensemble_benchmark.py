"""The ensemble's speed: per-seed loop against the two vectorised ensembles, in one run.

:func:`benchmark_ensemble` (also ``python -m curvlab ensemble-benchmark``) trains the same
``seeds`` classifiers three ways, by :func:`curvlab.models.ensemble.train_loop` (one model
at a time), by the ``vmap`` ensemble (the ``nn.Module`` itself, the default and the pass every
measurement uses) and by the hand-batched ``einsum`` ensemble (an opt-in training
optimisation), and reports the wall times and the ratios loop / ensemble.  All three run on
one ``device`` (the CPU by default; ``"cuda"`` measures the same comparison on a GPU, each
timing closed by a synchronisation), so the ratio compares like with like.
"""

from __future__ import annotations

import json
import time

import torch

from curvlab.data.tasks import TASKS, make_task
from curvlab.models.attention import VARIANTS, build_classifier
from curvlab.models.ensemble import BACKENDS, stack, train_ensemble, train_loop
from curvlab.models.training import resolve_device
from curvlab.studies.protocol import ENSEMBLE_BENCHMARK_SCALES, study_config
from curvlab.studies.result import StudyResult
from curvlab.studies.study import Argument, Cells, Context, Study, positive_int

__all__ = [
    "ENSEMBLE_BENCHMARK",
    "benchmark_ensemble",
    "ensemble_benchmark_cells",
    "ensemble_benchmark_config",
]


def benchmark_ensemble(
    *,
    variant: str = "gated_elementwise",
    seeds: int = 20,
    d_model: int = 4,
    n_heads: int = 1,
    n_tokens: int = 2,
    n_train: int = 128,
    epochs: int = 100,
    task: str = "moons",
    learning_rate: float = 0.05,
    device="cpu",
) -> dict:
    """Wall time of training ``seeds`` models by the per-seed loop, by the vmap ensemble and
    by the einsum ensemble, in one run (float32, CPU threads as set) on ``device`` ("cpu",
    "cuda" or "auto"); the speed-up ratios.

    >>> r = benchmark_ensemble(seeds=2, epochs=2, n_train=8)
    >>> r["device"], r["seeds"], sorted(k for k in r if k.endswith("speedup"))
    ('cpu', 2, ['einsum_speedup', 'vmap_speedup'])
    """

    def build():
        return [
            build_classifier(variant, d_model=d_model, n_heads=n_heads, n_tokens=n_tokens, seed=s)
            for s in range(seeds)
        ]

    device = resolve_device(device)

    def synchronise():
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    data = [make_task(task, n_train=n_train, n_test=1, seed=s) for s in range(seeds)]
    points = torch.stack([d.train_points for d in data]).float().to(device)
    labels = torch.stack([d.train_labels for d in data]).float().to(device)
    # one short untimed pass of each, so that no timing pays for first-call set-up
    train_loop(build()[:1], points[:1], labels[:1], epochs=2, learning_rate=1e-9, device=device)
    for backend in BACKENDS:
        train_ensemble(
            stack(build()).to(device), points, labels, epochs=2, learning_rate=1e-9, backend=backend
        )
    synchronise()
    start = time.perf_counter()
    train_loop(build(), points, labels, epochs=epochs, learning_rate=learning_rate, device=device)
    synchronise()
    loop = time.perf_counter() - start
    timings = {}
    for backend in BACKENDS:
        ens = stack(build()).to(device)
        synchronise()
        start = time.perf_counter()
        train_ensemble(
            ens, points, labels, epochs=epochs, learning_rate=learning_rate, backend=backend
        )
        synchronise()
        timings[backend] = time.perf_counter() - start
    return {
        "variant": variant,
        "device": device,
        "seeds": seeds,
        "d_model": d_model,
        "epochs": epochs,
        "n_train": n_train,
        "threads": torch.get_num_threads(),
        "loop_seconds": loop,
        "vmap_seconds": timings["vmap"],
        "einsum_seconds": timings["einsum"],
        "vmap_speedup": loop / timings["vmap"],
        "einsum_speedup": loop / timings["einsum"],
    }


def ensemble_benchmark_config(scale: str = "small", **overrides) -> dict:
    """The benchmark's settings at ``scale``
    (:data:`~curvlab.studies.protocol.ENSEMBLE_BENCHMARK_SCALES`) with ``overrides``."""
    checks = {"seeds": 1, "d_model": 1, "n_heads": 1, "n_tokens": 1, "n_train": 1, "epochs": 1}
    checks |= {"variant": VARIANTS, "task": TASKS}
    return study_config(
        ENSEMBLE_BENCHMARK_SCALES, scale, overrides, checks, study="ensemble benchmark"
    )


def _benchmark_cell(cell: dict) -> dict:
    return benchmark_ensemble(**cell)


def ensemble_benchmark_cells(config: dict, context: Context) -> list[Cells]:
    """One cell, timed here (a benchmark is never read from a cache)."""
    cell = {**config, "device": context.device}
    return [Cells("ensemble-benchmark", _benchmark_cell, [cell], unit="run", cached=False)]


ENSEMBLE_BENCHMARK = Study(
    name="ensemble-benchmark",
    help="per-seed loop vs vmap and einsum ensembles, one run",
    scales=tuple(ENSEMBLE_BENCHMARK_SCALES),
    configure=ensemble_benchmark_config,
    cells=ensemble_benchmark_cells,
    analyse=lambda config, results, context: StudyResult(
        runs=results[0], names={"runs": "ensemble_benchmark.csv"}
    ),
    arguments=(
        Argument("--seeds", "seeds", "models trained each way", positive_int),
        Argument("--d-model", "d_model", "the models' width", positive_int),
        Argument("--epochs", "epochs", "epochs of each", positive_int),
    ),
    report=lambda result: [json.dumps(result.runs[0], indent=1)],
    caches=False,
    parallel=False,
)
"""The ensemble benchmark (:mod:`curvlab.studies.study`): one record of wall times and
ratios (``ensemble_benchmark.csv``)."""
