"""Laws of the real datasets as tokens: offline, shaped as documented, split by seed and class,
standardised on the training rows alone."""

import math
import socket

import numpy as np
import pytest
import sklearn.datasets
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from curvlab.data.realdata import DATASETS, TOKEN_SHAPES, load_tokens

LAWS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
seeds = st.integers(min_value=0, max_value=2**32 - 1)
names = st.sampled_from(DATASETS)
fractions = st.floats(min_value=0.1, max_value=0.5)

# name: (train tokens, test tokens) at the default test_fraction of 1/4
DOCUMENTED_SHAPES = {
    "digits": ((1347, 8, 8), (450, 8, 8)),
    "breast_cancer": ((426, 3, 10), (143, 3, 10)),
    "wine": ((133, 7, 2), (45, 7, 2)),
}


def _refuse(*args, **kwargs):
    raise OSError("network disabled in the real-data tests")


@pytest.fixture(autouse=True)
def offline(monkeypatch, tmp_path):
    """Every test here runs with sockets unable to connect and an empty scikit-learn data home."""
    monkeypatch.setattr(socket.socket, "connect", _refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", _refuse)
    home = tmp_path / "scikit_learn_data"
    monkeypatch.setenv("SCIKIT_LEARN_DATA", str(home))
    return home


@pytest.mark.parametrize("name", DATASETS)
def test_datasets_load_offline_in_the_documented_shapes(name, offline):
    with pytest.raises(OSError, match="network disabled"):
        socket.create_connection(("127.0.0.1", 9), timeout=1)  # the guard is in force
    task = load_tokens(name, seed=0)
    train_shape, test_shape = DOCUMENTED_SHAPES[name]
    assert tuple(task.train_tokens.shape) == train_shape
    assert tuple(task.test_tokens.shape) == test_shape
    assert TOKEN_SHAPES[name] == train_shape[1:] == (task.n_tokens, task.token_width)
    assert task.train_tokens.dtype == task.test_tokens.dtype == torch.float64
    for labels, tokens in (
        (task.train_labels, task.train_tokens),
        (task.test_labels, task.test_tokens),
    ):
        assert labels.dtype == torch.int64 and labels.shape == tokens.shape[:1]
        assert set(labels.tolist()) == {0, 1}
        assert torch.isfinite(tokens).all()
    assert task.train_index.dtype == torch.int64
    assert tuple(len(group) for group in task.feature_names) == (task.token_width,) * task.n_tokens
    assert not offline.exists()  # nothing written to (or read from) a data home


def test_digit_tokens_are_pixel_rows_over_16_labelled_odd():
    images, digits = sklearn.datasets.load_digits(return_X_y=True)
    task = load_tokens("digits", seed=3)
    rows = task.train_index.numpy()
    expected = torch.from_numpy(images[rows].reshape(-1, 8, 8) / 16.0)
    assert torch.equal(task.train_tokens, expected)
    assert torch.equal(task.train_labels, torch.from_numpy(digits[rows] % 2))
    assert task.train_tokens.min() == 0 and task.train_tokens.max() == 1
    assert task.feature_names[2] == tuple(f"pixel_2_{j}" for j in range(8))


def test_breast_cancer_tokens_are_the_mean_error_and_worst_groups():
    features, target = sklearn.datasets.load_breast_cancer(return_X_y=True)
    task = load_tokens("breast_cancer", seed=1)
    means, errors, worst = task.feature_names
    assert all(n.startswith("mean ") for n in means)
    assert [n.removeprefix("mean ") + " error" for n in means] == list(errors)
    assert ["worst " + n.removeprefix("mean ") for n in means] == list(worst)
    assert torch.equal(task.test_labels, torch.from_numpy(target[task.test_index.numpy()]))
    train = features[task.train_index.numpy()]
    standardised = (train - train.mean(axis=0)) / train.std(axis=0)
    assert torch.allclose(task.train_tokens.reshape(-1, 30), torch.from_numpy(standardised))


def test_wine_tokens_pad_one_zero_and_label_cultivar_1():
    _, target = sklearn.datasets.load_wine(return_X_y=True)
    task = load_tokens("wine", seed=2)
    assert task.feature_names[0] == ("alcohol", "malic_acid")
    assert task.feature_names[-1] == ("proline", "(padding)")
    for tokens in (task.train_tokens, task.test_tokens):
        assert torch.equal(tokens[:, -1, -1], torch.zeros(tokens.shape[0], dtype=torch.float64))
        assert (tokens.reshape(tokens.shape[0], -1)[:, :13].std(dim=0) > 0).all()
    assert torch.equal(
        task.train_labels, torch.from_numpy(target[task.train_index.numpy()] == 1).long()
    )


@LAWS
@given(name=names, seed=seeds, test_fraction=fractions)
def test_split_is_disjoint_complete_and_stratified(name, seed, test_fraction):
    task = load_tokens(name, seed=seed, test_fraction=test_fraction)
    train, test = set(task.train_index.tolist()), set(task.test_index.tolist())
    n = len(train) + len(test)
    assert not train & test
    assert train | test == set(range(n))
    assert len(test) == math.ceil(test_fraction * n)
    labels = torch.cat([task.train_labels, task.test_labels])
    for split in (task.train_labels, task.test_labels):
        for label in (0, 1):
            share = int((labels == label).sum()) * len(split) / n  # the class's share of the split
            assert abs(int((split == label).sum()) - share) <= 1


@LAWS
@given(name=names, seed=seeds)
def test_same_seed_gives_the_same_tokens(name, seed):
    first, second = load_tokens(name, seed=seed), load_tokens(name, seed=seed)
    for field in ("train_tokens", "train_labels", "test_tokens", "test_labels", "test_index"):
        assert torch.equal(getattr(first, field), getattr(second, field))


@LAWS
@given(name=names, seed=seeds, other=seeds)
def test_different_seeds_give_different_splits(name, seed, other):
    if seed == other:
        other = (seed + 1) % 2**32
    first, second = load_tokens(name, seed=seed), load_tokens(name, seed=other)
    assert not torch.equal(first.test_index, second.test_index)


@pytest.mark.parametrize(
    ("name", "loader", "p"),
    [("breast_cancer", "load_breast_cancer", 30), ("wine", "load_wine", 13)],
)
def test_standardisation_uses_the_training_rows_only(name, loader, p, monkeypatch):
    task = load_tokens(name, seed=5)
    train = task.train_tokens.reshape(task.train_tokens.shape[0], -1)[:, :p]  # padding dropped
    assert torch.allclose(train.mean(dim=0), torch.zeros(p, dtype=torch.float64), atol=1e-12)
    assert torch.allclose(train.std(dim=0, unbiased=False), torch.ones(p, dtype=torch.float64))

    original = getattr(sklearn.datasets, loader)

    def test_rows_changed(**kwargs):
        bunch = original(**kwargs)
        data = bunch.data.copy()
        data[task.test_index.numpy()] = 1e6 * np.random.default_rng(0).random(
            (len(task.test_index), p)
        )
        bunch.data = data
        return bunch

    monkeypatch.setattr(sklearn.datasets, loader, test_rows_changed)
    changed = load_tokens(name, seed=5)
    assert torch.equal(changed.test_index, task.test_index)
    assert torch.equal(changed.train_tokens, task.train_tokens)
    assert not torch.equal(changed.test_tokens, task.test_tokens)


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"name": "iris"}, "name"),
        ({"name": None}, "name"),
        ({"name": "digits", "seed": -1}, "seed"),
        ({"name": "digits", "seed": 2**32}, "seed"),
        ({"name": "digits", "seed": 1.5}, "seed"),
        ({"name": "digits", "seed": True}, "seed"),
        ({"name": "wine", "test_fraction": 0.0}, "test_fraction"),
        ({"name": "wine", "test_fraction": 1.0}, "test_fraction"),
        ({"name": "wine", "test_fraction": float("nan")}, "test_fraction"),
        ({"name": "wine", "test_fraction": "0.2"}, "test_fraction"),
        ({"name": "wine", "test_fraction": 0.005}, "test_fraction"),  # one test row
        ({"name": "wine", "test_fraction": 0.995}, "test_fraction"),  # no training rows
    ],
)
def test_bad_arguments_name_the_argument(kwargs, argument):
    with pytest.raises(ValueError, match=argument):
        load_tokens(**kwargs)
