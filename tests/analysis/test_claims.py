"""curvlab.analysis.claims: the one vocabulary of verdicts, and the rule of a geometric claim."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curvlab.analysis import stats
from curvlab.analysis.claims import (
    EMPIRICAL_VERDICTS,
    GEOMETRIC_VERDICTS,
    claim_record,
    verdict,
)


@settings(max_examples=30, deadline=None)
@given(checks=st.dictionaries(st.text(min_size=1, max_size=5), st.booleans(), min_size=1))
def test_geometric_verdict_follows_the_checks(checks):
    expected = (
        "reproduced"
        if all(checks.values())
        else ("partly" if any(checks.values()) else "not reproduced")
    )
    assert verdict(checks) == expected
    assert verdict(checks, testable=False) == "unverified"
    assert verdict(checks) in GEOMETRIC_VERDICTS


def test_claim_record_counts_its_checks_and_rejects_bad_ones():
    row = claim_record("T9", "curved", {"a": True, "b": False}, evidence=1.5)
    assert (row["verdict"], row["passed"], row["n_checks"]) == ("partly", 1, 2)
    assert row["evidence"] == 1.5
    with pytest.raises(ValueError, match="checks"):
        verdict({})
    with pytest.raises(TypeError, match="bool"):
        verdict({"a": 1})


def test_the_two_vocabularies_are_disjoint_and_the_empirical_rule_uses_its_own():
    assert not set(GEOMETRIC_VERDICTS) & set(EMPIRICAL_VERDICTS)
    assert stats.directional_verdict(0.1, 0.5, 0.001) in EMPIRICAL_VERDICTS
    assert stats.equivalence_verdict(0.4, 0.02, 0.05, 0.01) in EMPIRICAL_VERDICTS
    with pytest.raises(ValueError, match="verdict"):
        stats.verdict_follows({"ci_low": 0.1, "ci_high": 0.3, "p": 0.01, "verdict": "partly"})
