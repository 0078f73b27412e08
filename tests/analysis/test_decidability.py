"""curvlab.analysis.decidability: the smallest p a family of claims can reach at its seeds."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curvlab.analysis import decidability, stats


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 30), st.integers(1, 20), st.sampled_from([0.05, 0.01, 0.1]))
def test_a_family_of_sign_flip_claims_decides_iff_m_times_the_floor_is_below_alpha(n, m, alpha):
    claims = [{"test": "sign_flip", "n_seeds": n, "family": "primary"}] * m
    rows = decidability.family_decidability(claims, alpha=alpha)
    floor = 2.0 ** (1 - n)
    for row in rows:
        assert row["p_floor"] == floor and row["family_size"] == m
        assert row["p_floor_holm"] == pytest.approx(min(1.0, m * floor))
        assert row["decidable"] == (m * floor < alpha)
        needed = row["seeds_needed"]
        if row["decidable"]:
            assert needed is None and row["decision_limit"] is None
        else:
            assert m * 2.0 ** (1 - needed) < alpha <= m * 2.0 ** (2 - needed)
            assert f"{n} seeds" in row["decision_limit"]


def test_the_real_data_family_cannot_decide_at_four_seeds():
    """Three datasets × (E1, E2 paired; E3 by permutation with a seed-cluster interval): the
    paired claims' floor 0.125 and E3's missing interval leave nothing decidable."""
    paired = {"test": "sign_flip", "n_seeds": 4, "family": "directional"}
    e3 = {**paired, "test": "permutation", "permutations": 2000, "cluster_interval": True}
    rows = decidability.family_decidability([paired, paired, e3] * 3)
    assert not any(r["decidable"] for r in rows)
    assert rows[0]["p_floor"] == 0.125 and rows[2]["p_floor"] == pytest.approx(1 / 2001)
    assert rows[2]["seeds_needed"] == 5 and "35 distinct" in rows[2]["decision_limit"]
    assert rows[0]["seeds_needed"] == 9  # 9 · 2 · 2⁻⁹ < 0.05 <= 9 · 2 · 2⁻⁸


def test_the_holm_floor_is_holm_of_the_floors_and_a_secondary_claim_stands_alone():
    claims = [
        {"test": "sign_flip", "n_seeds": 6, "family": "f"},
        {"test": "permutation", "n_seeds": 6, "family": "f", "permutations": 999},
        {"test": "sign_flip_tost", "n_seeds": 6, "family": None},
    ]
    rows = decidability.family_decidability(claims)
    assert [r["p_floor_holm"] for r in rows[:2]] == stats.holm([2**-5, 1 / 1000])
    assert rows[0]["decidable"] and rows[2]["p_floor_holm"] is None
    assert rows[2]["p_floor"] == 2**-6 and rows[2]["decidable"]


def test_verdict_label_names_the_seeds():
    record = {"verdict": "undecidable", "n_seeds": 5, "seeds_needed": 10}
    assert decidability.verdict_label(record) == "undecidable at 5 seeds (needs 10)"


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="test"):
        decidability.test_floor("t", 4)
    with pytest.raises(ValueError, match="permutations"):
        decidability.test_floor("permutation", 4)
    with pytest.raises(ValueError, match="claims"):
        decidability.family_decidability({"test": "sign_flip"})
    with pytest.raises(ValueError, match="alpha"):
        decidability.family_decidability([], alpha=1.5)
