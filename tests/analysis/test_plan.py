"""curvlab.analysis.plan: one frozen plan, its canonical JSON and a hash that names it."""

import dataclasses
import hashlib
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from curvlab.analysis.plan import (
    ESTIMATORS,
    PLAN,
    ClaimSpec,
    plan_from_dict,
    plan_json,
    plan_sha256,
)
from curvlab.data.tasks import HARD_TASKS, LINEAR_TASKS, NONLINEAR_TASKS, TASKS
from curvlab.models.attention import VARIANTS

SOURCE = Path(__file__).resolve().parents[2] / "src"


def _leaves(tree, path=()):
    """Every (path, value) of the nested dicts and lists of ``tree``."""
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from _leaves(value, (*path, key))
    elif isinstance(tree, list | tuple):
        for index, value in enumerate(tree):
            yield from _leaves(value, (*path, index))
    else:
        yield path, tree


LEAVES = [path for path, _ in _leaves(dataclasses.asdict(PLAN))]


def test_hash_is_the_sha256_of_the_canonical_json_and_stable():
    canonical = json.dumps(dataclasses.asdict(PLAN), sort_keys=True, separators=(",", ":"))
    assert plan_json(PLAN) == canonical
    expected = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    assert plan_sha256(PLAN) == plan_sha256(PLAN) == expected


def test_hash_is_the_same_in_a_fresh_process():
    code = "from curvlab.analysis.plan import PLAN, plan_sha256; print(plan_sha256(PLAN))"
    env = {**os.environ, "PYTHONPATH": str(SOURCE), "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == plan_sha256(PLAN)


def test_plan_round_trips_through_its_json():
    again = plan_from_dict(json.loads(plan_json(PLAN)))
    assert again == PLAN and plan_sha256(again) == plan_sha256(PLAN)


def _replace(tree, path, value):
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(tree, dict):
        return {**tree, head: _replace(tree[head], rest, value)}
    items = list(tree)
    items[head] = _replace(items[head], rest, value)
    return items


def _other(data, path, value, strata):
    """A different value for the leaf at ``path`` that keeps the plan valid where it can."""
    key = path[-1] if isinstance(path[-1], str) else path[-2]
    if key == "stratum":
        return data.draw(st.sampled_from([s for s in strata if s != value]))
    if isinstance(value, str) and value in TASKS:
        return data.draw(st.sampled_from([t for t in TASKS if t != value]))
    if isinstance(value, str) and value in VARIANTS:
        return data.draw(st.sampled_from([v for v in VARIANTS if v != value]))
    if key == "estimator":
        return data.draw(st.sampled_from([e for e in ESTIMATORS if e != value]))
    if key == "direction":
        return {"greater": "less", "less": "greater"}.get(value, value)
    if key == "holm_family" and value is None:
        return data.draw(st.sampled_from(["primary", "secondary"]))
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value + data.draw(st.integers(1000, 10**6))
    if isinstance(value, float):
        return value * data.draw(st.floats(1.01, 1.9))
    return value + data.draw(st.text(min_size=1, max_size=5))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(st.data())
def test_hash_changes_when_any_field_changes(data):
    tree = dataclasses.asdict(PLAN)
    path = data.draw(st.sampled_from(LEAVES))
    value = dict(_leaves(tree))[path]
    new = _other(data, path, value, [s["name"] for s in tree["strata"]])
    assume(new != value)
    try:
        changed = plan_from_dict(_replace(tree, path, new))
    except ValueError:
        assume(False)  # the change makes no valid plan (e.g. an estimator without its margin)
    assert plan_sha256(changed) != plan_sha256(PLAN)


def test_plan_is_immutable():
    with pytest.raises(dataclasses.FrozenInstanceError):
        PLAN.alpha = 0.1
    with pytest.raises(dataclasses.FrozenInstanceError):
        PLAN.claims[0].margin = 0.5
    with pytest.raises(dataclasses.FrozenInstanceError):
        PLAN.curvature.grid = 10
    assert isinstance(PLAN.claims, tuple) and isinstance(PLAN.strata[0].tasks, tuple)
    with pytest.raises(TypeError):
        PLAN.exploratory_seeds[0] = 5


def test_strata_seeds_and_family_follow_the_task_lists_and_the_issue():
    easy, hard = PLAN.stratum("easy_nonlinear").tasks, PLAN.stratum("hard").tasks
    assert set(easy) | set(hard) == set(NONLINEAR_TASKS) and not set(easy) & set(hard)
    assert hard == HARD_TASKS and PLAN.stratum("linear").tasks == LINEAR_TASKS
    assert PLAN.exploratory_seeds == tuple(range(20))
    confirmatory = PLAN.confirmatory_seeds
    assert confirmatory[0] >= 200 and len(confirmatory) == PLAN.confirmatory_count >= 40
    assert not set(confirmatory) & set(PLAN.exploratory_seeds)
    family = PLAN.family()
    assert "E3" in family and "E3-delta" not in family and "E1-proxy" not in family
    for claim in PLAN.claims:
        assert (claim.margin is not None) == (claim.direction == "equivalent")


def test_invalid_plans_are_refused_with_the_field_named():
    spec = PLAN.claims[0]
    with pytest.raises(ValueError, match="margin"):
        dataclasses.replace(spec, direction="equivalent")
    with pytest.raises(ValueError, match="estimator"):
        dataclasses.replace(spec, estimator="t_test")
    with pytest.raises(ValueError, match="model"):
        dataclasses.replace(spec, estimator="within_cell_r")
    with pytest.raises(ValueError, match="stratum"):
        dataclasses.replace(PLAN, claims=(dataclasses.replace(spec, stratum="medium"),))
    with pytest.raises(ValueError, match="confirmatory_first_seed"):
        dataclasses.replace(PLAN, confirmatory_first_seed=10)
    with pytest.raises(ValueError, match="alpha"):
        dataclasses.replace(PLAN, alpha=1.5)
    with pytest.raises(ValueError, match="claims"):
        dataclasses.replace(PLAN, claims=(spec, spec))
    with pytest.raises(ValueError, match="data"):
        plan_from_dict({"alpha": 0.05})
    assert isinstance(spec, ClaimSpec)


def test_version_1_keeps_the_hash_its_study_wrote_and_version_2_has_its_own():
    from curvlab.analysis.plan import PLAN_V2, PLANS

    # version 1 is frozen: its confirmatory study wrote this hash into its claims.json
    assert plan_sha256(PLAN).startswith("2c4d629331ba708d")
    assert plan_sha256(PLAN_V2) != plan_sha256(PLAN)
    assert PLANS == {1: PLAN, 2: PLAN_V2}
    assert plan_from_dict(json.loads(plan_json(PLAN_V2))) == PLAN_V2
    assert plan_from_dict(json.loads(plan_json(PLAN))) == PLAN


def test_version_2_asks_version_1s_questions_on_the_adaptive_integral_with_fresh_seeds():
    from curvlab.analysis.plan import PLAN_V2

    old = {c.claim: c for c in PLAN.claims}
    new = {c.claim: c for c in PLAN_V2.claims}
    assert set(new) == set(old) | {"E1-capped", "E1-capped-hard"}
    for name, claim in old.items():
        moved = claim.measure == "log_curvature_total_abs"
        expected = dataclasses.replace(claim, measure="log_curvature_adaptive") if moved else claim
        assert new[name] == expected
    assert all(new[n].holm_family is None for n in ("E1-capped", "E1-capped-hard"))
    used = set(PLAN.confirmatory_seeds) | set(range(1040, 1080)) | set(PLAN.exploratory_seeds)
    assert not set(PLAN_V2.confirmatory_seeds) & used
    assert set(PLAN_V2.curvature.models) <= {c.model for c in PLAN_V2.claims} | {
        c.baseline for c in PLAN_V2.claims
    }


def test_the_adaptive_estimator_refuses_bad_settings():
    from curvlab.analysis.plan import PLAN_V2, AdaptiveCurvatureEstimator

    good = dataclasses.asdict(PLAN_V2.curvature)
    for field, bad in (
        ("base", 0),
        ("check_base", good["base"]),
        ("tolerance", -0.1),
        ("models", ()),
        ("models", ("nonsense",)),
        ("radius", math.inf),
    ):
        with pytest.raises(ValueError, match=field):
            AdaptiveCurvatureEstimator(**{**good, field: bad})
