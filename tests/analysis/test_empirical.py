"""Laws of the Part II analysis: E3 is decided within task × model, never by the model confound."""

import pytest

from curvlab.analysis import stats
from curvlab.analysis.association import synthetic_runs
from curvlab.analysis.empirical import ANALYSIS, CLAIM_FIELDS, analyse, claims, correlations

FAST = {**ANALYSIS, "resamples": 300, "permutations": 300}
MODELS = ("ungated", "gated_elementwise", "ablation")


def _runs(within_slope: float, n_seeds: int = 20, seed: int = 3) -> list[dict]:
    """Runs whose models differ in mean curvature and mean accuracy (the confound), with a
    within-cell slope ``within_slope`` of accuracy on curvature."""
    runs = synthetic_runs(
        n_seeds=n_seeds,
        tasks=("xor", "circles"),
        models=MODELS,
        within_slope=within_slope,
        seed=seed,
    )
    return [{**run, "converged": True} for run in runs]


def _e3(runs) -> dict:
    return next(r for r in claims(runs, settings=FAST) if r["claim"] == "E3")


def test_the_model_confound_alone_does_not_support_e3():
    e3 = _e3(_runs(within_slope=0.0))
    assert e3["pooled_r"] > 0.3  # the model means alone make the pooled r clearly positive
    assert e3["pooled_r_null_mean"] > 0.3  # and its null is centred there, not at 0
    assert abs(e3["null_mean"]) < 0.05  # the within-cell null is centred at 0
    assert e3["verdict"] != "supported"
    assert e3["ci_low"] < 0 < e3["ci_high"]


def test_a_within_cell_link_supports_e3():
    e3 = _e3(_runs(within_slope=1.0))
    assert e3["verdict"] == "supported"
    assert e3["ci_low"] > 0 and e3["delta_slope_ci_low"] > 0


def test_e3_keeps_the_claims_json_fields_and_follows_its_rule():
    for slope in (0.0, 1.0):
        e3 = _e3(_runs(within_slope=slope))
        assert list(e3)[: len(CLAIM_FIELDS)] == list(CLAIM_FIELDS)
        for field in ("pooled_r", "spearman_within", "paper_r", "depth", "ci_level"):
            assert field in e3
        assert e3["estimator"] == "within_cell_r" and e3["study"] == "exploratory"
        assert e3["n_cells"] == 2 * len(MODELS) and e3["n_seeds"] == 20
        assert stats.verdict_follows(e3)


def test_e3_is_in_the_holm_family_and_the_secondary_claims_are_not():
    records = claims(_runs(within_slope=0.5), settings=FAST)
    family = [r for r in records if r["p_holm"] is not None]
    assert "E3" in {r["claim"] for r in family}
    assert {r["claim"] for r in records if r["p_holm"] is None} <= {"E1-proxy", "E3-delta"}
    adjusted = stats.holm([r["p"] for r in family])
    assert [r["p_holm"] for r in family] == pytest.approx(adjusted)


def test_e3_is_the_within_cell_r_of_the_correlations_record():
    runs = _runs(within_slope=0.5)
    corr = correlations(runs, plan=FAST)
    e3 = _e3(runs)
    assert e3["effect"] == corr["within_cell"]["pearson_r"]
    assert e3["p"] == corr["within_cell_null"]["p"]
    assert e3["pooled_r"] == corr["within_task"]["pearson_r"]
    assert corr["delta"]["n_pairs"] == 2 * 20  # gated − ungated per (task, seed)


def test_analyse_reports_e3_and_its_converged_only_recomputation():
    result = analyse(_runs(within_slope=0.0, n_seeds=8), settings=FAST)
    e3 = next(r for r in result["claims"] if r["claim"] == "E3")
    assert e3["converged_effect"] == e3["effect"]  # every run converged
    assert len(result["correlations"]) == 1
