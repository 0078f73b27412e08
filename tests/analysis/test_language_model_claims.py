"""The language-model study's claim rules: a sink claim is judged by its interval where a sink
exists, and is "not testable here", with its reason, where neither compared variant has one."""

import math

import pytest

from curvlab.analysis.claims import EMPIRICAL_VERDICTS, NOT_TESTABLE
from curvlab.analysis.decidability import verdict_label
from curvlab.analysis.language_model_claims import (
    COMPARISONS,
    MEASURES,
    lm_claims,
    sink_reason,
    variant_layer_sinks,
)
from curvlab.analysis.stats import verdict_follows
from curvlab.measurement.language_model import uniform_sink

VARIANTS = ("ungated", "gated_headwise", "gated_elementwise", "ablation")
POSITIONS = 32


def _runs(sink, seeds=11):
    """Runs of every variant whose measures differ a little by seed (no two paired differences
    tied), and whose per-layer sink is ``sink(variant, seed, layer)``."""
    runs = []
    for seed in range(seeds):
        for v, variant in enumerate(VARIANTS):
            wobble = 0.01 * math.sin(1.7 * seed + 0.9 * v)
            run = {
                "variant": variant,
                "seed": seed,
                "bits_per_character": 4.0 - 0.05 * v + wobble,
                "spikes": seed * (v + 1),
                "stability_initial_loss": 4.5,
                "stability_final_loss": 2.0 + wobble,
            }
            for layer in (1, 2):
                run[f"sink_layer{layer}"] = sink(variant, seed, layer)
                run[f"max_activation_layer{layer}"] = 10.0 + layer + wobble
                for sheet in ("attention", "residual"):
                    run[f"curvature_{sheet}_layer{layer}"] = 1.0 + v + wobble
            runs.append(run)
    return runs


def _sink_claims(claims):
    return [c for c in claims if c["measure"] == "sink"]


def test_the_uniform_share_is_the_mean_of_one_over_t_plus_one():
    assert uniform_sink(2) == 0.5
    assert uniform_sink(POSITIONS) == pytest.approx(sum(1 / t for t in range(2, 33)) / 31)
    assert 0.0986 < uniform_sink(POSITIONS) < 0.0987
    with pytest.raises(ValueError, match="positions"):
        uniform_sink(1)


def test_a_sink_claim_is_judged_by_its_interval_where_a_sink_exists():
    # the ungated model parks 0.4 of its attention on position 0, the gated ones the uniform share
    def sink(variant, seed, layer):
        return 0.4 + 0.01 * seed if variant in ("ungated", "ablation") else 0.09 + seed / 1e4

    claims = lm_claims(_runs(sink), 2, positions=POSITIONS)
    assert len(claims) == len(COMPARISONS) * len(MEASURES)
    for claim in _sink_claims(claims):
        assert claim["testable"] and claim["reason"] is None
        assert claim["verdict"] == "supported"  # 11 seeds, all in the predicted direction
        assert verdict_follows(claim)
    assert all(c["testable"] and c["verdict"] in EMPIRICAL_VERDICTS for c in claims)


def test_a_sink_claim_is_not_testable_where_no_variant_has_a_sink():
    # every variant's mean over seeds at or below the uniform share in every layer (one run of
    # the control a little above it), the gated models lower: an interval on the predicted
    # side, yet nothing for a gate to remove
    def sink(variant, seed, layer):
        gated = 0.015 + seed / 1e4 if variant.startswith("gated") else 0.0
        above = 0.03 if (variant, seed, layer) == ("ablation", 3, 2) else 0.0
        return 0.075 - 0.002 * layer - gated + above

    claims = lm_claims(_runs(sink), 2, positions=POSITIONS)
    for claim in _sink_claims(claims):
        assert claim["verdict"] == NOT_TESTABLE and not claim["testable"]
        assert claim["reason"].startswith("no sink: first-position attention")
        assert f"≤ uniform {uniform_sink(POSITIONS):.3g}" in claim["reason"]
        assert verdict_follows(claim)
        assert verdict_label(claim) == f"not testable here ({claim['reason']})"
        assert claim["p_holm"] is not None  # it stays in Holm's family
    other = [c for c in claims if c["measure"] != "sink"]
    assert all(c["testable"] and c["verdict"] != NOT_TESTABLE for c in other)


def test_the_sink_reason_names_the_range_of_the_variants_sinks():
    uniform = uniform_sink(POSITIONS)
    runs = [
        {"variant": "a", "sink_layer1": 0.057, "sink_layer2": 0.075},
        {"variant": "b", "sink_layer1": 0.06, "sink_layer2": uniform},  # at the share: no sink
    ]
    assert sink_reason(runs, 2, POSITIONS) == (
        "no sink: first-position attention 0.057–0.0987 (per variant and layer, mean over "
        "seeds) ≤ uniform 0.0987"
    )
    # one seed of b above the share, its mean over seeds not: still no sink; a mean above it is
    high = {"variant": "b", "sink_layer1": 0.06, "sink_layer2": uniform + 0.002}
    low = {"variant": "b", "sink_layer1": 0.06, "sink_layer2": uniform - 0.004}
    assert variant_layer_sinks([high, low], 2)[("b", 2)] < uniform
    assert sink_reason([*runs, high, low], 2, POSITIONS) is not None
    assert sink_reason([*runs, high], 2, POSITIONS) is None
    with pytest.raises(ValueError, match="sink"):
        sink_reason([{"variant": "a", "sink_layer1": None, "sink_layer2": 0.1}], 2, POSITIONS)


def test_a_verdict_of_not_testable_needs_a_reason_and_a_record_that_says_so():
    record = {"ci_low": -0.3, "ci_high": -0.1, "p": 0.01, "testable": False, "reason": "no sink"}
    assert verdict_follows({**record, "verdict": NOT_TESTABLE})
    assert not verdict_follows({**record, "verdict": "contradicted"})
    assert not verdict_follows({**record, "reason": "", "verdict": NOT_TESTABLE})
    testable = {**record, "testable": True, "reason": None}
    assert not verdict_follows({**testable, "verdict": NOT_TESTABLE})
    assert verdict_follows({**testable, "verdict": "contradicted"})
