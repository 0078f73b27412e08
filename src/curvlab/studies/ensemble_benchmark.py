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

import time

import torch

from curvlab.data.tasks import make_task
from curvlab.models.attention import build_classifier
from curvlab.models.ensemble import BACKENDS, stack, train_ensemble, train_loop
from curvlab.models.training import resolve_device

__all__ = ["benchmark_ensemble"]


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
