"""Real datasets that ship inside scikit-learn, as binary tasks on sequences of tokens.

Three datasets, each read from the CSV files installed with scikit-learn
(``sklearn.datasets.load_digits``, ``load_breast_cancer``, ``load_wine``: no download, no data
home, no network), each turned into a sequence of T tokens of width w and one binary label, so
that Part II's one-logit classifiers apply:

- ``digits`` (1797 images of 8×8 pixels, grey levels 0..16): **T = 8 tokens of w = 8**, token r
  is pixel row r (``pixel_r_0 .. pixel_r_7``) divided by 16, so every value lies in [0, 1]
  (a fixed scale: no statistic of the data is used).  Label: **odd digit** (1) against even
  digit (0), a rule that uses every image and splits them almost evenly (906 odd, 891 even)
  into two classes that are each a union of five digit shapes.
- ``breast_cancer`` (569 tumours, 30 features): scikit-learn's columns are the 10 measurements
  (radius, texture, perimeter, area, smoothness, compactness, concavity, concave points,
  symmetry, fractal dimension) three times, as their mean, their standard error and their
  worst value.  **T = 3 tokens of w = 10**, the three contiguous column groups: token 0 the
  means, token 1 the standard errors, token 2 the worst values.  Coordinate j of every token is
  the same measurement j, so one embedding shared by the tokens reads like with like, as it
  does for the digits' rows (coordinate j of every row is pixel column j).  Label:
  scikit-learn's target unchanged, **benign** (1, 357) against malignant (0, 212).
- ``wine`` (178 wines, 13 chemical features, three cultivars): 13 is prime, so equal
  contiguous groups need padding; one zero coordinate is appended (the least padding for a
  token width above 1), giving **T = 7 tokens of w = 2** in scikit-learn's column order:
  (alcohol, malic acid), (ash, alcalinity of ash), (magnesium, total phenols), (flavanoids,
  nonflavanoid phenols), (proanthocyanins, colour intensity), (hue, OD280/OD315), (proline,
  padding).  The padding coordinate is 0 for every wine (0 is every standardised feature's
  train mean), so it carries no information.  Label: **cultivar 1** (1, the largest class,
  71 wines) against cultivars 0 and 2 (0, 107): one class against the rest, every wine used.

The tabular datasets (``breast_cancer``, ``wine``) are standardised feature by feature with
the mean and the (population, ddof = 0) standard deviation of the **training rows only**; the
test rows are transformed with those same numbers and never enter them, so nothing of the test
split leaks into the training tokens (a test row can change without changing one training
token).  Padding is added after standardisation.

The split: :func:`sklearn.model_selection.train_test_split` of the row indices with
``stratify`` = the binary label and ``random_state`` = ``seed``: ⌈``test_fraction`` · n⌉ rows
for testing, the rest for training, each class within one sample of its share of the whole;
the same seed gives the same split.  :func:`load_tokens` returns a :class:`TokenTask`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from sklearn import datasets as sklearn_datasets
from sklearn.model_selection import train_test_split

from curvlab import arguments

__all__ = ["DATASETS", "POSITIVE_CLASS", "TOKEN_SHAPES", "TokenTask", "load_tokens"]

DATASETS: tuple[str, ...] = ("digits", "breast_cancer", "wine")
"""The real datasets, by name (each ships inside scikit-learn)."""

TOKEN_SHAPES: dict[str, tuple[int, int]] = {
    "digits": (8, 8),
    "breast_cancer": (3, 10),
    "wine": (7, 2),
}
"""(number of tokens T, token width w) of each dataset's sequences (the module docstring)."""

POSITIVE_CLASS: dict[str, str] = {
    "digits": "odd digit",
    "breast_cancer": "benign",
    "wine": "cultivar 1",
}
"""What label 1 means in each dataset (label 0 is everything else)."""

_PADDING = "(padding)"


@dataclass(frozen=True)
class TokenTask:
    """One dataset's train/test split as token sequences.

    ``train_tokens`` (n_train, T, w) and ``test_tokens`` (n_test, T, w) float64; labels (n,)
    int64 in {0, 1}; ``train_index`` and ``test_index`` (n,) int64, the rows of scikit-learn's
    data each sample came from (disjoint, together every row once); ``feature_names`` (T
    tuples of w names, ``"(padding)"`` for a padding coordinate): which feature each token
    coordinate holds; ``positive_class``: what label 1 means.
    """

    name: str
    train_tokens: torch.Tensor
    train_labels: torch.Tensor
    test_tokens: torch.Tensor
    test_labels: torch.Tensor
    train_index: torch.Tensor
    test_index: torch.Tensor
    feature_names: tuple[tuple[str, ...], ...]
    positive_class: str

    @property
    def n_tokens(self) -> int:
        """T, the number of tokens of a sequence."""
        return self.train_tokens.shape[1]

    @property
    def token_width(self) -> int:
        """w, the width (number of features) of a token."""
        return self.train_tokens.shape[2]


def _raw(name: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """scikit-learn's features (n, p), binary labels (n,) and feature names of ``name``."""
    if name == "digits":
        bunch = sklearn_datasets.load_digits()
        labels = bunch.target % 2  # odd digit -> 1
    elif name == "breast_cancer":
        bunch = sklearn_datasets.load_breast_cancer()
        labels = bunch.target  # benign -> 1 (scikit-learn's coding)
    else:
        bunch = sklearn_datasets.load_wine()
        labels = bunch.target == 1  # cultivar 1 -> 1
    names = [str(n) for n in bunch.feature_names]
    return np.asarray(bunch.data, dtype=np.float64), np.asarray(labels, dtype=np.int64), names


def _check_test_fraction(test_fraction, n: int) -> int:
    """The number of test rows, ⌈test_fraction · n⌉, checked to leave both classes room."""
    arguments.fraction("test_fraction", test_fraction)
    n_test = math.ceil(test_fraction * n)
    if not 2 <= n_test <= n - 2:
        raise ValueError(
            f"test_fraction: {test_fraction!r} of {n} rows leaves {n_test} test and "
            f"{n - n_test} training rows; each split needs at least one row of each class"
        )
    return n_test


def _tokens(name: str, features: np.ndarray) -> np.ndarray:
    """Features (n, p), already scaled, as tokens (n, T, w): contiguous groups, zero padding."""
    n_tokens, width = TOKEN_SHAPES[name]
    padding = n_tokens * width - features.shape[1]
    padded = np.concatenate([features, np.zeros((features.shape[0], padding))], axis=1)
    return padded.reshape(features.shape[0], n_tokens, width)  # (n, T, w)


def _grouped_names(name: str, names: list[str]) -> tuple[tuple[str, ...], ...]:
    n_tokens, width = TOKEN_SHAPES[name]
    padded = names + [_PADDING] * (n_tokens * width - len(names))
    return tuple(tuple(padded[t * width : (t + 1) * width]) for t in range(n_tokens))


def load_tokens(name: str, *, seed: int = 0, test_fraction: float = 0.25) -> TokenTask:
    """A seeded stratified train/test split of the real dataset ``name`` as token sequences.

    The tokens, labels, standardisation (training rows' statistics only) and split are those of
    the module docstring; ``seed`` (0..2**32 − 1) fixes the split, ``test_fraction`` the share
    of the rows held out (⌈test_fraction · n⌉ of them).

    >>> task = load_tokens("digits", seed=0)
    >>> tuple(task.train_tokens.shape), tuple(task.test_tokens.shape), task.positive_class
    ((1347, 8, 8), (450, 8, 8), 'odd digit')
    >>> load_tokens("wine").feature_names[-1]
    ('proline', '(padding)')
    """
    name = arguments.one_of("name", name, DATASETS)
    seed = arguments.integer("seed", seed, 0, 2**32 - 1, expected="an integer in 0..2**32 - 1")
    features, labels, names = _raw(name)
    n_test = _check_test_fraction(test_fraction, labels.shape[0])
    rows = np.arange(labels.shape[0])
    train_index, test_index = train_test_split(
        rows, test_size=n_test, stratify=labels, random_state=seed
    )
    train, test = features[train_index], features[test_index]  # (n_train, p), (n_test, p)
    if name == "digits":
        train, test = train / 16.0, test / 16.0  # grey levels 0..16 -> [0, 1]
    else:
        mean = train.mean(axis=0)  # (p,) training rows only
        std = train.std(axis=0)  # (p,) ddof = 0
        std = np.where(std > 0, std, 1.0)  # a constant feature stays 0 (none here)
        train, test = (train - mean) / std, (test - mean) / std

    def tensor(array, dtype):
        return torch.from_numpy(np.ascontiguousarray(array)).to(dtype)

    return TokenTask(
        name=name,
        train_tokens=tensor(_tokens(name, train), torch.float64),
        train_labels=tensor(labels[train_index], torch.int64),
        test_tokens=tensor(_tokens(name, test), torch.float64),
        test_labels=tensor(labels[test_index], torch.int64),
        train_index=tensor(train_index, torch.int64),
        test_index=tensor(test_index, torch.int64),
        feature_names=_grouped_names(name, names),
        positive_class=POSITIVE_CLASS[name],
    )
