"""The geometric claims of the reproduction table, T1 to T5, each computed from its evidence.

Each claim is a record of :func:`curvlab.analysis.claims.claim_record`: named boolean checks
and the verdict they give (:data:`curvlab.analysis.claims.GEOMETRIC_VERDICTS`), with the
numbers the chapter quotes beside them.

- **T1** ungated attention with fixed values is flat: for symbolic values U (3 × 3) the metric
  of the weight chart is free of the chart (so its Christoffel symbols and K vanish), and K = 0
  computed for numeric values; beside it, ``slice_max_abs_K``, max |K| of an ungated input
  slice with four values in ℝ³
  (:func:`curvlab.studies.input_slices.curved_ungated_slice`, seed 0), curved.
- **T2** gating allows curvature: a headwise gate R/‖y‖ puts the plane y = (u, v, 1) on the
  sphere of radius R = 2 (K = 1/R² exactly), an elementwise gate (1, 1, 1/2 + uv/4) bends it
  into a saddle (K = −16/(u² + v² + 16)² < 0).
- **T3** positive curvature with gating and only with gating: the sphere, against the flat
  weight chart and an ungated six-value input slice in ℝ⁵ (seed 2), whose largest K is
  ``ungated_slice_max_K``.
- **T4** a strict gap: in the weight chart (T1 beside a gated K > 0) and for input slices.
- **T5** depth amplification in the structured regime: the exact weight-tied stack of
  :mod:`curvlab.studies.graph_law` (layer 0 of the depth chapter) at L = 1, 2, 4, 8, 64, 256,
  gated and ungated (``peak_ratio``: the gated peak over its value at L = 256), and the growth
  laws of the depth study (:data:`curvlab.studies.depth.DEPTH`, read from its cache
  when it has run) for the gated torch stacks at initialisation and after training.

:func:`geometric_claims` returns the five records; the symbolic part takes seconds, the depth
study about a minute on two CPU cores when its cache is empty.
"""

from __future__ import annotations

from dataclasses import replace

import sympy as sp

from curvlab.analysis.claims import claim_record
from curvlab.studies.depth import DEPTH
from curvlab.studies.graph_law import structured_curvature_total_abs
from curvlab.studies.input_slices import curved_ungated_slice
from curvlab.studies.study import BOOK_OPTIONS, Options, run_study
from curvlab.symbolic import (
    elementwise_gated_mean,
    gaussian_curvature,
    headwise_gated_mean,
    pullback_metric,
    radial_gate,
    ungated_mean_weight_chart,
)

__all__ = ["STRUCTURED_DEPTHS", "STRUCTURED_LAYER", "geometric_claims"]

STRUCTURED_LAYER = ([[2, 2], [1, -2]], [0, sp.Rational(1, 2)], [1, 2])
"""The structured layer of T5: layer 0 of the depth chapter (keys, bias, write direction)."""

STRUCTURED_DEPTHS: tuple[int, ...] = (1, 2, 4, 8, 64, 256)
"""The depths at which the exact structured stack is measured."""


def _flatness_and_gates() -> dict:
    """The symbolic evidence of T1 to T4."""
    U = sp.Matrix(3, 3, sp.symbols("U1:10", real=True))
    mu, alpha = ungated_mean_weight_chart(U)
    weight_chart_g = pullback_metric(mu, alpha)
    # With symbolic values g mentions none of the chart's coordinates, and curvlab.symbolic
    # refuses such a metric (it cannot tell a parameter from another chart's coordinate): its
    # constancy in the chart is the check (every Christoffel symbol vanishes), and K = 0 is
    # computed for numeric values.
    numeric_U = dict(zip(U, [2, -1, 0, 1, 3, 1, 0, 1, 4], strict=True))
    numeric_K = gaussian_curvature(weight_chart_g.subs(numeric_U), alpha)
    u, v = sp.symbols("u v", real=True)
    plane, R = sp.Matrix([u, v, 1]), sp.Integer(2)
    sphere = headwise_gated_mean(plane, radial_gate(plane, R))
    saddle = elementwise_gated_mean(plane, [1, 1, sp.Rational(1, 2) + sp.Rational(1, 4) * u * v])
    sphere_K = sp.simplify(gaussian_curvature(pullback_metric(sphere, (u, v)), (u, v)))
    saddle_K = sp.factor(sp.cancel(gaussian_curvature(pullback_metric(saddle, (u, v)), (u, v))))
    ungated_positive = curved_ungated_slice(6, 5, seed=2)
    return {
        "weight_chart_constant": not (weight_chart_g.free_symbols & set(alpha)),
        "weight_chart_numeric_flat": sp.simplify(numeric_K) == 0,
        "slice_max_abs_K": float(curved_ungated_slice(4, 3, seed=0).abs().max()),
        "sphere_exact": sp.simplify(sphere_K - 1 / R**2) == 0 and sphere_K != 0,
        "sphere_positive": bool(sphere_K.is_positive),
        "saddle_exact": sp.simplify(saddle_K + 16 / (u**2 + v**2 + 16) ** 2) == 0,
        "saddle_negative": bool(sp.simplify(saddle_K).is_negative),
        "ungated_slice_max_K": float(ungated_positive.max()),
        "ungated_slice_positive": bool((ungated_positive > 1e-9).any()),
    }


def _depth_checks(options: Options, depth_overrides: dict) -> tuple[dict, float]:
    """T5's checks and the gated structured stack's peak over its value at L = 256."""
    gated = structured_curvature_total_abs(STRUCTURED_LAYER, STRUCTURED_DEPTHS)
    ungated = structured_curvature_total_abs(STRUCTURED_LAYER, STRUCTURED_DEPTHS, gated=False)
    laws = {
        (r["regime"], r["model"], r["phase"]): r
        for r in run_study(DEPTH, "small", options, **depth_overrides).meta["growth_laws"]
    }
    at_init = [laws[(g, "gated_headwise", "init")] for g in ("structured", "generic")]
    trained = [laws[(g, "gated_headwise", "trained")] for g in ("structured", "generic")]
    checks = {
        "structured, gated: grows from L = 1 to 8": all(
            a < b for a, b in zip(gated[:3], gated[1:4], strict=True)
        ),
        "structured, ungated: flat at every depth": max(ungated) < 1e-12,
        "structured, gated: keeps growing (no decay up to L = 256)": gated[-1] >= max(gated),
        "torch stacks at init: positive depth exponent, gated": all(
            law["exponent"] is not None and law["exponent"] > 0 for law in at_init
        ),
        "torch stacks after training: positive depth exponent, gated, r^2 > 0.5": all(
            law["exponent"] is not None and law["exponent"] > 0 and law["r_squared"] > 0.5
            for law in trained
        ),
    }
    return checks, max(gated) / gated[-1]


def geometric_claims(directory=None, **depth_overrides) -> list[dict]:
    """The records of T1 to T5 (module docstring), in that order.

    T5 reads the depth study (:data:`curvlab.studies.depth.DEPTH`) at scale ``small`` with
    the chapters' options (:data:`curvlab.studies.study.BOOK_OPTIONS`: on the CPU, so that its
    cached runs are read back), from the run cache ``directory``; ``depth_overrides`` change
    its settings (tests pass smaller ones).
    """
    options = replace(BOOK_OPTIONS, directory=directory)
    e = _flatness_and_gates()
    t1 = claim_record(
        "T1",
        "ungated attention with fixed values is intrinsically flat",
        {
            "g free of the chart (symbolic values), so every Christoffel symbol and K vanish": e[
                "weight_chart_constant"
            ],
            "K = 0 for numeric values": e["weight_chart_numeric_flat"],
        },
        slice_max_abs_K=e["slice_max_abs_K"],
    )
    t2 = claim_record(
        "T2",
        "multiplicative gating allows non-flat geometry",
        {
            "headwise gate: K = 1/R^2 != 0": e["sphere_exact"],
            "elementwise gate: K < 0 everywhere": e["saddle_negative"],
        },
        saddle_exact=e["saddle_exact"],
    )
    t3 = claim_record(
        "T3",
        "positive curvature is reachable with gating and only with gating",
        {
            "a gated family has K > 0": e["sphere_positive"],
            "no ungated weight-chart family has K > 0": e["weight_chart_constant"]
            and e["weight_chart_numeric_flat"],
            "no ungated input slice has K > 0": not e["ungated_slice_positive"],
        },
        ungated_slice_max_K=e["ungated_slice_max_K"],
    )
    t4 = claim_record(
        "T4",
        "a strict geometric expressivity gap between gated and ungated attention",
        {
            "gap in the weight chart (T1 and a gated K > 0)": t1["verdict"] == "reproduced"
            and e["sphere_positive"],
            "gap for input-parametrized attention": not e["ungated_slice_positive"],
        },
    )
    depth_checks, peak_ratio = _depth_checks(options, depth_overrides)
    t5 = claim_record(
        "T5",
        "in a structured regime curvature accumulates with depth (depth amplification)",
        depth_checks,
        peak_ratio=peak_ratio,
    )
    return [t1, t2, t3, t4, t5]
