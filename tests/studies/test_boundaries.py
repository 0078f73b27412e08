"""One run of the study trained again (curvlab.studies.boundaries)."""

import pytest
import torch

from curvlab.data.tasks import make_task
from curvlab.models.attention import build_classifier
from curvlab.models.ensemble import stack, train_ensemble
from curvlab.studies.boundaries import SHAPE_KEYS, kept_epochs, retrain
from curvlab.studies.reproduce import reproduce_config

CONFIG = reproduce_config("small")
TASK = make_task("xor", n_train=32, n_test=8, seed=1)
RUNS = [
    {"task": "xor", "model": "gated_elementwise", "seed": 1, "depth": 1, "epochs": 6},
    {"task": "xor", "model": "ungated", "seed": 1, "depth": 1, "epochs": 3},
    {"task": "moons", "model": "gated_elementwise", "seed": 1, "depth": 1, "epochs": 9},
]


def _weights(model):
    return {k: v.clone() for k, v in model.state_dict().items()}


def test_kept_epochs_reads_the_runs_own_record():
    assert kept_epochs(RUNS, "xor", "gated_elementwise", 1) == 6
    assert kept_epochs(RUNS, "xor", "ungated", 1) == 3
    with pytest.raises(ValueError, match="no run"):
        kept_epochs(RUNS, "xor", "ablation", 1)
    with pytest.raises(ValueError, match="no run"):
        kept_epochs(RUNS, "xor", "ungated", 1, depth=2)


def test_retrain_trains_for_the_epochs_of_the_run_record_with_the_protocols_settings(tmp_path):
    model = retrain(CONFIG, RUNS, TASK, "gated_elementwise", seed=1, directory=tmp_path)
    assert not model.training
    shape = {k: CONFIG[k] for k in SHAPE_KEYS}
    settings = {k: CONFIG[k] for k in ("learning_rate", "weight_decay", "schedule")}
    x, y = TASK.train_points[None].float(), TASK.train_labels[None].float()
    by_epochs = {}
    for epochs in (5, 6, 7):
        ens = stack([build_classifier("gated_elementwise", seed=1, **shape)])
        train_ensemble(ens, x, y, epochs=epochs, **settings)
        by_epochs[epochs] = _weights(ens.member(0))
    got = _weights(model)
    assert all(torch.equal(got[k], by_epochs[6][k]) for k in got)  # the record's 6 epochs
    assert not all(torch.equal(got[k], by_epochs[5][k]) for k in got)
    assert not all(torch.equal(got[k], by_epochs[7][k]) for k in got)


def test_retrain_is_deterministic(tmp_path):
    first = _weights(retrain(CONFIG, RUNS, TASK, "ungated", seed=1, directory=tmp_path / "a"))
    second = _weights(retrain(CONFIG, RUNS, TASK, "ungated", seed=1, directory=tmp_path / "b"))
    assert first.keys() == second.keys()
    assert all(torch.equal(first[k], second[k]) for k in first)


def test_retrained_weights_are_read_back_from_the_cache_bit_for_bit(tmp_path, monkeypatch):
    from curvlab.studies import boundaries

    trained = _weights(retrain(CONFIG, RUNS, TASK, "ungated", seed=1, directory=tmp_path))
    assert len(list(tmp_path.glob("retrain-*.json"))) == 1

    def no_training(run, task):
        raise AssertionError("trained although the weights are cached")

    monkeypatch.setattr(boundaries, "_train", no_training)
    again = _weights(retrain(CONFIG, RUNS, TASK, "ungated", seed=1, directory=tmp_path))
    assert all(torch.equal(trained[k], again[k]) and again[k].dtype == torch.float32 for k in again)
    other_data = make_task("xor", n_train=32, n_test=8, seed=2)  # same name, other points
    with pytest.raises(AssertionError, match="trained although"):
        retrain(CONFIG, RUNS, other_data, "ungated", seed=1, directory=tmp_path)
    with pytest.raises(AssertionError, match="trained although"):
        retrain(CONFIG, RUNS, TASK, "ungated", seed=1, directory=tmp_path, refresh=True)
