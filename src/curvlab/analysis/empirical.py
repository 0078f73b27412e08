"""The Part II analysis: claims, per-task effects and correlations from the runs.

The claims, their strata, estimators, directions, margins and Holm families are those of the
frozen plan (:data:`curvlab.analysis.plan.PLAN`); both studies, exploratory and confirmatory,
are analysed by the same function (:func:`claims`), each record in the schema of
:mod:`curvlab.analysis.schema`.  The seed is the independent unit: for a paired claim over a
stratum of tasks, each seed contributes the mean over those tasks of the matched difference
(model − baseline), on the log scale for curvature (∫|K| dA and ρ are heavy-tailed and
positive).  Directional claims use the paired t interval, ``p`` the exact sign-flip p
(:mod:`curvlab.analysis.randomization`; the t-test's p beside it, ``p_t``) and ``p_holm`` the
Holm adjustment over the claim's family; equivalence claims use TOST against the plan's margin
(``ci_low``/``ci_high`` the 90% TOST interval, ``p`` the sign-flip TOST p).  Every record
carries its family's decidability (:mod:`curvlab.analysis.decidability`: ``p_floor``,
``p_floor_holm``, ``decidable``, ``seeds_needed``, ``family_size``, ``decision_limit``); a
claim whose seeds cannot reach α is "undecidable".  E3 (curvature against
accuracy) is tested within task × model (:mod:`curvlab.analysis.association`): its effect the
within-cell Pearson r, its interval a seed-cluster bootstrap, its raw p a permutation null that
keeps every cell's values; the within-cell Spearman ρ, the paired Δ–Δ slope (gated − ungated)
and the model-pooled r (confounded by model, descriptive only, with its null mean) are extra
fields of its record. Runs that did not converge (:mod:`curvlab.models.convergence`) stay in the
analysis and are counted in each claim's ``unconverged_runs``; as a sensitivity analysis every
claim is computed again on the converged runs alone (a seed enters when all of its runs that the
claim pairs converged), its result in the ``converged_*`` fields (:data:`SENSITIVITY_FIELDS`).
The verdict rules are those of :mod:`curvlab.analysis.stats`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from curvlab.analysis import association, decidability, stats
from curvlab.analysis.plan import PLAN, AnalysisPlan, ClaimSpec
from curvlab.analysis.schema import CLAIM_RECORD_FIELDS, claim_schema_record
from curvlab.data.tasks import NONLINEAR_TASKS, TASKS
from curvlab.models.attention import VARIANTS

__all__ = [
    "ANALYSIS",
    "CLAIM_FIELDS",
    "SENSITIVITY_FIELDS",
    "analyse",
    "claims",
    "converged_only",
    "correlations",
    "per_task_effects",
    "quadrature_convergence",
]

ANALYSIS: dict = {
    "alpha": 0.05,
    "accuracy_margin": 0.01,
    "gated": "gated_elementwise",
    "baseline": "ungated",
    "correlation_measure": "log_curvature_total_abs",
    "e3_direction": "positive",
    "resamples": 2000,
    "permutations": 2000,
    "paper_r": 0.79,
}
"""The settings of the exploratory analysis (seeds 0–19): level, equivalence margin (±1
accuracy point), the gated model and baseline of the headline claims, the curvature measure
correlated with accuracy in E3, E3's declared direction, the seed-cluster bootstrap resamples
and permutations of E3 (both seeded with 0), and the r = 0.79 a secondary source attributes to
the paper (unverified).  Several of these, and the protocol, were set or changed after results
of earlier runs of this study had been seen (the chapter's timeline), so the study they decide
is exploratory; the plan frozen for a confirmatory study on fresh seeds is
:data:`curvlab.analysis.plan.PLAN`."""

CLAIM_FIELDS: tuple[str, ...] = CLAIM_RECORD_FIELDS
"""The fields every record of ``claims.json`` has, first and in this order (more may
follow): the schema of :mod:`curvlab.analysis.schema`."""

SENSITIVITY_FIELDS: tuple[str, ...] = (
    "effect",
    "ci_low",
    "ci_high",
    "p",
    "p_holm",
    "n_seeds",
    "p_floor",
    "p_floor_holm",
    "decidable",
    "seeds_needed",
    "verdict",
)
"""The fields of a claim recomputed on converged runs only, stored as ``converged_<field>``
(None where fewer than 3 seeds remain)."""


def converged_only(record: dict) -> dict:
    """The claim ``record`` as recomputed on converged runs alone: each field of
    :data:`SENSITIVITY_FIELDS` replaced by its ``converged_<field>`` value where the record
    has one (the rest kept, so
    that :func:`curvlab.analysis.stats.verdict_follows` judges it by the same rule).

    >>> record = {"claim": "E1", "margin": None, "effect": 0.3, "verdict": "supported",
    ...           "ci_low": 0.1, "ci_high": 0.5, "p": 0.01, "p_holm": 0.03, "n_seeds": 20,
    ...           "converged_effect": 0.2, "converged_ci_low": -0.1, "converged_ci_high": 0.5,
    ...           "converged_p": 0.3, "converged_p_holm": 0.6, "converged_n_seeds": 12,
    ...           "converged_verdict": "inconclusive"}
    >>> alone = converged_only(record)
    >>> alone["claim"], alone["effect"], alone["n_seeds"], alone["verdict"]
    ('E1', 0.2, 12, 'inconclusive')
    """
    return {
        **record,
        **{k: record[f"converged_{k}"] for k in SENSITIVITY_FIELDS if f"converged_{k}" in record},
    }


def _index(runs: Iterable[dict], measure: str) -> dict:
    return {
        (r["task"], r["depth"], r["seed"], r["model"]): r[measure]
        for r in runs
        if r.get(measure) is not None
    }


def _per_seed(runs, measure, model, baseline, tasks, depth) -> tuple[list, list, list]:
    """Per-seed means over ``tasks`` of model and baseline values, seeds with all present."""
    index = _index(runs, measure)
    seeds = sorted({r["seed"] for r in runs})
    a, b, used = [], [], []
    for seed in seeds:
        keys = [(t, depth, seed) for t in tasks]
        if all((*k, model) in index and (*k, baseline) in index for k in keys):
            a.append(sum(index[(*k, model)] for k in keys) / len(keys))
            b.append(sum(index[(*k, baseline)] for k in keys) / len(keys))
            used.append(seed)
    return a, b, used


def _unconverged(runs, models, tasks, depth) -> int:
    return sum(
        1
        for r in runs
        if r["model"] in models
        and r["task"] in tasks
        and r["depth"] == depth
        and not r["converged"]
    )


def _bootstrap_mde(low: float | None, high: float | None, alpha: float) -> float | None:
    """mde₈₀ from a 1 − α interval read as ± z·se: (z_{1−α/2} + z_{0.8}) · se (None without
    an interval)."""
    from scipy.stats import norm

    if low is None or high is None:
        return None
    z = norm.ppf(1 - alpha / 2)
    return float((z + norm.ppf(0.8)) * (high - low) / (2 * z))


def _null(runs, **options) -> dict:
    """:func:`curvlab.analysis.association.permutation_null`, its quantiles keyed by strings
    (as JSON keeps them, so that ``correlations.json`` reads back equal)."""
    null = association.permutation_null(runs, **options)
    return {**null, "null_quantiles": {str(q): v for q, v in null["null_quantiles"].items()}}


def correlations(
    runs: Sequence[dict], *, depth: int = 1, plan: dict = ANALYSIS, tasks=NONLINEAR_TASKS
) -> dict:
    """E3 on ``tasks`` (the nonlinear ones unless told): curvature
    (``plan["correlation_measure"]``) against test accuracy, within task × model with
    seed-cluster intervals and the permutation null that keeps every cell's values
    (``within_cell``, ``within_cell_null``, ``rank_null``), the paired Δ–Δ slope gated −
    baseline (``delta``), and, descriptive only, the model-pooled statistics (``pooled``,
    ``within_task``: Fisher intervals that ignore the confound; ``pooled_null``: the null of the
    within-task r, which the model means push away from 0).  ``delta`` is None where the pairs
    do not allow a slope."""
    rows = [
        r
        for r in runs
        if r["task"] in tasks
        and r["depth"] == depth
        and r.get(plan["correlation_measure"]) is not None
    ]
    x = [r[plan["correlation_measure"]] for r in rows]
    y = [r["test_accuracy"] for r in rows]
    groups = [r["task"] for r in rows]
    common = {"curvature": plan["correlation_measure"], "depth": depth}
    draws = {"seed": 0, "permutations": plan["permutations"]}
    within = association.within_cell_correlation(
        rows, **common, alpha=plan["alpha"], resamples=plan["resamples"], seed=0
    )
    try:
        delta = association.paired_delta_regression(
            rows, gated=plan["gated"], ungated=plan["baseline"], **common,
            alpha=plan["alpha"], resamples=plan["resamples"], **draws,
        )  # fmt: skip
    except ValueError:
        delta = None
    return {
        "measure": plan["correlation_measure"],
        "depth": depth,
        "within_cell": within,
        "within_cell_null": _null(rows, **common, **draws),
        "rank_null": _null(rows, rank=True, **common, **draws),
        "delta": delta,
        "pooled": stats.correlation(x, y, alpha=plan["alpha"]),
        "within_task": stats.correlation(x, y, groups=groups, alpha=plan["alpha"]),
        "pooled_null": _null(rows, statistic="pooled", **common, **draws),
        "confounded_by": "model (pooled, within_task, pooled_null)",
        "paper_r": plan["paper_r"],
        "paper_r_source": "secondary source, unverified",
    }


def _e3_extras(corr: dict) -> dict:
    """E3's companions (within-cell ρ, Δ–Δ slope, the confounded pooled r) for its record."""
    within, null, delta = corr["within_cell"], corr["within_cell_null"], corr["delta"] or {}
    return {
        "interval": "seed-cluster bootstrap, percentile",
        "p_method": "permutation within task × model cells (keeps model means), two-sided",
        "n_runs": within["n_runs"],
        "n_cells": within["n_cells"],
        "null_mean": null["null_mean"],
        "spearman_within": within["spearman_rho"],
        "spearman_ci_low": within["spearman_ci_low"],
        "spearman_ci_high": within["spearman_ci_high"],
        "spearman_p": corr["rank_null"]["p"],
        **{f"delta_{k}": delta.get(k) for k in ("slope", "slope_ci_low", "slope_ci_high")},
        **{f"delta_{k}": delta.get(k) for k in ("r", "p", "n_pairs")},
        "pooled_r": corr["within_task"]["pearson_r"],
        "pooled_r_null_mean": corr["pooled_null"]["null_mean"],
        "pooled_r_label": "task means removed, models pooled: confounded by model",
        "paper_r": corr["paper_r"],
    }


def _seeds_of(runs, tasks, depth, models=None) -> list[int]:
    return sorted(
        {
            r["seed"]
            for r in runs
            if r["task"] in tasks
            and r["depth"] == depth
            and (models is None or r["model"] in models)
        }
    )


def _estimate(spec: ClaimSpec, runs, tasks, depth, settings: dict) -> dict | None:
    """One claim's estimate by its plan estimator (None where the runs do not allow it)."""
    alpha = settings["alpha"]
    if spec.estimator in ("paired_mean", "paired_tost"):
        a, b, seeds = _per_seed(runs, spec.measure, spec.model, spec.baseline, tasks, depth)
        if len(seeds) < 3:
            return None
        if spec.estimator == "paired_tost":
            test = stats.equivalence_test(a, b, spec.margin, alpha=alpha)
            low, high, p, level = test["tost_low"], test["tost_high"], test["p_tost"], 1 - 2 * alpha
        else:
            test = stats.paired_difference(a, b, alpha=alpha)
            low, high, p, level = test["ci_low"], test["ci_high"], test["p"], 1 - alpha
        return {
            "effect": test["effect"], "ci_low": low, "ci_high": high, "p": p, "seeds": seeds,
            "mde_80": test["mde_80"], "ci_level": level, "d_z": test["d_z"],
            "test": "sign_flip_tost" if spec.estimator == "paired_tost" else "sign_flip",
            "p_t": test["p_tost_t"] if spec.estimator == "paired_tost" else test["p_t"],
        }  # fmt: skip
    stratum = [r for r in runs if r["task"] in tasks]
    try:
        if spec.estimator == "within_cell_r":
            corr = correlations(stratum, depth=depth, plan=settings, tasks=tasks)
            within = corr["within_cell"]
            low, high = within["pearson_ci_low"], within["pearson_ci_high"]
            return {
                "effect": within["pearson_r"], "ci_low": low, "ci_high": high,
                "p": corr["within_cell_null"]["p"], "seeds": _seeds_of(stratum, tasks, depth),
                "mde_80": _bootstrap_mde(low, high, alpha), "ci_level": 1 - alpha, "d_z": None,
                "test": "permutation", "interval_reason": within["interval_reason"],
                **_e3_extras(corr),
            }  # fmt: skip
        fit = association.paired_delta_regression(
            stratum, gated=spec.model, ungated=spec.baseline, curvature=spec.measure,
            depth=depth, alpha=alpha, resamples=settings["resamples"],
            permutations=settings["permutations"], seed=0,
        )  # fmt: skip
    except ValueError:  # too few seeds, or no variation left within the cells
        return None
    low, high = fit["slope_ci_low"], fit["slope_ci_high"]
    return {
        "effect": fit["slope"], "ci_low": low, "ci_high": high, "p": fit["p"],
        "seeds": _seeds_of(stratum, tasks, depth, (spec.model, spec.baseline)),
        "mde_80": _bootstrap_mde(low, high, alpha), "ci_level": 1 - alpha, "d_z": None,
        "delta_r": fit["r"], "n_pairs": fit["n_pairs"], "test": "permutation",
        "interval_reason": fit["interval_reason"],
    }  # fmt: skip


def claims(
    runs: Sequence[dict],
    *,
    depth: int = 1,
    plan: AnalysisPlan = PLAN,
    study: str = "exploratory",
    settings: dict = ANALYSIS,
) -> list[dict]:
    """One record per claim of ``plan`` that ``runs`` allow (its stratum's tasks present, at
    least 3 seeds), in the schema of :mod:`curvlab.analysis.schema` (``study`` names the
    study), p Holm-adjusted within each of the plan's families (``p_holm``; None for a
    secondary claim), the verdict by the rules of :mod:`curvlab.analysis.stats`.  Extra fields
    follow: ``measure``, ``model``, ``baseline``, ``tasks``, ``depth``, ``ci_level``, ``d_z``,
    ``unconverged_runs`` and, for E3, its companions (within-cell ρ, Δ–Δ slope, the confounded
    pooled r)."""
    present = {r["task"] for r in runs}
    drafts = []
    for spec in plan.claims:
        tasks = [t for t in plan.stratum(spec.stratum).tasks if t in present]
        estimate = _estimate(spec, runs, tasks, depth, settings) if tasks else None
        if estimate is not None:
            drafts.append((spec, tasks, estimate))
    families: dict[str, list[int]] = {}
    for index, (spec, _, _) in enumerate(drafts):
        if spec.holm_family is not None:
            families.setdefault(spec.holm_family, []).append(index)
    adjusted: dict[int, float] = {}
    for members in families.values():
        for index, p in zip(members, stats.holm([drafts[i][2]["p"] for i in members]), strict=True):
            adjusted[index] = p
    decidable = decidability.family_decidability(
        [
            {
                "test": estimate["test"],
                "n_seeds": len(estimate["seeds"]),
                "family": spec.holm_family,
                "permutations": settings["permutations"],
                "cluster_interval": estimate["test"] == "permutation",
            }
            for spec, _, estimate in drafts
        ],
        alpha=settings["alpha"],
    )
    records = []
    for index, (spec, tasks, estimate) in enumerate(drafts):
        floors = decidable[index]
        head = claim_schema_record(
            spec,
            **{k: estimate[k] for k in ("effect", "ci_low", "ci_high", "p", "seeds", "mde_80")},
            p_holm=adjusted.get(index),
            study=study,
            p_floor=floors["p_floor"],
            p_floor_holm=floors["p_floor_holm"],
            seeds_needed=floors["seeds_needed"],
            alpha=settings["alpha"],
        )
        models = tuple(m for m in (spec.model, spec.baseline) if m is not None) or VARIANTS
        extra = {k: v for k, v in estimate.items() if k not in head}
        records.append(
            head
            | {
                "measure": spec.measure,
                "model": spec.model,
                "baseline": spec.baseline,
                "tasks": tasks,
                "depth": depth,
                "unconverged_runs": _unconverged(runs, models, tasks, depth),
                "family_size": floors["family_size"],
                "decision_limit": floors["decision_limit"],
            }
            | extra
        )
    return records


def per_task_effects(runs: Sequence[dict], *, depth: int = 1, plan: dict = ANALYSIS):
    """Per task: the paired difference gated − each other model over seeds, for test accuracy
    and log ∫|K| dA (``plan["correlation_measure"]``), with the unadjusted 95% interval and
    d_z (the forest plot's rows)."""
    rows = []
    present = [t for t in TASKS if t in {r["task"] for r in runs}]
    models = sorted({r["model"] for r in runs} - {plan["gated"]}, key=VARIANTS.index)
    for measure in ("test_accuracy", plan["correlation_measure"]):
        for task in present:
            for other in models:
                a, b, seeds = _per_seed(runs, measure, plan["gated"], other, [task], depth)
                if len(seeds) < 3:
                    continue
                test = stats.paired_difference(a, b, alpha=plan["alpha"])
                rows.append(
                    {
                        "measure": measure,
                        "task": task,
                        "model": plan["gated"],
                        "baseline": other,
                        "depth": depth,
                        "n_seeds": len(seeds),
                        **{k: test[k] for k in ("effect", "ci_low", "ci_high", "p", "d_z")},
                        "mde_80": test["mde_80"],
                    }
                )
    return rows


def analyse(
    runs: Sequence[dict],
    *,
    plan: AnalysisPlan = PLAN,
    study: str = "exploratory",
    settings: dict = ANALYSIS,
) -> dict:
    """Claims (of ``plan``, for ``study``), per-task effects and correlations for every depth
    present in ``runs``."""
    depths = sorted({r["depth"] for r in runs})
    result = {"claims": [], "effects": [], "correlations": []}
    converged_runs = [r for r in runs if r["converged"]]
    options = {"plan": plan, "study": study, "settings": settings}
    for depth in depths:
        sensitivity = {c["claim"]: c for c in claims(converged_runs, depth=depth, **options)}
        for record in claims(runs, depth=depth, **options):
            other = sensitivity.get(record["claim"], {})
            record.update({f"converged_{k}": other.get(k) for k in SENSITIVITY_FIELDS})
            result["claims"].append(record)
        result["effects"].extend(per_task_effects(runs, depth=depth, plan=settings))
        if any(c["claim"] == "E3" and c["depth"] == depth for c in result["claims"]):
            result["correlations"].append(correlations(runs, depth=depth, plan=settings))
    if len(depths) > 1:
        for record in result["claims"]:
            record["claim"] = f"{record['claim']}@depth{record['depth']}"
    return result


def quadrature_convergence(
    runs: Sequence[dict],
    *,
    resolution: int,
    resolution_check: int,
    threshold: float,
    measure: str = "curvature_total_abs",
    check: str = "curvature_total_abs_fine",
    quantile: bool = False,
) -> dict:
    """How far each run's integral moves between two resolutions, on the runs that carry both
    (``measure`` at ``resolution``, ``check`` at ``resolution_check``; by default ∫|K| dA at
    ``resolution`` and at ``resolution_check`` points per axis): per run |log(I_P / I_2P)|; its
    median over all such runs and per model, the 90th percentile, the count, and whether the
    criterion holds: the median below ``threshold`` (version 1 of the plan), and with
    ``quantile`` the 90th percentile too (version 2).

    >>> runs = [{"model": "ungated", "curvature_total_abs": 1.0, "curvature_total_abs_fine": f}
    ...         for f in (1.01, 1.02, 0.5)]
    >>> q = quadrature_convergence(runs, resolution=64, resolution_check=128, threshold=0.05)
    >>> q["n_runs"], round(q["median_log_ratio"], 4), q["converged"]
    (3, 0.0198, True)
    >>> quadrature_convergence(
    ...     runs, resolution=64, resolution_check=128, threshold=0.05, quantile=True
    ... )["converged"]
    False
    """
    import numpy as np

    pairs = [
        (r["model"], abs(math.log(r[measure] / r[check])))
        for r in runs
        if (r.get(measure) or 0) > 0 and (r.get(check) or 0) > 0
    ]
    if not pairs:
        raise ValueError(f"runs: no run carries both {measure} and {check}")
    ratios = np.array([v for _, v in pairs])
    by_model = {}
    for model in dict.fromkeys(m for m, _ in pairs):
        by_model[model] = float(np.median([v for m, v in pairs if m == model]))
    median = float(np.median(ratios))
    p90 = float(np.quantile(ratios, 0.9))
    return {
        "measure": measure,
        "resolution": resolution,
        "resolution_check": resolution_check,
        "n_runs": len(pairs),
        "median_log_ratio": median,
        "p90_log_ratio": p90,
        "max_log_ratio": float(ratios.max()),
        "median_by_model": by_model,
        "threshold": threshold,
        "criterion": "median and 90th percentile" if quantile else "median",
        "converged": median < threshold and (p90 < threshold or not quantile),
    }
