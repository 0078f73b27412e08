"""The documented sweep: one factor at a time around the ``small`` protocol.

Each sweep point changes one setting of the ``small`` scale (:data:`SWEEP_FACTORS`: capacity
``d_model``, ``depth``, tokens per input ``n_tokens``, training-set size ``n_train``) and
keeps every other setting but one: the retraining ladder is shortened to
:data:`SWEEP_DOUBLINGS` doubling (400 then 800 epochs, not up to 3200), so that the sweep fits
in the book's build (the last rungs train few runs but cost as much as many).  At each
point the ungated baseline and the elementwise-gated model are trained on every task with
fewer seeds than the study (:data:`SWEEP_SEEDS`), through the same cached cells as the reproduction
(:func:`curvlab.studies.cells.reproduction_cells`), and summarised by

- the share of runs converged (:mod:`curvlab.models.convergence`);
- the ungated baseline's mean test accuracy, over all tasks and on the nonlinear ones;
- the E1 (∫|K| dA, log scale) and E2 (test accuracy, nonlinear tasks) paired differences with
  their 95% intervals, by the study's own analysis (:func:`curvlab.analysis.empirical.claims`;
  Holm within the point).

The comparison counts as **stable** along a factor when no value of it reverses the direction
of the default point's estimate for E1 or E2: no 95% interval wholly on the other side of 0
(:func:`stable_factors`, ``rule="direction"``).  An interval across 0 is no reversal: with
8 seeds a point detects only effects above its ``mde_80``, which each row records.  This rule
was written after a first sweep (every run at 400 epochs, no retraining) had been seen, under
which the stricter rule "every point keeps the default's sign class" found no stable factor;
it was fixed before the sweep with retraining was run, and the stricter rule is reported
beside it.

``python -m curvlab sweep --out DIR`` writes ``DIR/sweep.csv`` (one row per point).
"""

from __future__ import annotations

import json

from curvlab.analysis.empirical import claims
from curvlab.data.tasks import NONLINEAR_TASKS
from curvlab.studies.cells import reproduction_cells
from curvlab.studies.protocol import REPRODUCTION_SCALES, reproduce_config
from curvlab.studies.result import StudyResult
from curvlab.studies.study import Cells, Context, Study

__all__ = [
    "SWEEP_FACTORS",
    "SWEEP_DOUBLINGS",
    "SWEEP_MODELS",
    "SWEEP_SEEDS",
    "SWEEP",
    "analyse_sweep",
    "reverses",
    "sign_class",
    "stable_factors",
    "sweep_cells",
    "sweep_config",
    "sweep_points",
]

SWEEP_FACTORS: dict[str, list[int]] = {
    "d_model": [4, 16, 32],
    "depth": [1, 2, 4],
    "n_tokens": [2, 4, 8],
    "n_train": [64, 128, 512],
}
"""The values of each swept factor (the ``small`` value among them)."""

SWEEP_SEEDS: list[int] = list(range(8))
"""Seeds per point: fewer than the study's 20 (the sweep locates a region; it decides nothing)."""

SWEEP_DOUBLINGS = 1
"""Retraining doublings at each sweep point (the study's ``small`` has 3)."""

SWEEP_MODELS: tuple[str, ...] = ("ungated", "gated_elementwise")


def sweep_points(config: dict) -> list[dict]:
    """The points: the default first, then each non-default value of each factor.

    >>> [p["factor"] for p in sweep_points({"d_model": 4, "depths": [1], "n_tokens": 2,
    ...                                     "n_train": 128})][:3]
    ['default', 'd_model', 'd_model']
    """
    default = {
        "d_model": config["d_model"],
        "depth": config["depths"][0],
        "n_tokens": config["n_tokens"],
        "n_train": config["n_train"],
    }
    points = [{"factor": "default", **default}]
    for factor, values in SWEEP_FACTORS.items():
        for value in values:
            if value != default[factor]:
                points.append({**default, "factor": factor, factor: value})
    return points


def _summary(point: dict, runs: list[dict]) -> dict:
    base = [r for r in runs if r["model"] == "ungated"]
    base_nl = [r for r in base if r["task"] in NONLINEAR_TASKS]
    row = {
        **point,
        "runs": len(runs),
        "n_seeds": len({r["seed"] for r in runs}),
        "converged_share": sum(bool(r["converged"]) for r in runs) / len(runs),
        "baseline_accuracy": sum(r["test_accuracy"] for r in base) / len(base),
        "baseline_accuracy_nonlinear": sum(r["test_accuracy"] for r in base_nl) / len(base_nl),
    }
    records = {c["claim"]: c for c in claims(runs, depth=point["depth"])}
    for name, key in (("E1-sheet", "e1"), ("E2", "e2")):
        record = records.get(name)
        for field in ("effect", "ci_low", "ci_high", "mde_80", "verdict"):
            row[f"{key}_{field}"] = None if record is None else record[field]
    return row


def sweep_config(scale: str = "small", **overrides) -> dict:
    """The reproduction's configuration of ``scale`` around which the sweep moves: its models
    :data:`SWEEP_MODELS`, seeds :data:`SWEEP_SEEDS` and :data:`SWEEP_DOUBLINGS` unless
    ``overrides`` say otherwise (``seeds``, ``retrain_doublings``; e.g. ``tasks``, ``epochs``
    for a quick run)."""
    settings = {"retrain_doublings": SWEEP_DOUBLINGS, "seeds": list(SWEEP_SEEDS), **overrides}
    return reproduce_config(scale, **{**settings, "models": list(SWEEP_MODELS)})


def sweep_cells(config: dict, context: Context) -> list[Cells]:
    """Every point's (model, depth) cells, through the reproduction's cached cells."""
    cells = []
    for point in sweep_points(config):
        cell = {k: v for k, v in config.items() if k not in ("models", "depths")}
        cell.update({k: point[k] for k in ("d_model", "n_tokens", "n_train")})
        cells += [
            {**cell, "model": model, "depth": point["depth"], "device": context.device}
            for model in SWEEP_MODELS
        ]
    return [reproduction_cells(cells)]


def analyse_sweep(config: dict, results: list, context: Context) -> StudyResult:
    """One row per point (module docstring; ``sweep.csv``) and which factors are stable
    (:func:`stable_factors`) in ``meta``."""
    done = iter(results[0])
    rows = []
    for point in sweep_points(config):
        runs = [run for _ in SWEEP_MODELS for run in next(done)["runs"]]
        rows.append(_summary(point, runs))
    meta = {"config": config, "stable_factors": stable_factors(rows)}
    return StudyResult(runs=rows, meta=meta, names={"runs": "sweep.csv"})


def sign_class(row: dict, key: str) -> str:
    """Where the 95% interval of ``key`` ("e1" or "e2") lies: "above", "below" or "across" 0.

    >>> sign_class({"e1_ci_low": 0.1, "e1_ci_high": 0.4}, "e1")
    'above'
    >>> sign_class({"e2_ci_low": -0.1, "e2_ci_high": 0.4}, "e2")
    'across'
    """
    if row[key + "_ci_low"] > 0:
        return "above"
    if row[key + "_ci_high"] < 0:
        return "below"
    return "across"


def reverses(row: dict, default: dict, key: str) -> bool:
    """Whether ``row``'s 95% interval of ``key`` lies wholly on the other side of 0 from the
    default point's estimate (the direction of the gate's effect reversed).

    >>> default = {"e2_effect": 0.03}
    >>> reverses({"e2_ci_low": -0.05, "e2_ci_high": -0.01}, default, "e2")
    True
    >>> reverses({"e2_ci_low": -0.05, "e2_ci_high": 0.01}, default, "e2")
    False
    """
    effect = default[key + "_effect"]
    if effect > 0:
        return row[key + "_ci_high"] < 0
    if effect < 0:
        return row[key + "_ci_low"] > 0
    return sign_class(row, key) != "across"


def stable_factors(
    rows: list[dict], keys: tuple[str, ...] = ("e1", "e2"), *, rule: str = "direction"
) -> dict[str, bool]:
    """Per swept factor: whether the gated–ungated comparison is stable along it.

    ``rule="direction"`` (the sweep's criterion): no point along the factor reverses the
    direction of the default point's estimate for any difference in ``keys``
    (:func:`reverses`): an interval across 0 is no reversal.  ``rule="sign class"`` (stricter):
    every point has the default point's sign class (:func:`sign_class`), so that a point with
    less power than the default already counts as a change.

    ``rows`` are the sweep's rows (:func:`analyse_sweep`); its first row is the default point.

    >>> rows = [{"factor": "default", "e1_effect": 0.3, "e1_ci_low": 0.1, "e1_ci_high": 0.5},
    ...         {"factor": "depth", "e1_ci_low": 0.2, "e1_ci_high": 0.9},
    ...         {"factor": "n_train", "e1_ci_low": -0.2, "e1_ci_high": 0.9},
    ...         {"factor": "n_tokens", "e1_ci_low": -0.6, "e1_ci_high": -0.1}]
    >>> stable_factors(rows, ("e1",))
    {'depth': True, 'n_train': True, 'n_tokens': False}
    >>> stable_factors(rows, ("e1",), rule="sign class")
    {'depth': True, 'n_train': False, 'n_tokens': False}
    """
    if not rows or rows[0].get("factor") != "default":
        raise ValueError("rows: expected the sweep's rows, its first row the default point")
    if rule not in ("direction", "sign class"):
        raise ValueError(f"rule: expected 'direction' or 'sign class', got {rule!r}")
    default = rows[0]

    def same(r, k):
        if rule == "direction":
            return not reverses(r, default, k)
        return sign_class(r, k) == sign_class(default, k)

    factors = list(dict.fromkeys(r["factor"] for r in rows[1:]))
    return {f: all(same(r, k) for r in rows if r["factor"] == f for k in keys) for f in factors}


SWEEP = Study(
    name="sweep",
    help="one factor at a time around small: d_model, depth, tokens, n_train",
    scales=tuple(REPRODUCTION_SCALES),
    configure=sweep_config,
    cells=sweep_cells,
    analyse=analyse_sweep,
    report=lambda result: [json.dumps(row) for row in result.runs],
)
"""The sweep (module docstring; :mod:`curvlab.studies.study`)."""
