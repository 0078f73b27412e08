"""The real-data study: Part II's five models on scikit-learn's bundled datasets (exploratory).

What is trained.  For every dataset of the scale (:mod:`curvlab.data.realdata`: digits,
breast cancer, wine as binary tasks on token sequences) and every model of
:data:`curvlab.models.attention.VARIANTS`, one classifier per seed s, built by
:func:`~curvlab.models.attention.build_classifier` with ``token_width`` = the dataset's w,
``n_tokens`` = its T, the scale's ``d_model`` (at least the widest token, breast cancer's
w = 10, so no token is projected below its width), ``n_heads``, ``depth`` and ``pooling``,
initialised from s, on the split ``load_tokens(dataset, seed=s)``.  The seeds of one
(dataset, model) are trained together by :func:`~curvlab.models.ensemble.train_ensemble`
(float32, full-batch Adam by the hand-batched ``backend`` "einsum", which follows the
module's own trajectory, every measurement by the module; the scale's ``epochs``,
``learning_rate``, ``weight_decay``, ``schedule``): a fixed budget, no retraining ladder;
each run's loss plateau (:func:`~curvlab.models.ensemble.plateau`) is recorded as
``converged``.  The seed is the
independent unit and pairs the models (same split, same triangles).

The protocol, written before any run of this study was looked at:

- **Near-linear datasets.**  For each dataset and seed, scikit-learn's
  ``LogisticRegression(C=logistic_c, max_iter=logistic_max_iter)`` (lbfgs, L2, the defaults
  otherwise) is fitted on the seed's training tokens flattened to T·w features and
  standardised with the training rows' mean and sd (``StandardScaler``), and scored on the
  test rows.  A dataset is **near-linear** when the logistic regression's mean test accuracy
  over seeds is at least the best model's mean test accuracy minus one point (0.01,
  :data:`ANALYSIS` ``accuracy_margin``): within one point of the best model, or better.  The
  study records both numbers, the best model and the verdict in ``effects`` (one row a dataset).
- **Curvature** of a trained run: for each of ``triangles`` triangles of three training inputs
  of one class (:func:`~curvlab.measurement.slices.draw_triangles`, classes alternating,
  from ``numpy.random.default_rng([TRIANGLE_SEED, s])``, the same for every model of seed s),
  ∫|K| dA of the pooled representation sheet over the triangle
  (:mod:`curvlab.measurement.slices`: the affine slice through the three, K and dA by the
  Gauss-equation engine in float64, the centroid rule on the P-subdivision of the triangle with
  P = ``resolution``, the domain the triangle for every P).  The run's
  ``curvature_total_abs`` is the mean over its triangles; ``curvature_total_abs_fine`` the same
  at 2P = ``resolution_check``.  The quadrature's convergence is reported as Part II's: the
  median and 90th percentile over runs of |log(I_P / I_2P)|
  (:func:`curvlab.analysis.empirical.quadrature_convergence`), against
  ``convergence_threshold`` (0.05), in ``meta["quadrature_convergence"]``.
- **Claims**, per dataset, all **exploratory** (nothing here was planned before Part II's
  results were seen), the gated model ``gated_elementwise`` against the baseline ``ungated``,
  paired by seed (:mod:`curvlab.analysis.stats`):

  E1 (paper: gated more curved): the mean paired difference of log ∫|K| dA, t interval;
  E2 (paper: gated more accurate where the boundary is nonlinear), on a dataset that is not
  near-linear: the mean paired difference of test accuracy, t interval;
  E2-linear (paper: no advantage where the boundary is linear), on a near-linear dataset:
  TOST of the same difference against ±``accuracy_margin``, its 90% interval;
  E3 (paper: curvature tracks accuracy): the within dataset × model Pearson r of log ∫|K| dA
  against test accuracy over all five models' runs
  (:func:`curvlab.analysis.association.within_cell_correlation`, seed-cluster bootstrap
  interval), p from the permutation null that keeps each cell's values
  (:func:`~curvlab.analysis.association.permutation_null`, two-sided).

  The directional claims (E1, E2, E3 of every dataset) form one Holm family; the equivalence
  claims are judged by their TOST p.  The paired p are exact sign-flip p (the t-test's beside
  them, ``p_t``; :mod:`curvlab.analysis.randomization`).  Verdicts follow
  :mod:`curvlab.analysis.stats`'s rules, "undecidable" where the seeds cannot decide
  (:mod:`curvlab.analysis.decidability`'s fields in each record): at 4 seeds a paired p is
  >= 0.125 and E3's bootstrap gets no interval (35 distinct resamples; ``interval_reason``).

:data:`REALDATA` (run by :func:`curvlab.studies.study.run_study`) returns a
:class:`~curvlab.studies.result.StudyResult`: ``runs`` (one row a
trained model), ``effects`` (one row a dataset: the near-linear protocol), ``claims`` and
``meta`` (configuration, the near-linear rule, the quadrature's convergence, timings).  With
``progress`` it first prints :func:`estimated_seconds` of the configuration.  The scales' settings
and how the small one came to be what it is: :data:`~curvlab.studies.protocol.REALDATA_SCALES`.
"""

from __future__ import annotations

import math

import torch

from curvlab import arguments
from curvlab.analysis.empirical import quadrature_convergence
from curvlab.analysis.realdata_claims import ANALYSIS, PREDICTIONS, analyse_realdata
from curvlab.data.realdata import DATASETS, TOKEN_SHAPES, load_tokens
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
    "measure_logistic_cell",
    "measure_realdata_cell",
    "realdata_cells",
    "realdata_config",
]

TRIANGLE_SEED = 36
"""The first word of every run's triangle generator, ``default_rng([TRIANGLE_SEED, seed])``."""

_SECONDS_PER_SEED_EPOCH = {"digits": 0.0135, "breast_cancer": 0.004, "wine": 0.0025}
"""Training: CPU seconds per seed and epoch of one model at d_model = 10, measured on one core
(``OMP_NUM_THREADS=1``) with the small scale's settings."""

_SECONDS_PER_NODE = 2.7e-4
"""Curvature: CPU seconds per quadrature node of one triangle of one run at d_model = 10."""


def estimated_seconds(config: dict) -> float:
    """A rough estimate of the study's time on one core from an empty run cache: the measured
    costs above times the number of seeds, epochs, models, triangles and nodes (P² + (2P)²),
    scaled by (d_model / 10)² (a guess for a wider model, not a measurement).

    >>> small = estimated_seconds(realdata_config("small"))
    >>> small < estimated_seconds(realdata_config("medium"))
    True
    """
    scale = (config["d_model"] / 10) ** 2
    seeds, models = len(config["seeds"]), len(config["models"])
    nodes = config["resolution"] ** 2 + config["resolution_check"] ** 2
    total = 0.0
    for dataset in config["datasets"]:
        train = _SECONDS_PER_SEED_EPOCH[dataset] * config["epochs"]
        curvature = _SECONDS_PER_NODE * config["triangles"] * nodes
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
    "resolution": 1,
    "resolution_check": 2,
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
    for key in ("learning_rate", "logistic_c"):
        arguments.number(key, config[key], low=0, low_open=True)
    if not isinstance(config["weight_decay"], int | float) or config["weight_decay"] < 0:
        raise ValueError(f"weight_decay: expected a number >= 0, got {config['weight_decay']!r}")
    arguments.fraction("test_fraction", config["test_fraction"])
    return config


def _log(value):
    return math.log(value) if value is not None and value > 0 else None


def measure_realdata_cell(config: dict) -> list[dict]:
    """Train the seeds of one (dataset, model) together and measure every run."""
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
    corners = []
    for task, s in zip(tasks, seeds, strict=True):
        drawn = draw_triangles(task.train_labels.numpy(), config["triangles"], [TRIANGLE_SEED, s])
        corners.append(torch.stack([task.train_tokens[list(t)] for t in drawn]))
    corners = torch.stack(corners).to(device)  # (E, M, 3, T, w) float64
    coarse = slice_curvature(ens, corners, config["resolution"])
    fine = slice_curvature(ens, corners, config["resolution_check"])
    rows = []
    for e, s in enumerate(seeds):
        curvature_total_abs = float(coarse["curvature_total_abs"][e].mean())
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
                "converged": bool(fitted["converged"][e]),
                "plateau_change": float(fitted["plateau_change"][e]),
                "curvature_total_abs": curvature_total_abs,
                "curvature_total_abs_fine": float(fine["curvature_total_abs"][e].mean()),
                "log_curvature_total_abs": _log(curvature_total_abs),
                "curvature_total": float(coarse["curvature_total"][e].mean()),
                "sheet_area": float(coarse["sheet_area"][e].mean()),
                "immersed_share": float(coarse["immersed_share"][e].min()),
            }
        )
    return rows


def measure_logistic_cell(config: dict) -> list[dict]:
    """The protocol's logistic regression on each seed's split of one dataset."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    rows = []
    for s in config["seeds"]:
        task = load_tokens(config["dataset"], seed=s, test_fraction=config["test_fraction"])
        train = task.train_tokens.flatten(1).numpy()  # (n_train, T·w)
        test = task.test_tokens.flatten(1).numpy()
        scaler = StandardScaler().fit(train)
        fit = LogisticRegression(C=config["logistic_c"], max_iter=config["logistic_max_iter"])
        fit.fit(scaler.transform(train), task.train_labels.numpy())
        accuracy = float(fit.score(scaler.transform(test), task.test_labels.numpy()))
        rows.append({"dataset": config["dataset"], "seed": s, "test_accuracy": accuracy})
    return rows


def realdata_cells(config: dict, context: Context) -> list[Cells]:
    """One cell per (dataset, model), its seeds trained together, then the logistic regression
    on each dataset's splits."""
    base = {k: v for k, v in config.items() if k not in ("datasets", "models")}
    base["device"] = context.device
    cells = [
        {**base, "dataset": dataset, "model": model}
        for dataset in config["datasets"]
        for model in config["models"]
    ]
    logistic = [
        {k: base[k] for k in ("seeds", "test_fraction", "logistic_c", "logistic_max_iter")}
        | {"dataset": dataset}
        for dataset in config["datasets"]
    ]
    return [
        Cells("realdata", measure_realdata_cell, cells),
        Cells("realdata-logistic", measure_logistic_cell, logistic, parallel=False),
    ]


def analyse_realdata_study(config: dict, results: list, context: Context) -> StudyResult:
    """The runs, the near-linear protocol's effects and the claims
    (:func:`curvlab.analysis.realdata_claims.analyse_realdata`), the quadrature's convergence
    in ``meta``."""
    runs = [row for cell in results[0] for row in cell]
    logistic = [row for cell in results[1] for row in cell]
    effects, claims = analyse_realdata(runs, logistic, config["seeds"])
    convergence = quadrature_convergence(
        runs,
        resolution=config["resolution"],
        resolution_check=config["resolution_check"],
        threshold=config["convergence_threshold"],
        quantile=True,
    )
    meta = {
        "config": {**config, "device": context.device},
        "analysis": dict(ANALYSIS),
        "triangle_seed": TRIANGLE_SEED,
        "near_linear_rule": "logistic accuracy >= best model's mean test accuracy - margin",
        "logistic": logistic,
        "quadrature_convergence": convergence,
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
        f"{claim['dataset']:>14} {claim['claim']:>9}: {interval_text(claim, '+.4f')} "
        f"{claim['verdict']}"
        for claim in result.claims
    ],
    estimate=estimated_seconds,
)
"""The real-data study (module docstring; :mod:`curvlab.studies.study`)."""
