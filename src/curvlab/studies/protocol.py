"""Every study's settings: its scales, and the caller's overrides checked against them.

A study's **scales** (``"small"``, ``"medium"``, ...) are flat dicts of one run's settings plus
the lists the study sweeps; they all live here, so that what each study runs is read in one
place: :data:`REPRODUCTION_SCALES` (Part II: the reproduction, and the pilot, the sweep and
the drawn models built on it, configured by :func:`reproduce_config`), :data:`DEPTH_SCALES`,
:data:`POOLE_SCALES`, :data:`ENSEMBLE_BENCHMARK_SCALES`,
:data:`ADAPTIVE_BENCHMARK_SCALES`, :data:`REALDATA_SCALES` and
:data:`LM_SCALES` (with the fingerprint of the corpus it was written for).
:func:`study_config` copies one scale, applies overrides (unknown keys are refused) and checks
the settings the study names: lists of names drawn from a fixed set (tasks, models, regimes),
lists of integers with a minimum (depths, seeds), single names and single integers.  Every
refusal is a ``ValueError`` that names the setting and what was expected.  A study's own
``configure`` (its :class:`~curvlab.studies.study.Study`) calls it with the checks that study
needs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from curvlab import arguments
from curvlab.data.tasks import TASKS
from curvlab.models.attention import VARIANTS
from curvlab.models.language_model import LANGUAGE_MODEL_VARIANTS

__all__ = [
    "ADAPTIVE_BENCHMARK_SCALES",
    "DEPTH_MODELS",
    "DEPTH_SCALES",
    "ENSEMBLE_BENCHMARK_SCALES",
    "LM_SCALES",
    "POOLE_SCALES",
    "REALDATA_SCALES",
    "REGIMES",
    "REPRODUCTION_SCALES",
    "reproduce_config",
    "study_config",
]


def study_config(
    scales: Mapping[str, dict],
    scale: str,
    overrides: Mapping[str, object],
    checks: Mapping[str, int | Sequence[str]],
    *,
    study: str = "study",
) -> dict:
    """``scales[scale]`` with ``overrides`` applied, then each setting named in ``checks`` checked.

    A check is the allowed names (a sequence of strings) or a minimum (an integer); what it
    applies to follows the scale's own value: a list setting must be a nonempty list of allowed
    names or of integers >= the minimum, a single setting one allowed name or one integer >= the
    minimum.  Tuples in ``overrides`` become lists; the scale itself is never modified.

    >>> scales = {"small": {"tasks": ["xor"], "seeds": [0, 1], "resolution": 8}}
    >>> study_config(scales, "small", {"seeds": (3,)}, {"tasks": ("xor", "moons"), "seeds": 0})
    {'tasks': ['xor'], 'seeds': [3], 'resolution': 8}
    >>> study_config(scales, "small", {"resolution": 1}, {"resolution": 2})
    Traceback (most recent call last):
    ...
    ValueError: resolution: expected an integer >= 2, got 1
    >>> study_config(scales, "small", {"tasks": []}, {"tasks": ("xor",)})
    Traceback (most recent call last):
    ...
    ValueError: tasks: expected a nonempty list, got []
    """
    arguments.one_of("scale", scale, scales)
    config = json.loads(json.dumps(scales[scale]))
    unknown = sorted(set(overrides) - set(config))
    if unknown:
        raise ValueError(f"{unknown[0]}: not a setting of the {study} ({sorted(config)})")
    config.update({k: list(v) if isinstance(v, tuple) else v for k, v in overrides.items()})
    for key, check in checks.items():
        if isinstance(scales[scale][key], list):
            values = config[key]
            if not isinstance(values, list) or not values:
                raise ValueError(f"{key}: expected a nonempty list, got {values!r}")
            for value in values:
                _check_one(key, value, check, plural=True)
        else:
            _check_one(key, config[key], check, plural=False)
    return config


def _check_one(key: str, value, check, *, plural: bool) -> None:
    """One value of setting ``key`` against its check: a minimum or the allowed names."""
    if arguments.is_integer(check):
        what = f"integers >= {check}" if plural else None
        arguments.integer(key, value, check, expected=what)
    else:
        what = f"names from {tuple(check)}" if plural else None
        arguments.one_of(key, value, check, expected=what)


_REPRODUCTION = {
    "d_model": 4,
    "n_heads": 1,
    "n_tokens": 2,
    "residual": True,
    "norm": False,
    "pooling": "mean",
    "n_train": 128,
    "n_test": 256,
    "noise": 0.05,
    "epochs": 400,  # the convergence pilot's choice (curvlab.studies.pilot)
    "retrain_doublings": 3,  # the retraining ladder 400, 800, 1600, 3200
    "learning_rate": 0.05,
    "weight_decay": 1e-4,
    "schedule": "cosine",
    "resolution": 10,
    "domain_radius": None,  # None: the grid's own data region (sheets.data_region_grid)
    "resolution_check": None,  # a finer grid for the quadrature's convergence, or None
    "check_seed_stride": 1,  # the finer grid on the runs of seeds divisible by this
    "adaptive_resolution": None,  # ∫|K| dA by the adaptive rule from this base grid, or None
    "adaptive_resolution_check": None,  # its convergence: the rule from this base, checked runs
    "adaptive_tolerance": 0.03,  # its relative tolerance
    "adaptive_models": [],  # the models whose final sheets it integrates
    "rho_points": 64,
    "rho_directions": 4,
    "tasks": list(TASKS),
    "models": list(VARIANTS),
    "depths": [1],
    "seeds": list(range(20)),
}

REPRODUCTION_SCALES: dict[str, dict] = {
    "small": dict(_REPRODUCTION),
    "medium": {
        **_REPRODUCTION,
        "d_model": 16,
        "n_heads": 2,
        "n_tokens": 4,
        "n_train": 512,
        "n_test": 1024,
        "epochs": 1000,
        "learning_rate": 0.02,
        "resolution": 16,
        "depths": [1, 2],
        "seeds": list(range(30)),
    },
    "large": {
        **_REPRODUCTION,
        "d_model": 32,
        "n_heads": 4,
        "n_tokens": 8,
        "n_train": 1024,
        "n_test": 2048,
        "epochs": 2000,
        "learning_rate": 0.01,
        "resolution": 20,
        "depths": [1, 2, 4],
        "seeds": list(range(50)),
    },
}
"""The reproduction's sizes (:mod:`curvlab.studies.reproduce`): one run's settings plus the
swept lists (tasks, models, depths, seeds)."""

_REPRODUCTION_CHECKS = {
    "tasks": TASKS,
    "models": VARIANTS,
    "depths": 1,
    "seeds": 0,
    "resolution": 2,
    "epochs": 2,
    "retrain_doublings": 0,
}


def reproduce_config(scale: str = "small", **overrides) -> dict:
    """The study configuration of ``scale`` with ``overrides`` (unknown keys rejected).

    >>> c = reproduce_config("small", seeds=[0, 1])
    >>> c["seeds"], c["depths"], len(c["tasks"])
    ([0, 1], [1], 8)
    """
    config = study_config(
        REPRODUCTION_SCALES, scale, overrides, _REPRODUCTION_CHECKS, study="reproduction"
    )
    for key in ("adaptive_resolution", "adaptive_resolution_check"):
        if config[key] is not None:
            _check_one(key, config[key], 2, plural=False)
    models = config["adaptive_models"]
    if not isinstance(models, list) or any(m not in VARIANTS for m in models):
        raise ValueError(f"adaptive_models: expected names from {VARIANTS}, got {models!r}")
    return config


_REALDATA = {
    "datasets": ["digits", "breast_cancer", "wine"],  # curvlab.data.realdata.DATASETS
    # the gate, the plain ungated model and the width-matched one (parameters within 2%)
    "models": ["ungated", "ungated_wide", "gated_elementwise"],
    "seeds": list(range(10)),  # a Holm family of 15 at the sign-flip floor 2 · 2⁻¹⁰: decidable
    "test_fraction": 0.25,  # each seed its own stratified split: 10 repeated splits
    "d_model": 12,  # >= the widest token (breast cancer's w = 10); one head: ungated_wide
    "n_heads": 1,  # has 790 parameters against the gate's 793 (0.4%)
    "depth": 1,
    "pooling": "mean",
    "epochs": 600,  # the training rule: this budget, and a run is trained when it
    "trained_accuracy": 0.99,  # fits its training rows to this accuracy (plateau beside it)
    "learning_rate": 0.01,
    "weight_decay": 1e-4,
    "schedule": "cosine",
    "backend": "einsum",  # the training pass (measured by the module either way)
    "triangles": 4,  # slices per run, drawn from the run's seed
    "adaptive_resolution": 4,  # ∫|K| dA by Part II's adaptive rule from this base grid ...
    "adaptive_resolution_check": 8,  # ... and from this one: its convergence on every run
    "adaptive_tolerance": 0.1,  # the rule's relative tolerance (record 0015: why not 0.03)
    "resolution": 8,  # P: the capped integrand by the centroid rule on P² sub-triangles
    "resolution_check": 16,  # 2P on every run: the capped integrand's convergence
    "convergence_threshold": 0.05,  # Part II's: median and 90th percentile of |log ratio|
    "validation_folds": 5,  # the near-linear rule: stratified folds of the training rows
    "logistic_c": 1.0,
    "logistic_max_iter": 5000,
}

REALDATA_SCALES: dict[str, dict] = {
    "small": dict(_REALDATA),
    "medium": {
        **_REALDATA,
        "models": list(VARIANTS),
        "seeds": list(range(20)),
        "d_model": 16,  # two heads: ungated_wide 1373 parameters against the gate's 1377
        "n_heads": 2,
        "triangles": 8,
    },
}
"""The real-data study's sizes (:mod:`curvlab.studies.realdata`): one run's settings plus
the swept lists (datasets, models, seeds).

The design is the study's second (docs/decisions/0015-real-data-design-2.md has the first's
numbers and why each setting changed): ∫|K| dA by Part II's adaptive rule on the triangle
(through the collapsed map, the triangle exactly its domain), from two base grids on every run;
10 seeds, each its own stratified split, so that every claim of the Holm family can reach α;
the width-matched ungated control beside the plain one; 600 epochs with the loss plateau
reported as the training rule; the near-linear rule decided on the training rows alone.  To
stay within five minutes the small scale trains three models (the gate and the two ungated
controls); ``medium`` trains all five and prints its estimated time
(:func:`curvlab.studies.realdata.estimated_seconds`) before it starts."""


_LANGUAGE_MODEL = {
    # the corpus (curvlab.data.corpus): the pinned SymPy's docstrings, refused if different
    "sympy_version": "1.14.0",
    "corpus_files_sha256": "5dae5733e7d1d024b9ebdff13f937ff926bc386168b1a76bcd803a3fa6921e4f",
    "corpus_text_sha256": "e46b85ad274fb646db56771e0677166105c3e7d9bf3677f0d070c7693119a242",
    # the model (curvlab.models.language_model)
    "context": 32,
    "d_model": 32,
    "n_heads": 4,
    "depth": 2,
    # training: AdamW, linear warm-up, then cosine decay to a tenth
    "steps": 400,
    "batch_size": 16,
    "learning_rate": 1e-2,
    "warmup_steps": 40,
    "weight_decay": 0.01,
    # stability: the same run at a multiple of the learning rate
    "stability_multiple": 30,
    "spike_factor": 1.5,  # a spike: loss above this times the running minimum ...
    "spike_window": 50,  # ... of the last this many steps
    "final_window": 10,  # the final loss: the mean of the last this many steps
    # measurement on fixed validation windows
    "validation_windows": 64,
    "slices": 2,  # 2-D input slices per run, three validation contexts each
    "resolution": 6,  # the triangle's midpoint rule with resolution² cells, checked at twice it
    "variants": list(LANGUAGE_MODEL_VARIANTS),
    "seeds": list(range(5)),
}

LM_SCALES: dict[str, dict] = {"small": dict(_LANGUAGE_MODEL)}
"""The language-model study's sizes (:mod:`curvlab.studies.lm`): the corpus fingerprint, one
run's settings and the swept lists (variants, seeds)."""


REGIMES: tuple[str, ...] = ("structured", "generic")
"""Weight-tied read/write stacks (coherent increments) and untied generic residual stacks."""

DEPTH_MODELS: tuple[str, ...] = ("ungated", "gated_headwise")
"""The variants compared by default (any of :data:`curvlab.models.attention.VARIANTS`)."""


_DEPTH_MODEL = {"d_model": 4, "n_heads": 1, "n_tokens": 2, "write_dim": 2, "residual": True}
_DEPTH_FIT = {"task": "circles", "n_train": 128, "n_test": 256, "noise": 0.05, "epochs": 40}

DEPTH_SCALES: dict[str, dict] = {
    "small": {
        **_DEPTH_MODEL,
        **_DEPTH_FIT,
        "learning_rate": 0.05,
        "regimes": list(REGIMES),
        "models": list(DEPTH_MODELS),
        "depths": [1, 2, 4, 8],
        "seeds": [0, 1, 2, 3, 4],
        "resolution": 8,
        "probe_points": 24,
    },
    "medium": {
        **_DEPTH_MODEL,
        **_DEPTH_FIT,
        "d_model": 8,
        "n_heads": 2,
        "n_tokens": 4,
        "n_train": 256,
        "n_test": 512,
        "epochs": 150,
        "learning_rate": 0.02,
        "regimes": list(REGIMES),
        "models": list(DEPTH_MODELS),
        "depths": [1, 2, 4, 8, 16],
        "seeds": list(range(10)),
        "resolution": 16,
        "probe_points": 48,
    },
    "large": {
        **_DEPTH_MODEL,
        **_DEPTH_FIT,
        "d_model": 16,
        "n_heads": 2,
        "n_tokens": 8,
        "write_dim": 4,
        "n_train": 1024,
        "n_test": 2048,
        "epochs": 300,
        "learning_rate": 0.01,
        "regimes": list(REGIMES),
        "models": ["ungated", "gated_headwise", "gated_elementwise"],
        "depths": [1, 2, 4, 8, 16, 32],
        "seeds": list(range(20)),
        "resolution": 24,
        "probe_points": 64,
    },
}
"""The depth study's sizes (:mod:`curvlab.studies.depth`).  A config holds one run's settings
plus the lists it sweeps (``regimes``, ``models``, ``depths``, ``seeds``), the ``resolution``
(points per axis) and the probes' quadrature points (the Poole anchor's sizes are
:data:`POOLE_SCALES`)."""


POOLE_SCALES: dict[str, dict] = {
    "small": {
        "width": 48,
        "max_depth": 8,
        "curve_points": 96,
        "sphere_resolution": 8,
        "poole_seeds": [0, 1, 2, 3, 4],
    },
    "medium": {
        "width": 200,
        "max_depth": 12,
        "curve_points": 256,
        "sphere_resolution": 12,
        "poole_seeds": list(range(10)),
    },
    "large": {
        "width": 1000,
        "max_depth": 16,
        "curve_points": 512,
        "sphere_resolution": 16,
        "poole_seeds": list(range(20)),
    },
}
"""Poole et al.'s anchor's sizes (:mod:`curvlab.studies.poole`): network ``width`` N,
``max_depth``, great-circle quadrature points ``curve_points``, sphere-patch grid
``sphere_resolution`` (points per axis) and ``poole_seeds``."""


ENSEMBLE_BENCHMARK_SCALES: dict[str, dict] = {
    "small": {
        "variant": "gated_elementwise",
        "seeds": 20,
        "d_model": 4,
        "n_heads": 1,
        "n_tokens": 2,
        "n_train": 128,
        "epochs": 100,
        "task": "moons",
        "learning_rate": 0.05,
    }
}
"""The ensemble benchmark's size (:mod:`curvlab.studies.ensemble_benchmark`): ``seeds``
classifiers of one ``variant`` trained three ways on one task."""

ADAPTIVE_BENCHMARK_SCALES: dict[str, dict] = {
    "small": {
        "task": "xor",
        "model": "gated_elementwise",
        "seeds": 16,
        "repeats": 2,
        "settings": {},
    }
}
"""The adaptive benchmark's size (:mod:`curvlab.studies.adaptive_benchmark`): one confirmatory
cell, the plan's first ``seeds`` fresh seeds of one ``task`` and ``model``, each way timed
``repeats`` times; ``settings`` override the cell's configuration (empty: the plan's)."""
