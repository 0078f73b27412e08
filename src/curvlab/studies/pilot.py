"""The convergence pilot: how many epochs the reproduction trains, chosen by evidence.

The pilot trains every model of a scale on every task for a long budget, with seeds of its
own (:data:`PILOT_PLAN` ``seeds``, disjoint from the study's seeds 0, 1, ...), once for each
candidate budget B (the learning-rate schedule spans the whole budget, so a shorter budget is
a different run, not a prefix of a longer one), and records for every run and budget whether
it converged (:mod:`curvlab.models.convergence`) and its test accuracy.
:func:`choose_epochs` then takes the **smallest budget B** at which

1. at least :data:`PILOT_PLAN` ``converged_share`` (95%) of all runs, every model, are converged,
   and
2. the **ungated baseline** has stopped improving: its mean test accuracy over tasks and
   seeds rises by less than ``baseline_gain`` (half a point) from B to the next budget.

Nothing else enters: the rule never reads a gated–ungated difference (though it was written,
with the criterion and the schedule, after a first 20-seed study's differences had been seen:
the study it sets is exploratory).  The last budget has no successor and cannot be chosen.  If
no budget qualifies, :func:`choose_epochs` says so (``chosen`` None) and its ``epochs`` fall
back to the smallest budget at which the baseline stopped improving (``rule`` "baseline only";
this fallback was added when a first pilot showed no budget reaching the share), so that the
protocol is still fixed by the baseline alone and the shortfall in convergence is reported, not
hidden.  The study then retrains each unconverged run at doubled budgets
(:func:`curvlab.studies.cells.train_until_converged`); the summary's ``ladder_share`` says how
far that reaches within the pilot's own budgets.

``python -m curvlab pilot --out DIR`` writes ``DIR/pilot.csv`` (one row per run and budget)
and ``DIR/pilot_summary.csv`` (one row per budget).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from curvlab import arguments
from curvlab.studies.cells import train_and_judge
from curvlab.studies.protocol import REPRODUCTION_SCALES, reproduce_config
from curvlab.studies.result import StudyResult
from curvlab.studies.study import Cells, Context, Study

__all__ = [
    "PILOT_PLAN",
    "PILOT",
    "analyse_pilot",
    "choose_epochs",
    "pilot_cells",
    "pilot_config",
]

PILOT_PLAN: dict = {
    "budgets": [100, 200, 400, 800],
    "seeds": list(range(100, 103)),
    "converged_share": 0.95,
    "baseline_gain": 0.005,
    "baseline": "ungated",
}
"""The pilot's plan: candidate epoch budgets (each the double of the last), its own seeds,
the share of converged runs required and the largest baseline gain that counts as "stopped
improving" (mean test accuracy, fraction)."""


def _pilot_cell(config: dict) -> list[dict]:
    """Every member trained afresh for each budget (the schedule depends on the budget)."""
    members = [(t, s) for t in config["tasks"] for s in config["seeds"]]
    rows = []
    for budget in sorted(config["budgets"]):
        trained = train_and_judge(config, config["model"], config["depth"], members, budget)
        fitted, tested = trained["fitted"], trained["tested"]
        for e, (task, seed) in enumerate(members):
            ok, spread, change = trained["judged"][e]
            rows.append(
                {
                    "task": task,
                    "model": config["model"],
                    "depth": config["depth"],
                    "seed": seed,
                    "budget": budget,
                    "converged": ok,
                    "accuracy_spread": spread,
                    "measure_change": change,
                    "train_accuracy": float(fitted["train_accuracy"][e]),
                    "test_accuracy": float(tested["accuracy"][e]),
                }
            )
    return rows


def pilot_config(scale: str = "small", *, plan: dict = PILOT_PLAN, **overrides) -> dict:
    """The reproduction's configuration of ``scale`` with ``overrides`` (as for the
    reproduction) and the pilot's ``plan`` (its seeds and budgets: :data:`PILOT_PLAN`)."""
    config = reproduce_config(scale, **overrides)
    budgets = plan["budgets"]
    if len(budgets) < 2 or any(not arguments.is_integer(b) or b < 2 for b in budgets):
        raise ValueError(f"plan: expected at least two integer budgets >= 2, got {budgets!r}")
    return {**config, "plan": dict(plan)}


def pilot_cells(config: dict, context: Context) -> list[Cells]:
    """One cell per (model, depth): every task and the plan's seeds, at every budget."""
    plan = config["plan"]
    base = {k: v for k, v in config.items() if k not in ("models", "depths", "epochs", "plan")}
    base.update(seeds=list(plan["seeds"]), budgets=sorted(plan["budgets"]))
    base["device"] = context.device
    configs = [{**base, "model": m, "depth": d} for d in config["depths"] for m in config["models"]]
    return [Cells("pilot", _pilot_cell, configs)]


def analyse_pilot(config: dict, results: list, context: Context) -> StudyResult:
    """The rows (one per run and budget: ``runs``, ``pilot.csv``), :func:`choose_epochs`'s
    summary (``curves``, ``pilot_summary.csv``) and its choice in ``meta``."""
    (cells,) = results
    rows = [row for cell in cells for row in cell]
    chosen = choose_epochs(rows, config["plan"])
    meta = {k: chosen[k] for k in ("chosen", "epochs", "rule", "plan")}
    return StudyResult(
        runs=rows,
        curves=chosen["summary"],
        meta=meta,
        names={"runs": "pilot.csv", "curves": "pilot_summary.csv"},
    )


def _key(row: dict) -> tuple:
    return tuple(row.get(k) for k in ("task", "model", "depth", "seed"))


def choose_epochs(rows: Sequence[dict], plan: dict = PILOT_PLAN) -> dict:
    """The pilot's rule (module docstring) on its rows: ``summary`` (per budget: runs,
    converged share, baseline mean test accuracy, its gain to the next budget, whether both
    conditions hold, and ``ladder_share``: the share of runs converged at this budget or, when
    retrained, at a later budget of the pilot, what the study's retraining ladder reaches
    within the pilot's budgets; informative, not part of the rule), ``chosen`` (the smallest
    qualifying budget, or None), ``epochs`` (the budget the protocol uses: ``chosen``, else the
    fallback) and ``rule`` (which applied).

    >>> rows = [
    ...     {"budget": b, "model": m, "converged": b >= 200, "test_accuracy": acc}
    ...     for b, acc in ((100, 0.80), (200, 0.90), (400, 0.902))
    ...     for m in ("ungated", "gated_elementwise")
    ... ]
    >>> choose_epochs(rows)["chosen"]
    200
    """
    budgets = sorted({r["budget"] for r in rows})
    if len(budgets) < 2:
        raise ValueError("rows: expected pilot rows for at least two budgets")
    baseline = plan["baseline"]
    summary = []
    for budget in budgets:
        at = [r for r in rows if r["budget"] == budget]
        base = [r["test_accuracy"] for r in at if r["model"] == baseline]
        if not base:
            raise ValueError(f"rows: no runs of the baseline {baseline!r} at budget {budget}")
        summary.append(
            {
                "budget": budget,
                "runs": len(at),
                "converged_share": sum(bool(r["converged"]) for r in at) / len(at),
                "baseline_accuracy": sum(base) / len(base),
            }
        )
    for here, after in zip(summary, [*summary[1:], None], strict=True):
        here["baseline_gain"] = (
            None if after is None else after["baseline_accuracy"] - here["baseline_accuracy"]
        )
        here["qualifies"] = bool(
            here["baseline_gain"] is not None
            and here["converged_share"] >= plan["converged_share"]
            and here["baseline_gain"] < plan["baseline_gain"]
        )
    chosen = next((s["budget"] for s in summary if s["qualifies"]), None)
    settled = next(
        (
            s["budget"]
            for s in summary
            if s["baseline_gain"] is not None and s["baseline_gain"] < plan["baseline_gain"]
        ),
        None,
    )
    for here in summary:  # the retraining ladder from this budget, as far as the pilot reaches
        later = {s["budget"] for s in summary if s["budget"] >= here["budget"]}
        runs = {_key(r) for r in rows if r["budget"] == here["budget"]}
        done = {_key(r) for r in rows if r["budget"] in later and r["converged"]}
        here["ladder_share"] = len(runs & done) / len(runs)
    rule = "converged share and baseline" if chosen is not None else "baseline only"
    epochs = chosen if chosen is not None else settled
    return {
        "summary": summary,
        "chosen": chosen,
        "epochs": epochs,
        "rule": rule,
        "plan": dict(plan),
    }


def report_pilot(result: StudyResult) -> list[str]:
    """The summary, one JSON line per budget, then the choice."""
    meta = result.meta
    lines = [json.dumps(row) for row in result.curves]
    return [*lines, f"chosen epochs: {meta['chosen']} (protocol: {meta['epochs']}, {meta['rule']})"]


PILOT = Study(
    name="pilot",
    help="convergence pilot: the epoch budget chosen by convergence and baseline",
    scales=tuple(REPRODUCTION_SCALES),
    configure=pilot_config,
    cells=pilot_cells,
    analyse=analyse_pilot,
    report=report_pilot,
)
"""The convergence pilot (module docstring; :mod:`curvlab.studies.study`)."""
