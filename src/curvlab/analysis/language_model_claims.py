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
where neither compared variant has one (:func:`sink_reason`: in every layer, the variant's
attention on position 0, its mean over seeds (:func:`variant_layer_sinks`), is at or below
:func:`curvlab.measurement.language_model.uniform_sink`, the share of a causal head that
attends uniformly), there is nothing to remove, and the claim is
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

__all__ = [
    "COMPARISONS",
    "MEASURES",
    "lm_claims",
    "run_measure",
    "sink_reason",
    "variant_layer_sinks",
]

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


def variant_layer_sinks(runs, depth: int) -> dict[tuple[str, int], float]:
    """Each variant's sink in each layer (1 … depth): the mean over its runs (seeds).

    >>> variant_layer_sinks([{"variant": "a", "sink_layer1": 0.1},
    ...                      {"variant": "a", "sink_layer1": 0.3}], 1)
    {('a', 1): 0.2}
    """
    by: dict[tuple[str, int], list[float]] = {}
    for run in runs:
        for layer in range(1, depth + 1):
            value = _number(run[f"sink_layer{layer}"])
            if not math.isfinite(value):
                raise ValueError(f"runs: the sink of layer {layer} is not finite")
            by.setdefault((run["variant"], layer), []).append(value)
    return {key: sum(values) / len(values) for key, values in by.items()}


def sink_reason(runs, depth: int, positions: int) -> str | None:
    """None when some variant of ``runs``, in some layer, puts more attention on position 0,
    on average over its seeds, than a uniform causal head over ``positions`` tokens would (a
    sink exists); else why a sink claim on these runs cannot be tested: the range of the
    variants' per-layer sinks against the uniform share.

    >>> runs = [{"variant": "a", "sink_layer1": 0.06, "sink_layer2": 0.07},
    ...         {"variant": "b", "sink_layer1": 0.08, "sink_layer2": 0.05}]
    >>> print(sink_reason(runs, 2, 32))  # doctest: +NORMALIZE_WHITESPACE
    no sink: first-position attention 0.05–0.08 (per variant and layer, mean over seeds)
    ≤ uniform 0.0987
    >>> b = {"variant": "b", "sink_layer1": 0.3, "sink_layer2": 0.05}  # b's layer 1: mean 0.19
    >>> sink_reason([*runs, b], 2, 32) is None
    True
    """
    if not runs:
        raise ValueError("runs: expected at least one run")
    uniform = uniform_sink(positions)
    sinks = variant_layer_sinks(runs, depth).values()
    if max(sinks) > uniform:
        return None
    return (
        f"no sink: first-position attention {min(sinks):.3g}–{max(sinks):.3g} (per variant and "
        f"layer, mean over seeds) ≤ uniform {uniform:.3g}"
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
