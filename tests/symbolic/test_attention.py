"""Laws of the symbolic attention maps: ungated is flat, gated bends, tied stacks accumulate."""

import math
import time

import pytest
import sympy as sp
import torch

from curvlab.geometry.curvature import gaussian_curvature as numeric_gaussian_curvature
from curvlab.geometry.curvature import lambdify_map
from curvlab.symbolic import (
    composing_layer,
    composing_stack,
    elementwise_gated_mean,
    gaussian_curvature,
    headwise_gated_mean,
    input_attention_mean,
    pullback_metric,
    radial_gate,
    riemann,
    sigmoid,
    sigmoid_gate,
    softmax_weights,
    structured_stack,
    ungated_mean,
    ungated_mean_logit_chart,
    ungated_mean_weight_chart,
    unstructured_stack,
)

# The structured regime used throughout: two keys, a sigmoid gate, rational chart t = e^x.
KEYS = [[2, 1], [-1, 0]]
VALUES = [1, sp.Rational(-1, 2)]
GATE_WEIGHTS = [-1, 1]
GATE_BIAS = sp.log(2)


def symbolic_values(d, n, name="U"):
    return sp.Matrix(d, n, lambda i, j: sp.Symbol(f"{name}{i}{j}", real=True))


def all_zero(array) -> bool:
    return all(sp.cancel(entry) == 0 for entry in sp.flatten(array))


def graph_law(phi, coords, L):
    """K of the graph of L·φ over the x-plane, written in the chart t = e^x (x = log t)."""

    # ∂/∂x = t ∂/∂t in the rational chart
    def dx(expr, i):
        return coords[i] * sp.diff(expr, coords[i])

    grad = [sp.cancel(dx(phi, 0)), sp.cancel(dx(phi, 1))]
    hess = [[sp.cancel(dx(grad[i], j)) for j in range(2)] for i in range(2)]
    det = sp.cancel(hess[0][0] * hess[1][1] - hess[0][1] * hess[1][0])
    slope = sp.cancel(grad[0] ** 2 + grad[1] ** 2)
    return sp.cancel(sp.together(L**2 * det / (1 + L**2 * slope) ** 2))


# ------------------------------------------------------------------------------------ ungated


def test_ungated_weight_chart_is_flat_for_symbolic_values():
    for d, n in [(3, 3), (4, 4)]:
        mu, coords = ungated_mean_weight_chart(symbolic_values(d, n))
        g = pullback_metric(mu, coords)
        assert all(sp.diff(entry, c) == 0 for entry in g for c in coords)  # constant metric
        # constant in the chart, so every Christoffel symbol vanishes: flat.  The chain refuses
        # a metric in other symbols only (another chart?), so it is checked with numbers too.
        with pytest.raises(ValueError, match="metric: mentions none of the coordinates"):
            riemann(g, coords)
        numbers = {s: (3 * i + 1) % 7 - 3 for i, s in enumerate(sorted(g.free_symbols, key=str))}
        assert all_zero(riemann(g.subs(numbers), coords))


def test_ungated_logit_chart_is_flat_for_symbolic_values():
    mu, coords = ungated_mean_logit_chart(symbolic_values(3, 3))
    R = riemann(pullback_metric(mu, coords), coords)
    assert all_zero(R)


def test_ungated_logit_chart_is_flat_in_the_exponential_chart():
    values = sp.Matrix([[2, -1, 0], [1, 3, -2], [0, 1, 4]])
    mu, coords = ungated_mean_logit_chart(values, rational=False)
    assert any(entry.has(sp.exp) for entry in mu)
    K = gaussian_curvature(pullback_metric(mu, coords), coords)
    assert sp.simplify(K) == 0


def test_logit_chart_is_the_weight_chart_after_a_change_of_coordinates():
    values = symbolic_values(2, 3)
    mu_t, t = ungated_mean_logit_chart(values)
    mu_a, a = ungated_mean_weight_chart(values)
    total = 1 + t[0] + t[1]
    assert sp.simplify(mu_a.subs({a[0]: t[0] / total, a[1]: t[1] / total}) - mu_t) == sp.zeros(2, 1)


@pytest.mark.slow
def test_logit_chart_curvature_is_fast_and_matches_diffgeom():
    from sympy.diffgeom import (
        CoordSystem,
        Manifold,
        Patch,
        TensorProduct,
        metric_to_Riemann_components,
    )

    start = time.perf_counter()
    mu, coords = ungated_mean_logit_chart(symbolic_values(3, 3))
    g = pullback_metric(mu, coords)
    R = riemann(g, coords)
    curvlab_seconds = time.perf_counter() - start
    assert all_zero(R)
    assert curvlab_seconds < 10, f"curvlab took {curvlab_seconds:.1f} s"

    values = sp.Matrix([[2, -1, 0], [1, 3, -2], [0, 1, 4]])
    mu, coords = ungated_mean_logit_chart(values)
    g = pullback_metric(mu, coords)
    start = time.perf_counter()
    chart = CoordSystem("C", Patch("P", Manifold("M", 2)), list(coords))
    functions, forms = chart.coord_functions(), chart.base_oneforms()
    on_chart = dict(zip(coords, functions, strict=True))
    metric_form = sum(
        g[i, j].subs(on_chart, simultaneous=True) * TensorProduct(forms[i], forms[j])
        for i in range(2)
        for j in range(2)
    )
    components = metric_to_Riemann_components(metric_form)
    diffgeom_seconds = time.perf_counter() - start
    # exact evaluation at rational points (canceling the raw components takes minutes)
    back = dict(zip(functions, coords, strict=True))
    for point in [(sp.Rational(1, 2), 3), (2, sp.Rational(1, 3)), (5, 7)]:
        at = dict(zip(coords, point, strict=True))
        assert all(sp.nsimplify(e.subs(back).subs(at)) == 0 for e in sp.flatten(components))
    print(
        f"logit chart Riemann: curvlab {curvlab_seconds:.2f} s, diffgeom {diffgeom_seconds:.2f} s"
    )


def test_lower_dimensional_slice_is_curved_without_a_gate():
    # inputs x in R^2 drive 4 values in R^3 through softmax(Kx): not open in the affine hull
    values = sp.Matrix([[1, 0, 0, -1], [0, 1, 0, -1], [0, 0, 1, -1]])
    keys = [[1, 0], [0, 1], [-1, 1], [0, -1]]
    mu, coords = input_attention_mean(values, keys, rational=False)
    f = lambdify_map(mu, coords)
    points = torch.tensor([[0.0, 0.0], [0.3, -0.2], [-0.5, 0.4]], dtype=torch.float64)
    K = numeric_gaussian_curvature(f, points)
    assert K.abs().min() > 1e-2, K
    # with n = k + 1 = 3 values the same construction is open in the affine hull: flat
    mu3, coords3 = input_attention_mean(values[:, :3], keys[:3])
    K3 = gaussian_curvature(pullback_metric(mu3, coords3), coords3)
    assert sp.simplify(K3) == 0


# -------------------------------------------------------------------------------------- gated


def test_headwise_radial_gate_gives_the_round_sphere():
    R = sp.Symbol("R", positive=True)
    values = sp.Matrix([[1, 0, 0], [0, 1, 0], [1, 1, 1]])  # μ(α) = (α₁, α₂, 1)
    mu, coords = ungated_mean_weight_chart(values)
    assert list(mu) == [coords[0], coords[1], 1]
    y = headwise_gated_mean(mu, radial_gate(mu, R))
    K = gaussian_curvature(pullback_metric(y, coords), coords)
    assert sp.simplify(K - 1 / R**2) == 0


def test_elementwise_saddle_gate_matches_the_closed_form():
    a, c = sp.symbols("a c", positive=True)
    values = sp.Matrix([[1, 0, 0], [0, 1, 0], [1, 1, 1]])
    mu, (u, v) = ungated_mean_weight_chart(values)
    y = elementwise_gated_mean(mu, [1, 1, c + a * u * v])
    K = gaussian_curvature(pullback_metric(y, [u, v]), [u, v])
    assert sp.simplify(K + a**2 / (1 + a**2 * (u**2 + v**2)) ** 2) == 0
    at = {a: sp.Rational(1, 4), c: sp.Rational(1, 2), u: sp.Rational(1, 10), v: sp.Rational(1, 5)}
    assert K.subs(at) < 0
    assert math.isclose(float(K.subs(at)), -(1 / 16) / (1 + (0.01 + 0.04) / 16) ** 2)


def test_constant_gate_keeps_the_ungated_family_flat():
    mu, coords = ungated_mean_weight_chart(symbolic_values(3, 3))
    gamma = sp.Symbol("gamma", positive=True)
    for y in (headwise_gated_mean(mu, gamma), elementwise_gated_mean(mu, [gamma, 2, 3])):
        g = pullback_metric(y, coords)
        assert all(sp.diff(entry, c) == 0 for entry in g for c in coords)  # constant: flat


def test_sigmoid_gate_lies_in_the_unit_interval_and_follows_g1():
    q = sp.symbols("q1 q2", real=True)
    W = sp.Matrix([[1, 2], [-1, 0]])
    gate = sigmoid_gate(q, W, bias=[0, sp.log(3)])
    assert gate.shape == (2, 1)
    assert sp.simplify(gate[1] - sigmoid(2 * q[0] + sp.log(3))) == 0
    at = {q[0]: sp.Rational(3, 10), q[1]: -2}
    assert all(0 < float(entry.subs(at)) < 1 for entry in gate)


# -------------------------------------------------------------------------------------- depth


def test_ungated_structured_stack_is_flat_at_every_depth():
    L = sp.Symbol("L", positive=True)
    for depth in [1, 2, 3, 4, L]:
        f, coords = structured_stack(depth, KEYS, VALUES)
        assert gaussian_curvature(pullback_metric(f, coords), coords) == 0


@pytest.mark.slow
def test_gated_structured_stack_follows_the_graph_law():
    L = sp.Symbol("L", positive=True)
    f1, coords = structured_stack(1, KEYS, VALUES, GATE_WEIGHTS, GATE_BIAS)
    phi = f1[2]
    law = graph_law(phi, coords, L)
    point = {coords[0]: sp.Rational(3, 2), coords[1]: sp.Rational(4, 5)}
    for depth in [1, 2, 3, 4, L]:
        f, _ = structured_stack(depth, KEYS, VALUES, GATE_WEIGHTS, GATE_BIAS)
        assert sp.cancel(f[2] - depth * phi) == 0  # the increments add coherently
        K = gaussian_curvature(pullback_metric(f, coords), coords)
        expected = law.subs(L, depth)
        assert sp.cancel((K - expected).subs(point)) == 0
        assert sp.cancel((K - expected).subs({coords[0]: 2, coords[1]: sp.Rational(1, 3)})) == 0
    assert sp.cancel(K - law) == 0  # symbolic depth: exactly the law
    K1 = law.subs(L, 1).subs(point)
    assert K1 != 0
    assert sp.cancel(law.subs(L, 2).subs(point) / K1) != 1  # not a mere constant


def test_alternating_stack_is_flat_at_even_depth():
    f, coords = unstructured_stack(
        [[0, 0, 1], [0, 0, -1], [0, 0, 1], [0, 0, -1]], KEYS, VALUES, GATE_WEIGHTS, GATE_BIAS
    )
    assert list(f) == [sp.log(coords[0]), sp.log(coords[1]), 0]


def test_tied_stack_equals_unstructured_stack_with_equal_writes():
    tied, _ = structured_stack(3, KEYS, VALUES, GATE_WEIGHTS, GATE_BIAS)
    untied, _ = unstructured_stack([[0, 0, 1]] * 3, KEYS, VALUES, GATE_WEIGHTS, GATE_BIAS)
    assert sp.cancel(tied[2] - untied[2]) == 0


# ------------------------------------------------------------------------------------- inputs


def test_softmax_weights_sum_to_one():
    s = sp.symbols("s1:4", real=True)
    assert sp.simplify(sum(softmax_weights(s)) - 1) == 0


@pytest.mark.parametrize(
    ("call", "error", "argument"),
    [
        (lambda: ungated_mean("U", [1]), TypeError, "values"),
        (lambda: ungated_mean([[1, 2]], [1]), ValueError, "values"),
        (lambda: ungated_mean([[1], [2]], [1]), ValueError, "weights"),
        (lambda: ungated_mean([[1], [2, 3]], [1, 0]), ValueError, "values"),
        (lambda: input_attention_mean([[1], [0]], [[sp.Rational(1, 2)], [0]]), ValueError, "keys"),
        (lambda: input_attention_mean([[1], [0]], [[1]]), ValueError, "keys"),
        (lambda: sigmoid_gate([1, 2], sp.Matrix([[1, 2, 3]])), ValueError, "gate_weights"),
        (lambda: radial_gate([1, 2], -1), ValueError, "radius"),
        (lambda: headwise_gated_mean([1, 2], sp.Matrix([1, 2])), ValueError, "gate"),
        (lambda: elementwise_gated_mean([1, 2], [1]), ValueError, "gate"),
        (lambda: structured_stack(0, KEYS, VALUES), ValueError, "depth"),
        (lambda: structured_stack(2.5, KEYS, VALUES), TypeError, "depth"),
        (
            lambda: structured_stack(2, KEYS, VALUES, write_direction=[1, 0, 1]),
            ValueError,
            "write_direction",
        ),
        (lambda: unstructured_stack([], KEYS, VALUES), TypeError, "write_directions"),
    ],
)
def test_bad_input_names_the_argument(call, error, argument):
    with pytest.raises(error, match=argument):
        call()


# ---------------------------------------------------------------------------------------------
# composing stacks, the Mahalanobis radial gate, the timed diffgeom reference


def test_composing_stack_without_feedback_is_the_structured_stack():
    keys3 = [[2, 1, 0], [-1, 0, 0]]
    f, x = composing_stack(3, keys3, [1, sp.Rational(-1, 2)], [-1, 1, 0], sp.log(2))
    g, _ = structured_stack(
        3, [[2, 1], [-1, 0]], [1, sp.Rational(-1, 2)], [-1, 1], sp.log(2), rational=False
    )
    assert list(f[:2]) == list(x)
    assert sp.simplify(f[2] - g[2]) == 0


def test_composing_stack_layers_interact():
    keys3 = [[1, 0, 1], [0, 1, 0]]
    f2, x = composing_stack(2, keys3, [1, 0])
    layer, h = composing_layer(keys3, [1, 0])
    z1 = layer[2].subs({h[0]: x[0], h[1]: x[1], h[2]: 0})
    assert sp.simplify(f2[2] - layer[2].subs({h[0]: x[0], h[1]: x[1], h[2]: z1})) == 0
    assert sp.simplify(f2[2] - 2 * z1) != 0  # not L times one layer


def test_composing_stack_rejects_bad_input():
    with pytest.raises(ValueError, match="keys"):
        composing_stack(2, [[1, 0], [0, 1]], [1, 0])
    with pytest.raises(ValueError, match="depth"):
        composing_stack(0, [[1, 0, 0], [0, 1, 0]], [1, 0])


def test_mahalanobis_radial_gate_gives_a_sphere_in_the_fisher_metric():
    u, v = sp.symbols("u v", real=True)
    mu = [u, v, 1]
    Sigma = sp.diag(4, 1, 1)
    mahalanobis = headwise_gated_mean(mu, radial_gate(mu, 1, cov=Sigma))
    metric = pullback_metric(mahalanobis, [u, v], cov=Sigma)
    assert sp.simplify(gaussian_curvature(metric, [u, v]) - 1) == 0
    euclidean = headwise_gated_mean(mu, radial_gate(mu, 1))
    K_e = gaussian_curvature(pullback_metric(euclidean, [u, v], cov=Sigma), [u, v])
    assert sp.simplify(K_e.subs({u: 1, v: 0}) - 1) != 0  # an ellipsoid, not the unit sphere


def test_radial_gate_rejects_a_bad_covariance():
    u, v = sp.symbols("u v", real=True)
    with pytest.raises(ValueError, match="cov"):
        radial_gate([u, v, 1], 1, cov=sp.eye(2))
    with pytest.raises(ValueError, match="cov"):
        radial_gate([u, v, 1], 1, cov=sp.zeros(3))


def test_diffgeom_reference_agrees_and_times_out():
    from curvlab.symbolic.reference import diffgeom_riemann_timed

    r = sp.Symbol("r", positive=True)
    theta, phi = sp.symbols("theta phi", positive=True)
    sphere = sp.Matrix(
        [r * sp.sin(theta) * sp.cos(phi), r * sp.sin(theta) * sp.sin(phi), r * sp.cos(theta)]
    )
    g = pullback_metric(sphere, [theta, phi])
    run = diffgeom_riemann_timed(g, [theta, phi], timeout=60)
    assert run.finished and run.seconds <= 60
    ours = riemann(g, [theta, phi])
    assert sp.simplify(sp.Array(run.components) - ours) == sp.Array.zeros(2, 2, 2, 2)
    U = sp.Matrix(3, 3, lambda i, j: sp.Symbol(f"U{i}{j}", real=True))
    mu, t = ungated_mean_logit_chart(U)
    slow = diffgeom_riemann_timed(pullback_metric(mu, t), t, timeout=0.2)
    assert not slow.finished and slow.components is None and slow.seconds == 0.2
    with pytest.raises(ValueError, match="timeout"):
        diffgeom_riemann_timed(g, [theta, phi], timeout=0)


def test_headwise_gate_curvature_has_the_sign_of_the_hessian_of_its_reciprocal():
    """The perspective lemma: K = G det(Hess phi) / (phi^8 det(g)^2), phi = 1/gamma."""
    mu, (u, v) = ungated_mean_weight_chart(sp.Matrix([[1, 0, 0], [0, 1, 0], [1, 1, 1]]))
    phi = 1 + u**2 + u * v + 2 * v**2  # a convex reciprocal gate: K > 0
    g = pullback_metric(headwise_gated_mean(mu, 1 / phi), [u, v])
    hessian = sp.hessian(phi, (u, v))
    det = lambda m: m[0, 0] * m[1, 1] - m[0, 1] * m[1, 0]  # noqa: E731
    expected = det(hessian) / (phi**8 * det(g) ** 2)  # G = det[p, e1, e2]^2 = 1
    K = gaussian_curvature(g, [u, v])
    point = {u: sp.Rational(1, 3), v: sp.Rational(1, 5)}
    assert sp.nsimplify(K.subs(point) - expected.subs(point)) == 0 and K.subs(point) > 0


def test_four_value_slice_has_the_sign_fixed_by_the_keys():
    """One key inside the triangle of the others: K > 0 on the whole ungated slice."""
    values = sp.eye(3).row_join(sp.zeros(3, 1))
    mu, t = input_attention_mean(values, [[1, 0], [0, 1], [-1, -1], [0, 0]])
    K = sp.factor(gaussian_curvature(pullback_metric(mu, t), t))
    for part in sp.fraction(K):
        assert all(c > 0 for c in sp.Poly(part, *t).coeffs())
