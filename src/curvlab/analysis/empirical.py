"""The Part II analysis: claims, per-task effects and correlations from the runs.

The seed is the independent unit: for a claim over a set of tasks, each seed contributes the
mean over those tasks of the matched difference (model − baseline), on the log scale for
curvature (∫|K| dA and ρ are heavy-tailed and positive).  Directional claims use the paired t
interval, p Holm-adjusted over all claims; "no advantage on linear tasks" uses TOST against the
margin of :data:`ANALYSIS` (its ``ci_low``/``ci_high`` are then the 90% TOST interval and ``p``
the TOST p).  E3 (curvature against accuracy) is tested within task × model
(:mod:`curvlab.analysis.association`): its effect the within-cell Pearson r, its interval a
seed-cluster bootstrap, its raw p a permutation null that keeps every cell's values; the
within-cell Spearman ρ, the paired Δ–Δ slope (gated − ungated) and the model-pooled r
(confounded by model, descriptive only, with its null mean) are extra fields of its record.
Runs that did not converge (:mod:`curvlab.models.convergence`) stay in the
analysis and are counted in each claim's ``unconverged_runs``; as a sensitivity analysis every
claim is computed again on the converged runs alone (a seed enters when all of its runs that the
claim pairs converged), its result in the ``converged_*`` fields (:data:`SENSITIVITY_FIELDS`).
The verdict rules are those of :mod:`curvlab.analysis.stats`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from curvlab.analysis import association, stats
from curvlab.models.attention import VARIANTS
from curvlab.models.tasks import HARD_TASKS, LINEAR_TASKS, NONLINEAR_TASKS, TASKS

__all__ = [
    "ANALYSIS",
    "CLAIM_FIELDS",
    "SENSITIVITY_FIELDS",
    "analyse",
    "claims",
    "converged_only",
    "correlations",
    "per_task_effects",
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

CLAIM_FIELDS: tuple[str, ...] = (
    "claim",
    "statement",
    "measure",
    "effect",
    "ci_low",
    "ci_high",
    "p",
    "n_seeds",
    "mde_80",
    "margin",
    "verdict",
)
"""The fields every record of ``claims.json`` has (more may follow)."""

SENSITIVITY_FIELDS: tuple[str, ...] = ("effect", "ci_low", "ci_high", "p", "n_seeds", "verdict")
"""The fields of a claim recomputed on converged runs only, stored as ``converged_<field>``
(None where fewer than 3 seeds remain)."""


def converged_only(record: dict) -> dict:
    """The claim ``record`` as recomputed on converged runs alone: each field of
    :data:`SENSITIVITY_FIELDS` replaced by its ``converged_<field>`` value (the rest kept, so
    that :func:`curvlab.analysis.stats.verdict_follows` judges it by the same rule).

    >>> record = {"claim": "E1", "margin": None, "effect": 0.3, "verdict": "supported",
    ...           "ci_low": 0.1, "ci_high": 0.5, "p": 0.01, "n_seeds": 20,
    ...           "converged_effect": 0.2, "converged_ci_low": -0.1, "converged_ci_high": 0.5,
    ...           "converged_p": 0.3, "converged_n_seeds": 12,
    ...           "converged_verdict": "inconclusive"}
    >>> alone = converged_only(record)
    >>> alone["claim"], alone["effect"], alone["n_seeds"], alone["verdict"]
    ('E1', 0.2, 12, 'inconclusive')
    """
    return {**record, **{k: record[f"converged_{k}"] for k in SENSITIVITY_FIELDS}}


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


_CLAIMS = (
    # claim, statement, measure, model, baseline, tasks, kind
    (
        "E1-sheet",
        "gated representations are more curved than ungated (∫|K| dA over the data)",
        "log_curvature_total_abs",
        "gated",
        "baseline",
        NONLINEAR_TASKS,
        "greater",
    ),
    (
        "E1-proxy",
        "gated representations are more curved than ungated (proxy ρ, h → 0)",
        "log_rho",
        "gated",
        "baseline",
        NONLINEAR_TASKS,
        "greater",
    ),
    (
        "E1-extrinsic",
        "gated representations bend more than ungated (normal part ρ⊥)",
        "log_rho_normal",
        "gated",
        "baseline",
        NONLINEAR_TASKS,
        "greater",
    ),
    (
        "E2",
        "gated attention is more accurate than ungated on nonlinear boundaries",
        "test_accuracy",
        "gated",
        "baseline",
        NONLINEAR_TASKS,
        "greater",
    ),
    (
        "E2-linear",
        "gated attention has no accuracy advantage on linear boundaries",
        "test_accuracy",
        "gated",
        "baseline",
        LINEAR_TASKS,
        "equivalent",
    ),
    (
        "E2-width",
        "the gate beats an ungated model of matched parameters (wider attention)",
        "test_accuracy",
        "gated",
        "ungated_wide",
        NONLINEAR_TASKS,
        "greater",
    ),
    (
        "E2-additive",
        "the multiplicative gate beats the additive nonlinearity Y + tanh(Z)",
        "test_accuracy",
        "gated",
        "ablation",
        NONLINEAR_TASKS,
        "greater",
    ),
    (
        "E2-headwise",
        "a headwise gate is also more accurate than ungated on nonlinear tasks",
        "test_accuracy",
        "gated_headwise",
        "baseline",
        NONLINEAR_TASKS,
        "greater",
    ),
    (
        "E2-hard",
        "gated attention is more accurate than ungated on the hard tasks",
        "test_accuracy",
        "gated",
        "baseline",
        HARD_TASKS,
        "greater",
    ),
)


def _resolve(name: str, plan: dict) -> str:
    return plan[name] if name in ("gated", "baseline") else name


def _unconverged(runs, models, tasks, depth) -> int:
    return sum(
        1
        for r in runs
        if r["model"] in models
        and r["task"] in tasks
        and r["depth"] == depth
        and not r["converged"]
    )


def _bootstrap_mde(low: float, high: float, alpha: float) -> float:
    """mde₈₀ from a 1 − α interval read as ± z·se: (z_{1−α/2} + z_{0.8}) · se."""
    from scipy.stats import norm

    z = norm.ppf(1 - alpha / 2)
    return float((z + norm.ppf(0.8)) * (high - low) / (2 * z))


def _null(runs, **options) -> dict:
    """:func:`curvlab.analysis.association.permutation_null`, its quantiles keyed by strings
    (as JSON keeps them, so that ``correlations.json`` reads back equal)."""
    null = association.permutation_null(runs, **options)
    return {**null, "null_quantiles": {str(q): v for q, v in null["null_quantiles"].items()}}


def correlations(runs: Sequence[dict], *, depth: int = 1, plan: dict = ANALYSIS) -> dict:
    """E3 on the nonlinear tasks: curvature (``plan["correlation_measure"]``) against test
    accuracy, within task × model with seed-cluster intervals and the permutation null that
    keeps every cell's values (``within_cell``, ``within_cell_null``, ``rank_null``), the paired
    Δ–Δ slope gated − baseline (``delta``), and, descriptive only, the model-pooled statistics
    (``pooled``, ``within_task``: Fisher intervals that ignore the confound; ``pooled_null``:
    the null of the within-task r, which the model means push away from 0).  ``delta`` is None
    where the pairs do not allow a slope."""
    rows = [
        r
        for r in runs
        if r["task"] in NONLINEAR_TASKS
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


def _e3_record(corr: dict, plan: dict) -> dict:
    """The E3 claim record from :func:`correlations`: primary estimate within task × model."""
    within, null, delta = corr["within_cell"], corr["within_cell_null"], corr["delta"] or {}
    low, high = within["pearson_ci_low"], within["pearson_ci_high"]
    return {
        "claim": "E3",
        "statement": "within a task and a model, more curved runs are more accurate",
        "measure": f"pearson r({plan['correlation_measure']}, test_accuracy) within task × model",
        "n_seeds": within["n_seeds"],
        "effect": within["pearson_r"],
        "ci_low": low,
        "ci_high": high,
        "p_raw": null["p"],
        "mde_80": _bootstrap_mde(low, high, plan["alpha"]),
        "margin": None,
        "ci_level": 1 - plan["alpha"],
        "d_z": None,
        "estimator": "within_cell_r",
        "direction": plan["e3_direction"],
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
        "paper_r": plan["paper_r"],
    }


def claims(runs: Sequence[dict], *, depth: int = 1, plan: dict = ANALYSIS) -> list[dict]:
    """The claim records (:data:`CLAIM_FIELDS`), Holm-adjusted over the family."""
    alpha = plan["alpha"]
    present = {r["task"] for r in runs}
    records = []
    for name, statement, measure, model, baseline, tasks, kind in _CLAIMS:
        model, baseline = _resolve(model, plan), _resolve(baseline, plan)
        tasks = [t for t in tasks if t in present]
        if not tasks:
            continue
        a, b, seeds = _per_seed(runs, measure, model, baseline, tasks, depth)
        if len(seeds) < 3:
            continue
        base = {
            "claim": name,
            "statement": statement,
            "measure": measure,
            "n_seeds": len(seeds),
            "model": model,
            "baseline": baseline,
            "tasks": tasks,
            "depth": depth,
            "unconverged_runs": _unconverged(runs, (model, baseline), tasks, depth),
        }
        if kind == "equivalent":
            test = stats.equivalence_test(a, b, plan["accuracy_margin"], alpha=alpha)
            record = {
                **base,
                "effect": test["effect"],
                "ci_low": test["tost_low"],
                "ci_high": test["tost_high"],
                "p_raw": test["p_tost"],
                "mde_80": test["mde_80"],
                "margin": plan["accuracy_margin"],
                "ci_level": 1 - 2 * alpha,
                "d_z": test["d_z"],
            }
        else:
            test = stats.paired_difference(a, b, alpha=alpha)
            record = {
                **base,
                "effect": test["effect"],
                "ci_low": test["ci_low"],
                "ci_high": test["ci_high"],
                "p_raw": test["p"],
                "mde_80": test["mde_80"],
                "margin": None,
                "ci_level": 1 - alpha,
                "d_z": test["d_z"],
                "p_wilcoxon": test["p_wilcoxon"],
            }
        records.append(record)
    if set(NONLINEAR_TASKS) & present:
        try:
            corr = correlations(runs, depth=depth, plan=plan)
        except ValueError:  # too few seeds, or no variation left within the cells
            corr = None
        if corr is not None:
            records.append({**_e3_record(corr, plan), "depth": depth})
    adjusted = stats.holm([r["p_raw"] for r in records]) if records else []
    for record, p in zip(records, adjusted, strict=True):
        record["p"] = p
        if record["margin"] is not None:
            record["verdict"] = stats.equivalence_verdict(
                p, record["ci_low"], record["ci_high"], record["margin"], alpha=alpha
            )
        else:
            record["verdict"] = stats.directional_verdict(
                record["ci_low"], record["ci_high"], p, alpha=alpha
            )
    ordered = []
    for record in records:
        head = {k: record[k] for k in CLAIM_FIELDS}
        ordered.append(head | {k: v for k, v in record.items() if k not in head})
    return ordered


def per_task_effects(runs: Sequence[dict], *, depth: int = 1, plan: dict = ANALYSIS):
    """Per task: the paired difference gated − each other model over seeds, for test accuracy
    and log ∫|K| dA, with the unadjusted 95% interval and d_z (the forest plot's rows)."""
    rows = []
    present = [t for t in TASKS if t in {r["task"] for r in runs}]
    models = sorted({r["model"] for r in runs} - {plan["gated"]}, key=VARIANTS.index)
    for measure in ("test_accuracy", "log_curvature_total_abs"):
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


def analyse(runs: Sequence[dict], *, plan: dict = ANALYSIS) -> dict:
    """Claims, per-task effects and correlations for every depth present in ``runs``."""
    depths = sorted({r["depth"] for r in runs})
    result = {"claims": [], "effects": [], "correlations": []}
    converged_runs = [r for r in runs if r["converged"]]
    for depth in depths:
        sensitivity = {c["claim"]: c for c in claims(converged_runs, depth=depth, plan=plan)}
        for record in claims(runs, depth=depth, plan=plan):
            other = sensitivity.get(record["claim"], {})
            record.update({f"converged_{k}": other.get(k) for k in SENSITIVITY_FIELDS})
            result["claims"].append(record)
        result["effects"].extend(per_task_effects(runs, depth=depth, plan=plan))
        if any(c["claim"] == "E3" and c["depth"] == depth for c in result["claims"]):
            result["correlations"].append(correlations(runs, depth=depth, plan=plan))
    if len(depths) > 1:
        for record in result["claims"]:
            record["claim"] = f"{record['claim']}@depth{record['depth']}"
    return result
