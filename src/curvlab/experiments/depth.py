"""The depth study: representation curvature against depth L, gated and ungated, scale-free.

Two studies and the statistics that summarise them.

**Attention stacks** (:func:`depth_study`).  One run = (regime, model, depth L, seed): build the
classifier of :func:`curvlab.attention.build_classifier` from the seed, measure the curvature of
its representation sheet x ∈ P ↦ pooled state after the last block (P = [-1, 1]², Σ = I) at
initialisation, train it on one nonlinear task (:func:`curvlab.tasks.make_task`,
:func:`curvlab.training.fit`), and measure again.  Regimes:

    structured   one ReadWriteBlock tied over the L layers: it reads the first d − m coordinates
                 and writes only the last m, so h_L = h_0 + L·(0, Δ(x)) (the coherent regime)
    generic      L untied residual AttentionBlocks reading and writing all d coordinates

Each phase ("init", "trained") gives one tidy record with the sheet statistics of
:func:`curvlab.experiments.decision.representation_curvature` (the same as chapter 7's)::

    curvature_total_abs          ∫_P |K| dA   (area of the Gauss image: scale-free, the headline)
    curvature_dimensionless      K̄ · A        (mean K over P times the image area: scale-free)
    curvature_positive_fraction  share of the image area with K > 0
    curvature_mean_abs           mean |K| over P (raw, NOT scale-free: shown for the artefact)

and the Poole et al. measures of 1-D probes (straight chords of P, :data:`PROBES`): the mean
Grassmannian length L_G = ∫ κ ‖v‖ dθ (scale-free), Euclidean length L_E and mean κ = L_G / L_E.

**Poole et al.'s anchor** (:func:`poole_study`).  Random deep tanh networks
h^l = W^l tanh(h^{l−1}) + b^l, W^l_ij ~ N(0, σ_w²/N), b^l_i ~ N(0, σ_b²), fed a great circle
(and a patch of a 2-sphere) of radius √(N q*), in the ordered (σ_w² = 1) and chaotic (σ_w² = 4)
phases, σ_b² = 0.3.  Mean field (:func:`mean_field_chi1`):
q* = σ_w² E_z[tanh(√q* z)²] + σ_b², χ₁ = σ_w² E_z[tanh'(√q* z)²]; chaotic means χ₁ > 1, where
L_G grows like (√χ₁)^l while κ saturates; ordered means χ₁ < 1, where the image shrinks, so κ
and mean |K| grow although L_G and ∫|K| dA stay bounded: the scale artefact.

Growth laws (:func:`fit_power_law`, :func:`fit_exponential`, :func:`growth_laws`): least
squares of log(value) on log L (power law, slope = the exponent) or on L (exponential, growth
factor per layer), over every run (all seeds), with the coefficient of determination r².

The protocol (models, task, widths, optimiser, epochs, grids, probes) is this library's own:
the paper's settings are not known.  :data:`SCALES` holds three sizes; ``small`` (depths 1, 2,
4, 8, five seeds) runs in about a minute on two CPU cores.  Runs are cached on disk
(:mod:`curvlab.experiments.cache`) keyed by configuration and source code.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections.abc import Callable, Iterable, Sequence

import numpy as np
import torch
from tqdm.auto import tqdm

from curvlab.attention import VARIANTS, build_classifier, representation_map
from curvlab.experiments import write_csv
from curvlab.experiments.cache import cached
from curvlab.experiments.config import study_config
from curvlab.experiments.decision import PATCH, representation_curvature
from curvlab.measures import curve_measures, quadrature_grid, sheet_measures
from curvlab.tasks import TASKS, make_task
from curvlab.training import evaluate, fit, resolve_device

__all__ = [
    "CODE_MODULES",
    "DEPTH_MODELS",
    "PHASES",
    "POOLE_PHASES",
    "PROBES",
    "REGIMES",
    "SCALES",
    "SHEET_METRICS",
    "add_cli_arguments",
    "add_depth_arguments",
    "depth_config",
    "depth_study",
    "draw_structured_layer",
    "fit_exponential",
    "fit_power_law",
    "graph_law_curvature",
    "graph_law_tail_constant",
    "graph_law_total_curvature",
    "growth_laws",
    "mean_field_chi1",
    "median_of",
    "poole_study",
    "probe_lengths",
    "random_tanh_network",
    "run_cli",
    "run_depth",
    "sheet_curvature",
    "structured_growth_summary",
    "structured_increment",
    "structured_regime_study",
    "structured_stack_in_x",
    "structured_stack_map",
    "unstructured_stack_map",
]

CODE_MODULES: tuple[str, ...] = (
    "curvlab.attention",
    "curvlab.curvature",
    "curvlab.experiments.decision",
    "curvlab.experiments.depth",
    "curvlab.measures",
    "curvlab.tasks",
    "curvlab.training",
)
"""The modules a cached run depends on: a change to any of their sources recomputes it."""

REGIMES: tuple[str, ...] = ("structured", "generic")
"""Weight-tied read/write stacks (coherent increments) and untied generic residual stacks."""

DEPTH_MODELS: tuple[str, ...] = ("ungated", "gated_headwise")
"""The variants compared by default (any of :data:`curvlab.attention.VARIANTS` is accepted)."""

PHASES: tuple[str, ...] = ("init", "trained")
"""When a representation is measured: at initialisation and after training."""

SHEET_METRICS: tuple[str, ...] = (
    "curvature_total_abs",
    "curvature_dimensionless",
    "curvature_positive_fraction",
    "curvature_mean_abs",
)
"""The sheet statistics of every record (the same names as the decision study's)."""

PROBES: tuple[tuple[tuple[float, float], tuple[float, float]], ...] = (
    ((-0.9, -0.3), (0.9, -0.3)),
    ((-0.8, 0.8), (0.8, -0.6)),
)
"""The 1-D probes: straight chords (start, end) of the input patch, measured as open curves."""

POOLE_PHASES: dict[str, tuple[float, float]] = {"ordered": (1.0, 0.3), "chaotic": (4.0, 0.3)}
"""(σ_w², σ_b²) of Poole et al.'s two phases of random deep tanh networks."""

_MODEL = {"d_model": 4, "n_heads": 1, "n_tokens": 2, "write_dim": 2, "residual": True}
_FIT = {"task": "circles", "n_train": 128, "n_test": 256, "noise": 0.05, "epochs": 40}
_POOLE = {"width": 48, "max_depth": 8, "curve_points": 96, "sphere_grid": 8}

SCALES: dict[str, dict] = {
    "small": {
        **_MODEL,
        **_FIT,
        **_POOLE,
        "learning_rate": 0.05,
        "regimes": list(REGIMES),
        "models": list(DEPTH_MODELS),
        "depths": [1, 2, 4, 8],
        "seeds": [0, 1, 2, 3, 4],
        "grid": 8,
        "probe_points": 24,
        "poole_seeds": [0, 1, 2, 3, 4],
    },
    "medium": {
        **_MODEL,
        **_FIT,
        **_POOLE,
        "d_model": 8,
        "n_heads": 2,
        "n_tokens": 4,
        "n_train": 256,
        "n_test": 512,
        "epochs": 150,
        "learning_rate": 0.02,
        "regimes": list(REGIMES),
        "models": list(DEPTH_MODELS),
        "depths": [1, 2, 4, 8, 16],
        "seeds": list(range(10)),
        "grid": 16,
        "probe_points": 48,
        "width": 200,
        "max_depth": 12,
        "curve_points": 256,
        "sphere_grid": 12,
        "poole_seeds": list(range(10)),
    },
    "large": {
        **_MODEL,
        **_FIT,
        **_POOLE,
        "d_model": 16,
        "n_heads": 2,
        "n_tokens": 8,
        "write_dim": 4,
        "n_train": 1024,
        "n_test": 2048,
        "epochs": 300,
        "learning_rate": 0.01,
        "regimes": list(REGIMES),
        "models": ["ungated", "gated_headwise", "gated_elementwise"],
        "depths": [1, 2, 4, 8, 16, 32],
        "seeds": list(range(20)),
        "grid": 24,
        "probe_points": 64,
        "width": 1000,
        "max_depth": 16,
        "curve_points": 512,
        "sphere_grid": 16,
        "poole_seeds": list(range(20)),
    },
}
"""Study sizes.  A config holds one run's settings plus the lists it sweeps (``regimes``,
``models``, ``depths``, ``seeds``), the grid (points per axis), the probes' quadrature points,
and the Poole anchor's network ``width``, ``max_depth`` and ``poole_seeds``."""

_SWEPT = ("regimes", "models", "depths", "seeds")
_CHECKS = {"regimes": REGIMES, "models": VARIANTS, "task": TASKS, "grid": 2, "probe_points": 2}
_CHECKS |= {"depths": 1, "seeds": 0, "poole_seeds": 0, "width": 3, "max_depth": 1}


def depth_config(scale: str = "small", **overrides) -> dict:
    """The depth study's configuration at ``scale`` with ``overrides`` (unknown keys rejected).

    >>> config = depth_config("small", seeds=[0, 1])
    >>> config["depths"], config["seeds"], config["task"]
    ([1, 2, 4, 8], [0, 1], 'circles')
    """
    return study_config(SCALES, scale, overrides, _CHECKS, study="depth study")


# ---------------------------------------------------------------------------------------------
# measuring one map


def sheet_curvature(f: Callable, patch=PATCH, points_per_axis: int = 12, cov=None) -> dict:
    """Curvature statistics of any surface f: (2,) -> (d,) over ``patch`` (midpoint grid).

    The same statistics, under the same names, as
    :func:`curvlab.experiments.decision.representation_curvature` computes for a classifier:
    ``curvature_total_abs`` = ∫|K| dA, ``curvature_dimensionless`` = K̄·A,
    ``curvature_positive_fraction``, ``curvature_mean_abs`` = mean |K| over the patch (raw),
    ``area``, from :func:`curvlab.measures.sheet_measures`; nodes where f is not an immersion
    are excluded and counted.  Scaling f by c
    multiplies K by 1/c² and A by c², so only ``curvature_mean_abs`` and ``area`` change.

    >>> import torch
    >>> sphere = lambda x: 2 * torch.stack([torch.sin(x[0]) * torch.cos(x[1]),
    ...                                     torch.sin(x[0]) * torch.sin(x[1]), torch.cos(x[0])])
    >>> stats = sheet_curvature(sphere, [(0.5, 2.5), (0.0, 3.0)], 16)
    >>> round(stats["curvature_mean_abs"], 12), stats["curvature_positive_fraction"]
    (0.25, 1.0)
    """
    measures = sheet_measures(f, patch, points_per_axis, cov)  # one pass of the engine
    stats = {
        "curvature_nodes": measures.immersed_nodes,
        "non_immersed_nodes": measures.non_immersed_nodes,
    }
    return {
        **stats,
        "curvature_total_abs": measures.total_absolute_curvature,
        "curvature_dimensionless": measures.dimensionless_curvature,
        "curvature_positive_fraction": measures.positive_fraction,
        "curvature_mean_abs": measures.mean_abs_curvature,
        "area": measures.area,
    }


def _chord(start: Sequence[float], end: Sequence[float]) -> Callable:
    a = torch.tensor(start, dtype=torch.float64)
    b = torch.tensor(end, dtype=torch.float64)

    def point(t: torch.Tensor) -> torch.Tensor:
        return a + t * (b - a)  # (2,)

    return point


def probe_lengths(f: Callable, probes=PROBES, points: int = 32) -> dict:
    """Mean Poole measures of f's image of the straight chords ``probes`` of the input patch.

    Each probe (start, end) is the open curve θ ∈ [0, 1] ↦ start + θ (end − start), measured
    by :func:`curvlab.measures.curve_measures` (Gauss–Legendre, ``points`` nodes).  Returns
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
    stats = representation_curvature(cpu_model, points_per_axis=run_config["grid"])
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


def run_depth(run_config: dict, *, directory=None, refresh: bool = False) -> list[dict]:
    """One cached run (both phases): ``run_config`` is a study config whose swept lists are
    replaced by single ``regime``, ``model``, ``depth``, ``seed`` entries, plus ``device``."""
    return cached(
        _run, run_config, name="depth", modules=CODE_MODULES, directory=directory, refresh=refresh
    )


def depth_study(
    scale: str = "small",
    *,
    directory=None,
    refresh: bool = False,
    progress: bool = False,
    device=None,
    **overrides,
) -> list[dict]:
    """Run (or read from the cache) the attention depth study; tidy records, two per run.

    Sweeps regimes × models × depths × seeds of :func:`depth_config`.  Each record: regime,
    model, depth, seed, phase ("init" or "trained"), test accuracy (and train accuracy after
    training), the :data:`SHEET_METRICS`, area and node counts, the probe lengths of
    :func:`probe_lengths`, and the run's wall time ``seconds`` (as first computed).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     records = depth_study(directory=d, regimes=["structured"], models=["ungated"],
    ...                           depths=[1], seeds=[0], epochs=1, grid=3, device="cpu")
    >>> [(r["phase"], r["curvature_nodes"]) for r in records]
    [('init', 9), ('trained', 9)]
    """
    config = depth_config(scale, **overrides)
    device = str(resolve_device(device))
    base = {k: v for k, v in config.items() if k not in (*_SWEPT, *_POOLE, "poole_seeds")}
    runs = [
        (regime, model, depth, seed)
        for regime in config["regimes"]
        for model in config["models"]
        for depth in config["depths"]
        for seed in config["seeds"]
    ]
    records = []
    for regime, model, depth, seed in tqdm(runs, desc="depth study", disable=not progress):
        run_config = {**base, "regime": regime, "model": model, "depth": depth, "seed": seed}
        run_config["device"] = device
        records.extend(run_depth(run_config, directory=directory, refresh=refresh))
    return records


# ---------------------------------------------------------------------------------------------
# growth laws


def _least_squares(x: Sequence[float], y: Sequence[float]) -> tuple[float, float, float]:
    """Slope, intercept and r² of the least-squares line y ≈ slope·x + intercept."""
    xs, ys = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    slope, intercept = np.polyfit(xs, ys, 1)
    residual = float(((ys - (slope * xs + intercept)) ** 2).sum())
    total = float(((ys - ys.mean()) ** 2).sum())
    r_squared = 1.0 - residual / total if total > 0 else 1.0
    return float(slope), float(intercept), r_squared


def _check_fit_data(depths, values, *, positive_depths: bool) -> tuple[list[float], list[float]]:
    depths, values = [float(d) for d in depths], [float(v) for v in values]
    if len(depths) != len(values) or len(set(depths)) < 2:
        raise ValueError(
            f"depths, values: expected equal lengths and at least 2 distinct depths, got "
            f"{len(depths)} depths ({len(set(depths))} distinct) and {len(values)} values"
        )
    if any(not (math.isfinite(v) and v > 0) for v in values):
        raise ValueError("values: a growth law needs finite values > 0 (a flat map has none)")
    if positive_depths and any(not d > 0 for d in depths):
        raise ValueError("depths: a power law needs depths > 0")
    return depths, values


def fit_power_law(depths: Sequence[float], values: Sequence[float]) -> dict:
    """Fit value ≈ C · L^p by least squares of log value on log L: p, C and r² (log scale).

    Every (depth, value) pair counts (pass all seeds).  ValueError for values ≤ 0.

    >>> law = fit_power_law([1, 2, 4, 8], [3.0, 12.0, 48.0, 192.0])
    >>> round(law["exponent"], 12), round(law["prefactor"], 12), round(law["r_squared"], 12)
    (2.0, 3.0, 1.0)
    """
    depths, values = _check_fit_data(depths, values, positive_depths=True)
    slope, intercept, r_squared = _least_squares(
        [math.log(d) for d in depths], [math.log(v) for v in values]
    )
    return {"exponent": slope, "prefactor": math.exp(intercept), "r_squared": r_squared}


def fit_exponential(depths: Sequence[float], values: Sequence[float]) -> dict:
    """Fit value ≈ C · a^L by least squares of log value on L: growth factor a per layer, r².

    >>> law = fit_exponential([1, 2, 3], [2.0, 4.0, 8.0])
    >>> round(law["growth_factor"], 12), round(law["prefactor"], 12), round(law["r_squared"], 12)
    (2.0, 1.0, 1.0)
    """
    depths, values = _check_fit_data(depths, values, positive_depths=False)
    slope, intercept, r_squared = _least_squares(depths, [math.log(v) for v in values])
    return {
        "growth_factor": math.exp(slope),
        "prefactor": math.exp(intercept),
        "r_squared": r_squared,
    }


def growth_laws(
    records: Iterable[dict],
    metric: str = "curvature_total_abs",
    by: Sequence[str] = ("regime", "model", "phase"),
    *,
    flat_tolerance: float = 1e-9,
) -> list[dict]:
    """The power law of ``metric`` against depth per group of ``by``, one tidy row per group.

    Row: the group keys, ``metric``, ``n`` (runs), ``depths``, ``means`` (mean over seeds per
    depth), ``increasing`` (the means strictly increase with depth), ``flat`` (every value below
    ``flat_tolerance``) and the :func:`fit_power_law` of all (depth, value) pairs; when the
    group is flat, or has a value ≤ 0 (a signed metric), ``exponent``, ``prefactor`` and
    ``r_squared`` are None.

    >>> rows = growth_laws([{"g": "a", "depth": d, "m": 5.0 * d} for d in (1, 2, 4)], "m", ["g"])
    >>> rows[0]["increasing"], round(rows[0]["exponent"], 12)
    (True, 1.0)
    """
    groups: dict[tuple, list[dict]] = {}
    for record in records:
        if record.get(metric) is not None:
            groups.setdefault(tuple(record[key] for key in by), []).append(record)
    rows = []
    for key, members in groups.items():
        depths = sorted({r["depth"] for r in members})
        means = [statistics.fmean(r[metric] for r in members if r["depth"] == d) for d in depths]
        flat = all(abs(r[metric]) < flat_tolerance for r in members)
        row = {
            **dict(zip(by, key, strict=True)),
            "metric": metric,
            "n": len(members),
            "depths": depths,
            "means": means,
            "increasing": all(b > a for a, b in zip(means, means[1:], strict=False)),
            "flat": flat,
        }
        positive = all(r[metric] > 0 for r in members)
        if flat or not positive or len(depths) < 2:
            row.update(exponent=None, prefactor=None, r_squared=None)
        else:
            row.update(fit_power_law([r["depth"] for r in members], [r[metric] for r in members]))
        rows.append(row)
    return rows


# ---------------------------------------------------------------------------------------------
# summaries of tidy records


def median_of(records: Iterable[dict], name: str, **where) -> float:
    """The median of ``name`` over the records whose fields equal ``where`` (e.g. over seeds).

    >>> rows = [{"depth": 1, "seed": s, "v": float(s)} for s in range(3)]
    >>> median_of(rows, "v", depth=1)
    1.0
    """
    values = [r[name] for r in records if all(r.get(key) == value for key, value in where.items())]
    if not values:
        raise ValueError(f"where: no record has {where!r}")
    if any(v is None for v in values):
        raise ValueError(f"{name}: missing in some records with {where!r}")
    return float(statistics.median(values))


# ---------------------------------------------------------------------------------------------
# the structured regime, exactly: h_L = (x, L φ(x)), φ = γ a, in closed form


StructuredLayer = tuple[list[list[int]], list, list[int]]
"""(keys 2×2, values (u₁, u₂), gate weights w) of one two-key layer of
:func:`curvlab.symbolic.structured_stack`."""


def _input_symbols():
    import sympy as sp

    return sp.symbols("x1 x2", real=True)


def draw_structured_layer(seed: int) -> StructuredLayer:
    """Keys, values and gate weights of one nondegenerate two-key layer, drawn from ``seed``.

    Keys and gate weights are integers in −2..2, values half-integers in −1..1; a draw is kept
    when u₁ ≠ u₂ and w ∦ k₁ − k₂ (else the gated increment is a ridge, and the stack flat).
    This is the book's choice of layers, not the paper's.

    >>> keys, values, gate = draw_structured_layer(0)
    >>> len(keys), len(values), len(gate), values[0] != values[1]
    (2, 2, 2, True)
    """
    import sympy as sp

    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed: expected an integer >= 0, got {seed!r}")
    generator = torch.Generator().manual_seed(seed)
    while True:
        keys = torch.randint(-2, 3, (2, 2), generator=generator)
        gate = torch.randint(-2, 3, (2,), generator=generator)
        values = torch.randint(-2, 3, (2,), generator=generator)
        ridge = keys[0] - keys[1]
        if values[0] != values[1] and gate[0] * ridge[1] != gate[1] * ridge[0]:
            halves = [sp.Rational(int(v), 2) for v in values]
            return keys.tolist(), halves, gate.tolist()


def structured_stack_in_x(depth, layer: StructuredLayer, gated: bool = True):
    """The weight-tied stack of :func:`curvlab.symbolic.structured_stack`, written in x.

    The library builds it in the rational chart t = eˣ; this substitutes t_i = exp(x_i), so the
    result is the map x ∈ ℝ² ↦ h_L(x) ∈ ℝ³ (a SymPy column in the symbols x1, x2).
    ``depth`` may be a SymPy symbol (the closed form in L) or a positive integer.
    """
    import sympy as sp

    from curvlab.symbolic import structured_stack

    keys, values, gate = layer
    embedding, coords = structured_stack(depth, keys, values, gate if gated else None)
    x1, x2 = _input_symbols()
    return embedding.subs({coords[0]: sp.exp(x1), coords[1]: sp.exp(x2)})


def structured_stack_map(layer: StructuredLayer, depth: int, gated: bool = True) -> Callable:
    """The stack of depth L as a torch map x (2,) → h_L (3,), for the curvature engine.

    >>> f = structured_stack_map(draw_structured_layer(0), 4, gated=False)
    >>> f(torch.zeros(2, dtype=torch.float64)).shape
    torch.Size([3])
    """
    from curvlab.curvature import lambdify_map

    return lambdify_map(structured_stack_in_x(depth, layer, gated), _input_symbols())


def unstructured_stack_map(
    write_directions: Sequence[Sequence[int]], layer: StructuredLayer
) -> Callable:
    """Untied layers of one gated layer's weights, layer ℓ writing along ``write_directions[ℓ]``.

    :func:`curvlab.symbolic.unstructured_stack` in x, as a torch map x (2,) → h (2 + m,).
    """
    import sympy as sp

    from curvlab.curvature import lambdify_map
    from curvlab.symbolic import unstructured_stack

    keys, values, gate = layer
    embedding, coords = unstructured_stack([list(v) for v in write_directions], keys, values, gate)
    x1, x2 = _input_symbols()
    in_x = embedding.subs({coords[0]: sp.exp(x1), coords[1]: sp.exp(x2)})
    return lambdify_map(in_x, (x1, x2))


def structured_increment(layer: StructuredLayer) -> Callable:
    """φ = γ a, one gated layer's increment along the write direction: x (2,) → () (torch)."""
    import sympy as sp

    from curvlab.curvature import lambdify_map

    L = sp.Symbol("L", positive=True)
    third = structured_stack_in_x(L, layer, gated=True)[2].subs(L, 1)
    phi = lambdify_map(sp.Matrix([third]), _input_symbols())
    return lambda x: phi(x)[0]


def _increment_derivatives(phi: Callable, nodes: torch.Tensor):
    """|∇φ|² and det ∇²φ at ``nodes`` (n, 2), by autodiff."""
    from torch.func import grad, hessian, vmap

    slope2 = vmap(grad(phi))(nodes).square().sum(dim=-1)  # (n,)
    det = torch.linalg.det(vmap(hessian(phi))(nodes))  # (n,)
    return slope2, det


def graph_law_curvature(phi: Callable, depth: float, points: torch.Tensor) -> torch.Tensor:
    """K_L = L² det∇²φ / (1 + L²|∇φ|²)² of the graph of Lφ at ``points`` (n, 2), float64.

    >>> saddle = lambda x: x[0] * x[1]
    >>> float(graph_law_curvature(saddle, 1.0, torch.zeros(1, 2, dtype=torch.float64))[0])
    -1.0
    """
    points = torch.as_tensor(points, dtype=torch.float64)
    if points.ndim != 2 or points.shape[-1] != 2:
        raise ValueError(f"points: expected shape (n, 2), got {tuple(points.shape)}")
    slope2, det = _increment_derivatives(phi, points)
    return depth**2 * det / (1 + depth**2 * slope2) ** 2


def _patch_nodes(patch, points_per_axis: int):
    nodes, weights = quadrature_grid(patch, points_per_axis, rule="midpoint")
    return nodes.reshape(-1, 2), weights.reshape(-1)


def graph_law_total_curvature(
    phi: Callable, depth: float, points_per_axis: int = 12, patch=PATCH
) -> float:
    """𝒦(L) = ∫_P L²|det∇²φ| / (1 + L²|∇φ|²)^{3/2} dx, the law of the structured regime.

    Midpoint rule on ``patch`` (the grid of :func:`sheet_curvature`, so the two agree to
    rounding, not only to quadrature error).

    >>> bowl = lambda x: (x[0] ** 2 + x[1] ** 2) / 2
    >>> round(graph_law_total_curvature(bowl, 1e-3, 8) / 1e-6, 4)  # L² ∫|det| dx = 4 L²
    4.0
    """
    nodes, weights = _patch_nodes(patch, points_per_axis)
    slope2, det = _increment_derivatives(phi, nodes)
    return float((weights * depth**2 * det.abs() / (1 + depth**2 * slope2) ** 1.5).sum())


def graph_law_tail_constant(phi: Callable, points_per_axis: int = 12, patch=PATCH) -> float:
    """lim L·𝒦(L) = ∫_P |det∇²φ| |∇φ|⁻³ dx (finite when ∇φ has no zero on P): the 1/L tail."""
    nodes, weights = _patch_nodes(patch, points_per_axis)
    slope2, det = _increment_derivatives(phi, nodes)
    return float((weights * det.abs() / slope2**1.5).sum())


def structured_regime_study(
    seeds: Sequence[int] = (0, 1, 2, 3, 4),
    depths: Sequence[int] = (1, 2, 4, 8, 16, 32, 64, 128, 256),
    points_per_axis: int = 12,
) -> list[dict]:
    """The exact structured regime, measured by the engine and by its law; tidy records.

    For every seed (a layer of :func:`draw_structured_layer`), depth and gate (gated or not):
    ``curvature_total_abs`` of the engine (:func:`sheet_curvature` of
    :func:`structured_stack_map`), ``law`` (:func:`graph_law_total_curvature`; 0 for the
    ungated stack, a cylinder) and, per seed, ``tail_constant``
    (:func:`graph_law_tail_constant`).

    >>> rows = structured_regime_study(seeds=[0], depths=[1, 2], points_per_axis=3)
    >>> [(r["gated"], r["depth"]) for r in rows]
    [(False, 1), (False, 2), (True, 1), (True, 2)]
    """
    records = []
    for seed in seeds:
        layer = draw_structured_layer(seed)
        phi = structured_increment(layer)
        tail = graph_law_tail_constant(phi, points_per_axis)
        for gated in (False, True):
            for depth in depths:
                sheet = sheet_curvature(
                    structured_stack_map(layer, depth, gated), points_per_axis=points_per_axis
                )
                law = graph_law_total_curvature(phi, depth, points_per_axis) if gated else 0.0
                records.append(
                    {
                        "seed": seed,
                        "gated": gated,
                        "depth": depth,
                        "curvature_total_abs": sheet["curvature_total_abs"],
                        "non_immersed_nodes": sheet["non_immersed_nodes"],
                        "law": law,
                        "tail_constant": tail,
                    }
                )
    return records


def structured_growth_summary(structured: Iterable[dict]) -> list[dict]:
    """Per seed, the shape in L of the gated stack's ∫|K| dA from :func:`structured_regime_study`.

    Row: ``seed``, ``small_exponent`` (the power-law exponent over the first two depths; the
    law's small-L limit is 2), ``tail_exponent`` (over the last two; the law's limit is −1),
    ``peak_depth`` (the depth of the largest value), ``tail_ratio`` (L·𝒦(L) at the largest
    depth over the tail constant; → 1) and ``rises_first`` (strictly increasing over the first
    three depths).

    >>> rows = [{"seed": 0, "gated": True, "depth": d, "curvature_total_abs": v,
    ...          "tail_constant": 8.0} for d, v in ((1, 1.0), (2, 4.0), (4, 3.0), (8, 1.0))]
    >>> summary = structured_growth_summary(rows)[0]
    >>> round(summary["small_exponent"], 12), summary["peak_depth"], summary["tail_ratio"]
    (2.0, 2, 1.0)
    """
    by_seed: dict = {}
    for record in structured:
        if record["gated"]:
            by_seed.setdefault(record["seed"], []).append(record)
    if not by_seed:
        raise ValueError("structured: expected records of gated stacks (gated=True)")
    rows = []
    for seed, members in by_seed.items():
        members = sorted(members, key=lambda r: r["depth"])
        depths = [r["depth"] for r in members]
        totals = [r["curvature_total_abs"] for r in members]
        if len(depths) < 3:
            raise ValueError(f"structured: seed {seed} needs at least 3 depths, got {depths}")
        rows.append(
            {
                "seed": seed,
                "small_exponent": fit_power_law(depths[:2], totals[:2])["exponent"],
                "tail_exponent": fit_power_law(depths[-2:], totals[-2:])["exponent"],
                "peak_depth": depths[int(np.argmax(totals))],
                "tail_ratio": totals[-1] * depths[-1] / members[0]["tail_constant"],
                "rises_first": totals[0] < totals[1] < totals[2],
            }
        )
    return rows


# ---------------------------------------------------------------------------------------------
# Poole et al.'s anchor: random deep tanh networks


def mean_field_chi1(sigma_w2: float, sigma_b2: float, *, nodes: int = 201) -> dict:
    """Mean-field length fixed point q* and χ₁ of a random tanh network (Poole et al. 2016).

    q* = σ_w² E_z[tanh(√q* z)²] + σ_b² (iterated from q = 1) and χ₁ = σ_w² E_z[tanh'(√q* z)²],
    z ~ N(0, 1) by Gauss–Hermite quadrature with ``nodes`` nodes.  χ₁ < 1: ordered, > 1: chaotic.

    >>> result = mean_field_chi1(4.0, 0.3)
    >>> result["chi1"] > 1 > mean_field_chi1(1.0, 0.3)["chi1"]
    True
    """
    for name, value in (("sigma_w2", sigma_w2), ("sigma_b2", sigma_b2)):
        if not (isinstance(value, int | float) and math.isfinite(value) and value >= 0):
            raise ValueError(f"{name}: expected a finite number >= 0, got {value!r}")
    if sigma_w2 == 0:
        raise ValueError("sigma_w2: expected a number > 0")
    z, weights = np.polynomial.hermite_e.hermegauss(nodes)
    weights = weights / weights.sum()
    q = 1.0
    for _ in range(1000):
        q_next = sigma_w2 * float((weights * np.tanh(np.sqrt(q) * z) ** 2).sum()) + sigma_b2
        if abs(q_next - q) < 1e-14:
            q = q_next
            break
        q = q_next
    slope = 1.0 - np.tanh(np.sqrt(q) * z) ** 2
    return {"q_star": q, "chi1": sigma_w2 * float((weights * slope**2).sum())}


def random_tanh_network(
    width: int, depth: int, sigma_w2: float, sigma_b2: float, *, seed: int = 0
) -> Callable[[torch.Tensor, int], torch.Tensor]:
    """A random tanh network net(x, l) = h^l, h^0 = x, h^l = W^l tanh(h^{l−1}) + b^l.

    W^l ~ N(0, σ_w²/N) and b^l ~ N(0, σ_b²) entrywise (N = ``width``), float64, drawn from
    ``seed`` without touching the global generator; l runs over 0..``depth``.

    >>> net = random_tanh_network(16, 3, 4.0, 0.3, seed=0)
    >>> net(torch.zeros(16, dtype=torch.float64), 3).shape
    torch.Size([16])
    """
    for name, value in (("width", width), ("depth", depth)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name}: expected a positive integer, got {value!r}")
    generator = torch.Generator().manual_seed(seed)
    scale_w, scale_b = math.sqrt(sigma_w2 / width), math.sqrt(sigma_b2)
    weights = [
        scale_w * torch.randn(width, width, generator=generator, dtype=torch.float64)
        for _ in range(depth)
    ]
    biases = [
        scale_b * torch.randn(width, generator=generator, dtype=torch.float64) for _ in range(depth)
    ]

    def net(x: torch.Tensor, layer: int) -> torch.Tensor:
        if not 0 <= layer <= depth:
            raise ValueError(f"layer: expected 0..{depth}, got {layer!r}")
        h = x  # (N,)
        for w, b in zip(weights[:layer], biases[:layer], strict=True):
            h = w @ torch.tanh(h) + b  # (N,)
        return h

    return net


def _poole_run(run_config: dict) -> list[dict]:
    width, max_depth, seed = run_config["width"], run_config["max_depth"], run_config["seed"]
    sigma_w2, sigma_b2 = POOLE_PHASES[run_config["phase"]]
    mean_field = mean_field_chi1(sigma_w2, sigma_b2)
    net = random_tanh_network(width, max_depth, sigma_w2, sigma_b2, seed=seed)
    generator = torch.Generator().manual_seed(10_000 + seed)
    basis, _ = torch.linalg.qr(torch.randn(width, 3, generator=generator, dtype=torch.float64))
    radius = math.sqrt(width * mean_field["q_star"])

    def circle(t: torch.Tensor) -> torch.Tensor:
        return radius * (basis[:, 0] * torch.cos(t) + basis[:, 1] * torch.sin(t))  # (N,)

    def sphere(u: torch.Tensor) -> torch.Tensor:
        polar, azimuth = u[0], u[1]
        ring = basis[:, 0] * torch.cos(azimuth) + basis[:, 1] * torch.sin(azimuth)
        return radius * (torch.sin(polar) * ring + torch.cos(polar) * basis[:, 2])  # (N,)

    patch = ((math.pi / 4, 3 * math.pi / 4), (0.0, math.pi))
    records = []
    for layer in range(1, max_depth + 1):
        curve = curve_measures(
            lambda x, layer=layer: net(x, layer), circle, points=run_config["curve_points"]
        )
        sheet = sheet_curvature(
            lambda u, layer=layer: net(sphere(u), layer), patch, run_config["sphere_grid"]
        )
        records.append(
            {
                "phase": run_config["phase"],
                "seed": seed,
                "depth": layer,
                "chi1": mean_field["chi1"],
                "grassmannian_length": curve.grassmannian_length,
                "euclidean_length": curve.euclidean_length,
                "curve_curvature_mean": curve.mean_curvature,
                **{k: sheet[k] for k in (*SHEET_METRICS, "area")},
            }
        )
    return records


def poole_study(scale: str = "small", *, directory=None, refresh: bool = False, **overrides):
    """Poole et al.'s anchor (cached): records per (phase, seed, depth 1..max_depth).

    Record: phase ("ordered"/"chaotic"), seed, depth, the mean-field χ₁, the great circle's
    ``grassmannian_length``, ``euclidean_length`` and ``curve_curvature_mean`` (κ averaged over
    arclength), and the 2-sphere patch's :data:`SHEET_METRICS` and area.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     records = poole_study(directory=d, width=8, max_depth=2, poole_seeds=[0],
    ...                           curve_points=16, sphere_grid=3)
    >>> [(r["phase"], r["depth"]) for r in records]
    [('ordered', 1), ('ordered', 2), ('chaotic', 1), ('chaotic', 2)]
    """
    config = depth_config(scale, **overrides)
    records = []
    for phase in POOLE_PHASES:
        for seed in config["poole_seeds"]:
            run_config = {key: config[key] for key in _POOLE}
            run_config.update(phase=phase, seed=seed)
            records.extend(
                cached(
                    _poole_run,
                    run_config,
                    name="depth-poole",
                    modules=CODE_MODULES,
                    directory=directory,
                    refresh=refresh,
                )
            )
    return records


# ---------------------------------------------------------------------------------------------
# command line: python -m curvlab depth


def add_depth_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the depth study's own options to ``parser`` (the ``depth`` subcommand).

    ``python -m curvlab depth`` adds the common options (``--scale``, ``--out``, ``--device``,
    ``--cache-dir``, ``--refresh``, ``--no-progress``) itself; these are the study's: ``--seeds``
    (how many, 0..n−1), ``--depths`` and ``--poole-out`` (a CSV for the Poole anchor).

    >>> args = add_depth_arguments(argparse.ArgumentParser()).parse_args(["--seeds", "2"])
    >>> args.seeds, args.depths, args.poole_out
    (2, None, None)
    """
    parser.add_argument("--seeds", type=int, default=None, help="number of seeds (0..n-1)")
    parser.add_argument(
        "--depths", type=int, nargs="+", default=None, help="depths L (default: the scale's)"
    )
    parser.add_argument("--poole-out", default=None, help="CSV of the Poole anchor's records")
    return parser


add_cli_arguments = add_depth_arguments


def run_cli(args: argparse.Namespace) -> list[dict]:
    """Run the depth study from parsed arguments, print its growth laws, return its records.

    Reads ``scale``, ``seeds``, ``depths``, ``device``, ``cache_dir``, ``refresh``,
    ``no_progress`` and ``poole_out`` from ``args`` (missing ones take their defaults); the
    caller writes the records (``python -m curvlab depth --out FILE.csv``).
    """
    option = vars(args).get
    overrides = {}
    if option("seeds") is not None:
        if option("seeds") < 1:
            raise ValueError(f"--seeds: expected a positive integer, got {option('seeds')}")
        overrides["seeds"] = list(range(option("seeds")))
    if option("depths") is not None:
        overrides["depths"] = list(option("depths"))
    scale, directory, refresh = (
        option("scale") or "small",
        option("cache_dir"),
        bool(option("refresh")),
    )
    start = time.perf_counter()
    records = depth_study(
        scale,
        directory=directory,
        refresh=refresh,
        progress=not option("no_progress"),
        device=option("device"),
        **overrides,
    )
    for row in growth_laws(records):
        if row["flat"] or row["exponent"] is None:
            law = "flat" if row["flat"] else "no fit (one depth)"
        else:
            law = f"L^{row['exponent']:.2f} (r² {row['r_squared']:.2f})"
        means = ", ".join(f"{m:.3g}" for m in row["means"])
        print(f"{row['regime']:>10} {row['model']:>15} {row['phase']:>7}: ∫|K|dA {law}; {means}")
    if option("poole_out"):
        poole_seeds = {"poole_seeds": overrides["seeds"]} if "seeds" in overrides else {}
        poole = poole_study(scale, directory=directory, refresh=refresh, **poole_seeds)
        write_csv(poole, option("poole_out"))
        print(f"{len(poole)} Poole anchor records -> {option('poole_out')}")
    print(f"{len(records)} records, wall time {time.perf_counter() - start:.1f} s")
    return records
