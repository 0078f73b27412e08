"""curvlab.analysis.schema: claims.json records carry the plan's hash, both studies, and a
verdict that follows from each record's own interval."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curvlab.analysis import stats
from curvlab.analysis.claims import EMPIRICAL_VERDICTS
from curvlab.analysis.plan import PLAN, plan_sha256
from curvlab.analysis.schema import (
    CLAIM_RECORD_FIELDS,
    claim_schema_record,
    validate_claim_record,
    validate_claims_document,
)

FLOOR = 2.0**-19  # the two-sided sign-flip floor at 20 seeds


def _document(plan=PLAN) -> dict:
    """A valid claims.json for ``plan``: every claim in both studies, Holm within each."""
    records = []
    for study, seeds in (("exploratory", plan.exploratory_seeds), ("confirmatory", None)):
        seeds = list(seeds or plan.confirmatory_seeds)
        raw = {spec.claim: 0.001 * (k + 1) for k, spec in enumerate(plan.claims)}
        family = plan.family()
        holm = dict(zip(family, stats.holm([raw[c] for c in family]), strict=True))
        floors = dict(zip(family, stats.holm([FLOOR] * len(family)), strict=True))
        for spec in plan.claims:
            if spec.margin is not None:
                effect, low, high = 0.0, -spec.margin / 2, spec.margin / 2
            else:
                effect, low, high = 0.3, 0.1, 0.5
            records.append(
                claim_schema_record(
                    spec,
                    effect=effect,
                    ci_low=low,
                    ci_high=high,
                    p=raw[spec.claim],
                    p_holm=holm.get(spec.claim),
                    seeds=seeds,
                    mde_80=0.2,
                    study=study,
                    p_floor=FLOOR,
                    p_floor_holm=floors.get(spec.claim),
                )
            )
    return {"plan_sha256": plan_sha256(plan), "claims": records}


def test_a_document_built_from_the_plan_is_valid_and_complete():
    document = _document()
    validate_claims_document(document, plan=PLAN)
    assert {r["study"] for r in document["claims"]} == {"exploratory", "confirmatory"}
    for record in document["claims"]:
        assert list(record)[: len(CLAIM_RECORD_FIELDS)] == list(CLAIM_RECORD_FIELDS)
        assert record["verdict"] == "supported"


def test_a_verdict_that_contradicts_its_interval_is_refused():
    record = _document()["claims"][0]
    with pytest.raises(ValueError, match="does not follow"):
        validate_claim_record({**record, "ci_low": -0.1, "effect": 0.2})  # 0 inside, "supported"
    with pytest.raises(ValueError, match="does not follow"):
        validate_claim_record({**record, "verdict": "inconclusive"})
    document = _document()
    document["claims"][3] = {**document["claims"][3], "verdict": "contradicted"}
    with pytest.raises(ValueError, match="does not follow"):
        validate_claims_document(document, plan=PLAN)


@settings(max_examples=80, deadline=None)
@given(
    st.floats(-1, 1),
    st.floats(0, 1),
    st.floats(0, 1),
    st.sampled_from(EMPIRICAL_VERDICTS),
    st.sampled_from([None, 0.05, 0.3]),
)
def test_a_record_is_accepted_exactly_when_its_verdict_is_the_rules(low, width, p, claimed, margin):
    record = {
        **_document()["claims"][0],
        "effect": low + width / 2,
        "ci_low": low,
        "ci_high": low + width,
        "p": p,
        "p_holm": None,
        "p_floor": 0.0,
        "p_floor_holm": None,
        "margin": margin,
        "verdict": claimed,
    }
    if margin is None:
        expected = stats.directional_verdict(low, low + width, p)
    else:
        expected = stats.equivalence_verdict(p, low, low + width, margin)
    if claimed == expected:
        validate_claim_record(record)
    else:
        with pytest.raises(ValueError, match="verdict"):
            validate_claim_record(record)


@pytest.mark.parametrize("field", CLAIM_RECORD_FIELDS)
def test_a_missing_field_is_named(field):
    record = dict(_document()["claims"][0])
    del record[field]
    with pytest.raises(ValueError, match=f"missing field '{field}'"):
        validate_claim_record(record)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"study": "pilot"}, "study"),
        ({"seeds": [0, 0, 1]}, "distinct"),
        ({"n_seeds": 5}, "n_seeds"),
        ({"p_holm": 0.0001}, "p_holm"),
        ({"effect": math.nan}, "effect"),
        ({"p": 1.5}, "probability"),
        ({"estimator": "anova"}, "estimator"),
        ({"margin": -0.1}, "margin"),
        ({"ci_low": 0.9}, "ci_low <= ci_high"),
    ],
)
def test_a_wrong_field_is_named(change, message):
    record = {**_document()["claims"][0], **change}
    with pytest.raises(ValueError, match=message):
        validate_claim_record(record)


def test_the_top_level_is_checked_against_the_plan():
    good = _document()
    with pytest.raises(ValueError, match="plan_sha256"):
        validate_claims_document({"claims": good["claims"]})
    with pytest.raises(ValueError, match="plan_sha256"):
        validate_claims_document({**good, "plan_sha256": "A" * 64})
    with pytest.raises(ValueError, match="not the hash"):
        validate_claims_document({**good, "plan_sha256": "0" * 64}, plan=PLAN)
    with pytest.raises(ValueError, match="claims"):
        validate_claims_document({**good, "claims": []})
    with pytest.raises(ValueError, match="twice"):
        validate_claims_document({**good, "claims": good["claims"] + good["claims"][:1]})
    stranger = {**good["claims"][0], "claim": "E9"}
    with pytest.raises(ValueError, match="not in the plan"):
        validate_claims_document({**good, "claims": [stranger]}, plan=PLAN)
    moved = {**good["claims"][0], "stratum": "hard"}
    with pytest.raises(ValueError, match="stratum"):
        validate_claims_document({**good, "claims": [moved, *good["claims"][1:]]}, plan=PLAN)
    unadjusted = [dict(r) for r in good["claims"]]
    unadjusted[0]["p_holm"] = unadjusted[0]["p"]
    with pytest.raises(ValueError, match="Holm"):
        validate_claims_document({**good, "claims": unadjusted}, plan=PLAN)
    reused = [dict(r) for r in good["claims"]]
    last = reused[-1]
    last["seeds"], last["n_seeds"] = list(PLAN.exploratory_seeds), len(PLAN.exploratory_seeds)
    assert last["study"] == "confirmatory"
    with pytest.raises(ValueError, match="exploratory seeds"):
        validate_claims_document({**good, "claims": reused}, plan=PLAN)


def test_claim_schema_record_refuses_p_holm_for_a_secondary_claim():
    secondary = next(s for s in PLAN.claims if s.holm_family is None)
    with pytest.raises(ValueError, match="p_holm"):
        claim_schema_record(
            secondary, effect=0.3, ci_low=0.1, ci_high=0.5, p=0.01, p_holm=0.02,
            seeds=[0, 1, 2], mde_80=None, study="exploratory", p_floor=0.25, p_floor_holm=None,
        )  # fmt: skip


def test_a_claim_whose_seeds_cannot_reach_alpha_is_undecidable_never_inconclusive():
    """Four seeds: the sign-flip floor 0.125; in a family of m, m · 0.125."""
    spec = PLAN.claims[0]
    record = claim_schema_record(
        spec, effect=0.3, ci_low=0.1, ci_high=0.5, p=0.125, p_holm=1.0, seeds=[0, 1, 2, 3],
        mde_80=None, study="exploratory", p_floor=0.125, p_floor_holm=1.0, seeds_needed=9,
    )  # fmt: skip
    assert record["verdict"] == "undecidable" and not record["decidable"]
    assert record["seeds_needed"] == 9
    with pytest.raises(ValueError, match="undecidable"):
        validate_claim_record({**record, "verdict": "inconclusive"})
    with pytest.raises(ValueError, match="decidable must be False"):
        validate_claim_record({**record, "decidable": True, "seeds_needed": None})
    with pytest.raises(ValueError, match="below the floor"):
        validate_claim_record({**record, "p": 0.01, "p_holm": 0.05})
    without = {**record, "ci_low": None, "ci_high": None}
    validate_claim_record(without)  # no interval: undecidable, and that is all it can be
    document = _document()
    moved = [dict(r) for r in document["claims"]]
    moved[0]["p_floor_holm"] = moved[0]["p_floor"]
    with pytest.raises(ValueError, match="p_floor's Holm value"):
        validate_claims_document({**document, "claims": moved}, plan=PLAN)
