"""The real-data study's claims: the rule that turns its runs into verdicts
(:mod:`curvlab.studies.realdata` runs the study).

Per dataset: **E1** (log ∫|K| dA, gated − ungated, paired over seeds), **E2** (test accuracy,
gated − ungated) on a dataset with a nonlinear boundary, or **E2-linear** (equivalence within
the one-point margin, TOST) on a near-linear one, a dataset being near-linear when the
protocol's logistic regression reaches the best model's mean test accuracy less the margin;
**E3** (curvature tracks accuracy within dataset × model: seed-cluster bootstrap and the
permutation null of :mod:`curvlab.analysis.association`).  The directional claims are
Holm-adjusted together; each verdict is "undecidable" where its seeds cannot reach α
(:func:`curvlab.analysis.decidability.family_decidability`).
"""

from __future__ import annotations

import numpy as np

from curvlab.analysis import association, decidability, stats

__all__ = ["ANALYSIS", "PREDICTIONS", "analyse_realdata"]

ANALYSIS: dict = {
    "alpha": 0.05,
    "accuracy_margin": 0.01,
    "gated": "gated_elementwise",
    "baseline": "ungated",
    "resamples": 2000,
    "permutations": 2000,
}
"""The analysis settings: level, the one-point margin (near-linear rule and E2-linear's
equivalence margin), the pair of models compared, and E3's bootstrap resamples and
permutations (both seeded with 0)."""

PREDICTIONS: dict[str, str] = {
    "E1": "gated more curved than ungated (log ∫|K| dA higher)",
    "E2": "gated more accurate than ungated on a nonlinear boundary",
    "E2-linear": "no accuracy difference beyond ±1 point on a near-linear boundary",
    "E3": "curvature tracks accuracy (positive within dataset × model)",
}
"""The paper's prediction beside each claim."""


def _paired(runs, dataset, field, seeds, analysis):
    def value(model, seed):
        return next(
            r[field]
            for r in runs
            if (r["dataset"], r["model"], r["seed"]) == (dataset, model, seed)
        )

    pairs = [(value(analysis["gated"], s), value(analysis["baseline"], s)) for s in seeds]
    pairs = [(a, b) for a, b in pairs if a is not None and b is not None]
    return [a for a, _ in pairs], [b for _, b in pairs]


def _claim(name, dataset, measure, record, **fields) -> dict:
    return {
        "claim": name,
        "dataset": dataset,
        "label": "exploratory",
        "prediction": PREDICTIONS[name],
        "measure": measure,
        "effect": record["effect"],
        "ci_low": record["ci_low"],
        "ci_high": record["ci_high"],
        "p": record["p"],
        "p_holm": None,
        "n_seeds": record["n"],
        "mde_80": record.get("mde_80"),
        "margin": None,
        **fields,
    }


def _near_linear(runs, logistic, dataset, analysis) -> dict:
    means = {
        m: float(
            np.mean(
                [r["test_accuracy"] for r in runs if (r["dataset"], r["model"]) == (dataset, m)]
            )
        )
        for m in dict.fromkeys(r["model"] for r in runs if r["dataset"] == dataset)
    }
    best = max(means, key=means.get)
    linear = float(np.mean([r["test_accuracy"] for r in logistic if r["dataset"] == dataset]))
    return {
        "dataset": dataset,
        "logistic_accuracy": linear,
        "best_model": best,
        "best_accuracy": means[best],
        "gap": means[best] - linear,
        "margin": analysis["accuracy_margin"],
        "near_linear": bool(linear >= means[best] - analysis["accuracy_margin"]),
        **{f"accuracy_{m}": v for m, v in means.items()},
    }


def analyse_realdata(runs, logistic, seeds, analysis: dict = ANALYSIS) -> tuple[list, list]:
    """The protocol's effects (one row a dataset) and claims (module docstring) from the runs
    and the logistic regression's rows."""
    alpha, margin = analysis["alpha"], analysis["accuracy_margin"]
    effects, claims = [], []
    for dataset in dict.fromkeys(r["dataset"] for r in runs):
        row = _near_linear(runs, logistic, dataset, analysis)
        effects.append(row)
        a, b = _paired(runs, dataset, "log_curvature_total_abs", seeds, analysis)
        claims.append(
            _claim("E1", dataset, "log ∫|K| dA", stats.paired_difference(a, b, alpha=alpha))
        )
        a, b = _paired(runs, dataset, "test_accuracy", seeds, analysis)
        if row["near_linear"]:
            tost = stats.equivalence_test(a, b, margin, alpha=alpha)
            record = {
                **tost,
                "ci_low": tost["tost_low"],
                "ci_high": tost["tost_high"],
                "p": tost["p_tost"],
            }
            claims.append(_claim("E2-linear", dataset, "test accuracy", record, margin=margin))
        else:
            record = stats.paired_difference(a, b, alpha=alpha)
            claims.append(_claim("E2", dataset, "test accuracy", record))
        options = {"tasks": [dataset], "curvature": "log_curvature_total_abs"}
        kept = [
            r for r in runs if r["dataset"] == dataset and r["log_curvature_total_abs"] is not None
        ]
        within = association.within_cell_correlation(
            kept, resamples=analysis["resamples"], **options
        )
        null = association.permutation_null(kept, permutations=analysis["permutations"], **options)
        record = {
            "effect": within["pearson_r"],
            "ci_low": within["pearson_ci_low"],
            "ci_high": within["pearson_ci_high"],
            "p": null["p"],
            "n": within["n_seeds"],
        }
        claims.append(
            _claim(
                "E3",
                dataset,
                "within dataset × model r",
                record,
                spearman_rho=within["spearman_rho"],
                interval_reason=within["interval_reason"],
            )
        )
    directional = [c for c in claims if c["margin"] is None]
    for claim, adjusted in zip(directional, stats.holm([c["p"] for c in directional]), strict=True):
        claim["p_holm"] = adjusted
    tests = {"E1": "sign_flip", "E2": "sign_flip", "E2-linear": "sign_flip_tost"}
    family = [
        {"test": tests.get(c["claim"], "permutation"), "n_seeds": c["n_seeds"],
         "family": "directional" if c["margin"] is None else None,
         "permutations": analysis["permutations"], "cluster_interval": c["claim"] == "E3"}
        for c in claims
    ]  # fmt: skip
    floors = decidability.family_decidability(family, alpha=alpha)
    for claim, floor in zip(claims, floors, strict=True):
        claim.update(floor)
        options = {"alpha": alpha, "decidable": floor["decidable"]}
        if claim["margin"] is None:
            claim["verdict"] = stats.directional_verdict(
                claim["ci_low"], claim["ci_high"], claim["p_holm"], **options
            )
        else:
            claim["verdict"] = stats.equivalence_verdict(
                claim["p"], claim["ci_low"], claim["ci_high"], margin, **options
            )
    return effects, claims
