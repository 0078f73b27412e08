"""Seeded synthetic 2-D binary tasks, and how a point becomes a sequence of tokens.

Every task is generated in code from a seed (nothing is downloaded): points x ∈ ℝ², mostly in
the square [-1, 1]², labels y ∈ {0, 1}.  Two kinds:

- linear controls (the Bayes decision boundary is a straight line):
  ``half_plane`` (x uniform in the square, y = [wᵀx + b > 0]) and ``blobs`` (two isotropic
  Gaussians, equal covariance, so the optimal boundary is the bisecting line);
- nonlinear tasks: ``circles`` (y = [|x| < r]), ``xor`` (y = [x₁x₂ > 0]), ``moons`` (two
  interleaved half-circles) and ``spirals`` (two interleaved Archimedean spirals, 1.5 turns);
- hard, capacity-limiting tasks (:data:`HARD_TASKS`, also nonlinear): ``spirals3`` (the
  spirals wound three full turns, arms 1/6 of the radius apart) and ``checkerboard`` (a 4×4
  board on the square, y = [(⌊2(x₁+1)⌋ + ⌊2(x₂+1)⌋) odd]).

After labelling, Gaussian jitter of standard deviation ``noise`` is added to the coordinates
(labels are kept), so the classes overlap near the boundary.  :func:`make_task` draws
``n_train + n_test`` points from one generator and splits them: same seed, same tensors.

Tokenisation (:class:`PointTokenizer`).  Attention needs a sequence, so a point x becomes
T + 1 tokens in ℝ^d by fixed (seeded, not trained) affine maps::

    token_0 = c                     a constant CLS-like token
    token_t = A_t x + b_t           t = 1..T,  A_t ∈ ℝ^{d×2}, b_t ∈ ℝ^d (random, then fixed)

The map x ↦ tokens is affine on purpose: any curvature of a representation then comes from
the attention layers, not from the tokeniser (Fourier features would curve the input sheet
before attention sees it).  With ``write_dim = m > 0`` only the first d − m coordinates of each
token are filled and the last m are zero: the read/write split of the structured regime
(:mod:`curvlab.models.attention`).

Data that already come as a sequence (:mod:`curvlab.data.realdata`: T tokens of w features)
are embedded the same way, token by token (:class:`SequenceTokenizer`): token_0 = c and
token_t = A_t x_t + b_t with A_t ∈ ℝ^{d×w}, fixed and seeded, affine in the input again.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from curvlab import arguments

__all__ = [
    "HARD_TASKS",
    "LINEAR_TASKS",
    "NONLINEAR_TASKS",
    "TASKS",
    "PointTokenizer",
    "SequenceTokenizer",
    "Task",
    "make_points",
    "make_task",
]

LINEAR_TASKS: tuple[str, ...] = ("half_plane", "blobs")
"""Tasks whose optimal decision boundary is a straight line (the controls)."""

HARD_TASKS: tuple[str, ...] = ("spirals3", "checkerboard")
"""Capacity-limiting nonlinear tasks: a small model cannot fit them, a larger one can."""

NONLINEAR_TASKS: tuple[str, ...] = ("circles", "xor", "moons", "spirals", *HARD_TASKS)
"""Tasks whose optimal decision boundary is curved or not connected (the hard ones last)."""

TASKS: tuple[str, ...] = LINEAR_TASKS + NONLINEAR_TASKS
"""All task names, linear controls first."""

_HALF_PLANE_NORMAL = (math.cos(math.pi / 6), math.sin(math.pi / 6))
_HALF_PLANE_OFFSET = 0.1
_CIRCLE_RADIUS = math.sqrt(4 / (2 * math.pi))  # half the area of the square [-1, 1]²
_BLOB_CENTRE = 0.45
_BLOB_SPREAD = 0.3


def _uniform_square(n: int, generator: torch.Generator) -> torch.Tensor:
    return 2 * torch.rand(n, 2, generator=generator, dtype=torch.float64) - 1  # (n, 2)


def _balanced_labels(n: int, generator: torch.Generator) -> torch.Tensor:
    return (torch.arange(n) % 2)[torch.randperm(n, generator=generator)]  # (n,) half of each


def _half_plane(n, generator):
    x = _uniform_square(n, generator)
    w = torch.tensor(_HALF_PLANE_NORMAL, dtype=torch.float64)
    return x, (x @ w + _HALF_PLANE_OFFSET > 0).long()


def _blobs(n, generator):
    y = _balanced_labels(n, generator)
    centre = torch.tensor([_BLOB_CENTRE, _BLOB_CENTRE], dtype=torch.float64)
    sign = (2 * y - 1).to(torch.float64)[:, None]  # (n, 1)
    spread = _BLOB_SPREAD * torch.randn(n, 2, generator=generator, dtype=torch.float64)
    return sign * centre + spread, y


def _circles(n, generator):
    x = _uniform_square(n, generator)
    return x, (x.norm(dim=1) < _CIRCLE_RADIUS).long()


def _xor(n, generator):
    x = _uniform_square(n, generator)
    return x, (x[:, 0] * x[:, 1] > 0).long()


def _moons(n, generator):
    y = _balanced_labels(n, generator)
    angle = math.pi * torch.rand(n, generator=generator, dtype=torch.float64)
    upper = torch.stack([torch.cos(angle), torch.sin(angle)], dim=1)  # (n, 2)
    lower = torch.stack([1 - torch.cos(angle), 0.5 - torch.sin(angle)], dim=1)
    x = torch.where(y[:, None] == 0, upper, lower)
    return (x - torch.tensor([0.5, 0.25], dtype=torch.float64)) / 1.25, y


def _spiral_arms(n, generator, turns: float):
    y = _balanced_labels(n, generator)
    t = torch.sqrt(torch.rand(n, generator=generator, dtype=torch.float64))  # denser outside
    angle = 2 * math.pi * turns * t + math.pi * y.to(torch.float64)
    radius = 0.95 * t
    return torch.stack([radius * torch.cos(angle), radius * torch.sin(angle)], dim=1), y


def _spirals(n, generator):
    return _spiral_arms(n, generator, turns=1.5)


def _spirals3(n, generator):
    return _spiral_arms(n, generator, turns=3.0)


def _checkerboard(n, generator):
    x = _uniform_square(n, generator)
    cells = torch.floor(2 * (x + 1)).clamp(max=3).long()  # (n, 2) cell indices 0..3
    return x, ((cells[:, 0] + cells[:, 1]) % 2).long()


_GENERATORS = {
    "half_plane": _half_plane,
    "blobs": _blobs,
    "circles": _circles,
    "xor": _xor,
    "moons": _moons,
    "spirals": _spirals,
    "spirals3": _spirals3,
    "checkerboard": _checkerboard,
}


def make_points(task: str, n_points: int, *, seed: int = 0, noise: float = 0.05):
    """Points (n, 2) float64 and labels (n,) int64 in {0, 1} of one task, from ``seed``.

    The recipes are in the module docstring; ``noise`` is the standard deviation of the
    Gaussian jitter added to the coordinates after labelling.

    >>> x, y = make_points("xor", 6, seed=1, noise=0.0)
    >>> tuple(x.shape), tuple(y.shape), bool(((x[:, 0] * x[:, 1] > 0).long() == y).all())
    ((6, 2), (6,), True)
    """
    arguments.one_of("task", task, TASKS)
    arguments.integer("n_points", n_points, 1)
    noise = arguments.number("noise", noise, low=0)
    arguments.integer("seed", seed)
    generator = torch.Generator().manual_seed(seed)
    points, labels = _GENERATORS[task](n_points, generator)
    jitter = noise * torch.randn(n_points, 2, generator=generator, dtype=torch.float64)
    return points + jitter, labels


@dataclass(frozen=True)
class Task:
    """One task's train/test split: points (n, 2) float64, labels (n,) int64."""

    name: str
    train_points: torch.Tensor
    train_labels: torch.Tensor
    test_points: torch.Tensor
    test_labels: torch.Tensor

    @property
    def is_linear(self) -> bool:
        """True for the linear controls (a straight optimal boundary)."""
        return self.name in LINEAR_TASKS


def make_task(
    task: str, *, n_train: int = 256, n_test: int = 512, seed: int = 0, noise: float = 0.05
) -> Task:
    """A seeded train/test split of ``task``: ``n_train + n_test`` points, split in that order.

    >>> t = make_task("circles", n_train=8, n_test=4, seed=3)
    >>> t.train_points.shape, t.test_labels.shape, t.is_linear
    (torch.Size([8, 2]), torch.Size([4]), False)
    """
    arguments.integer("n_train", n_train, 1)
    arguments.integer("n_test", n_test, 1)
    points, labels = make_points(task, n_train + n_test, seed=seed, noise=noise)
    return Task(
        name=task,
        train_points=points[:n_train],
        train_labels=labels[:n_train],
        test_points=points[n_train:],
        test_labels=labels[n_train:],
    )


def _check_write_dim(write_dim, d_model: int, read: int, reason: str) -> int:
    """``write_dim`` checked to leave at least ``read`` read coordinates of ``d_model``."""
    what = f"0 <= write_dim <= d_model - {read} = {d_model - read} (the read part must {reason})"
    return arguments.integer(
        "write_dim", write_dim, 0, d_model - read, expected=what, type_expected="an integer"
    )


class PointTokenizer(nn.Module):
    """x ∈ ℝ² -> T + 1 tokens in ℝ^d: a constant token c, then A_t x + b_t (fixed, seeded).

    ``forward`` maps points (B, 2) to tokens (B, T + 1, d), in the dtype of the points.
    The maps are buffers (not trained): A_t has N(0, 1) entries, b_t and c have N(0, 0.5²)
    entries, drawn from ``seed``.  With ``write_dim = m`` the last m coordinates of every token
    are zero (the write subspace of the structured regime).

    >>> tok = PointTokenizer(n_tokens=3, d_model=4, seed=0)
    >>> tok(torch.zeros(5, 2)).shape
    torch.Size([5, 4, 4])
    """

    def __init__(self, n_tokens: int = 4, d_model: int = 8, *, write_dim: int = 0, seed: int = 0):
        super().__init__()
        arguments.integer("n_tokens", n_tokens, 1)
        arguments.integer("d_model", d_model, 2)
        _check_write_dim(write_dim, d_model, 2, "hold the 2-D input")
        generator = torch.Generator().manual_seed(seed)
        read = d_model - write_dim
        projections = torch.zeros(n_tokens, d_model, 2)
        offsets = torch.zeros(n_tokens, d_model)
        cls = torch.zeros(d_model)
        projections[:, :read] = torch.randn(n_tokens, read, 2, generator=generator)
        offsets[:, :read] = 0.5 * torch.randn(n_tokens, read, generator=generator)
        cls[:read] = 0.5 * torch.randn(read, generator=generator)
        self.n_tokens, self.d_model, self.write_dim = n_tokens, d_model, write_dim
        self.register_buffer("projections", projections)  # (T, d, 2)
        self.register_buffer("offsets", offsets)  # (T, d)
        self.register_buffer("cls", cls)  # (d,)

    @property
    def input_shape(self) -> tuple[int]:
        """(2,): the shape of one input point."""
        return (2,)

    def forward(self, points: torch.Tensor) -> torch.Tensor:
        projections = self.projections.to(points.dtype)
        tokens = torch.einsum("tdk,bk->btd", projections, points)  # (B, T, d)
        tokens = tokens + self.offsets.to(points.dtype)  # (B, T, d)
        cls = self.cls.to(points.dtype).expand(points.shape[0], 1, self.d_model)  # (B, 1, d)
        return torch.cat([cls, tokens], dim=1)  # (B, T + 1, d)


class SequenceTokenizer(nn.Module):
    """T given tokens x_t ∈ ℝ^w -> T + 1 tokens in ℝ^d: a constant token c, then A_t x_t + b_t.

    ``forward`` maps sequences (B, T, w) to tokens (B, T + 1, d), in the dtype of the input.
    The maps are buffers (not trained), drawn from ``seed``: A_t has N(0, 1/w) entries (a token
    of w unit-variance, uncorrelated features gets coordinates of unit variance), b_t and c
    have N(0, 0.5²) entries, as :class:`PointTokenizer`'s.  With ``write_dim = m`` the last m
    coordinates of every token are zero.  ``input_shape`` is (T, w).

    >>> tok = SequenceTokenizer(n_tokens=3, token_width=5, d_model=4, seed=0)
    >>> tok(torch.zeros(2, 3, 5)).shape, tok.input_shape
    (torch.Size([2, 4, 4]), (3, 5))
    """

    def __init__(
        self, n_tokens: int, token_width: int, d_model: int = 8, *, write_dim: int = 0, seed=0
    ):
        super().__init__()
        arguments.integer("n_tokens", n_tokens, 1)
        arguments.integer("token_width", token_width, 1)
        arguments.integer("d_model", d_model, 2)
        _check_write_dim(write_dim, d_model, 1, "not be empty")
        generator = torch.Generator().manual_seed(seed)
        read = d_model - write_dim
        projections = torch.zeros(n_tokens, d_model, token_width)
        offsets = torch.zeros(n_tokens, d_model)
        cls = torch.zeros(d_model)
        scale = 1 / math.sqrt(token_width)
        projections[:, :read] = scale * torch.randn(
            n_tokens, read, token_width, generator=generator
        )
        offsets[:, :read] = 0.5 * torch.randn(n_tokens, read, generator=generator)
        cls[:read] = 0.5 * torch.randn(read, generator=generator)
        self.n_tokens, self.token_width = n_tokens, token_width
        self.d_model, self.write_dim = d_model, write_dim
        self.register_buffer("projections", projections)  # (T, d, w)
        self.register_buffer("offsets", offsets)  # (T, d)
        self.register_buffer("cls", cls)  # (d,)

    @property
    def input_shape(self) -> tuple[int, int]:
        """(T, w): the shape of one input sequence."""
        return (self.n_tokens, self.token_width)

    def forward(self, sequences: torch.Tensor) -> torch.Tensor:
        if sequences.ndim != 3 or tuple(sequences.shape[1:]) != self.input_shape:
            raise ValueError(
                f"sequences: expected shape (B, {self.n_tokens}, {self.token_width}), "
                f"got {tuple(sequences.shape)}"
            )
        projections = self.projections.to(sequences.dtype)
        tokens = torch.einsum("tdk,btk->btd", projections, sequences)  # (B, T, d)
        tokens = tokens + self.offsets.to(sequences.dtype)  # (B, T, d)
        cls = self.cls.to(sequences.dtype).expand(sequences.shape[0], 1, self.d_model)
        return torch.cat([cls, tokens], dim=1)  # (B, T + 1, d)
