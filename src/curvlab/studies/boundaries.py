"""One run of the Part II study, trained again so that its model can be looked at.

The study (:mod:`curvlab.studies.reproduce`) keeps numbers, not models.  To draw a
decision boundary or measure one trained sheet, :func:`retrain` trains the run's classifier
again, alone, exactly as the study did: the same architecture and initial weights (from the
seed), full-batch Adam with the protocol's learning rate, weight decay and schedule, for the
budget the study **kept** for that run (:func:`kept_epochs`: the pilot's budget, or the
doubled budget at which the retraining ladder converged).  Training one member of an ensemble
follows the same trajectory as the member trained with the others
(:mod:`curvlab.models.ensemble`).

The trained weights are cached (:mod:`curvlab.studies.cache`) under the run's settings, a
digest of its training data and the code of every module this one imports, so a chapter that
draws a boundary reads the weights back instead of training: the book's study step
(``make studies``, :mod:`curvlab.studies.drawn_models`) trains them once.  This module imports
only the models and the cache, so editing the analysis or the studies does not retrain.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping

import torch

from curvlab.data.tasks import Task
from curvlab.models.attention import AttentionClassifier, build_classifier
from curvlab.models.ensemble import stack, train_ensemble
from curvlab.studies.cache import cached

__all__ = ["SHAPE_KEYS", "TRAINING_KEYS", "kept_epochs", "retrain"]


SHAPE_KEYS: tuple[str, ...] = ("d_model", "n_heads", "n_tokens", "residual", "norm", "pooling")
"""The settings of a study configuration that fix a classifier's architecture."""

TRAINING_KEYS: tuple[str, ...] = ("learning_rate", "weight_decay", "schedule")
"""The settings of a study configuration that fix its training, besides the epochs."""


def kept_epochs(runs: Iterable[Mapping], task: str, model: str, seed: int, depth: int = 1) -> int:
    """The budget (epochs) the study kept for the run (``task``, ``model``, ``seed``, ``depth``).

    >>> runs = [{"task": "xor", "model": "ungated", "seed": 0, "depth": 1, "epochs": 800}]
    >>> kept_epochs(runs, "xor", "ungated", 0)
    800
    """
    key = (task, model, seed, depth)
    for r in runs:
        if (r["task"], r["model"], r["seed"], r.get("depth", 1)) == key:
            return r["epochs"]
    raise ValueError(f"runs: no run of task {task!r}, model {model!r}, seed {seed}, depth {depth}")


def _data_digest(task: Task) -> str:
    """sha256 of the task's training points and labels (float64 bytes): the data a run saw."""
    digest = hashlib.sha256()
    for tensor in (task.train_points, task.train_labels):
        digest.update(tensor.detach().cpu().to(torch.float64).contiguous().numpy().tobytes())
    return digest.hexdigest()


def _train(run: Mapping, task: Task) -> dict:
    """The trained weights of the run described by ``run`` (:func:`retrain`'s cache entry)."""
    ens = stack(
        [build_classifier(run["model"], depth=run["depth"], seed=run["seed"], **run["shape"])]
    )
    x, y = task.train_points[None].float(), task.train_labels[None].float()  # (1, n, 2), (1, n)
    train_ensemble(ens, x, y, epochs=run["epochs"], **run["training"])
    state = ens.member(0).state_dict()
    return {name: tensor.tolist() for name, tensor in state.items()}


def retrain(
    config: Mapping,
    runs: Iterable[Mapping],
    task: Task,
    model: str,
    seed: int = 0,
    depth: int = 1,
    *,
    directory=None,
    refresh: bool = False,
) -> AttentionClassifier:
    """The classifier of one run of the study, trained again with the protocol's settings.

    ``config`` is the study's configuration
    (:func:`curvlab.studies.protocol.reproduce_config`), ``runs`` its run records
    (:data:`curvlab.studies.reproduce.REPRODUCE`), ``task`` the run's data
    (:func:`curvlab.data.tasks.make_task` with the protocol's sizes and the run's seed).
    Returns the trained model in eval mode, on the CPU, in float32 like the study.
    Deterministic: the same arguments give the same weights.  The weights are cached (module
    docstring): ``directory`` names another cache, ``refresh`` trains again.
    """
    run = {
        "task": task.name,
        "data_sha256": _data_digest(task),
        "model": model,
        "seed": seed,
        "depth": depth,
        "epochs": kept_epochs(runs, task.name, model, seed, depth),
        "shape": {k: config[k] for k in SHAPE_KEYS},
        "training": {k: config[k] for k in TRAINING_KEYS},
    }
    weights = cached(
        lambda r: _train(r, task),
        run,
        name="retrain",
        entry=__name__,
        directory=directory,
        refresh=refresh,
    )
    classifier = build_classifier(model, depth=depth, seed=seed, **run["shape"])
    reference = classifier.state_dict()
    classifier.load_state_dict(
        {name: torch.tensor(value, dtype=reference[name].dtype) for name, value in weights.items()}
    )
    return classifier.eval()
