"""The convergence criterion, the pilot's epoch rule and the sweep."""

import copy
import math

import pytest
import torch

from curvlab.data.tasks import make_task
from curvlab.models.attention import build_classifier
from curvlab.models.convergence import budgets, converged, window_start
from curvlab.models.ensemble import stack, train_ensemble
from curvlab.studies.cells import train_and_judge, train_until_converged
from curvlab.studies.pilot import PILOT, PILOT_PLAN, choose_epochs
from curvlab.studies.study import Options, run_study
from curvlab.studies.sweep import (
    SWEEP,
    SWEEP_FACTORS,
    reverses,
    stable_factors,
    sweep_points,
)


def test_criterion_needs_stable_accuracy_and_stable_measures():
    stable = {"curvature_total_abs": 2.0, "rho": 1.0, "rho_normal": 0.5}
    assert converged([0.9, 0.905, 0.9], stable, dict(stable))[0]
    assert not converged([0.9, 0.95], stable, dict(stable))[0]
    moved = {**stable, "rho_normal": 0.5 * math.exp(0.2)}
    ok, spread, change = converged([1.0, 1.0], stable, moved)
    assert not ok and spread == 0 and math.isclose(change, 0.2)
    assert not converged([1.0], {**stable, "curvature_total_abs": None}, stable)[0]
    assert converged([1.0], {"rho": None}, {"rho": None})[0]
    with pytest.raises(ValueError, match="accuracy_window"):
        converged([], stable, stable)
    assert window_start(100) == 80
    with pytest.raises(ValueError, match="epochs"):
        window_start(1)


def _rows(gains, shares, gated_accuracy=0.5):
    rows = []
    accuracy = 0.8
    for i, budget in enumerate((100, 200, 400, 800)):
        for k in range(20):
            rows.append(
                {
                    "budget": budget,
                    "model": "ungated",
                    "converged": k < round(20 * shares[i]),
                    "test_accuracy": accuracy,
                }
            )
            rows.append(
                {
                    "budget": budget,
                    "model": "gated_elementwise",
                    "converged": k < round(20 * shares[i]),
                    "test_accuracy": gated_accuracy * (1 + i),
                }
            )
        accuracy += gains[i] if i < len(gains) else 0.0
    return rows


def test_pilot_rule_takes_the_smallest_converged_budget_whose_baseline_stopped_improving():
    rows = _rows(gains=[0.05, 0.002, 0.001], shares=[1.0, 1.0, 1.0, 1.0])
    assert choose_epochs(rows)["chosen"] == 200
    rows = _rows(gains=[0.05, 0.002, 0.001], shares=[1.0, 0.9, 1.0, 1.0])
    assert choose_epochs(rows)["chosen"] == 400  # 200 misses the 95% share
    rows = _rows(gains=[0.05, 0.05, 0.05], shares=[1.0, 1.0, 1.0, 1.0])
    result = choose_epochs(rows)  # still improving: no budget qualifies, no fallback either
    assert result["chosen"] is None and result["epochs"] is None
    result = choose_epochs(_rows(gains=[0.05, 0.002, 0.001], shares=[0.5] * 4))
    assert result["chosen"] is None  # never 95% converged: the baseline alone sets the budget
    assert (result["epochs"], result["rule"]) == (200, "baseline only")
    summary = choose_epochs(_rows([0.05, 0.002, 0.001], [1.0] * 4))["summary"]
    assert summary[-1]["baseline_gain"] is None and not summary[-1]["qualifies"]


def test_pilot_rule_never_reads_the_gated_models_accuracy():
    a = choose_epochs(_rows([0.05, 0.002, 0.001], [1.0] * 4, gated_accuracy=0.1))
    b = choose_epochs(_rows([0.05, 0.002, 0.001], [1.0] * 4, gated_accuracy=0.2))
    assert a == b
    with pytest.raises(ValueError, match="baseline"):
        choose_epochs([r for r in _rows([0.0] * 3, [1.0] * 4) if r["model"] != "ungated"])


def test_snapshots_and_the_cosine_schedule():
    tasks = [make_task("moons", n_train=32, n_test=4, seed=s) for s in range(2)]
    points = torch.stack([t.train_points for t in tasks]).double()
    labels = torch.stack([t.train_labels for t in tasks]).double()
    models = [build_classifier("gated_elementwise", d_model=4, seed=s).double() for s in range(2)]
    long = stack(copy.deepcopy(models))
    fitted = train_ensemble(long, points, labels, epochs=12, learning_rate=0.05, snapshots=[5, 12])
    short = stack(copy.deepcopy(models))
    train_ensemble(short, points, labels, epochs=5, learning_rate=0.05)
    for name, value in short.params.items():  # constant schedule: a prefix is a shorter run
        assert torch.allclose(fitted["snapshots"][5][name], value, atol=1e-12)
        assert torch.equal(fitted["snapshots"][12][name], long.params[name])
    assert fitted["accuracy_curve"].shape == (2, 12)
    cosine = stack(copy.deepcopy(models))
    annealed = train_ensemble(
        cosine, points, labels, epochs=12, learning_rate=0.05, schedule="cosine"
    )
    assert not torch.allclose(annealed["train_loss"], fitted["train_loss"])
    with pytest.raises(ValueError, match="schedule"):
        train_ensemble(cosine, points, labels, epochs=4, learning_rate=0.05, schedule="step")
    with pytest.raises(ValueError, match="snapshots"):
        train_ensemble(cosine, points, labels, epochs=4, learning_rate=0.05, snapshots=[9])


def test_sweep_points_vary_one_factor_at_a_time():
    config = {"d_model": 4, "depths": [1], "n_tokens": 2, "n_train": 128}
    points = sweep_points(config)
    assert points[0]["factor"] == "default"
    assert len(points) == 1 + sum(len(v) - 1 for v in SWEEP_FACTORS.values())
    for point in points[1:]:
        changed = [k for k in SWEEP_FACTORS if point[k] != points[0][k]]
        assert changed == [point["factor"]]


@pytest.mark.slow
def test_tiny_pilot_and_sweep(tmp_path, monkeypatch):
    plan = {**PILOT_PLAN, "budgets": [4, 8], "seeds": [100, 101, 102]}
    options = Options(device="cpu", directory=tmp_path, progress=False)
    rows = run_study(
        PILOT,
        "small",
        options,
        plan=plan,
        tasks=["xor", "blobs"],
        models=["ungated", "gated_elementwise"],
    ).runs
    assert len(rows) == 2 * 2 * 3 * 2
    assert {r["budget"] for r in rows} == {4, 8}
    assert choose_epochs(rows, plan)["summary"][0]["runs"] == 12
    monkeypatch.setattr("curvlab.studies.sweep.SWEEP_FACTORS", {"d_model": [4, 8]})
    result = run_study(
        SWEEP,
        "small",
        options,
        seeds=[0, 1, 2],
        epochs=6,
        tasks=["xor", "blobs"],
    )
    out = result.runs
    assert [r["factor"] for r in out] == ["default", "d_model"]
    for row in out:
        assert 0 <= row["converged_share"] <= 1 and row["n_seeds"] == 3
        assert row["e2_ci_low"] <= row["e2_effect"] <= row["e2_ci_high"]
    assert set(result.meta["stable_factors"]) <= {"d_model"}
    result.write(tmp_path / "sweep")
    assert (tmp_path / "sweep" / "sweep.csv").exists()


def test_budget_ladder_doubles_and_refuses_bad_settings():
    assert budgets(50, 2) == [50, 100, 200]
    assert budgets(50, 0) == [50]
    with pytest.raises(ValueError, match="retrain_doublings"):
        budgets(50, -1)
    with pytest.raises(ValueError, match="epochs"):
        budgets(1, 2)


def _ladder_config(**overrides):
    from curvlab.studies.reproduce import reproduce_config

    config = reproduce_config(
        "small", epochs=8, retrain_doublings=2, resolution=4, rho_points=8, **overrides
    )
    return {**config, "device": "cpu"}


@pytest.mark.slow
def test_each_run_keeps_the_first_budget_at_which_it_converged():
    config = _ladder_config()
    members = [(t, s) for t in ("xor", "blobs") for s in (0, 1, 2)]
    results, seconds = train_until_converged(config, "gated_elementwise", 1, members)
    assert seconds > 0 and len(results) == len(members)
    ladder = budgets(config["epochs"], config["retrain_doublings"])
    assert len({r["epochs"] for r in results}) > 1  # the case exercises retraining
    for member, result in zip(members, results, strict=True):
        assert result["epochs"] in ladder
        # trained alone, at each budget of the ladder up to its own: the same judgement
        for budget in ladder[: ladder.index(result["epochs"]) + 1]:
            alone = train_and_judge(config, "gated_elementwise", 1, [member], budget)
            ok = alone["judged"][0][0]
            if budget < result["epochs"]:
                assert not ok  # retrained only after missing the criterion
            else:
                assert ok == result["converged"]
                assert float(alone["tested"]["accuracy"][0]) == result["test_accuracy"]
                for key in ("rho", "rho_normal"):
                    assert math.isclose(
                        alone["measured"][0][key], result["measured"][key], rel_tol=1e-6
                    )
        if not result["converged"]:
            assert result["epochs"] == ladder[-1]  # unconverged only at the cap
    assert len(results[0]["curve"]) == len(results[0]["curve_epochs"])
    assert results[0]["curve_epochs"][-1] == results[0]["epochs"] - 1


def test_direction_rule_counts_only_reversals_and_the_sign_class_rule_any_change():
    default = {"factor": "default", "e1_effect": 0.2, "e1_ci_low": 0.05, "e1_ci_high": 0.35}
    default |= {"e2_effect": 0.03, "e2_ci_low": 0.01, "e2_ci_high": 0.05}
    weaker = {"factor": "depth", "e1_ci_low": -0.1, "e1_ci_high": 0.5}
    weaker |= {"e2_ci_low": -0.01, "e2_ci_high": 0.06}
    reversed_e2 = {"factor": "n_train", "e1_ci_low": 0.1, "e1_ci_high": 0.3}
    reversed_e2 |= {"e2_ci_low": -0.06, "e2_ci_high": -0.01}
    rows = [default, weaker, reversed_e2]
    assert stable_factors(rows) == {"depth": True, "n_train": False}
    assert stable_factors(rows, rule="sign class") == {"depth": False, "n_train": False}
    assert reverses(reversed_e2, default, "e2") and not reverses(weaker, default, "e2")
    with pytest.raises(ValueError, match="rule"):
        stable_factors(rows, rule="vibes")
    with pytest.raises(ValueError, match="rows"):
        stable_factors(rows[1:])
