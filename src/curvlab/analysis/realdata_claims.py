"""The real-data study's claims: the rule that turns its runs into verdicts
(:mod:`curvlab.studies.realdata` runs the study).

Per dataset and per baseline (the plain ungated model, and the width-matched one: claims
"-wide"): **E1** (log ∫|K| dA by the adaptive rule, gated − baseline, paired over seeds),
**E2** (test accuracy, gated − baseline) on a dataset with a nonlinear boundary, or
**E2-linear** (equivalence within the one-point margin, TOST) on a near-linear one, a dataset
being near-linear when, on its training rows alone, a logistic regression's cross-validated
accuracy reaches a nonlinear reference's (an RBF support vector machine) less the margin
(:func:`near_linear_effect`: no test accuracy decides it);
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
    "matched": "ungated_wide",
    "resamples": 2000,
    "permutations": 2000,
}
"""The analysis settings: level, the one-point margin (near-linear rule and the equivalence
margin), the gated model, the plain ungated baseline and its width-matched control (claims
against it carry the suffix "-wide"), and E3's bootstrap resamples and permutations (both
seeded with 0)."""

PREDICTIONS: dict[str, str] = {
    "E1": "gated more curved than ungated (log ∫|K| dA higher)",
    "E2": "gated more accurate than ungated on a nonlinear boundary",
    "E2-linear": "no accuracy difference beyond ±1 point on a near-linear boundary",
    "E3": "curvature tracks accuracy (positive within dataset × model)",
}
"""The paper's prediction beside each claim (a "-wide" claim: the same, against the
width-matched ungated model)."""


def _value(runs, dataset, field, model, seed):
    return next(
        r[field] for r in runs if (r["dataset"], r["model"], r["seed"]) == (dataset, model, seed)
    )


def _paired(runs, dataset, field, seeds, gated, baseline):
    pairs = [
        (_value(runs, dataset, field, gated, s), _value(runs, dataset, field, baseline, s))
        for s in seeds
    ]
    pairs = [(a, b) for a, b in pairs if a is not None and b is not None]
    return [a for a, _ in pairs], [b for _, b in pairs]


def _claim(kind, dataset, measure, record, *, suffix="", baseline, **fields) -> dict:
    """A claim record; ``kind`` one of :data:`PREDICTIONS`, named with the baseline's
    ``suffix`` ("E1-wide", "E2-wide-linear")."""
    prediction = PREDICTIONS[kind]
    if suffix:
        prediction += " (against the width-matched ungated model)"
    name = "E2" + suffix + "-linear" if kind == "E2-linear" else kind + suffix
    return {
        "claim": name,
        "kind": kind,
        "dataset": dataset,
        "baseline": baseline,
        "label": "exploratory",
        "prediction": prediction,
        "measure": measure,
        "effect": record["effect"],
        "ci_low": record["ci_low"],
        "ci_high": record["ci_high"],
        "p": record["p"],
        "p_holm": None,
        "n_seeds": record["n"],
        "mde_80": record.get("mde_80"),
        "margin": None,
        "curvature_converged": None,
        "trained_share": None,
        **fields,
    }


def _mean(values) -> float:
    return float(np.mean(values))


def near_linear_effect(runs, reference, dataset, analysis: dict = ANALYSIS) -> dict:
    """One dataset's near-linear call from the training rows alone: near-linear when the
    logistic regression's mean validation accuracy (stratified folds of each seed's training
    rows, the mean over seeds) is at least the nonlinear reference's less the margin.  Beside
    it, never used by the call: the logistic regression's and each model's mean test accuracy
    and each model's share of runs that reached the training rule."""
    rows = [r for r in reference if r["dataset"] == dataset]
    linear = _mean([r["logistic_validation"] for r in rows])
    nonlinear = _mean([r["reference_validation"] for r in rows])
    models = dict.fromkeys(r["model"] for r in runs if r["dataset"] == dataset)

    def of(model, field):
        return [r[field] for r in runs if (r["dataset"], r["model"]) == (dataset, model)]

    return {
        "dataset": dataset,
        "logistic_validation": linear,
        "reference_validation": nonlinear,
        "gap": nonlinear - linear,
        "margin": analysis["accuracy_margin"],
        "near_linear": bool(linear >= nonlinear - analysis["accuracy_margin"]),
        "logistic_test_accuracy": _mean([r["test_accuracy"] for r in rows]),
        **{f"accuracy_{m}": _mean(of(m, "test_accuracy")) for m in models},
        **{f"trained_share_{m}": _mean(of(m, "trained")) for m in models},
    }


def analyse_realdata(
    runs, reference, seeds, convergence: dict, analysis: dict = ANALYSIS
) -> tuple[list, list]:
    """The near-linear effects (one row a dataset, :func:`near_linear_effect`) and the claims
    (module docstring) from the runs, the near-linear rule's rows and each dataset's
    convergence record (``convergence[dataset]["converged"]``, Part II's criterion on the
    adaptive rule's two starts), which the curvature claims carry as ``curvature_converged``."""
    alpha, margin = analysis["alpha"], analysis["accuracy_margin"]
    gated = analysis["gated"]
    effects, claims = [], []
    for dataset in dict.fromkeys(r["dataset"] for r in runs):
        row = near_linear_effect(runs, reference, dataset, analysis)
        effects.append(row)
        present = {r["model"] for r in runs if r["dataset"] == dataset}
        converged = bool(convergence[dataset]["converged"])
        for baseline, suffix in ((analysis["baseline"], ""), (analysis["matched"], "-wide")):
            if baseline not in present:
                continue
            trained = _mean([row[f"trained_share_{gated}"], row[f"trained_share_{baseline}"]])
            common = {"suffix": suffix, "baseline": baseline, "trained_share": trained}
            a, b = _paired(runs, dataset, "log_curvature_total_abs", seeds, gated, baseline)
            record = stats.paired_difference(a, b, alpha=alpha)
            claims.append(
                _claim(
                    "E1", dataset, "log ∫|K| dA", record, curvature_converged=converged, **common
                )
            )
            a, b = _paired(runs, dataset, "test_accuracy", seeds, gated, baseline)
            if row["near_linear"]:
                tost = stats.equivalence_test(a, b, margin, alpha=alpha)
                record = {
                    **tost,
                    "ci_low": tost["tost_low"],
                    "ci_high": tost["tost_high"],
                    "p": tost["p_tost"],
                }
                claims.append(
                    _claim("E2-linear", dataset, "test accuracy", record, margin=margin, **common)
                )
            else:
                record = stats.paired_difference(a, b, alpha=alpha)
                claims.append(_claim("E2", dataset, "test accuracy", record, **common))
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
                baseline=None,
                curvature_converged=converged,
                trained_share=_mean([r["trained"] for r in kept]),
                spearman_rho=within["spearman_rho"],
                interval_reason=within["interval_reason"],
            )
        )
    directional = [c for c in claims if c["margin"] is None]
    for claim, adjusted in zip(directional, stats.holm([c["p"] for c in directional]), strict=True):
        claim["p_holm"] = adjusted
    family = [
        {"test": _TESTS[c["kind"]], "n_seeds": c["n_seeds"],
         "family": "directional" if c["margin"] is None else None,
         "permutations": analysis["permutations"], "cluster_interval": c["kind"] == "E3"}
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


_TESTS = {"E1": "sign_flip", "E2": "sign_flip", "E2-linear": "sign_flip_tost", "E3": "permutation"}
