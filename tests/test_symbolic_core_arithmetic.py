"""The two arithmetics behind curvlab.symbolic.geometry agree, and the fast one is fast."""

import time

import numpy as np
import pytest
import sympy as sp

from curvlab.symbolic import (
    gaussian_curvature,
    geometry,
    pullback_metric,
    riemann,
    scalar_curvature,
)

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


@pytest.mark.parametrize("name", sorted(RATIONAL_METRICS))
def test_field_arithmetic_agrees_with_expression_arithmetic(name):
    metric, coords = RATIONAL_METRICS[name]
    fast = geometry._Geometry(metric, coords)
    assert isinstance(fast.A, geometry._FieldArithmetic)
    plain = geometry._Geometry(metric, coords)
    plain.A = geometry._ExpressionArithmetic(plain.coords)
    plain.g = [[plain.A.lift(entry) for entry in row] for row in metric.tolist()]
    fast_table = sp.flatten(fast.array(fast.riemann).tolist())
    plain_table = sp.flatten(plain.array(plain.riemann).tolist())
    assert any(entry != 0 for entry in plain_table)
    assert all(sp.cancel(p - q) == 0 for p, q in zip(fast_table, plain_table, strict=True))


def test_metrics_with_trigonometric_entries_use_expression_arithmetic():
    metric = sp.diag(1, sp.sin(x) ** 2)
    assert isinstance(geometry._Geometry(metric, [x, y]).A, geometry._ExpressionArithmetic)
    assert gaussian_curvature(metric, [x, y]) == 1


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
