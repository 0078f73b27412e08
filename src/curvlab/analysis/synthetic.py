"""Run records with a known answer for E3: the model confound without a within-cell association
(:func:`synthetic_runs`, the test bed of :mod:`curvlab.analysis.association`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from curvlab import arguments

__all__ = ["synthetic_runs"]


def synthetic_runs(
    *,
    n_seeds: int = 20,
    tasks: Sequence[str] = ("xor", "circles"),
    models: Sequence[str] = ("ungated", "gated", "ablation"),
    model_shift: float = 1.0,
    within_slope: float = 0.0,
    seed_sd: float = 0.0,
    depth: int = 1,
    seed: int = 0,
) -> list[dict]:
    """Run records with a known answer: the model confound without a within-cell association.

    For model m (index k = 0, 1, ...), task t and seed s, with independent standard normals
    u, e (and a shared seed effect b_s ~ N(0, ``seed_sd``²), the same for every run of s)::

        log_curvature = k · model_shift + u + b_s
        test_accuracy = k · model_shift + within_slope · u + e + b_s

    so the model means of both rise together (the confound), while within a (task, model)
    cell the slope of accuracy on curvature is ``within_slope`` (plus the seed effect, which
    both share).  ``within_slope=0`` and ``seed_sd=0``: independent within every cell.

    >>> runs = synthetic_runs(n_seeds=2)
    >>> len(runs), sorted(runs[0])
    (12, ['depth', 'log_curvature_total_abs', 'model', 'seed', 'task', 'test_accuracy'])
    """
    arguments.integer("n_seeds", n_seeds, 1)
    rng = np.random.default_rng(seed)
    seed_effect = rng.normal(0.0, seed_sd, n_seeds) if seed_sd > 0 else np.zeros(n_seeds)
    runs = []
    for task in tasks:
        for k, model in enumerate(models):
            u, e = rng.normal(size=(2, n_seeds))
            x = k * model_shift + u + seed_effect
            y = k * model_shift + within_slope * u + e + seed_effect
            cell = {"task": task, "model": model, "depth": depth}
            runs += [
                {**cell, "seed": s, "log_curvature_total_abs": a, "test_accuracy": b}
                for s, (a, b) in enumerate(zip(x.tolist(), y.tolist(), strict=True))
            ]
    return runs
