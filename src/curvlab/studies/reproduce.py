"""The Part II reproduction: train every model of the study, measure it, test the claims.

``reproduce(scale="small", out=DIR)`` (also ``python -m curvlab reproduce``) writes

- ``DIR/runs.csv``  one row per trained model (:data:`RUN_COLUMNS`);
- ``DIR/loss_curves.csv``  task, model, depth, seed, budget, epoch, loss (:data:`CURVE_POINTS`
  + 1 evenly spaced epochs of each run's budget);
- ``DIR/effects.csv``  per task and comparison: the paired difference over seeds with its 95%
  interval (unadjusted; the forest plot);
- ``DIR/correlations.json``  E3: Pearson and Spearman, pooled and within task, with intervals;
- ``DIR/claims.json``  one record per empirical claim (:data:`CLAIM_FIELDS`, plus ``d_z``,
  ``p_raw``, the comparison and ``unconverged_runs``), verdicts by the rules of
  :mod:`curvlab.analysis.stats`;
- ``DIR/meta.json``  the configuration, the analysis plan, code version, timings;

The command line (``python -m curvlab reproduce``) also draws the study's figures into ``DIR``
(:func:`curvlab.plotting.figures.write_figures`).

The work is split by concern: :mod:`curvlab.studies.cells` trains and measures one
(model, depth) cell as a vectorised ensemble (cached on disk under its configuration and the
code of every module it imports), :mod:`curvlab.analysis.empirical` turns runs into claims, and this
module holds the scales and runs the whole study.  Their public names are re-exported here.

Protocol.  Full-batch Adam with a cosine schedule; every run's convergence judged by
:mod:`curvlab.models.convergence` (training accuracy and the curvature measures stable
over the last fifth of the epochs) and recorded.  A run starts at the scale's ``epochs``;
one that did not converge is trained afresh at twice the budget, ``retrain_doublings`` times
(:func:`curvlab.studies.cells.train_until_converged`), and a run unconverged at the cap
is kept and counted.  The ``small`` scale's starting epochs are those the convergence pilot
(:mod:`curvlab.studies.pilot`) chose from convergence and the ungated baseline's accuracy
alone; the protocol and :data:`ANALYSIS` (measures, tests, margin, level) were fixed before
any gated–ungated difference was looked at, except the retraining ladder, added after the
first study showed 229 of 800 runs unconverged at a fixed budget (a rule on each run's own
convergence, blind to the model it trains).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import torch
from tqdm.auto import tqdm

from curvlab.analysis.empirical import (
    ANALYSIS,
    CLAIM_FIELDS,
    analyse,
    claims,
    correlations,
    per_task_effects,
)
from curvlab.models.attention import VARIANTS
from curvlab.models.tasks import TASKS
from curvlab.studies import write_csv
from curvlab.studies.cache import code_version
from curvlab.studies.cells import (
    CURVE_POINTS,
    RUN_COLUMNS,
    resolve_device,
    run_cell,
)
from curvlab.studies.protocol import study_config

__all__ = [
    "ANALYSIS",
    "CLAIM_FIELDS",
    "CURVE_POINTS",
    "RUN_COLUMNS",
    "SCALES",
    "analyse",
    "claims",
    "correlations",
    "per_task_effects",
    "reproduce",
    "reproduce_config",
    "run_cell",
    "run_study",
]

_BASE = {
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
    "grid": 10,
    "rho_points": 64,
    "rho_directions": 4,
    "tasks": list(TASKS),
    "models": list(VARIANTS),
    "depths": [1],
    "seeds": list(range(20)),
}

SCALES: dict[str, dict] = {
    "small": dict(_BASE),
    "medium": {
        **_BASE,
        "d_model": 16,
        "n_heads": 2,
        "n_tokens": 4,
        "n_train": 512,
        "n_test": 1024,
        "epochs": 1000,
        "learning_rate": 0.02,
        "grid": 16,
        "depths": [1, 2],
        "seeds": list(range(30)),
    },
    "large": {
        **_BASE,
        "d_model": 32,
        "n_heads": 4,
        "n_tokens": 8,
        "n_train": 1024,
        "n_test": 2048,
        "epochs": 2000,
        "learning_rate": 0.01,
        "grid": 20,
        "depths": [1, 2, 4],
        "seeds": list(range(50)),
    },
}
"""Study sizes: one run's settings plus the swept lists (tasks, models, depths, seeds)."""

_CHECKS = {
    "tasks": TASKS,
    "models": VARIANTS,
    "depths": 1,
    "seeds": 0,
    "grid": 2,
    "epochs": 2,
    "retrain_doublings": 0,
}


def reproduce_config(scale: str = "small", **overrides) -> dict:
    """The study configuration of ``scale`` with ``overrides`` (unknown keys rejected).

    >>> c = reproduce_config("small", seeds=[0, 1])
    >>> c["seeds"], c["depths"], len(c["tasks"])
    ([0, 1], [1], 8)
    """
    return study_config(SCALES, scale, overrides, _CHECKS, study="reproduction")


def run_study(
    scale: str = "small",
    *,
    device="auto",
    directory=None,
    refresh: bool = False,
    progress: bool = True,
    **overrides,
) -> tuple[list[dict], list[dict]]:
    """Train (or read from the cache) every cell: (runs, loss-curve rows)."""
    config = reproduce_config(scale, **overrides)
    device = resolve_device(device)
    cells = [(m, d) for d in config["depths"] for m in config["models"]]
    base = {k: v for k, v in config.items() if k not in ("models", "depths")}
    runs, curve_rows = [], []
    bar = tqdm(cells, desc="reproduce", disable=not progress, unit="cell")
    for model, depth in bar:
        bar.set_postfix_str(f"{model} depth {depth}")
        result = run_cell(
            {**base, "model": model, "depth": depth, "device": device},
            directory=directory,
            refresh=refresh,
        )
        runs.extend(result["runs"])
        for run, curve in zip(result["runs"], result["curves"], strict=True):
            for epoch, loss in zip(curve["epochs"], curve["losses"], strict=True):
                curve_rows.append(
                    {k: run[k] for k in ("task", "model", "depth", "seed")}
                    | {"budget": run["epochs"], "epoch": epoch, "loss": loss}
                )
    return runs, curve_rows


def reproduce(
    scale: str = "small",
    out=None,
    *,
    device="auto",
    seeds: int | None = None,
    progress: bool = True,
    directory=None,
    refresh: bool = False,
    **overrides,
) -> dict:
    """Run the study and write its files into ``out`` (module docstring); returns a dict with
    the ``paths`` written (``runs``, ``claims``, ...), the ``claims`` records, the wall
    ``seconds``, and in memory the ``runs``, the ``loss_curves`` rows and the whole
    ``analysis`` (:func:`curvlab.analysis.empirical.analyse`).

    ``seeds``: the number of seeds 0..seeds−1 (overrides the scale).  ``directory``: the run
    cache (default: $CURVLAB_CACHE or .curvlab-cache/).
    """
    if out is None:
        raise ValueError("out: expected a directory to write the results into")
    if seeds is not None:
        if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 3:
            raise ValueError(f"seeds: expected an integer >= 3, got {seeds!r}")
        overrides["seeds"] = list(range(seeds))
    start = time.perf_counter()
    config = reproduce_config(scale, **overrides)
    runs, curve_rows = run_study(
        scale,
        device=device,
        directory=directory,
        refresh=refresh,
        progress=progress,
        **overrides,
    )
    trained = time.perf_counter() - start
    result = analyse(runs)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "runs": write_csv([{k: r[k] for k in RUN_COLUMNS} for r in runs], out / "runs.csv"),
        "loss_curves": write_csv(curve_rows, out / "loss_curves.csv"),
        "effects": write_csv(result["effects"], out / "effects.csv"),
    }
    paths["claims"] = _write_json(result["claims"], out / "claims.json")
    paths["correlations"] = _write_json(result["correlations"], out / "correlations.json")
    seconds = time.perf_counter() - start
    meta = {
        "scale": scale,
        "config": config,
        "analysis": ANALYSIS,
        "device": resolve_device(device),
        "code_version": code_version(__name__),
        "runs": len(runs),
        "unconverged_runs": sum(not r["converged"] for r in runs),
        "train_seconds": trained,
        "seconds": seconds,
        "threads": torch.get_num_threads(),
        "cpu_count": os.cpu_count(),
    }
    paths["meta"] = _write_json(meta, out / "meta.json")
    return {
        "paths": {k: str(v) for k, v in paths.items()},
        "claims": result["claims"],
        "seconds": seconds,
        "runs": runs,
        "loss_curves": curve_rows,
        "analysis": result,
    }


def _write_json(value, path: Path) -> Path:
    path.write_text(json.dumps(value, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    return path
