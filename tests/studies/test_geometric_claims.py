"""The geometric claims T1 to T5 come from the library, each verdict from its own checks."""

import pytest

from curvlab.analysis.claims import GEOMETRIC_VERDICTS, verdict
from curvlab.studies.geometric_claims import geometric_claims


@pytest.mark.slow
def test_t1_to_t5_are_records_whose_verdicts_follow_their_checks(tmp_path, tiny_depth):
    records = geometric_claims(directory=tmp_path, **tiny_depth)
    assert [r["claim"] for r in records] == ["T1", "T2", "T3", "T4", "T5"]
    for record in records:
        assert record["verdict"] in GEOMETRIC_VERDICTS
        assert record["verdict"] == verdict(record["checks"])
        assert record["passed"] == sum(record["checks"].values())
    by_claim = {r["claim"]: r for r in records}
    # the exact parts do not depend on the depth study's size
    assert by_claim["T1"]["verdict"] == by_claim["T2"]["verdict"] == "reproduced"
    assert by_claim["T1"]["slice_max_abs_K"] > 1e-3 and by_claim["T3"]["ungated_slice_max_K"] > 0
    assert by_claim["T5"]["peak_ratio"] > 1
    assert list(tmp_path.glob("depth-*.json"))  # the depth study ran into the cache given
