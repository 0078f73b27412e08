"""The Part II reproduction: train every model of the study, measure it, test the claims.

``reproduce(scale="small")`` returns a :class:`~curvlab.studies.result.StudyResult`;
``reproduce(scale="small", out=DIR)`` (also ``python -m curvlab reproduce --out DIR``) writes it:

- ``DIR/runs.csv``  one row per trained model (:data:`RUN_COLUMNS`);
- ``DIR/loss_curves.csv``  task, model, depth, seed, budget, epoch, loss (:data:`CURVE_POINTS`
  + 1 evenly spaced epochs of each run's budget);
- ``DIR/effects.csv``  per task and comparison: the paired difference over seeds with its 95%
  interval (unadjusted; the forest plot);
- ``DIR/correlations.json``  E3: within task × model (seed-cluster intervals, permutation
  null), the paired Δ–Δ slope, and the model-pooled figures (confounded, descriptive);
- ``DIR/claims.json``  the whole claims table: the geometric claims T1 to T5
  (:mod:`curvlab.studies.geometric_claims`: checks, passed, verdict) and one record per
  empirical claim (:data:`CLAIM_FIELDS`, plus ``d_z``, ``p_raw``, the comparison and
  ``unconverged_runs``), verdicts by the rules of :mod:`curvlab.analysis.stats`;
- ``DIR/meta.json``  the configuration, the analysis plan, code version, timings;

The command line (``python -m curvlab reproduce``) also draws the study's figures into ``DIR``
(:func:`curvlab.plotting.write_figures`).

The work is split by concern: :mod:`curvlab.studies.cells` trains and measures one
(model, depth) cell as a vectorised ensemble (cached on disk under its configuration and the
code of every module it imports), :mod:`curvlab.analysis.empirical` turns runs into claims,
:mod:`curvlab.studies.geometric_claims` computes T1 to T5, :mod:`curvlab.studies.protocol`
holds the scales, and this module runs the whole study.  Their public names are re-exported
here.

Protocol.  Full-batch Adam with a cosine schedule; every run's convergence judged by
:mod:`curvlab.models.convergence` (training accuracy and the curvature measures stable
over the last fifth of the epochs) and recorded.  A run starts at the scale's ``epochs``;
one that did not converge is trained afresh at twice the budget, ``retrain_doublings`` times
(:func:`curvlab.studies.cells.train_until_converged`), and a run unconverged at the cap
is kept and counted.  The ``small`` scale's starting epochs are those the convergence pilot
(:mod:`curvlab.studies.pilot`) chose from convergence and the ungated baseline's accuracy
alone.  The study is **exploratory**: the protocol and :data:`ANALYSIS` were not fixed before
gated–ungated differences were seen.  Earlier runs of it (a 5-seed study, then a 20-seed
claims table) had been looked at when the schedule, the weight decay, the convergence rule,
the pilot's fallback and the retraining ladder were changed (each a rule on convergence or on
the baseline alone, but chosen with those results known).  The plan frozen for a confirmatory
study on fresh seeds is :data:`curvlab.analysis.plan.PLAN`.
"""

from __future__ import annotations

import os
import time

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
from curvlab.studies.cache import code_version
from curvlab.studies.cells import (
    CURVE_POINTS,
    RUN_COLUMNS,
    resolve_device,
    run_cell,
)
from curvlab.studies.geometric_claims import geometric_claims
from curvlab.studies.protocol import REPRODUCTION_SCALES as SCALES
from curvlab.studies.protocol import reproduce_config
from curvlab.studies.result import StudyResult

__all__ = [
    "ANALYSIS",
    "CLAIM_FIELDS",
    "CURVE_POINTS",
    "RUN_COLUMNS",
    "SCALES",
    "StudyResult",
    "analyse",
    "claims",
    "correlations",
    "per_task_effects",
    "reproduce",
    "reproduce_config",
    "run_cell",
    "run_study",
]


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
    geometric: bool = True,
    **overrides,
) -> StudyResult:
    """Run the study; its :class:`~curvlab.studies.result.StudyResult`, also written into
    ``out`` when given (the files of the module docstring; ``out=None`` writes nothing).

    The result's ``runs`` (columns :data:`RUN_COLUMNS`), ``curves`` (the loss-curve rows),
    ``effects`` and ``correlations`` are those of :func:`curvlab.analysis.empirical.analyse`;
    its ``claims`` the whole table: the geometric claims T1 to T5
    (:func:`curvlab.studies.geometric_claims.geometric_claims`, unless ``geometric`` is False),
    then the empirical ones; ``meta`` the configuration, the analysis plan, the code version
    and the timings.

    ``seeds``: the number of seeds 0..seeds−1 (overrides the scale).  ``directory``: the run
    cache (default: $CURVLAB_CACHE or .curvlab-cache/).
    """
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
    analysed = analyse(runs)
    table = geometric_claims(directory=directory) if geometric else []
    meta = {
        "scale": scale,
        "config": config,
        "analysis": ANALYSIS,
        "device": resolve_device(device),
        "code_version": code_version(__name__),
        "runs": len(runs),
        "unconverged_runs": sum(not r["converged"] for r in runs),
        "train_seconds": trained,
        "seconds": time.perf_counter() - start,
        "threads": torch.get_num_threads(),
        "cpu_count": os.cpu_count(),
    }
    result = StudyResult(
        runs=[{k: r[k] for k in RUN_COLUMNS} for r in runs],
        curves=curve_rows,
        claims=[*table, *analysed["claims"]],
        effects=analysed["effects"],
        correlations=analysed["correlations"],
        meta=meta,
    )
    if out is not None:
        result.write(out)
    return result
