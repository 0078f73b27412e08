"""Laws of the synthetic tasks and the tokeniser: seeded, labelled by their recipes, affine."""

import math

import pytest
import torch
from torch.func import jacfwd

from curvlab.data.tasks import (
    LINEAR_TASKS,
    NONLINEAR_TASKS,
    TASKS,
    PointTokenizer,
    SequenceTokenizer,
    make_points,
    make_task,
)


@pytest.mark.parametrize("task", TASKS)
def test_same_seed_gives_identical_points(task):
    first, second = make_task(task, seed=7), make_task(task, seed=7)
    assert torch.equal(first.train_points, second.train_points)
    assert torch.equal(first.test_labels, second.test_labels)
    other = make_task(task, seed=8)
    assert not torch.equal(first.train_points, other.train_points)


@pytest.mark.parametrize("task", TASKS)
def test_tasks_are_binary_and_roughly_balanced(task):
    points, labels = make_points(task, 2000, seed=0)
    assert points.shape == (2000, 2) and points.dtype == torch.float64
    assert set(labels.tolist()) == {0, 1}
    assert 0.35 < labels.double().mean() < 0.65
    assert torch.isfinite(points).all()


def test_noise_free_labels_follow_the_recipes():
    x, y = make_points("circles", 500, seed=1, noise=0.0)
    assert torch.equal(y, (x.norm(dim=1) < math.sqrt(2 / math.pi)).long())
    x, y = make_points("xor", 500, seed=1, noise=0.0)
    assert torch.equal(y, (x[:, 0] * x[:, 1] > 0).long())
    x, y = make_points("half_plane", 500, seed=1, noise=0.0)
    w = torch.tensor([math.cos(math.pi / 6), math.sin(math.pi / 6)], dtype=torch.float64)
    assert torch.equal(y, (x @ w + 0.1 > 0).long())


def test_linear_and_nonlinear_tasks_partition_the_task_list():
    assert set(LINEAR_TASKS) | set(NONLINEAR_TASKS) == set(TASKS)
    assert not set(LINEAR_TASKS) & set(NONLINEAR_TASKS)
    assert make_task("blobs").is_linear and not make_task("moons").is_linear


def test_split_sizes_and_disjoint_order():
    task = make_task("spirals", n_train=10, n_test=5, seed=2)
    points, _ = make_points("spirals", 15, seed=2)
    assert torch.equal(torch.cat([task.train_points, task.test_points]), points)


def test_tokenizer_is_affine_in_the_point():
    tokenizer = PointTokenizer(n_tokens=3, d_model=6, seed=4).double()

    def tokens(x):
        return tokenizer(x.unsqueeze(0)).reshape(-1)

    second = jacfwd(jacfwd(tokens))(torch.tensor([0.3, -0.7], dtype=torch.float64))
    assert torch.equal(second, torch.zeros_like(second))
    first = tokenizer(torch.randn(5, 2, dtype=torch.float64))
    assert torch.equal(first[:, 0], tokenizer.cls.double().expand(5, 6))


def test_tokenizer_leaves_write_coordinates_zero():
    tokens = PointTokenizer(n_tokens=3, d_model=6, write_dim=2, seed=0)(torch.randn(4, 2))
    assert torch.equal(tokens[..., 4:], torch.zeros(4, 4, 2))
    assert tokens[..., :4].abs().sum() > 0


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"task": "nope", "n_points": 3}, "task"),
        ({"task": "xor", "n_points": 0}, "n_points"),
        ({"task": "xor", "n_points": 3, "noise": -1.0}, "noise"),
        ({"task": "xor", "n_points": 3, "seed": 1.5}, "seed"),
    ],
)
def test_bad_arguments_name_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=name):
        make_points(**kwargs)


def test_bad_tokenizer_arguments_name_the_argument():
    with pytest.raises(ValueError, match="write_dim"):
        PointTokenizer(d_model=4, write_dim=3)
    with pytest.raises(ValueError, match="n_tokens"):
        PointTokenizer(n_tokens=0)
    with pytest.raises(ValueError, match="n_train"):
        make_task("xor", n_train=0)


def test_sequence_tokenizer_embeds_each_token_by_its_own_affine_map():
    tokenizer = SequenceTokenizer(n_tokens=3, token_width=4, d_model=6, seed=2).double()

    def tokens(x):
        return tokenizer(x.reshape(1, 3, 4)).reshape(4, 6)  # (T + 1, d)

    x = torch.randn(12, dtype=torch.float64)
    second = jacfwd(jacfwd(tokens))(x)
    assert torch.equal(second, torch.zeros_like(second))  # affine in the sequence
    first = jacfwd(tokens)(x).reshape(4, 6, 3, 4)  # d token / d x_s
    assert torch.equal(first[0], torch.zeros(6, 3, 4, dtype=torch.float64))  # the constant token
    for t in range(3):
        assert torch.equal(first[t + 1, :, t], tokenizer.projections[t])  # token t+1 reads x_t ...
        others = [s for s in range(3) if s != t]
        assert torch.equal(first[t + 1][:, others], torch.zeros(6, 2, 4, dtype=torch.float64))


def test_sequence_tokenizer_leaves_write_coordinates_zero_and_checks_its_input():
    tokenizer = SequenceTokenizer(n_tokens=2, token_width=3, d_model=5, write_dim=2, seed=0)
    tokens = tokenizer(torch.randn(4, 2, 3))
    assert torch.equal(tokens[..., 3:], torch.zeros(4, 3, 2))
    assert tokens[..., :3].abs().sum() > 0
    with pytest.raises(ValueError, match="sequences"):
        tokenizer(torch.randn(4, 3, 2))
    with pytest.raises(ValueError, match="token_width"):
        SequenceTokenizer(n_tokens=2, token_width=0)
    with pytest.raises(ValueError, match="write_dim"):
        SequenceTokenizer(n_tokens=2, token_width=3, d_model=4, write_dim=4)
