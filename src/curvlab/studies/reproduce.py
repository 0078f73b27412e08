"""The Part II reproduction: train every model of the study, measure it, test the claims.

``run_study(REPRODUCE, "small")`` (:mod:`curvlab.studies.study`) returns a
:class:`~curvlab.studies.result.StudyResult`; ``python -m curvlab reproduce --out DIR`` writes
it:

Two studies: the **exploratory** one (seeds 0–19, the retraining ladder, ∫|K| dA on each
grid's own data region at 10² nodes), and the **confirmatory** one under the frozen plan
:data:`curvlab.analysis.plan.PLAN` (fresh seeds 1000–1039, one fixed budget for every model
with a one-doubling ladder beside it as a sensitivity analysis, ∫|K| dA on a fixed data domain
at 64² nodes, its convergence checked at 128²).  Both are analysed by the plan's claims.

- ``DIR/runs.csv``  one row per trained model and rule (:data:`STUDY_COLUMNS` +
  :data:`RUN_COLUMNS`);
- ``DIR/loss_curves.csv``  task, model, depth, seed, budget, epoch, loss (:data:`CURVE_POINTS`
  + 1 evenly spaced epochs of each run's budget);
- ``DIR/effects.csv``  per task and comparison: the paired difference over seeds with its 95%
  interval (unadjusted; the forest plot);
- ``DIR/correlations.json``  E3: within task × model (seed-cluster intervals, permutation
  null), the paired Δ–Δ slope, and the model-pooled figures (confounded, descriptive);
- ``DIR/claims.json``  ``plan_sha256``; ``claims``, one record per empirical claim and study
  in the schema of :mod:`curvlab.analysis.schema` (plus the comparison, ``d_z``,
  ``unconverged_runs``, the converged-only and, confirmatory, the ladder's results), verdicts
  by the rules of :mod:`curvlab.analysis.stats`; ``geometric``, the claims T1 to T5
  (:mod:`curvlab.studies.geometric_claims`: checks, passed, verdict);
- ``DIR/meta.json``  both configurations, the plan and its hash, the quadrature's convergence
  on the confirmatory sheets, code version, timings;

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
alone.  The first study is **exploratory**: the protocol and :data:`ANALYSIS` were not fixed before
gated–ungated differences were seen.  Earlier runs of it (a 5-seed study, then a 20-seed
claims table) had been looked at when the schedule, the weight decay, the convergence rule,
the pilot's fallback and the retraining ladder were changed (each a rule on convergence or on
the baseline alone, but chosen with those results known).  The plan frozen for a confirmatory
study on fresh seeds is :data:`curvlab.analysis.plan.PLAN`.
"""

from __future__ import annotations

import json

from curvlab import arguments
from curvlab.analysis.empirical import (
    ANALYSIS,
    CLAIM_FIELDS,
    SENSITIVITY_FIELDS,
    analyse,
    claims,
    correlations,
    per_task_effects,
    quadrature_convergence,
)
from curvlab.analysis.plan import (
    PLAN,
    PLAN_V2,
    AdaptiveCurvatureEstimator,
    AnalysisPlan,
    plan_json,
    plan_sha256,
)
from curvlab.data.tasks import TASKS
from curvlab.studies.cells import CURVE_POINTS, RUN_COLUMNS, reproduction_cells
from curvlab.studies.geometric_claims import geometric_claims
from curvlab.studies.protocol import REPRODUCTION_SCALES as SCALES
from curvlab.studies.protocol import reproduce_config
from curvlab.studies.result import StudyResult
from curvlab.studies.study import (
    Argument,
    Cells,
    Context,
    Study,
    interval_text,
    name_list,
    number_or_na,
    positive_int,
    seed_range,
)

__all__ = [
    "ANALYSIS",
    "CLAIM_FIELDS",
    "CURVE_POINTS",
    "REPRODUCE",
    "RUN_COLUMNS",
    "SCALES",
    "STUDY_COLUMNS",
    "StudyResult",
    "analyse",
    "analyse_reproduction",
    "cell_configs",
    "claims",
    "confirmatory_overrides",
    "correlations",
    "per_task_effects",
    "reproduce_config",
    "reproduction_config",
    "reproduction_study_cells",
]


STUDY_COLUMNS: tuple[str, ...] = ("study", "rule")
"""The columns ``runs.csv`` puts before :data:`RUN_COLUMNS`: the study (exploratory or
confirmatory) and the training rule the row was trained by: ``ladder`` (each run at the first
budget at which it converged, or the last) or ``fixed_budget`` (every run at the plan's
budget, the confirmatory study's primary rule)."""


def cell_configs(config: dict, device: str) -> list[dict]:
    """The configuration of every (model, depth) cell of the study configuration ``config``
    (:func:`curvlab.studies.protocol.reproduce_config`) on ``device``."""
    base = {k: v for k, v in config.items() if k not in ("models", "depths")}
    return [
        {**base, "model": m, "depth": d, "device": device}
        for d in config["depths"]
        for m in config["models"]
    ]


def _collect(results: list[dict]) -> tuple[list[dict], list[dict], list[dict]]:
    runs, first_rung, curve_rows = [], [], []
    for result in results:
        runs.extend(result["runs"])
        first_rung.extend(result["first_rung"])
        for run, curve in zip(result["runs"], result["curves"], strict=True):
            for epoch, loss in zip(curve["epochs"], curve["losses"], strict=True):
                curve_rows.append(
                    {k: run[k] for k in ("task", "model", "depth", "seed")}
                    | {"budget": run["epochs"], "epoch": epoch, "loss": loss}
                )
    return runs, first_rung, curve_rows


def confirmatory_overrides(plan: AnalysisPlan = PLAN_V2, seeds: int | None = None) -> dict:
    """The study settings the plan fixes: its fresh seeds (the first ``seeds`` of them when
    given), the fixed budget and the sensitivity ladder, the curvature estimator (``resolution``
    the plan's ``grid``, the domain radius, ``resolution_check`` 2·grid on every
    ``convergence_seed_stride``-th seed; for version 2 also the adaptive rule's
    ``adaptive_resolution`` and ``adaptive_resolution_check``, the plan's ``base`` and
    ``check_base``, its tolerance and models) and the ρ test points.  The plan's field names
    are frozen with its hash; the study's keys are the library's (``resolution``).

    >>> settings = confirmatory_overrides(PLAN)
    >>> settings["seeds"][0], len(settings["seeds"])
    (1000, 40)
    >>> settings["resolution"], settings["resolution_check"]
    (64, 128)
    >>> settings = confirmatory_overrides(PLAN_V2)
    >>> settings["seeds"][0], settings["adaptive_resolution"], settings["adaptive_resolution_check"]
    (2000, 32, 64)
    """
    chosen = plan.confirmatory_seeds if seeds is None else plan.confirmatory_seeds[:seeds]
    estimator = plan.curvature
    settings = {
        "seeds": list(chosen),
        "epochs": plan.training.epochs,
        "retrain_doublings": plan.training.sensitivity_doublings,
        "resolution": estimator.grid,
        "domain_radius": estimator.radius,
        "resolution_check": 2 * estimator.grid,
        "check_seed_stride": estimator.convergence_seed_stride,
        "rho_points": estimator.rho_points,
    }
    if isinstance(estimator, AdaptiveCurvatureEstimator):
        settings |= {
            "adaptive_resolution": estimator.base,
            "adaptive_resolution_check": estimator.check_base,
            "adaptive_tolerance": estimator.tolerance,
            "adaptive_models": list(estimator.models),
        }
    return settings


def estimator_convergence(runs: list[dict], plan: AnalysisPlan, settings: dict) -> dict:
    """The curvature estimators' convergence on the confirmatory sheets: ``uniform`` (∫|K| dA
    at ``resolution`` and ``resolution_check``), ``capped`` (the capped integrand at the same
    grids) and, for version 2, ``adaptive`` (the adaptive rule from its two base grids, judged by
    the median and the 90th percentile, with the evaluations per sheet: median, 90th percentile,
    largest)."""
    import numpy as np

    estimator = plan.curvature
    common = {
        "resolution": settings["resolution"],
        "resolution_check": settings["resolution_check"],
        "threshold": estimator.convergence_threshold,
    }
    out = {
        "uniform": quadrature_convergence(runs, **common),
        "capped": quadrature_convergence(
            runs, **common, measure="curvature_capped", check="curvature_capped_fine"
        ),
    }
    if isinstance(estimator, AdaptiveCurvatureEstimator):
        adaptive = quadrature_convergence(
            runs,
            resolution=settings["adaptive_resolution"],
            resolution_check=settings["adaptive_resolution_check"],
            threshold=estimator.convergence_threshold,
            measure="curvature_adaptive",
            check="curvature_adaptive_check",
            quantile=True,
        )
        counts = np.array([r["adaptive_evaluations"] for r in runs if r["adaptive_evaluations"]])
        adaptive["tolerance"] = settings["adaptive_tolerance"]
        flags = [r["adaptive_converged"] for r in runs if r["adaptive_converged"] is not None]
        adaptive["sheets_within_tolerance"] = sum(flags)
        adaptive["evaluations"] = {
            "sheets": int(counts.size),
            "median": float(np.median(counts)),
            "p90": float(np.quantile(counts, 0.9)),
            "max": int(counts.max()),
            "total": int(counts.sum()),
        }
        out["adaptive"] = adaptive
    return out


def _settings(plan: AnalysisPlan) -> dict:
    """The exploratory analysis's settings with the plan's curvature measure (E3's)."""
    measure = next(c.measure for c in plan.claims if c.estimator == "within_cell_r")
    return {**ANALYSIS, "correlation_measure": measure}


def _tagged(runs, study: str, rule: str) -> list[dict]:
    return [{"study": study, "rule": rule, **{k: r[k] for k in RUN_COLUMNS}} for r in runs]


def _with_ladder(primary: list[dict], ladder: list[dict]) -> list[dict]:
    """Each primary record with the ladder's result beside it (``ladder_<field>``)."""
    by_claim = {r["claim"]: r for r in ladder}
    fields = SENSITIVITY_FIELDS
    return [
        r | {f"ladder_{k}": by_claim.get(r["claim"], {}).get(k) for k in fields} for r in primary
    ]


def reproduction_config(
    scale: str = "small",
    *,
    confirmatory: bool | int = True,
    plan: AnalysisPlan = PLAN_V2,
    geometric: bool = True,
    **overrides,
) -> dict:
    """Both studies' configurations, each built once: ``exploratory`` (the scale's protocol
    on its seeds, at least 3), ``confirmatory`` (the plan's protocol,
    :func:`confirmatory_overrides`, on its fresh seeds: ``confirmatory`` True for all of them,
    a number n >= 3 for the first n, False for none: None), with the ``plan``, whether the
    geometric claims T1 to T5 are computed (``geometric``) and the caller's ``overrides``, which
    apply to both (a study so changed no longer follows the plan)."""
    seeds = overrides.get("seeds")
    if isinstance(seeds, list | tuple) and len(seeds) < 3:
        raise ValueError(f"seeds: expected at least 3 seeds, got {list(seeds)!r}")
    if not isinstance(confirmatory, bool):
        what = "True, False or an integer >= 3"
        arguments.integer("confirmatory", confirmatory, 3, expected=what)
    if not isinstance(plan, AnalysisPlan):
        raise ValueError(f"plan: expected an AnalysisPlan, got {type(plan).__name__}")
    if not isinstance(geometric, bool):
        raise ValueError(f"geometric: expected True or False, got {geometric!r}")
    shared = {k: v for k, v in overrides.items() if k != "seeds"}  # seeds: the plan's
    config = {
        "exploratory": reproduce_config(scale, **overrides),
        "confirmatory": None,
        "settings": {},
        "follows_plan": False,
        "overrides": sorted(set(shared) - {"tasks", "models", "depths"}),
        "plan": plan,
        "geometric": geometric,
    }
    if confirmatory is not False:
        count = None if confirmatory is True else confirmatory
        settings = {**confirmatory_overrides(plan, count), **shared}
        config["confirmatory"] = reproduce_config(scale, **settings)
        config["settings"] = settings
        config["follows_plan"] = count is None and not config["overrides"] and scale == "small"
    return config


def reproduction_study_cells(config: dict, context: Context) -> list[Cells]:
    """Both studies' cells in one batch, the confirmatory ones first (its adaptive measure
    makes them the longest), so that the workers share the cells evenly."""
    confirmatory = config["confirmatory"]
    first = [] if confirmatory is None else cell_configs(confirmatory, context.device)
    return [reproduction_cells(first + cell_configs(config["exploratory"], context.device))]


def analyse_reproduction(config: dict, results: list, context: Context) -> StudyResult:
    """Both studies analysed by the plan's claims (:func:`curvlab.analysis.empirical.analyse`):
    the result's ``runs`` hold every row (:data:`STUDY_COLUMNS` + :data:`RUN_COLUMNS`),
    ``claims`` the geometric claims T1 to T5 (unless the config's ``geometric`` is False),
    then each study's records, the confirmatory ones with the ladder's result beside
    (``ladder_*``); ``effects`` and ``correlations`` carry their study; ``meta`` the
    configurations, the plan and its hash, the quadrature's convergence on the confirmatory
    sheets."""
    (done,) = results
    plan, confirmatory = config["plan"], config["confirmatory"]
    count = 0 if confirmatory is None else len(confirmatory["models"]) * len(confirmatory["depths"])
    confirmatory_results, exploratory_results = done[:count], done[count:]
    runs, _, curve_rows = _collect(exploratory_results)
    # the exploratory study measured ∫|K| dA on its own grids only: version 1's claims
    analysed = analyse(runs, plan=PLAN, study="exploratory", settings=_settings(PLAN))
    rows = _tagged(runs, "exploratory", "ladder")
    claim_records = list(analysed["claims"])
    effects = [{"study": "exploratory", **e} for e in analysed["effects"]]
    correlation_records = [{"study": "exploratory", **c} for c in analysed["correlations"]]
    meta_confirmatory = None
    if confirmatory is not None:
        settings = config["settings"]
        ladder, primary, _ = _collect(confirmatory_results)
        options = {"plan": plan, "study": "confirmatory", "settings": _settings(plan)}
        fixed = analyse(primary, **options)
        retrained = analyse(ladder, **options)
        claim_records += _with_ladder(fixed["claims"], retrained["claims"])
        effects += [{"study": "confirmatory", **e} for e in fixed["effects"]]
        correlation_records += [{"study": "confirmatory", **c} for c in fixed["correlations"]]
        rows += _tagged(primary, "confirmatory", "fixed_budget")
        rows += _tagged(ladder, "confirmatory", "ladder")
        meta_confirmatory = {
            "config": confirmatory,
            "seeds": settings["seeds"],
            "follows_plan": config["follows_plan"],
            "overrides": config["overrides"],
            "plan_sha256": plan_sha256(plan),
            "estimators": estimator_convergence(primary, plan, settings),
            "runs": len(primary),
            "unconverged_runs": sum(not r["converged"] for r in primary),
            "unconverged_after_ladder": sum(not r["converged"] for r in ladder),
            "train_seconds": sum(r["seconds"] for r in confirmatory_results),
        }
    directory = context.options.directory
    table = geometric_claims(directory=directory) if config["geometric"] else []
    meta = {
        "config": config["exploratory"],
        "analysis": ANALYSIS,
        "plan": json.loads(plan_json(plan)),
        "plan_sha256": plan_sha256(plan),
        "exploratory_plan_sha256": plan_sha256(PLAN),
        "confirmatory": meta_confirmatory,
        "runs": len(runs),
        "unconverged_runs": sum(not r["converged"] for r in runs),
        "exploratory_train_seconds": sum(r["seconds"] for r in exploratory_results),
        "threads_per_cell": 1,
    }
    return StudyResult(
        runs=rows,
        curves=curve_rows,
        claims=[*table, *claim_records],
        effects=effects,
        correlations=correlation_records,
        meta=meta,
        plan_sha256=plan_sha256(plan),
    )


def report_reproduction(result: StudyResult) -> list[str]:
    """One line per claim: its name, study, verdict and evidence."""
    lines = []
    for claim in result.claims:
        if "checks" in claim:
            evidence = f"{claim['passed']} of {claim['n_checks']} checks"
        else:
            p = claim["p_holm"] if claim["p_holm"] is not None else claim["p"]
            evidence = (
                f"effect {interval_text(claim, '+.4g')}  p {number_or_na(p, '.3g')}  "
                f"mde80 {number_or_na(claim['mde_80'], '.3g')}"
            )
        study = claim.get("study", "geometric")
        lines.append(f"{claim['claim']:>14} {study:>12} {claim['verdict']:>14}  {evidence}")
    return lines


REPRODUCE = Study(
    name="reproduce",
    help="the Part II reproduction: runs, the claims table T1-T5 and E1-E3, figures",
    scales=tuple(SCALES),
    configure=reproduction_config,
    cells=reproduction_study_cells,
    analyse=analyse_reproduction,
    arguments=(
        Argument("--seeds", "seeds", "number of seeds (at least 3)", positive_int, seed_range),
        Argument(
            "--epochs",
            "epochs",
            "starting epochs of both studies (a run that does not converge is retrained at "
            "twice its budget, up to the protocol's number of doublings)",
            positive_int,
        ),
        Argument("--tasks", "tasks", "comma-separated", name_list(TASKS)),
        Argument(
            "--confirmatory-seeds",
            "confirmatory",
            "the confirmatory study on the plan's first N fresh seeds (N >= 3; 0: none; "
            "default: all of the plan's)",
            int,
            lambda count: False if count == 0 else count,
        ),
    ),
    report=report_reproduction,
)
"""Both studies of the reproduction (module docstring; :mod:`curvlab.studies.study`).

The **exploratory** study is the scale's protocol on seeds 0, 1, ...; the **confirmatory**
study the plan's protocol on its fresh seeds; both analysed by the plan's claims
(:func:`reproduction_config`, :func:`analyse_reproduction`)."""
