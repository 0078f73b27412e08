"""Laws of training: deterministic for a seed, it learns a separable task, bad input fails early."""

import pytest
import torch

from curvlab.data.tasks import make_task
from curvlab.models.attention import build_classifier
from curvlab.models.training import evaluate, fit, resolve_device


def _fit_once(seed, batch_size=None):
    task = make_task("circles", n_train=64, n_test=64, seed=seed)
    model = build_classifier("gated_headwise", d_model=4, n_heads=1, n_tokens=2, seed=seed)
    record = fit(
        model,
        task.train_points,
        task.train_labels,
        epochs=8,
        batch_size=batch_size,
        seed=seed,
        device="cpu",
    )
    return model, record, evaluate(model, task.test_points, task.test_labels, device="cpu")


@pytest.mark.parametrize("batch_size", [None, 16])
def test_same_seed_gives_identical_numbers(batch_size):
    model_a, record_a, test_a = _fit_once(3, batch_size)
    model_b, record_b, test_b = _fit_once(3, batch_size)
    assert record_a["train_loss"] == record_b["train_loss"]
    assert test_a == test_b
    for p, q in zip(model_a.parameters(), model_b.parameters(), strict=True):
        assert torch.equal(p, q)


def test_different_shuffling_seed_changes_the_trajectory():
    task = make_task("xor", n_train=64, n_test=8, seed=0)
    losses = []
    for seed in (0, 1):
        model = build_classifier("ungated", d_model=4, n_heads=1, n_tokens=2, seed=0)
        losses.append(
            fit(
                model,
                task.train_points,
                task.train_labels,
                epochs=5,
                batch_size=8,
                seed=seed,
                device="cpu",
            )["train_loss"]
        )
    assert losses[0] != losses[1]


def test_training_lowers_the_loss_and_fits_a_linear_task():
    task = make_task("half_plane", n_train=128, n_test=256, seed=0, noise=0.0)
    model = build_classifier("ungated", d_model=4, n_heads=1, n_tokens=2, seed=0)
    before = evaluate(model, task.train_points, task.train_labels, device="cpu")
    record = fit(model, task.train_points, task.train_labels, epochs=60, device="cpu")
    after = evaluate(model, task.test_points, task.test_labels, device="cpu")
    assert record["train_loss"] < before["loss"]
    assert after["accuracy"] > 0.9
    assert record["steps"] == 60 and record["seconds"] > 0 and record["device"] == "cpu"


def test_records_are_plain_python_values():
    _, record, test = _fit_once(0)
    for value in (*record.values(), *test.values()):
        assert isinstance(value, int | float | str)


def test_deterministic_mode_is_restored_after_fitting():
    before = torch.are_deterministic_algorithms_enabled()
    _fit_once(0)
    assert torch.are_deterministic_algorithms_enabled() == before


def test_device_none_and_auto_mean_cuda_when_available():
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert resolve_device(None) == resolve_device("auto") == expected
    assert resolve_device("cpu") == resolve_device(torch.device("cpu")) == "cpu"


@pytest.mark.parametrize("device", ["tpu", "gpu", "meta", 3, 1.5, ["cpu"], torch.device("meta")])
def test_a_bad_device_is_a_value_error_naming_device(device):
    with pytest.raises(ValueError, match="^device: "):
        resolve_device(device)


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device is present")
def test_cuda_without_a_cuda_device_is_a_value_error_naming_device():
    for device in ("cuda", "cuda:0", torch.device("cuda")):
        with pytest.raises(ValueError, match="^device: .*no CUDA device"):
            resolve_device(device)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"epochs": 0}, "epochs"),
        ({"learning_rate": -0.1}, "learning_rate"),
        ({"learning_rate": float("nan")}, "learning_rate"),
        ({"batch_size": 0}, "batch_size"),
        ({"weight_decay": -1.0}, "weight_decay"),
        ({"seed": "one"}, "seed"),
        ({"device": "abacus"}, "device"),
    ],
)
def test_bad_configuration_fails_early_naming_the_field(kwargs, name):
    task = make_task("xor", n_train=8, n_test=8)
    with pytest.raises(ValueError, match=name):
        fit(build_classifier("ungated"), task.train_points, task.train_labels, **kwargs)


def test_bad_data_fails_naming_the_argument():
    model = build_classifier("ungated")
    with pytest.raises(ValueError, match="labels"):
        fit(model, torch.zeros(4, 2), torch.tensor([0, 1, 2, 1]))
    with pytest.raises(ValueError, match="labels"):
        fit(model, torch.zeros(4, 2), torch.zeros(3))
    with pytest.raises(ValueError, match="points"):
        evaluate(model, torch.zeros(4), torch.zeros(4))
