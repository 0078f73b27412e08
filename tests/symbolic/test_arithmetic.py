"""The one arithmetic behind curvlab.symbolic: exact, general, and fast."""

import time

import numpy as np
import pytest
import sympy as sp

from curvlab.symbolic import (
    gaussian_curvature,
    pullback_metric,
    riemann,
    scalar_curvature,
)
from curvlab.symbolic.arithmetic import RationalFunctionArithmetic

x, y, z = sp.symbols("x y z", real=True)
a, b = sp.symbols("a b", positive=True)

RATIONAL_METRICS = {
    "saddle": (pullback_metric(sp.Matrix([x, y, x * y]), [x, y]), [x, y]),
    "half-plane": (sp.diag(1 / y**2, 1 / y**2), [x, y]),
    "skew-chart": (sp.Matrix([[1 + y**2, x * y + a], [x * y + a, 2 + x**2]]), [x, y]),
    "exponential": (sp.Matrix([[sp.exp(2 * x), 0], [0, 1 + sp.exp(x + y)]]), [x, y]),
    "exponential-constants": (
        sp.Matrix([[sp.exp(2 * y + sp.Rational(1, 2)), 0], [0, 1 + sp.E * sp.exp(x + y)]]),
        [x, y],
    ),
    "three-dimensional": (
        pullback_metric(sp.Matrix([x, y, z, x * y + z**2 * x / 2]), [x, y, z]),
        [x, y, z],
    ),
}


def reference_riemann(metric, coords):
    """Rᵃ_bcd straight from the textbook formulas in plain SymPy (slow, independent)."""
    k, g_inv = len(coords), metric.inv()
    gamma = [
        [
            [
                sum(
                    g_inv[a, d]
                    * (
                        metric[d, c].diff(coords[b])
                        + metric[d, b].diff(coords[c])
                        - metric[b, c].diff(coords[d])
                    )
                    for d in range(k)
                )
                / 2
                for c in range(k)
            ]
            for b in range(k)
        ]
        for a in range(k)
    ]
    return [
        gamma[a][d][b].diff(coords[c])
        - gamma[a][c][b].diff(coords[d])
        + sum(gamma[a][c][e] * gamma[e][d][b] - gamma[a][d][e] * gamma[e][c][b] for e in range(k))
        for a in range(k)
        for b in range(k)
        for c in range(k)
        for d in range(k)
    ]


@pytest.mark.parametrize("name", sorted(RATIONAL_METRICS))
def test_the_field_arithmetic_agrees_with_the_textbook_formulas(name):
    metric, coords = RATIONAL_METRICS[name]
    fast = sp.flatten(riemann(metric, coords).tolist())
    plain = reference_riemann(metric, coords)
    assert any(sp.cancel(entry) != 0 for entry in plain)
    assert all(sp.cancel(p - q) == 0 for p, q in zip(fast, plain, strict=True))


def test_trigonometric_metrics_compute_in_the_same_field_and_leave_simplified():
    theta, phi = sp.symbols("theta phi", real=True)
    metric = sp.diag(1, sp.sin(theta) ** 2)
    arithmetic = RationalFunctionArithmetic.build(list(metric), [theta, phi])
    assert sp.cos(theta) in arithmetic.field.symbols  # sin brings its derivative's partner
    assert gaussian_curvature(metric, [theta, phi]) == 1
    torus = sp.diag((2 + sp.cos(phi)) ** 2, 1)
    assert sp.cancel(gaussian_curvature(torus, [theta, phi]) - sp.cos(phi) / (2 + sp.cos(phi))) == 0


def test_floats_undefined_functions_and_roots_stay_exact():
    t, s = sp.symbols("t s", real=True)
    f = sp.Function("f")
    K = gaussian_curvature(sp.diag(1, f(t) ** 2), [t, s])
    assert sp.simplify(K + f(t).diff(t, 2) / f(t)) == 0
    assert gaussian_curvature(sp.diag(1.0, 0.5 * t**2 + 1), [t, s]) == -2 / (t**2 + 2) ** 2
    root = sp.sqrt(1 + t**2)  # K of diag(1, G²) is −G''/G
    expected = -root.diff(t, 2) / root
    assert sp.simplify(gaussian_curvature(sp.diag(1, 1 + t**2), [t, s]) - expected) == 0


def test_logit_chart_attention_with_symbolic_values_is_flat_within_seconds():
    """Ungated attention over three symbolic values, in the logit chart α = softmax(s1, s2, 0)."""
    s1, s2 = sp.symbols("s1 s2", real=True)
    values = sp.Matrix(3, 3, sp.symbols("U0:9", real=True))
    partition = 1 + sp.exp(s1) + sp.exp(s2)
    weights = [sp.exp(s1) / partition, sp.exp(s2) / partition, 1 / partition]
    mean = sum((weights[i] * values[:, i] for i in range(3)), sp.zeros(3, 1))
    start = time.perf_counter()
    metric = pullback_metric(mean, [s1, s2])
    assert all(entry == 0 for entry in sp.flatten(riemann(metric, [s1, s2]).tolist()))
    assert scalar_curvature(metric, [s1, s2]) == 0
    assert time.perf_counter() - start < 10


@pytest.mark.slow
def test_gated_logit_chart_with_a_gate_bias_is_curved_within_seconds():
    """A headwise sigmoid gate with a bias: exp(1/2) and E share one generator in the field."""
    s1, s2 = sp.symbols("s1 s2", real=True)
    values = sp.Matrix([[1, 0, 2], [0, 3, 1], [-1, 1, 0]])
    partition = 1 + sp.exp(s1) + sp.exp(s2)
    weights = [sp.exp(s1) / partition, sp.exp(s2) / partition, 1 / partition]
    ungated = sum((weights[i] * values[:, i] for i in range(3)), sp.zeros(3, 1))
    gate = 1 / (1 + sp.exp(-(s1 - 2 * s2 + sp.Rational(1, 2))))
    start = time.perf_counter()
    K = gaussian_curvature(pullback_metric(gate * ungated, [s1, s2]), [s1, s2])
    assert time.perf_counter() - start < 10
    # Reference: the Brioschi determinants, differentiated but never simplified, evaluated.
    metric = (gate * ungated).jacobian([s1, s2]).T * (gate * ungated).jacobian([s1, s2])
    E, F, G = metric[0, 0], metric[0, 1], metric[1, 1]
    m1 = sp.Matrix(
        [
            [
                -E.diff(s2, 2) / 2 + F.diff(s1, s2) - G.diff(s1, 2) / 2,
                E.diff(s1) / 2,
                F.diff(s1) - E.diff(s2) / 2,
            ],
            [F.diff(s2) - G.diff(s1) / 2, E, F],
            [G.diff(s2) / 2, F, G],
        ]
    )
    m2 = sp.Matrix(
        [[0, E.diff(s2) / 2, G.diff(s1) / 2], [E.diff(s2) / 2, E, F], [G.diff(s1) / 2, F, G]]
    )
    brioschi_parts = sp.lambdify((s1, s2), [m1, m2, E * G - F**2])

    def K_reference(*point):
        first, second, det = brioschi_parts(*point)
        return (np.linalg.det(first) - np.linalg.det(second)) / det**2

    K_numeric = sp.lambdify((s1, s2), K)
    for point in [(0.1, 0.2), (-0.7, 0.4), (1.3, -0.5)]:
        assert K_numeric(*point) == pytest.approx(K_reference(*point), rel=1e-9)
    assert K_numeric(0.1, 0.2) != 0
