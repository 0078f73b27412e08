"""The language-model study's claims: which measures it compares, between which variants,
and the rule that turns the runs into verdicts (:mod:`curvlab.studies.lm` runs the study).

**Claims** (:func:`lm_claims`), each exploratory: for each measure of :data:`MEASURES`, the
paired differences over seeds (:func:`curvlab.analysis.stats.paired_difference`) of each pair
of :data:`COMPARISONS`, signed so that a positive effect is the predicted (or read)
direction; p the exact sign-flip p (the t-test's beside it), Holm-adjusted over the whole
family (:func:`curvlab.analysis.stats.holm`); the verdict by
:func:`curvlab.analysis.stats.directional_verdict`, "undecidable" where the seeds cannot reach
α (:func:`curvlab.analysis.decidability.family_decidability`; 5 seeds: p >= 0.0625).  A run's
sink is its mean over layers, its largest activation the maximum over layers, its curvature
the mean over layers (:func:`run_measure`).

**The sink claims need a sink.**  Qiu et al. predict that the gate removes the attention sink;
where no run of either compared variant has one (:func:`sink_reason`: every layer's attention
on position 0 at or below :func:`curvlab.measurement.language_model.uniform_sink`, the share of
a head that attends uniformly), there is nothing to remove, and the claim is
:data:`curvlab.analysis.claims.NOT_TESTABLE`, with the reason, whatever its interval: never
"contradicted".  Every record carries ``testable`` and ``reason`` (None where testable).  Such a
claim stays in Holm's family, which was fixed before the runs, so no other claim's adjusted p
depends on whether a sink appeared.
"""

from __future__ import annotations

import math

from curvlab.analysis.claims import NOT_TESTABLE
from curvlab.analysis.decidability import family_decidability
from curvlab.analysis.stats import directional_verdict, holm, paired_difference
from curvlab.measurement.language_model import uniform_sink

__all__ = ["COMPARISONS", "MEASURES", "lm_claims", "run_measure", "sink_reason"]

MEASURES: dict[str, dict] = {
    "bits_per_character": {
        "lower_is_better": True,
        "prediction": "Qiu et al.: the gated model reaches a lower loss",
    },
    "spikes": {
        "lower_is_better": True,
        "prediction": "Qiu et al.: the gated model trains more stably at a large learning rate",
    },
    "stability_loss": {
        "lower_is_better": True,
        "prediction": "Qiu et al.: the gated model trains better at a large learning rate",
    },
    "sink": {
        "lower_is_better": True,
        "prediction": "Qiu et al.: the gated model has no attention sink",
    },
    "max_activation": {
        "lower_is_better": True,
        "prediction": "Qiu et al.: the gated model has smaller largest activations",
    },
    "curvature_attention": {
        "lower_is_better": False,
        "prediction": "Part I: none (neither sheet is predicted flat on an input slice); the "
        "direction read from the paper's thesis: gating adds curvature",
    },
    "curvature_residual": {
        "lower_is_better": False,
        "prediction": "Part I: none (neither sheet is predicted flat on an input slice); the "
        "direction read from the paper's thesis: gating adds curvature",
    },
}
"""The per-run measures the claims compare, whether lower is the predicted direction, and what
the paper or Qiu et al. predict."""

COMPARISONS: tuple[tuple[str, str], ...] = (
    ("gated_elementwise", "ungated"),
    ("gated_headwise", "ungated"),
    ("gated_elementwise", "ablation"),
)
"""(model, baseline) pairs compared by the claims: G1 against ungated attention, and the
elementwise gate against the additive control with its parameter count."""


def run_measure(run: dict, measure: str, depth: int) -> float:
    """A run's value of one of :data:`MEASURES` (layers: mean sink, max activation, mean
    curvature)."""
    if measure not in MEASURES:
        raise ValueError(f"measure: expected one of {tuple(MEASURES)}, got {measure!r}")
    if measure in ("bits_per_character", "spikes"):
        return _number(run[measure])
    if measure == "stability_loss":  # a run whose loss became non-finite: its first loss
        final = run["stability_final_loss"]
        return _number(run["stability_initial_loss"] if final is None else final)
    if measure == "max_activation":
        return max(_number(run[f"max_activation_layer{i + 1}"]) for i in range(depth))
    key = "sink_layer" if measure == "sink" else f"{measure}_layer"
    return sum(_number(run[f"{key}{i + 1}"]) for i in range(depth)) / depth


def _number(value) -> float:
    return float("nan") if value is None else float(value)


def sink_reason(runs, depth: int, positions: int) -> str | None:
    """None when some layer of some run puts more attention on position 0 than a uniform
    causal head over ``positions`` tokens would (a sink exists); else why the sink claims
    cannot be tested: the range of the runs' per-layer sinks against the uniform share.

    >>> runs = [{"sink_layer1": 0.06, "sink_layer2": 0.07}, {"sink_layer1": 0.08,
    ...          "sink_layer2": 0.05}]
    >>> sink_reason(runs, 2, 32)
    'no sink: first-position attention 0.05–0.08 ≤ uniform 0.0987 in every layer of every run'
    >>> sink_reason(runs + [{"sink_layer1": 0.3, "sink_layer2": 0.05}], 2, 32) is None
    True
    """
    uniform = uniform_sink(positions)
    sinks = [_number(run[f"sink_layer{i + 1}"]) for run in runs for i in range(depth)]
    if not sinks or any(not math.isfinite(s) for s in sinks):
        raise ValueError("runs: every run needs a finite sink in every layer")
    if max(sinks) > uniform:
        return None
    return (
        f"no sink: first-position attention {min(sinks):.3g}–{max(sinks):.3g} ≤ uniform "
        f"{uniform:.3g} in every layer of every run"
    )


def lm_claims(runs, depth: int, *, positions: int, alpha: float = 0.05) -> list[dict]:
    """The study's claims (module docstring) from its runs: one record per measure and
    comparison whose two variants both ran, each labelled exploratory, Holm over them all.
    ``positions`` is the number of tokens the sink was measured on (the context), which
    sets the uniform share that a sink must exceed (:func:`sink_reason`).

    A measure that is not finite for some run of a compared pair raises ValueError naming it.
    """
    by = {(r["variant"], r["seed"]): r for r in runs}
    records = []
    for model, baseline in COMPARISONS:
        seeds = sorted(s for v, s in by if v == model and (baseline, s) in by)
        if len(seeds) < 2:
            continue
        for measure, about in MEASURES.items():
            a = [run_measure(by[(model, s)], measure, depth) for s in seeds]
            b = [run_measure(by[(baseline, s)], measure, depth) for s in seeds]
            if not all(math.isfinite(v) for v in a + b):
                raise ValueError(f"runs: {measure} is not finite for {model} or {baseline}")
            first, second = (b, a) if about["lower_is_better"] else (a, b)
            record = paired_difference(first, second, alpha=alpha)
            sign = f"{baseline} − {model}" if about["lower_is_better"] else f"{model} − {baseline}"
            pair = [by[(v, s)] for v in (model, baseline) for s in seeds]
            reason = sink_reason(pair, depth, positions) if measure == "sink" else None
            records.append(
                {
                    "claim": f"{measure}: {model} vs {baseline}",
                    "label": "exploratory",
                    "measure": measure,
                    "model": model,
                    "baseline": baseline,
                    "effect_definition": f"{sign} (positive: the predicted direction)",
                    "prediction": about["prediction"],
                    "mean_model": sum(a) / len(a),
                    "mean_baseline": sum(b) / len(b),
                    **record,
                    "testable": reason is None,
                    "reason": reason,
                }
            )
    if records:
        family = [{"test": "sign_flip", "n_seeds": r["n"], "family": "all"} for r in records]
        floors = family_decidability(family, alpha=alpha)
        adjusted = holm([r["p"] for r in records])
        for record, p_holm, floor in zip(records, adjusted, floors, strict=True):
            record.update({"p_holm": p_holm, "n_seeds": record["n"], **floor})
            ci, decidable = (record["ci_low"], record["ci_high"]), floor["decidable"]
            record["verdict"] = (
                directional_verdict(*ci, p_holm, alpha=alpha, decidable=decidable)
                if record["testable"]
                else NOT_TESTABLE
            )
    return records
