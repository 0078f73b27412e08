"""Fitting and evaluating the binary point classifiers, deterministically.

- :func:`resolve_device`  the device by name: ``"auto"``/``None`` -> CUDA when available,
  else CPU; ``"cpu"``, ``"cuda"`` or a ``torch.device`` checked (the one device contract).
- :func:`fit`  Adam on the mean binary cross-entropy of the logits,
  ℓ = −mean[y log σ(z) + (1 − y) log(1 − σ(z))], for a fixed number of epochs; mini-batches
  shuffled by a ``torch.Generator`` seeded from ``seed`` (full batch when ``batch_size`` is None).
- :func:`evaluate`  accuracy (threshold z > 0, i.e. σ(z) > ½) and the same loss, no gradients.

Determinism: the model's initial weights come from its own seed (see
:func:`curvlab.models.attention.build_classifier`); the only randomness in :func:`fit` is the
shuffling generator; ``torch.use_deterministic_algorithms`` is switched on (warn-only) for the
duration of the fit and restored afterwards.  Same seed, same device, same thread count: the
same numbers.  Both functions return tidy records (dicts of plain Python numbers and strings).
"""

from __future__ import annotations

import contextlib
import math
import time

import torch
from torch import nn
from tqdm.auto import tqdm

from curvlab import arguments

__all__ = ["DEVICES", "evaluate", "fit", "resolve_device"]


DEVICES: tuple[str, ...] = ("auto", "cpu", "cuda")
"""The device names every study and the command line accept ("auto": CUDA when present)."""


def resolve_device(device=None) -> str:
    """The device to compute on, by name: the one device contract of the library.

    ``"auto"`` or ``None`` -> ``"cuda"`` when CUDA is available, else ``"cpu"``; ``"cpu"``,
    ``"cuda"``, ``"cuda:N"`` or a ``torch.device`` of those types -> its name, checked.  A
    string (not a ``torch.device``) is returned so that it can stand in a study's cached
    configuration; torch takes it wherever it takes a device.  ValueError naming ``device``
    for anything else, and when CUDA is asked for but absent.

    >>> resolve_device("cpu"), resolve_device(torch.device("cpu"))
    ('cpu', 'cpu')
    >>> resolve_device("auto") in ("cpu", "cuda")
    True
    """
    if device is None or (isinstance(device, str) and device == "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    expected = f"expected one of {DEVICES}, 'cuda:N', None or a torch.device"
    if not isinstance(device, str | torch.device):
        raise ValueError(f"device: {expected}, got {device!r}")
    try:
        parsed = torch.device(device)
    except (RuntimeError, TypeError) as error:
        raise ValueError(f"device: {expected}, got {device!r}") from error
    if parsed.type not in ("cpu", "cuda"):
        raise ValueError(f"device: {expected}, got {device!r}")
    if parsed.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"device: {device!r} requested but no CUDA device is available")
        if parsed.index is not None and parsed.index >= torch.cuda.device_count():
            raise ValueError(
                f"device: {device!r} requested but only {torch.cuda.device_count()} CUDA "
                "device(s) are present"
            )
    return str(parsed)


def _check_data(points, labels) -> tuple[torch.Tensor, torch.Tensor]:
    if not isinstance(points, torch.Tensor) or points.ndim != 2 or points.shape[0] == 0:
        shape = tuple(points.shape) if isinstance(points, torch.Tensor) else type(points)
        raise ValueError(f"points: expected a tensor of shape (n, k), n >= 1, got {shape}")
    if not isinstance(labels, torch.Tensor) or labels.shape != (points.shape[0],):
        shape = tuple(labels.shape) if isinstance(labels, torch.Tensor) else type(labels)
        raise ValueError(f"labels: expected a tensor of shape ({points.shape[0]},), got {shape}")
    if not ((labels == 0) | (labels == 1)).all():
        raise ValueError("labels: expected values in {0, 1}")
    if not torch.isfinite(points).all():
        raise ValueError("points: must be finite (found NaN or inf)")
    return points, labels


@contextlib.contextmanager
def _deterministic():
    enabled = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(enabled, warn_only=warn_only)


def _model_dtype(model: nn.Module) -> torch.dtype:
    return next(model.parameters()).dtype


def _loss_and_accuracy(model, points, labels) -> tuple[float, float]:
    logits = model(points)  # (n,)
    loss = nn.functional.binary_cross_entropy_with_logits(logits, labels)
    accuracy = ((logits > 0).to(labels.dtype) == labels).to(torch.float64).mean()
    return float(loss), float(accuracy)


def evaluate(model: nn.Module, points, labels, *, device=None) -> dict:
    """Accuracy and mean cross-entropy of ``model`` on (points, labels), in eval mode.

    Returns ``{"accuracy": float, "loss": float, "n": int}``.

    >>> from curvlab.models.attention import build_classifier
    >>> labels = torch.tensor([0, 1, 0, 1])
    >>> record = evaluate(build_classifier("ungated"), torch.zeros(4, 2), labels)
    >>> sorted(record), record["n"], record["accuracy"]
    (['accuracy', 'loss', 'n'], 4, 0.5)
    """
    points, labels = _check_data(points, labels)
    device = resolve_device(device)
    model = model.to(device)
    dtype = _model_dtype(model)
    was_training = model.training
    model.eval()
    with torch.no_grad():
        loss, accuracy = _loss_and_accuracy(
            model, points.to(device, dtype), labels.to(device, dtype)
        )
    model.train(was_training)
    return {"accuracy": accuracy, "loss": loss, "n": int(points.shape[0])}


def fit(
    model: nn.Module,
    points,
    labels,
    *,
    epochs: int = 150,
    learning_rate: float = 0.02,
    batch_size: int | None = None,
    weight_decay: float = 0.0,
    seed: int = 0,
    device=None,
    progress: bool = False,
) -> dict:
    """Train ``model`` in place with Adam on binary cross-entropy; return a tidy record.

    ``epochs`` passes over the data in mini-batches of ``batch_size`` (None: the full batch),
    reshuffled every epoch by a generator seeded with ``seed``.  The data are cast to the
    model's dtype and moved to ``device`` (None: CUDA when available).  ``progress`` shows a
    ``tqdm`` bar over epochs.  The record: final training loss and accuracy (evaluated after
    the last step), ``epochs``, ``steps``, ``seconds`` (wall time of the fit), ``device``.

    >>> from curvlab.models.attention import build_classifier
    >>> from curvlab.data.tasks import make_task
    >>> task = make_task("half_plane", n_train=64, n_test=8, seed=0)
    >>> model = build_classifier("gated_headwise", seed=0)
    >>> record = fit(model, task.train_points, task.train_labels, epochs=60, device="cpu")
    >>> record["train_accuracy"] > 0.9, record["steps"]
    (True, 60)
    """
    points, labels = _check_data(points, labels)
    epochs = arguments.integer("epochs", epochs, 1, expected="a positive integer")
    learning_rate = arguments.number("learning_rate", learning_rate, low=0, low_open=True)
    weight_decay = arguments.number("weight_decay", weight_decay, low=0)
    if batch_size is not None:
        batch_size = arguments.integer("batch_size", batch_size, 1, expected="a positive integer")
    arguments.integer("seed", seed)
    if not isinstance(model, nn.Module) or not any(p.requires_grad for p in model.parameters()):
        raise ValueError("model: expected an nn.Module with trainable parameters")
    device = resolve_device(device)
    model = model.to(device)
    dtype = _model_dtype(model)
    points, labels = points.to(device, dtype), labels.to(device, dtype)
    n = points.shape[0]
    batch = n if batch_size is None else min(batch_size, n)
    generator = torch.Generator().manual_seed(seed)
    optimiser = torch.optim.Adam(model.parameters(), lr=learning_rate, weight_decay=weight_decay)
    steps = 0
    start = time.perf_counter()
    with _deterministic():
        model.train()
        for _ in tqdm(range(epochs), desc="fit", disable=not progress, leave=False):
            order = torch.randperm(n, generator=generator).to(device) if batch < n else None
            for first in range(0, n, batch):
                index = slice(first, first + batch) if order is None else order[first:][:batch]
                logits = model(points[index])  # (b,)
                loss = nn.functional.binary_cross_entropy_with_logits(logits, labels[index])
                optimiser.zero_grad(set_to_none=True)
                loss.backward()
                optimiser.step()
                steps += 1
        model.eval()
        with torch.no_grad():
            train_loss, train_accuracy = _loss_and_accuracy(model, points, labels)
    seconds = time.perf_counter() - start
    if not math.isfinite(train_loss):
        raise ValueError(
            f"learning_rate: training diverged (final loss {train_loss}); try a smaller value"
        )
    return {
        "train_loss": train_loss,
        "train_accuracy": train_accuracy,
        "epochs": epochs,
        "steps": steps,
        "seconds": seconds,
        "device": str(device),
    }
