"""Poole et al.'s anchor: curvature of a great circle and a 2-sphere through random tanh nets.

Random deep tanh networks h^l = W^l tanh(h^{l−1}) + b^l, W^l_ij ~ N(0, σ_w²/N),
b^l_i ~ N(0, σ_b²) (:func:`random_tanh_network`), fed a great circle (and a patch of a
2-sphere) of radius √(N q*), in the ordered (σ_w² = 1) and chaotic (σ_w² = 4) phases of
:data:`POOLE_PHASES`, σ_b² = 0.3 (Poole et al. 2016).  Mean field (:func:`mean_field_chi1`):
q* = σ_w² E_z[tanh(√q* z)²] + σ_b², χ₁ = σ_w² E_z[tanh'(√q* z)²]; chaotic means χ₁ > 1, where
the Grassmannian length L_G grows like (√χ₁)^l while κ saturates; ordered means χ₁ < 1, where
the image shrinks, so κ and mean |K| grow although L_G and ∫|K| dA stay bounded: the scale
artefact.

:data:`POOLE` measures every layer l = 1..``max_depth`` (curve measures of
:func:`curvlab.geometry.measures.curve_measures`, sheet statistics of
:func:`curvlab.measurement.sheets.sheet_curvature`), cached on disk per (phase, seed) under
the code of every module this one imports (:mod:`curvlab.studies.cache`).
:data:`curvlab.studies.protocol.POOLE_SCALES` holds the network width, depth, the quadrature
sizes and the seeds of three sizes (``small``: width 48, eight layers, five seeds).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch

from curvlab import arguments
from curvlab.geometry.measures import curve_measures
from curvlab.measurement.sheets import SHEET_METRICS, sheet_curvature
from curvlab.studies.protocol import POOLE_SCALES, study_config
from curvlab.studies.result import StudyResult
from curvlab.studies.study import Argument, Cells, Context, Study, positive_int, seed_range

__all__ = [
    "POOLE",
    "POOLE_PHASES",
    "analyse_poole",
    "mean_field_chi1",
    "poole_cells",
    "poole_config",
    "random_tanh_network",
]

POOLE_PHASES: dict[str, tuple[float, float]] = {"ordered": (1.0, 0.3), "chaotic": (4.0, 0.3)}
"""(σ_w², σ_b²) of Poole et al.'s two phases of random deep tanh networks."""

_RUN = ("width", "max_depth", "curve_points", "sphere_resolution")

_CHECKS = {"width": 3, "max_depth": 1, "curve_points": 2, "sphere_resolution": 2, "poole_seeds": 0}


def poole_config(scale: str = "small", **overrides) -> dict:
    """The anchor's configuration at ``scale`` with ``overrides`` (unknown keys rejected).

    >>> config = poole_config("small", poole_seeds=[0, 1])
    >>> config["width"], config["max_depth"], config["poole_seeds"]
    (48, 8, [0, 1])
    """
    return study_config(POOLE_SCALES, scale, overrides, _CHECKS, study="Poole anchor")


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
        arguments.integer(name, value, 1, expected="a positive integer")
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
            lambda u, layer=layer: net(sphere(u), layer), patch, run_config["sphere_resolution"]
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
                **{k: sheet[k] for k in (*SHEET_METRICS, "sheet_area")},
            }
        )
    return records


def poole_cells(config: dict, context: Context) -> list[Cells]:
    """One cell per (phase, seed), both phases of :data:`POOLE_PHASES`, in this process."""
    configs = [
        {**{key: config[key] for key in _RUN}, "phase": phase, "seed": seed}
        for phase in POOLE_PHASES
        for seed in config["poole_seeds"]
    ]
    return [Cells("depth-poole", _poole_run, configs, unit="run", parallel=False)]


def analyse_poole(config: dict, results: list, context: Context) -> StudyResult:
    """The records per (phase, seed, depth 1..max_depth), in the cells' order."""
    (runs,) = results
    records = [record for run in runs for record in run]
    return StudyResult(runs=records, meta={"config": config}, names={"runs": "poole.csv"})


POOLE = Study(
    name="poole",
    help="Poole et al.'s random tanh anchor of the depth study (DIR/poole.csv)",
    scales=tuple(POOLE_SCALES),
    configure=poole_config,
    cells=poole_cells,
    analyse=analyse_poole,
    arguments=(Argument("--seeds", "poole_seeds", "seeds 0..n-1", positive_int, seed_range),),
    report=lambda result: [f"{len(result.runs)} Poole anchor records"],
    parallel=False,
)
"""Poole et al.'s anchor (:mod:`curvlab.studies.study`): records per (phase, seed, depth
1..max_depth), each with phase ("ordered"/"chaotic"), seed, depth, the mean-field χ₁, the
great circle's ``grassmannian_length``, ``euclidean_length`` and ``curve_curvature_mean`` (κ
averaged over arclength), and the 2-sphere patch's sheet metrics and ``sheet_area``.

>>> import tempfile
>>> from curvlab.studies.study import Options, run_study
>>> with tempfile.TemporaryDirectory() as d:
...     result = run_study(POOLE, "small", Options(directory=d, progress=False), width=8,
...                        max_depth=2, poole_seeds=[0], curve_points=16, sphere_resolution=3)
>>> [(r["phase"], r["depth"]) for r in result.runs]
[('ordered', 1), ('ordered', 2), ('chaotic', 1), ('chaotic', 2)]
"""
