"""One run of the Part II study, trained again so that its model can be looked at.

The study (:mod:`curvlab.studies.reproduce`) keeps numbers, not models.  To draw a
decision boundary or measure one trained sheet, :func:`retrain` trains the run's classifier
again, alone, exactly as the study did: the same architecture and initial weights (from the
seed), full-batch Adam with the protocol's learning rate, weight decay and schedule, for the
budget the study **kept** for that run (:func:`kept_epochs`: the pilot's budget, or the
doubled budget at which the retraining ladder converged).  Training one member of an ensemble
follows the same trajectory as the member trained with the others
(:mod:`curvlab.models.ensemble`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from curvlab.models.attention import AttentionClassifier, build_classifier
from curvlab.models.ensemble import stack, train_ensemble
from curvlab.models.tasks import Task

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


def retrain(
    config: Mapping,
    runs: Iterable[Mapping],
    task: Task,
    model: str,
    seed: int = 0,
    depth: int = 1,
) -> AttentionClassifier:
    """The classifier of one run of the study, trained again with the protocol's settings.

    ``config`` is the study's configuration
    (:func:`curvlab.studies.protocol.reproduce_config`), ``runs`` its run records
    (:func:`curvlab.studies.reproduce.run_study`), ``task`` the run's data
    (:func:`curvlab.models.tasks.make_task` with the protocol's sizes and the run's seed).
    Returns the trained model in eval mode, on the CPU, in float32 like the study.
    Deterministic: the same arguments give the same weights.
    """
    epochs = kept_epochs(runs, task.name, model, seed, depth)
    shape = {k: config[k] for k in SHAPE_KEYS}
    ens = stack([build_classifier(model, depth=depth, seed=seed, **shape)])
    x, y = task.train_points[None].float(), task.train_labels[None].float()  # (1, n, 2), (1, n)
    train_ensemble(ens, x, y, epochs=epochs, **{k: config[k] for k in TRAINING_KEYS})
    return ens.member(0).eval()
