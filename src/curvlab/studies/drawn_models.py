"""The trained models the book looks at, trained (or read from the cache) before the chapters.

:data:`BOOK_RUNS` lists the runs of the Part II study whose models a chapter draws or measures;
:func:`retrain_book_runs` reads the study's runs (:func:`curvlab.studies.reproduce.reproduce`,
cached) and :func:`curvlab.studies.boundaries.retrain`-s each, so that the weights are in the
cache when the chapter asks for them (``python -m curvlab boundaries``, run by ``make
studies``).
"""

from __future__ import annotations

from collections.abc import Iterable

from curvlab.data.tasks import make_task
from curvlab.models.attention import parameter_count
from curvlab.studies.boundaries import kept_epochs, retrain
from curvlab.studies.reproduce import reproduce

__all__ = ["BOOK_RUNS", "retrain_book_runs"]

BOOK_RUNS: tuple[tuple[str, str, int], ...] = (
    ("xor", "ungated", 0),
    ("xor", "gated_elementwise", 0),
    ("spirals3", "ungated", 0),
    ("spirals3", "gated_elementwise", 0),
    ("circles", "gated_elementwise", 1),
)
"""The runs (task, model, seed; depth 1) whose trained models the book looks at: the decision
boundaries and step-size check of ``decision-boundaries`` and its exercise's sheet."""


def retrain_book_runs(
    scale: str = "small",
    runs_to_train: Iterable[tuple[str, str, int]] = BOOK_RUNS,
    *,
    device="cpu",
    directory=None,
    refresh: bool = False,
    progress: bool = True,
    **overrides,
) -> list[dict]:
    """Train (or read from the cache) the models of ``runs_to_train`` of the ``scale`` study
    (``overrides`` change its protocol, as in :func:`curvlab.studies.reproduce.reproduce`).

    The study's runs come from :func:`curvlab.studies.reproduce.reproduce` (cached: read back
    when the study has run on ``device``); each model is then :func:`retrain`-ed with the
    data :func:`curvlab.data.tasks.make_task` makes for its seed.  Returns one record per
    model: task, model, seed, depth, the epochs trained and the parameter count.
    """
    from tqdm.auto import tqdm

    wanted = list(runs_to_train)
    options = {**overrides, "geometric": False, "confirmatory": False}  # the exploratory runs
    study = reproduce(scale, device=device, directory=directory, progress=progress, **options)
    config = study.meta["config"]
    runs = [r for r in study.runs if r["study"] == "exploratory"]
    records = []
    for task_name, model, seed in tqdm(wanted, desc="boundaries", disable=not progress):
        task = make_task(task_name, n_train=config["n_train"], n_test=config["n_test"], seed=seed)
        net = retrain(config, runs, task, model, seed, directory=directory, refresh=refresh)
        records.append(
            {
                "task": task_name,
                "model": model,
                "seed": seed,
                "depth": 1,
                "epochs": kept_epochs(runs, task_name, model, seed),
                "parameters": parameter_count(net),
            }
        )
    return records
