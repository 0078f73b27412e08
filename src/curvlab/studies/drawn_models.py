"""The trained models the book looks at, trained (or read from the cache) before the chapters.

:data:`BOOK_RUNS` lists the runs of the Part II study whose models a chapter draws or measures;
:data:`BOUNDARIES` reads the study's runs (:data:`curvlab.studies.reproduce.REPRODUCE`, cached)
and :func:`curvlab.studies.boundaries.retrain`-s each, so that the weights are in the
cache when the chapter asks for them (``python -m curvlab boundaries``, run by ``make
studies``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from curvlab.data.tasks import make_task
from curvlab.models.attention import parameter_count
from curvlab.studies.boundaries import kept_epochs, retrain
from curvlab.studies.protocol import REPRODUCTION_SCALES, reproduce_config
from curvlab.studies.reproduce import REPRODUCE
from curvlab.studies.result import StudyResult
from curvlab.studies.study import Cells, Context, Study, run_study

__all__ = [
    "BOOK_RUNS",
    "BOUNDARIES",
    "analyse_drawn_models",
    "drawn_models_cells",
    "drawn_models_config",
]

BOOK_RUNS: tuple[tuple[str, str, int], ...] = (
    ("xor", "ungated", 0),
    ("xor", "gated_elementwise", 0),
    ("spirals3", "ungated", 0),
    ("spirals3", "gated_elementwise", 0),
    ("circles", "gated_elementwise", 1),
)
"""The runs (task, model, seed; depth 1) whose trained models the book looks at: the decision
boundaries and step-size check of ``decision-boundaries`` and its exercise's sheet."""


def drawn_models_config(
    scale: str = "small", *, runs: Iterable[tuple[str, str, int]] = BOOK_RUNS, **overrides
) -> dict:
    """The runs (task, model, seed) to train again and the reproduction's ``overrides`` (its
    protocol changed as for the reproduction), checked."""
    wanted = [tuple(run) for run in runs]
    if not wanted or any(len(run) != 3 for run in wanted):
        raise ValueError(f"runs: expected (task, model, seed) triples, got {runs!r}")
    reproduce_config(scale, **overrides)  # a bad setting is refused before any training
    return {"runs": wanted, "overrides": dict(overrides)}


def drawn_models_cells(config: dict, context: Context) -> list[Cells]:
    """The reproduction's exploratory runs (through the driver: read back from the run cache
    when the study has run on this device), then one cell per wanted run, each
    :func:`~curvlab.studies.boundaries.retrain`-ed with the data
    :func:`curvlab.data.tasks.make_task` makes for its seed (its weights cached by
    :func:`~curvlab.studies.boundaries.retrain` itself)."""
    options = replace(context.options, refresh=False)  # --refresh retrains the drawn models
    overrides = {**config["overrides"], "geometric": False, "confirmatory": False}
    study = run_study(REPRODUCE, context.scale, options, **overrides)
    protocol = study.meta["config"]
    runs = [r for r in study.runs if r["study"] == "exploratory"]
    directory, refresh = context.options.directory, context.options.refresh

    def measure(cell: dict) -> dict:
        task_name, model, seed = cell["task"], cell["model"], cell["seed"]
        task = make_task(
            task_name, n_train=protocol["n_train"], n_test=protocol["n_test"], seed=seed
        )
        net = retrain(protocol, runs, task, model, seed, directory=directory, refresh=refresh)
        return {
            "task": task_name,
            "model": model,
            "seed": seed,
            "depth": 1,
            "epochs": kept_epochs(runs, task_name, model, seed),
            "parameters": parameter_count(net),
        }

    cells = [{"task": t, "model": m, "seed": s} for t, m, s in config["runs"]]
    return [Cells("boundaries", measure, cells, unit="model", cached=False)]


def analyse_drawn_models(config: dict, results: list, context: Context) -> StudyResult:
    """One record per model (task, model, seed, depth, epochs, parameters: ``boundaries.csv``)."""
    return StudyResult(runs=results[0], names={"runs": "boundaries.csv"})


BOUNDARIES = Study(
    name="boundaries",
    help="the trained models the chapters draw (runs of reproduce, retrained and cached)",
    scales=tuple(REPRODUCTION_SCALES),
    configure=drawn_models_config,
    cells=drawn_models_cells,
    analyse=analyse_drawn_models,
    report=lambda result: [
        f"{r['task']:>10} {r['model']:>18} seed {r['seed']}: {r['epochs']} epochs"
        for r in result.runs
    ],
)
"""The models the book draws (module docstring; :mod:`curvlab.studies.study`)."""
