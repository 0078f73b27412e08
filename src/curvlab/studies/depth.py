"""The depth study: representation curvature of attention stacks against depth L, scale-free.

One run = (regime, model, depth L, seed): build the classifier of
:func:`curvlab.models.attention.build_classifier` from the seed, measure the curvature of its
representation sheet x ∈ P ↦ pooled state after the last block (P = [-1, 1]², Σ = I) at
initialisation, train it on one nonlinear task (:func:`curvlab.data.tasks.make_task`,
:func:`curvlab.models.training.fit`), and measure again.  Regimes:

    structured   one ReadWriteBlock tied over the L layers: it reads the first d − m coordinates
                 and writes only the last m, so h_L = h_0 + L·(0, Δ(x)) (the coherent regime)
    generic      L untied residual AttentionBlocks reading and writing all d coordinates

Each phase ("init", "trained") gives one tidy record with the sheet statistics of
:func:`curvlab.measurement.sheets.representation_curvature`
(:data:`~curvlab.measurement.sheets.SHEET_METRICS`)::

    curvature_total_abs          ∫_P |K| dA   (area of the Gauss image: scale-free, the headline)
    curvature_dimensionless      K̄ · A        (mean K over P times the image area: scale-free)
    curvature_positive_fraction  share of the image area with K > 0
    curvature_mean_abs           mean |K| over P (raw, NOT scale-free: shown for the artefact)

and the Poole et al. measures of 1-D probes (straight chords of P, :data:`PROBES`): the mean
Grassmannian length L_G = ∫ κ ‖v‖ dθ (scale-free), Euclidean length L_E and mean κ = L_G / L_E.

The companions of this study live in their own modules: the growth-law fits in
:mod:`curvlab.analysis.growth`, the structured regime in closed form in
:mod:`curvlab.studies.graph_law`, Poole et al.'s random tanh anchor in
:mod:`curvlab.studies.poole`.  ``python -m curvlab depth --out DIR`` runs this study
(DIR/depth.csv), ``python -m curvlab poole --out DIR`` the anchor (:mod:`curvlab.cli`).

The protocol (models, task, widths, optimiser, epochs, grids, probes) is this library's own:
the paper's settings are not known.  :data:`curvlab.studies.protocol.DEPTH_SCALES` holds three
sizes; ``small`` (depths 1, 2, 4, 8, five seeds) runs in about a minute on two CPU cores.
Runs are cached on disk (:mod:`curvlab.studies.cache`) keyed by configuration and by the code
of every module this one imports.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence

import torch

from curvlab.analysis.growth import growth_laws
from curvlab.data.tasks import TASKS, make_task
from curvlab.geometry.measures import curve_measures
from curvlab.measurement.sheets import representation_curvature, sheet_curvature
from curvlab.models.attention import VARIANTS, build_classifier, representation_map
from curvlab.models.training import evaluate, fit
from curvlab.studies.protocol import DEPTH_MODELS, DEPTH_SCALES, REGIMES, study_config
from curvlab.studies.result import StudyResult
from curvlab.studies.study import Argument, Cells, Context, Study, positive_int, seed_range

__all__ = [
    "DEPTH",
    "DEPTH_MODELS",
    "PHASES",
    "PROBES",
    "REGIMES",
    "analyse_depth",
    "depth_cells",
    "depth_config",
    "growth_laws",  # re-exported: the chapters read the study and its law from one place
    "probe_lengths",
    "sheet_curvature",  # re-exported from curvlab.measurement.sheets, likewise
]

PHASES: tuple[str, ...] = ("init", "trained")
"""When a representation is measured: at initialisation and after training."""

PROBES: tuple[tuple[tuple[float, float], tuple[float, float]], ...] = (
    ((-0.9, -0.3), (0.9, -0.3)),
    ((-0.8, 0.8), (0.8, -0.6)),
)
"""The 1-D probes: straight chords (start, end) of the input patch, measured as open curves."""


_SWEPT = ("regimes", "models", "depths", "seeds")
_CHECKS = {
    "regimes": REGIMES,
    "models": VARIANTS,
    "task": TASKS,
    "resolution": 2,
    "probe_points": 2,
}
_CHECKS |= {"depths": 1, "seeds": 0}


def depth_config(scale: str = "small", **overrides) -> dict:
    """The depth study's configuration at ``scale`` with ``overrides`` (unknown keys rejected).

    >>> config = depth_config("small", seeds=[0, 1])
    >>> config["depths"], config["seeds"], config["task"]
    ([1, 2, 4, 8], [0, 1], 'circles')
    """
    return study_config(DEPTH_SCALES, scale, overrides, _CHECKS, study="depth study")


# ---------------------------------------------------------------------------------------------
# measuring one map


def _chord(start: Sequence[float], end: Sequence[float]) -> Callable:
    a = torch.tensor(start, dtype=torch.float64)
    b = torch.tensor(end, dtype=torch.float64)

    def point(t: torch.Tensor) -> torch.Tensor:
        return a + t * (b - a)  # (2,)

    return point


def probe_lengths(f: Callable, probes=PROBES, points: int = 32) -> dict:
    """Mean Poole measures of f's image of the straight chords ``probes`` of the input patch.

    Each probe (start, end) is the open curve θ ∈ [0, 1] ↦ start + θ (end − start), measured
    by :func:`curvlab.geometry.measures.curve_measures` (Gauss–Legendre, ``points`` nodes).  Returns
    ``grassmannian_length`` (mean L_G, scale-free), ``euclidean_length`` (mean L_E) and
    ``curve_curvature_mean`` (mean of L_G / L_E, raw).  An affine f gives L_G = 0.

    >>> import torch
    >>> lengths = probe_lengths(lambda x: torch.cat([x, x[:1] ** 2]), points=64)
    >>> lengths["grassmannian_length"] > 0
    True
    """
    measured = [
        curve_measures(f, _chord(start, end), (0.0, 1.0), points, closed=False)
        for start, end in probes
    ]
    return {
        "grassmannian_length": statistics.fmean(m.grassmannian_length for m in measured),
        "euclidean_length": statistics.fmean(m.euclidean_length for m in measured),
        "curve_curvature_mean": statistics.fmean(m.mean_curvature for m in measured),
    }


# ---------------------------------------------------------------------------------------------
# the attention study


def _build(run_config: dict):
    structured = run_config["regime"] == "structured"
    return build_classifier(
        run_config["model"],
        depth=run_config["depth"],
        d_model=run_config["d_model"],
        n_heads=run_config["n_heads"],
        n_tokens=run_config["n_tokens"],
        residual=run_config["residual"],
        structured=structured,
        write_dim=run_config["write_dim"],
        seed=run_config["seed"],
    )


def _measure(model, run_config: dict) -> dict:
    cpu_model = model.to("cpu")
    stats = representation_curvature(cpu_model, resolution=run_config["resolution"])
    lengths = probe_lengths(representation_map(cpu_model), points=run_config["probe_points"])
    return {**stats, **lengths}


def _run(run_config: dict) -> list[dict]:
    start = time.perf_counter()
    device = run_config["device"]
    data = make_task(
        run_config["task"],
        n_train=run_config["n_train"],
        n_test=run_config["n_test"],
        seed=run_config["seed"],
        noise=run_config["noise"],
    )
    model = _build(run_config)
    key = {k: run_config[k] for k in ("regime", "model", "depth", "seed")}
    tested = evaluate(model, data.test_points, data.test_labels, device=device)
    init = {**key, "phase": "init", "accuracy": tested["accuracy"], **_measure(model, run_config)}
    fitted = fit(
        model,
        data.train_points,
        data.train_labels,
        epochs=run_config["epochs"],
        learning_rate=run_config["learning_rate"],
        seed=run_config["seed"],
        device=device,
    )
    tested = evaluate(model, data.test_points, data.test_labels, device=device)
    trained = {
        **key,
        "phase": "trained",
        "accuracy": tested["accuracy"],
        "train_accuracy": fitted["train_accuracy"],
        **_measure(model, run_config),
    }
    seconds = time.perf_counter() - start
    return [{**init, "seconds": seconds}, {**trained, "seconds": seconds}]


def depth_cells(config: dict, context: Context) -> list[Cells]:
    """One cell per (regime, model, depth, seed): the config's run settings with one of each,
    on the run's device."""
    base = {k: v for k, v in config.items() if k not in _SWEPT}
    configs = [
        {**base, "regime": regime, "model": model, "depth": depth, "seed": seed}
        | {"device": context.device}
        for regime in config["regimes"]
        for model in config["models"]
        for depth in config["depths"]
        for seed in config["seeds"]
    ]
    return [Cells("depth", _run, configs, unit="run")]


def analyse_depth(config: dict, results: list, context: Context) -> StudyResult:
    """Two records per run (module docstring of :func:`_run`'s records) and the growth laws
    (:func:`curvlab.analysis.growth.growth_laws`) in ``meta``."""
    (runs,) = results
    records = [record for run in runs for record in run]
    meta = {"config": config, "growth_laws": growth_laws(records)}
    return StudyResult(runs=records, meta=meta, names={"runs": "depth.csv"})


def report_depth(result: StudyResult) -> list[str]:
    """One line per growth law: regime, model, phase, the law and the means by depth."""
    lines = []
    for row in result.meta["growth_laws"]:
        if row["flat"] or row["exponent"] is None:
            law = "flat" if row["flat"] else "no fit (one depth)"
        else:
            law = f"L^{row['exponent']:.2f} (r² {row['r_squared']:.2f})"
        means = ", ".join(f"{m:.3g}" for m in row["means"])
        lines.append(
            f"{row['regime']:>10} {row['model']:>15} {row['phase']:>7}: ∫|K|dA {law}; {means}"
        )
    return lines


DEPTH = Study(
    name="depth",
    help="curvature against depth of attention stacks (DIR/depth.csv)",
    scales=tuple(DEPTH_SCALES),
    configure=depth_config,
    cells=depth_cells,
    analyse=analyse_depth,
    arguments=(
        Argument("--seeds", "seeds", "seeds 0..n-1", parse=positive_int, convert=seed_range),
        Argument(
            "--depths",
            "depths",
            "depths L (default: the scale's)",
            parse=positive_int,
            nargs="+",
            convert=list,
        ),
    ),
    report=report_depth,
)
"""The depth study (:mod:`curvlab.studies.study`): two records per run, each with regime,
model, depth, seed, phase ("init" or "trained"), test accuracy (and train accuracy after
training), the sheet metrics, ``sheet_area`` and node counts, the probe lengths of
:func:`probe_lengths`, and the run's wall time ``seconds`` (as first computed).

>>> import tempfile
>>> from curvlab.studies.study import Options, run_study
>>> with tempfile.TemporaryDirectory() as d:
...     result = run_study(DEPTH, "small", Options(device="cpu", directory=d, progress=False),
...                        regimes=["structured"], models=["ungated"], depths=[1], seeds=[0],
...                        epochs=1, resolution=3)
>>> [(r["phase"], r["curvature_nodes"]) for r in result.runs]
[('init', 9), ('trained', 9)]
"""
