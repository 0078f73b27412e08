"""The real-data study: Part II's gate and two ungated baselines on scikit-learn's bundled
datasets (exploratory; its design and history: docs/decisions/0015-real-data-design-2.md).

What is trained.  For every dataset of the scale (:mod:`curvlab.data.realdata`: digits,
breast cancer, wine as binary tasks on token sequences) and every model of the scale (the
small one: ``ungated``, the width-matched ``ungated_wide`` and ``gated_elementwise``), one
classifier per seed s, built by :func:`~curvlab.models.attention.build_classifier` with
``token_width`` = the dataset's w, ``n_tokens`` = its T, the scale's ``d_model`` (at least the
widest token, breast cancer's w = 10), ``n_heads``, ``depth`` and ``pooling``, initialised
from s, on the stratified split ``load_tokens(dataset, seed=s)`` (each seed its own split:
repeated splits).  The seeds of one (dataset, model) are trained together by
:func:`~curvlab.models.ensemble.train_ensemble` (float32, full-batch Adam by the hand-batched
``backend`` "einsum", which follows the module's own trajectory, every measurement by the
module; the scale's ``epochs``, ``learning_rate``, ``weight_decay``, ``schedule``).  The
training rule: a run is ``trained`` when its training accuracy is at least
``trained_accuracy``; its loss plateau (:func:`~curvlab.models.ensemble.plateau`) is recorded
beside it as ``converged``.  The seed is the independent unit and pairs the models (same
split, same triangles).

The protocol, written before any run of this design was looked at:

- **Near-linear datasets**, decided on the training rows alone.  For each dataset and seed,
  scikit-learn's ``LogisticRegression(C=logistic_c, max_iter=logistic_max_iter)`` and an RBF
  support vector machine (``SVC()``, its defaults), each after a ``StandardScaler`` fitted
  inside the fold, on the seed's training tokens flattened to T·w features, are scored by
  ``StratifiedKFold(validation_folds, shuffle=True, random_state=s)`` cross-validation.  A
  dataset is **near-linear** when the logistic regression's mean validation accuracy over
  seeds is at least the reference's less one point (0.01, :data:`ANALYSIS`
  ``accuracy_margin``).  The logistic regression's test accuracy is recorded beside it, unused
  (:func:`curvlab.analysis.realdata_claims.near_linear_effect`).
- **Curvature** of a trained run: for each of ``triangles`` triangles of three training inputs
  of one class (:func:`~curvlab.measurement.slices.draw_triangles`, classes alternating,
  from ``numpy.random.default_rng([TRIANGLE_SEED, s])``, the same for every model of seed s),
  ∫|K| dA of the pooled representation sheet over the triangle by Part II's adaptive rule on
  exactly the triangle (:func:`curvlab.measurement.adaptive_slices.adaptive_slice_curvature`:
  the collapsed map of the unit square, K and dA by the Gauss-equation engine in float64, from
  an ``adaptive_resolution``² base grid to ``adaptive_tolerance``).  The run's
  ``curvature_total_abs`` is the mean over its triangles; ``curvature_total_abs_check`` the
  same from ``adaptive_resolution_check``².  Convergence is Part II's criterion on these two
  starts: the median and 90th percentile over runs of |log(I / I_check)| below
  ``convergence_threshold`` (0.05), per dataset
  (:func:`curvlab.analysis.empirical.quadrature_convergence`).  Beside it, by the centroid rule
  on the P-subdivision (:func:`~curvlab.measurement.slices.slice_curvature`) at P =
  ``resolution`` and 2P = ``resolution_check``: the capped integrand ∫ min(|K|, 1/m) dA and
  ∫|K| dA itself.
- **Claims**, per dataset, all **exploratory**, the gated model ``gated_elementwise`` against
  each baseline (``ungated``, and ``ungated_wide``: claims "-wide"), paired by seed
  (:mod:`curvlab.analysis.realdata_claims`):

  E1 (paper: gated more curved): the mean paired difference of log ∫|K| dA, t interval;
  E2 (paper: gated more accurate where the boundary is nonlinear), on a dataset that is not
  near-linear: the mean paired difference of test accuracy, t interval;
  E2-linear (paper: no advantage where the boundary is linear), on a near-linear dataset:
  TOST of the same difference against ±``accuracy_margin``, its 90% interval;
  E3 (paper: curvature tracks accuracy): the within dataset × model Pearson r of log ∫|K| dA
  against test accuracy over all the models' runs
  (:func:`curvlab.analysis.association.within_cell_correlation`, seed-cluster bootstrap
  interval), p from the permutation null that keeps each cell's values
  (:func:`~curvlab.analysis.association.permutation_null`, two-sided).

  The directional claims (E1, E2, E3 of every dataset, both baselines) form one Holm family;
  the equivalence claims are judged by their TOST p.  The paired p are exact sign-flip p (the
  t-test's beside them, ``p_t``; :mod:`curvlab.analysis.randomization`).  Verdicts follow
  :mod:`curvlab.analysis.stats`'s rules, "undecidable" where the seeds cannot decide
  (:mod:`curvlab.analysis.decidability`'s fields in each record); the small scale's 10 seeds
  let every claim of the largest family (15) reach α.  Each curvature claim carries its
  dataset's convergence flag (``curvature_converged``) and each claim the share of its runs
  that were trained (``trained_share``).

:data:`REALDATA` (run by :func:`curvlab.studies.study.run_study`) returns a
:class:`~curvlab.studies.result.StudyResult`: ``runs`` (one row a trained model), ``effects``
(one row a dataset: the near-linear rule, mean accuracies, trained shares), ``claims`` and
``meta`` (configuration, the rules, both quadratures' convergence, the adaptive rule's
evaluation counts, timings).  With ``progress`` it first prints :func:`estimated_seconds` of
the configuration.  The scales' settings: :data:`~curvlab.studies.protocol.REALDATA_SCALES`.
"""

from __future__ import annotations

import math
import statistics

import torch

from curvlab import arguments
from curvlab.analysis.empirical import quadrature_convergence
from curvlab.analysis.realdata_claims import ANALYSIS, PREDICTIONS, analyse_realdata
from curvlab.data.realdata import DATASETS, TOKEN_SHAPES, load_tokens
from curvlab.measurement.adaptive_slices import adaptive_slice_curvature
from curvlab.measurement.slices import draw_triangles, slice_curvature
from curvlab.models.attention import VARIANTS, build_classifier, parameter_count
from curvlab.models.ensemble import BACKENDS, SCHEDULES, evaluate_ensemble, stack, train_ensemble
from curvlab.studies.protocol import REALDATA_SCALES, study_config
from curvlab.studies.result import StudyResult
from curvlab.studies.study import (
    Argument,
    Cells,
    Context,
    Study,
    interval_text,
    name_list,
    positive_int,
    seed_range,
)

__all__ = [
    "ANALYSIS",  # re-exported from curvlab.analysis.realdata_claims, with the
    "PREDICTIONS",  # predictions, so that the chapter reads the study from one place
    "REALDATA",
    "TRIANGLE_SEED",
    "analyse_realdata_study",
    "estimated_seconds",
    "measure_reference_cell",
    "measure_realdata_cell",
    "realdata_cells",
    "realdata_config",
]

TRIANGLE_SEED = 36
"""The first word of every run's triangle generator, ``default_rng([TRIANGLE_SEED, seed])``."""

_SECONDS_PER_SEED_EPOCH = {"digits": 0.0075, "breast_cancer": 0.0018, "wine": 0.0009}
"""Training: CPU seconds per seed and epoch of one model at d_model = 12 (one head), measured
on one core with the small scale's settings."""

_SECONDS_PER_EVALUATION = 1.5e-4
"""Curvature: CPU seconds per evaluation of a slice sheet's jets at d_model = 12."""

_EVALUATIONS_PER_TRIANGLE = 450
"""The adaptive rule's evaluations per triangle and start on a trained sheet at the small
scale's tolerance (a median of 1728 per run of 4 triangles, record
docs/decisions/0015-real-data-design-2.md)."""


def estimated_seconds(config: dict) -> float:
    """A rough estimate of the study's time on one core from an empty run cache: the measured
    costs above times the number of seeds, epochs, models, triangles and evaluations (two
    adaptive starts, the capped integrand's P² + (2P)² nodes), scaled by (d_model / 12)² (a
    guess for a wider model, not a measurement).

    >>> small = estimated_seconds(realdata_config("small"))
    >>> small < estimated_seconds(realdata_config("medium"))
    True
    """
    scale = (config["d_model"] / 12) ** 2
    seeds, models = len(config["seeds"]), len(config["models"])
    nodes = 2 * _EVALUATIONS_PER_TRIANGLE
    nodes += config["resolution"] ** 2 + config["resolution_check"] ** 2
    total = 0.0
    for dataset in config["datasets"]:
        train = _SECONDS_PER_SEED_EPOCH[dataset] * config["epochs"]
        curvature = _SECONDS_PER_EVALUATION * config["triangles"] * nodes
        total += models * seeds * scale * (train + curvature)
    return total


_CHECKS = {
    "datasets": DATASETS,
    "models": VARIANTS,
    "seeds": 0,
    "d_model": 2,
    "n_heads": 1,
    "depth": 1,
    "epochs": 2,
    "triangles": 1,
    "adaptive_resolution": 1,
    "adaptive_resolution_check": 2,
    "resolution": 1,
    "resolution_check": 2,
    "validation_folds": 2,
    "logistic_max_iter": 1,
    "schedule": SCHEDULES,
    "backend": BACKENDS,
    "pooling": ("mean", "cls"),
}


def realdata_config(scale: str = "small", **overrides) -> dict:
    """The study configuration of ``scale`` (:data:`~curvlab.studies.protocol.REALDATA_SCALES`)
    with ``overrides``, every setting checked (a ValueError names it).

    >>> c = realdata_config("small", datasets=["wine"], seeds=[0, 1, 2])
    >>> c["datasets"], c["seeds"], c["d_model"] >= 10
    (['wine'], [0, 1, 2], True)
    """
    config = study_config(REALDATA_SCALES, scale, overrides, _CHECKS, study="real-data study")
    for key in ("datasets", "models", "seeds"):
        if len(set(config[key])) != len(config[key]):
            raise ValueError(f"{key}: expected distinct values, got {config[key]!r}")
    if len(config["seeds"]) < 3:
        raise ValueError(
            f"seeds: expected at least 3 seeds (E3's bootstrap), got {config['seeds']}"
        )
    widest = max(TOKEN_SHAPES[name][1] for name in config["datasets"])
    if config["d_model"] < widest:
        raise ValueError(
            f"d_model: expected at least the widest token ({widest}), got {config['d_model']}"
        )
    if config["d_model"] % config["n_heads"]:
        raise ValueError(f"n_heads: must divide d_model {config['d_model']}")
    if config["resolution_check"] <= config["resolution"]:
        raise ValueError("resolution_check: expected more than resolution (2P is Part II's)")
    if config["adaptive_resolution_check"] == config["adaptive_resolution"]:
        raise ValueError(
            "adaptive_resolution_check: expected a base grid other than adaptive_resolution "
            "(the rule's convergence is checked from two starts)"
        )
    for name in (ANALYSIS["gated"], ANALYSIS["baseline"]):
        if name not in config["models"]:
            raise ValueError(f"models: the claims compare {name!r}; got {config['models']}")
    arguments.fraction("trained_accuracy", config["trained_accuracy"])
    for key in ("learning_rate", "logistic_c", "adaptive_tolerance"):
        arguments.number(key, config[key], low=0, low_open=True)
    if not isinstance(config["weight_decay"], int | float) or config["weight_decay"] < 0:
        raise ValueError(f"weight_decay: expected a number >= 0, got {config['weight_decay']!r}")
    arguments.fraction("test_fraction", config["test_fraction"])
    arguments.fraction("adaptive_tolerance", config["adaptive_tolerance"])
    return config


def _log(value):
    return math.log(value) if value is not None and value > 0 else None


def _corners(tasks, seeds, count: int, device) -> torch.Tensor:
    """Each seed's ``count`` triangles (:func:`draw_triangles` from [TRIANGLE_SEED, s]), as
    their corners (E, M, 3, T, w) float64."""
    corners = []
    for task, s in zip(tasks, seeds, strict=True):
        drawn = draw_triangles(task.train_labels.numpy(), count, [TRIANGLE_SEED, s])
        corners.append(torch.stack([task.train_tokens[list(t)] for t in drawn]))
    return torch.stack(corners).to(device)


def measure_realdata_cell(config: dict) -> list[dict]:
    """Train the seeds of one (dataset, model) together and measure every run: accuracy, the
    training rule, ∫|K| dA by the adaptive rule from both base grids, the capped integrand and
    the uniform centroid rule at P and 2P (the module docstring)."""
    dataset, model, seeds = config["dataset"], config["model"], config["seeds"]
    device = config["device"]
    n_tokens, width = TOKEN_SHAPES[dataset]
    tasks = [load_tokens(dataset, seed=s, test_fraction=config["test_fraction"]) for s in seeds]
    models = [
        build_classifier(
            model,
            depth=config["depth"],
            d_model=config["d_model"],
            n_heads=config["n_heads"],
            n_tokens=n_tokens,
            pooling=config["pooling"],
            token_width=width,
            seed=s,
        )
        for s in seeds
    ]
    ens = stack(models).to(device=device)
    tensors = [
        torch.stack([getattr(t, name) for t in tasks]).to(device)
        for name in ("train_tokens", "train_labels", "test_tokens", "test_labels")
    ]
    train_x, train_y, test_x, test_y = tensors  # (E, n, T, w), (E, n), ...
    fitted = train_ensemble(
        ens,
        train_x.float(),
        train_y,
        epochs=config["epochs"],
        learning_rate=config["learning_rate"],
        weight_decay=config["weight_decay"],
        schedule=config["schedule"],
        backend=config["backend"],
    )
    tested = evaluate_ensemble(ens, test_x.float(), test_y)
    corners = _corners(tasks, seeds, config["triangles"], device)
    measured = ens.to(dtype=torch.float64)
    rule = {"tolerance": config["adaptive_tolerance"]}
    adaptive = adaptive_slice_curvature(
        measured, corners, resolution=config["adaptive_resolution"], **rule
    )
    check = adaptive_slice_curvature(
        measured, corners, resolution=config["adaptive_resolution_check"], **rule
    )
    coarse = slice_curvature(measured, corners, config["resolution"])
    fine = slice_curvature(measured, corners, config["resolution_check"])
    rows = []
    for e, s in enumerate(seeds):

        def mean(values, e=e):
            return float(values[e].double().mean())

        curvature_total_abs = mean(adaptive["curvature_total_abs"])
        rows.append(
            {
                "task": dataset,
                "dataset": dataset,
                "model": model,
                "depth": config["depth"],
                "seed": s,
                "params": parameter_count(models[0]),
                "epochs": config["epochs"],
                "train_loss": float(fitted["train_loss"][e]),
                "train_accuracy": float(fitted["train_accuracy"][e]),
                "test_accuracy": float(tested["accuracy"][e]),
                "trained": float(fitted["train_accuracy"][e]) >= config["trained_accuracy"],
                "converged": bool(fitted["converged"][e]),
                "plateau_change": float(fitted["plateau_change"][e]),
                "curvature_total_abs": curvature_total_abs,
                "curvature_total_abs_check": mean(check["curvature_total_abs"]),
                "log_curvature_total_abs": _log(curvature_total_abs),
                "adaptive_converged": bool(adaptive["converged"][e].all()),
                "adaptive_evaluations": int(adaptive["evaluations"][e].sum()),
                "adaptive_evaluations_check": int(check["evaluations"][e].sum()),
                "curvature_total": mean(adaptive["curvature_total"]),
                "sheet_area": mean(adaptive["sheet_area"]),
                "largest_triangle_share": float(
                    adaptive["curvature_total_abs"][e].max()
                    / max(float(adaptive["curvature_total_abs"][e].sum()), 1e-300)
                ),
                "curvature_total_abs_uniform": mean(coarse["curvature_total_abs"]),
                "curvature_total_abs_uniform_fine": mean(fine["curvature_total_abs"]),
                "curvature_capped": mean(coarse["curvature_capped"]),
                "curvature_capped_fine": mean(fine["curvature_capped"]),
                "log_curvature_capped": _log(mean(coarse["curvature_capped"])),
                "immersed_share": float(coarse["immersed_share"][e].min()),
            }
        )
    return rows


def measure_reference_cell(config: dict) -> list[dict]:
    """The near-linear rule's classifiers on each seed's split of one dataset (the module
    docstring): on the training rows alone, the stratified ``validation_folds``-fold
    accuracies of the logistic regression and of the nonlinear reference (an RBF support vector
    machine), and, beside them for the chapter, the logistic regression's test accuracy."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    def logistic():
        fit = LogisticRegression(C=config["logistic_c"], max_iter=config["logistic_max_iter"])
        return make_pipeline(StandardScaler(), fit)

    rows = []
    for s in config["seeds"]:
        task = load_tokens(config["dataset"], seed=s, test_fraction=config["test_fraction"])
        train = task.train_tokens.flatten(1).numpy()  # (n_train, T·w)
        labels = task.train_labels.numpy()
        folds = StratifiedKFold(config["validation_folds"], shuffle=True, random_state=s)
        linear = cross_val_score(logistic(), train, labels, cv=folds)
        reference = cross_val_score(make_pipeline(StandardScaler(), SVC()), train, labels, cv=folds)
        fitted = logistic().fit(train, labels)
        test = fitted.score(task.test_tokens.flatten(1).numpy(), task.test_labels.numpy())
        rows.append(
            {
                "dataset": config["dataset"],
                "seed": s,
                "logistic_validation": float(linear.mean()),
                "reference_validation": float(reference.mean()),
                "test_accuracy": float(test),
            }
        )
    return rows


def realdata_cells(config: dict, context: Context) -> list[Cells]:
    """One cell per (dataset, model), its seeds trained together, then the near-linear rule's
    classifiers on each dataset's splits."""
    base = {k: v for k, v in config.items() if k not in ("datasets", "models")}
    base["device"] = context.device
    cells = [
        {**base, "dataset": dataset, "model": model}
        for dataset in config["datasets"]
        for model in config["models"]
    ]
    keys = ("seeds", "test_fraction", "logistic_c", "logistic_max_iter", "validation_folds")
    reference = [{k: base[k] for k in keys} | {"dataset": d} for d in config["datasets"]]
    return [
        Cells("realdata", measure_realdata_cell, cells),
        Cells("realdata-reference", measure_reference_cell, reference, parallel=False),
    ]


def analyse_realdata_study(config: dict, results: list, context: Context) -> StudyResult:
    """The runs, the near-linear rule's effects and the claims
    (:func:`curvlab.analysis.realdata_claims.analyse_realdata`); in ``meta`` the convergence
    of the adaptive rule between its two starts and of the capped integrand between P and 2P,
    over all runs and per dataset, and the adaptive rule's evaluation counts."""
    runs = [row for cell in results[0] for row in cell]
    reference = [row for cell in results[1] for row in cell]
    threshold = config["convergence_threshold"]
    adaptive = {
        "resolution": config["adaptive_resolution"],
        "resolution_check": config["adaptive_resolution_check"],
        "threshold": threshold,
        "quantile": True,
        "check": "curvature_total_abs_check",
    }
    capped = {
        "resolution": config["resolution"],
        "resolution_check": config["resolution_check"],
        "threshold": threshold,
        "quantile": True,
        "measure": "curvature_capped",
        "check": "curvature_capped_fine",
    }
    uniform = {**capped, "measure": "curvature_total_abs_uniform"}
    uniform["check"] = "curvature_total_abs_uniform_fine"
    by_dataset = {
        d: quadrature_convergence([r for r in runs if r["dataset"] == d], **adaptive)
        for d in config["datasets"]
    }
    effects, claims = analyse_realdata(runs, reference, config["seeds"], by_dataset)
    evaluations = [r["adaptive_evaluations"] for r in runs]
    meta = {
        "config": {**config, "device": context.device},
        "analysis": dict(ANALYSIS),
        "triangle_seed": TRIANGLE_SEED,
        "near_linear_rule": (
            "logistic validation accuracy >= RBF SVM validation accuracy - margin "
            "(stratified folds of the training rows)"
        ),
        "training_rule": f"training accuracy >= {config['trained_accuracy']}",
        "reference": reference,
        "quadrature_convergence": quadrature_convergence(runs, **adaptive),
        "quadrature_convergence_by_dataset": by_dataset,
        "capped_convergence": quadrature_convergence(runs, **capped),
        "uniform_convergence": quadrature_convergence(runs, **uniform),
        "adaptive_evaluations": {
            "median_per_run": float(statistics.median(evaluations)),
            "max_per_run": max(evaluations),
            "total": sum(evaluations) + sum(r["adaptive_evaluations_check"] for r in runs),
        },
        "label": "exploratory",
    }
    return StudyResult(runs=runs, effects=effects, claims=claims, meta=meta)


REALDATA = Study(
    name="realdata",
    help="Part II's models on scikit-learn's bundled datasets: E1-E3 per dataset (exploratory)",
    scales=tuple(REALDATA_SCALES),
    configure=realdata_config,
    cells=realdata_cells,
    analyse=analyse_realdata_study,
    arguments=(
        Argument("--seeds", "seeds", "number of seeds", positive_int, seed_range),
        Argument("--epochs", "epochs", "fixed budget", positive_int),
        Argument("--datasets", "datasets", "comma-separated", name_list(tuple(DATASETS))),
    ),
    report=lambda result: [
        f"{claim['dataset']:>14} {claim['claim']:>14}: {interval_text(claim, '+.4f')} "
        f"{claim['verdict']}"
        for claim in result.claims
    ],
    estimate=estimated_seconds,
)
"""The real-data study (module docstring; :mod:`curvlab.studies.study`)."""
