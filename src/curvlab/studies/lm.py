"""The language-model study: Part I's and Part II's questions asked of a small trained transformer.

Every variant of :mod:`curvlab.models.language_model` (ungated, G1 headwise, G1 elementwise,
the additive control) is trained on the SymPy docstring corpus (:mod:`curvlab.data.corpus`,
refused unless its fingerprint is the protocol's: :data:`curvlab.studies.protocol.LM_SCALES`)
over a few seeds, and each run is measured (one cached cell per variant and seed)::

    bits per character     mean next-token cross-entropy / ln 2 on fixed validation windows
    stability              the same run (same seed, same batches) at stability_multiple × the
                           learning rate: its final loss (the mean training loss of the last
                           final_window steps); spikes = steps t >= 1 whose loss exceeds
                           spike_factor × the minimum loss of the previous min(t, spike_window)
                           steps; diverged = a non-finite loss (training stops there; its
                           final loss is then None, and its first loss stands in for it in
                           the claims) or a final loss above the first step's
    attention sink         per layer, the attention weight on position 0 averaged over heads,
                           query positions t > 0 and the validation windows
    largest activation     per layer, max |h| over the residual stream after the block
    gate scores            per layer of a gated variant, the mean of σ(X W_θ + b_θ) over
                           the validation windows, positions and gates, and the share
                           below 0.1 (the sparsity Qiu et al. report); None without a gate
    curvature              per layer, ∫|K| dA of two sheets over a 2-D input slice (below)

Training: AdamW (betas 0.9, 0.95), a linear warm-up over ``warmup_steps``, then cosine decay
to a tenth of the rate; batches of ``batch_size`` windows of ``context + 1`` characters at
random offsets of the training split, drawn from the seed (so every variant of a seed sees the
same batches).  No gradient clipping (it would hide the spikes the stability measure counts).
On the CPU the study computes in one thread (the caller's setting is restored afterwards): the
matrices are too small for intra-op threads to pay for their synchronisation.

**The slice** (:mod:`curvlab.measurement.language_model`): the last position's input embedding of
validation window 3s moved over the plane through it and windows 3s + 1 and 3s + 2's
(x(u) = e₀ + u₁ (e₁ − e₀) + u₂ (e₂ − e₀) on the triangle u₁, u₂ >= 0, u₁ + u₂ <= 1, the rest of
window 3s fixed), for slice s = 0 … slices − 1; per layer, the attention block's output and
the residual stream at that position.  ∫|K| dA by the triangle's midpoint rule at P = ``resolution``
and at 2P; a run's value is the 2P integral averaged over its slices, the rule's convergence
|log(I_P / I_2P)| per slice, layer and sheet (``meta["convergence"]``: median, 90th
percentile).

**What Part I predicts here, and what it does not.**  Part I's flatness result is about a
sheet along which only an ungated attention layer's *values* move: the layer is then affine
in what moves, so its output sheet is flat (K = 0), and a gate is what can bend it.  This
slice moves a token's *input* embedding, which enters the queries and keys (through the
softmax and the LayerNorm) as well as the values, so an ungated block is not affine in it:
**neither sheet is predicted flat**, for the ungated model or any other, and no sign or size
of a curvature difference between variants follows from Part I.  The curvature claims below
are therefore directions read off the paper's thesis (gating adds curvature), tested
exploratorily, not predictions.  Qiu et al. (2025) do predict, for gated G1 against ungated
attention: lower loss, fewer loss spikes at large learning rates, no attention sink, and
smaller largest activations.

**Claims** (:func:`lm_claims`), each exploratory: for each measure, the paired differences
over seeds (:func:`curvlab.analysis.stats.paired_difference`) of G1 elementwise − ungated,
G1 headwise − ungated and G1 elementwise − the additive control, signed so that a positive
effect is the predicted (or read) direction; p the exact sign-flip p (the t-test's beside it),
Holm-adjusted over the whole family (:func:`curvlab.analysis.stats.holm`); the verdict by
:func:`curvlab.analysis.stats.directional_verdict`, "undecidable" where the seeds cannot reach
α (:func:`curvlab.analysis.decidability.family_decidability`; 5 seeds: p >= 0.0625), and
"not testable here", with the reason, for a sink claim where neither variant has a sink
(:func:`curvlab.analysis.language_model_claims.sink_reason`).  A run's sink is its mean over
layers, its largest activation the maximum over layers, its curvature the mean over layers.

``python -m curvlab lm --out DIR`` writes DIR/runs.csv (one row per run), loss_curves.csv
(every step of both trainings), claims.json and meta.json (configuration, corpus fingerprint,
code version, convergence, divergences, timing).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time

import numpy as np
import torch

from curvlab import arguments
from curvlab.analysis.language_model_claims import COMPARISONS, MEASURES, lm_claims, run_measure
from curvlab.data.corpus import (
    CorpusFingerprint,
    check_corpus,
    sympy_docstring_corpus,
    validation_windows,
)
from curvlab.measurement.language_model import SHEETS, context_slice_curvature, layer_statistics
from curvlab.measurement.loss_spikes import count_spikes
from curvlab.models.attention import parameter_count
from curvlab.models.language_model import LANGUAGE_MODEL_VARIANTS, next_token_loss
from curvlab.models.language_model_training import train_language_model
from curvlab.studies.protocol import LM_SCALES, study_config
from curvlab.studies.result import StudyResult
from curvlab.studies.study import (
    Argument,
    Cells,
    Context,
    Study,
    interval_text,
    number_or_na,
    positive_int,
    seed_range,
)

__all__ = [
    "COMPARISONS",  # re-exported from curvlab.analysis.language_model_claims, with
    "LM",
    "MEASURES",  # the claims' measures and
    "analyse_lm",
    "fingerprint",
    "lm_cells",
    "lm_claims",  # their rule, so that the chapter reads the study from one place
    "lm_config",
    "measure_lm_cell",
    "run_measure",
]

_CHECKS = {
    "variants": LANGUAGE_MODEL_VARIANTS,
    "seeds": 0,
    "context": 2,
    "d_model": 1,
    "n_heads": 1,
    "depth": 1,
    "steps": 2,
    "batch_size": 1,
    "warmup_steps": 0,
    "spike_window": 1,
    "final_window": 1,
    "validation_windows": 3,
    "slices": 1,
    "resolution": 1,
}


def lm_config(scale: str = "small", **overrides) -> dict:
    """The study configuration of ``scale`` with ``overrides``, every setting checked.

    >>> c = lm_config("small", seeds=[0, 1])
    >>> c["seeds"], c["variants"][0]
    ([0, 1], 'ungated')
    """
    config = study_config(LM_SCALES, scale, overrides, _CHECKS, study="language-model study")
    for name in ("learning_rate", "stability_multiple", "spike_factor"):
        arguments.number(name, config[name], low=0, low_open=True, finite=False)
        arguments.number(name, config[name], expected="a finite number")
    if config["weight_decay"] < 0:
        raise ValueError(f"weight_decay: expected a number >= 0, got {config['weight_decay']!r}")
    if config["d_model"] % config["n_heads"]:
        raise ValueError(f"n_heads: must divide d_model = {config['d_model']}")
    if config["validation_windows"] < 3 * config["slices"]:
        raise ValueError(
            f"slices: needs 3 validation windows each, {config['validation_windows']} available"
        )
    if config["final_window"] > config["steps"]:
        raise ValueError(f"final_window: at most steps = {config['steps']}")
    if len(set(config["seeds"])) != len(config["seeds"]):
        raise ValueError(f"seeds: expected distinct seeds, got {config['seeds']!r}")
    return config


def fingerprint(config: dict) -> CorpusFingerprint:
    """The corpus fingerprint a configuration was written for."""
    return CorpusFingerprint(
        config["sympy_version"], config["corpus_files_sha256"], config["corpus_text_sha256"]
    )


@functools.cache
def _corpus_ids(expected: CorpusFingerprint) -> tuple[torch.Tensor, torch.Tensor, int]:
    """(train ids, validation ids, vocabulary size) of the installed corpus, checked first."""
    corpus = check_corpus(sympy_docstring_corpus(), expected)
    return (
        corpus.encode(corpus.split_text("train")),
        corpus.encode(corpus.split_text("validation")),
        len(corpus.vocabulary),
    )


def _convergence(coarse: float, fine: float) -> float | None:
    """|log(I_P / I_2P)|; 0 when both vanish, None when only one does."""
    if coarse == fine == 0:
        return 0.0
    if coarse <= 0 or fine <= 0:
        return None
    return abs(math.log(coarse / fine))


def _final(losses: list, window: int) -> float | None:
    tail = losses[-window:]
    if len(losses) == 0 or any(v is None for v in tail):
        return None
    return sum(tail) / len(tail)


def measure_lm_cell(config: dict) -> dict:
    """One variant and seed: both trainings and every measure (module docstring)."""
    start = time.perf_counter()
    variant, seed = config["variant"], config["seed"]
    train_ids, validation_ids, vocab_size = _corpus_ids(fingerprint(config))
    windows = validation_windows(validation_ids, config["validation_windows"], config["context"])
    model, losses = train_language_model(config, variant, seed, train_ids, vocab_size)
    _, fast = train_language_model(
        config, variant, seed, train_ids, vocab_size, multiple=config["stability_multiple"]
    )
    device = next(model.parameters()).device
    with torch.no_grad():
        bits = float(next_token_loss(model, windows.to(device))) / math.log(2)
    layers = layer_statistics(model, windows[:, :-1].to(device))
    curvature, convergence, immersed = {}, [], []
    for s in range(config["slices"]):
        measured = context_slice_curvature(
            model, windows[3 * s : 3 * s + 3, :-1], config["resolution"]
        )
        immersed.append(measured["immersed"])
        for (layer, sheet), (coarse, fine) in measured["integrals"].items():
            curvature.setdefault((layer, sheet), []).append(fine)
            convergence.append(
                {
                    "slice": s,
                    "layer": layer,
                    "sheet": sheet,
                    "coarse": coarse,
                    "fine": fine,
                    "convergence": _convergence(coarse, fine),
                }
            )
    initial, final = fast[0], _final(fast, config["final_window"])
    run = {
        "variant": variant,
        "seed": seed,
        "parameters": parameter_count(model),
        "bits_per_character": bits,
        "final_train_loss": _final(losses, config["final_window"]),
        "spikes": count_spikes(fast, config["spike_factor"], config["spike_window"]),
        "diverged": bool(final is None or initial is None or final > initial),
        "stability_initial_loss": initial,
        "stability_final_loss": final,
        "immersed_share": min(immersed),
    }
    for layer in range(config["depth"]):
        run[f"sink_layer{layer + 1}"] = layers["sink"][layer]
        run[f"max_activation_layer{layer + 1}"] = layers["max_activation"][layer]
        run[f"gate_mean_layer{layer + 1}"] = layers["gate_mean"][layer]
        run[f"gate_sparse_layer{layer + 1}"] = layers["gate_sparse"][layer]
        for sheet in SHEETS:
            values = curvature[(layer, sheet)]
            run[f"curvature_{sheet}_layer{layer + 1}"] = sum(values) / len(values)
    run = {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in run.items()}
    run["seconds"] = time.perf_counter() - start
    curves = [
        {"variant": variant, "seed": seed, "run": name, "step": step, "loss": loss}
        for name, trace in (("base", losses), ("stability", fast))
        for step, loss in enumerate(trace)
    ]
    return {"run": run, "curves": curves, "convergence": convergence}


def _quantile(values: list[float], q: float) -> float | None:
    return float(np.quantile(values, q)) if values else None


def lm_cells(config: dict, context: Context) -> list[Cells]:
    """One cell per variant and seed (seed-major), on the run's device."""
    base = {k: v for k, v in config.items() if k not in ("variants", "seeds")}
    base["device"] = context.device
    configs = [
        {**base, "variant": variant, "seed": seed}
        for seed in config["seeds"]
        for variant in config["variants"]
    ]
    return [Cells("lm", measure_lm_cell, configs, unit="run")]


def analyse_lm(config: dict, results: list, context: Context) -> StudyResult:
    """The runs, their loss curves, the claims (:func:`curvlab.analysis.language_model_claims.
    lm_claims`) and, in ``meta``, the corpus, the quadrature's convergence, the divergences
    and the stability rules."""
    (cells,) = results
    runs = [done["run"] for done in cells]
    curves = [row for done in cells for row in done["curves"]]
    convergence = [
        {"variant": done["run"]["variant"], "seed": done["run"]["seed"], **row}
        for done in cells
        for row in done["convergence"]
    ]
    claims = lm_claims(runs, config["depth"], positions=config["context"])
    ratios = [r["convergence"] for r in convergence if r["convergence"] is not None]
    variants = config["variants"]
    meta = {
        "config": config,
        "corpus": dataclasses.asdict(fingerprint(config)),
        "convergence": {
            "rule": "|log(I_P / I_2P)| per run, slice, layer and sheet; triangle midpoint rule",
            "resolutions": [config["resolution"], 2 * config["resolution"]],
            "median": _quantile(ratios, 0.5),
            "p90": _quantile(ratios, 0.9),
            "count": len(ratios),
            "undefined": len(convergence) - len(ratios),
        },
        "diverged": {v: sum(r["variant"] == v and r["diverged"] for r in runs) for v in variants},
        "stability": {
            "learning_rate": config["learning_rate"] * config["stability_multiple"],
            "spike_rule": f"loss > {config['spike_factor']} × the minimum of the previous "
            f"{config['spike_window']} steps",
            "divergence_rule": "a non-finite loss, or the mean of the last "
            f"{config['final_window']} steps above the first step's loss",
        },
        "claims_family": len(claims),
        "threads": 1 if context.device == "cpu" else torch.get_num_threads(),
    }
    return StudyResult(runs=runs, curves=curves, claims=claims, meta=meta)


def report_lm(result: StudyResult) -> list[str]:
    """One line per claim: its name, verdict, effect and interval, Holm-adjusted p."""
    return [
        f"{claim['claim']:>44} {claim['verdict']:>17}  effect {interval_text(claim, '+.4g')}"
        f"  p_holm {number_or_na(claim['p_holm'], '.3g')}"
        for claim in result.claims
    ]


LM = Study(
    name="lm",
    help="a small transformer language model per variant and seed: loss, stability, sink, "
    "curvature",
    scales=tuple(LM_SCALES),
    configure=lm_config,
    cells=lm_cells,
    analyse=analyse_lm,
    arguments=(
        Argument("--seeds", "seeds", "number of seeds", positive_int, seed_range),
        Argument("--steps", "steps", "training steps", positive_int),
    ),
    report=report_lm,
    single_thread=True,
)
"""The language-model study (module docstring; :mod:`curvlab.studies.study`).  On the CPU its
cells computed in this process run on one thread: matrices this small gain nothing from
intra-op threads (a worker process has its own one-thread share)."""
