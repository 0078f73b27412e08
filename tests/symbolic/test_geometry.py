"""symbolic.connection and .curvature: closed forms, diffgeom cross-checks, laws, bad input."""

import random
import time

import pytest
import sympy as sp
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from sympy.diffgeom import (
    CoordSystem,
    Manifold,
    Patch,
    TensorProduct,
    metric_to_Christoffel_2nd,
    metric_to_Riemann_components,
)

from curvlab.symbolic import (
    brioschi,
    christoffel,
    covariant_riemann,
    gaussian_curvature,
    pullback_metric,
    ricci,
    riemann,
    scalar_curvature,
    sectional_curvature,
)

LAWS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])

r, R = sp.symbols("r R", positive=True)
u, v, x, y = sp.symbols("u v x y", real=True)
theta, phi, chi = sp.symbols("theta phi chi", positive=True)


def entries(array) -> list:
    """The entries of an N-dimensional array, flat (iterating an Array yields its slices)."""
    return sp.flatten(array.tolist())


def is_zero(expr) -> bool:
    """Exactly zero (every entry, for a matrix), decided by sympy.simplify."""
    if isinstance(expr, sp.MatrixBase):
        return all(sp.simplify(entry) == 0 for entry in expr)
    return sp.simplify(expr) == 0


def sphere_embedding():
    return sp.Matrix(
        [r * sp.sin(theta) * sp.cos(phi), r * sp.sin(theta) * sp.sin(phi), r * sp.cos(theta)]
    )


def three_sphere_embedding():
    return sp.Matrix(
        [
            r * sp.cos(chi),
            r * sp.sin(chi) * sp.cos(theta),
            r * sp.sin(chi) * sp.sin(theta) * sp.cos(phi),
            r * sp.sin(chi) * sp.sin(theta) * sp.sin(phi),
        ]
    )


def torus_embedding():
    return sp.Matrix(
        [(R + r * sp.cos(v)) * sp.cos(u), (R + r * sp.cos(v)) * sp.sin(u), r * sp.sin(v)]
    )


def half_plane_metric():
    return sp.diag(1 / y**2, 1 / y**2)


# ---------------------------------------------------------------------------------------------
# closed forms


def test_round_sphere_has_gaussian_curvature_one_over_r_squared():
    g = pullback_metric(sphere_embedding(), [theta, phi])
    assert is_zero(g - sp.diag(r**2, r**2 * sp.sin(theta) ** 2))
    assert is_zero(gaussian_curvature(g, [theta, phi]) - 1 / r**2)
    assert is_zero(scalar_curvature(g, [theta, phi]) - 2 / r**2)


def test_three_sphere_has_scalar_curvature_six_over_r_squared():
    coords = [chi, theta, phi]
    g = pullback_metric(three_sphere_embedding(), coords)
    assert is_zero(scalar_curvature(g, coords) - 6 / r**2)
    assert is_zero(ricci(g, coords) - 2 * g / r**2)


def test_three_sphere_sectional_curvature_is_one_over_r_squared_for_every_plane():
    coords = [chi, theta, phi]
    g = pullback_metric(three_sphere_embedding(), coords)
    rng = random.Random(0)
    planes = 0
    while planes < 3:
        X = [sp.Rational(rng.randint(-4, 4), rng.randint(1, 3)) for _ in range(3)]
        Y = [sp.Rational(rng.randint(-4, 4), rng.randint(1, 3)) for _ in range(3)]
        if sp.Matrix([X, Y]).rank() < 2:
            continue  # X and Y span no plane
        assert is_zero(sectional_curvature(g, coords, X, Y) - 1 / r**2)
        planes += 1


def test_torus_curvature_is_cos_v_over_r_times_distance_to_axis():
    g = pullback_metric(torus_embedding(), [u, v])
    K = gaussian_curvature(g, [u, v])
    assert is_zero(K - sp.cos(v) / (r * (R + r * sp.cos(v))))


def test_hyperbolic_paraboloid_curvature():
    g = pullback_metric(sp.Matrix([x, y, x * y]), [x, y])
    assert is_zero(gaussian_curvature(g, [x, y]) + 1 / (1 + x**2 + y**2) ** 2)


def test_poincare_half_plane_has_curvature_minus_one():
    assert gaussian_curvature(half_plane_metric(), [x, y]) == -1
    assert scalar_curvature(half_plane_metric(), [x, y]) == -2


def test_christoffel_symbols_of_the_sphere():
    gamma = christoffel(sp.diag(r**2, r**2 * sp.sin(theta) ** 2), [theta, phi])
    assert gamma.shape == (2, 2, 2)
    assert is_zero(gamma[0, 1, 1] + sp.sin(theta) * sp.cos(theta))
    assert is_zero(gamma[1, 0, 1] - sp.cos(theta) / sp.sin(theta))
    assert gamma[1, 0, 1] == gamma[1, 1, 0]
    assert gamma[0, 0, 0] == gamma[0, 0, 1] == gamma[1, 0, 0] == gamma[1, 1, 1] == 0


def test_euclidean_plane_in_polar_coordinates_is_flat_but_has_christoffel_symbols():
    rho = sp.Symbol("rho", positive=True)
    g = pullback_metric(sp.Matrix([rho * sp.cos(phi), rho * sp.sin(phi)]), [rho, phi])
    assert any(entry != 0 for entry in entries(christoffel(g, [rho, phi])))
    assert all(entry == 0 for entry in entries(riemann(g, [rho, phi])))


# ---------------------------------------------------------------------------------------------
# the routes agree with each other


CURVED_SURFACES = {
    "sphere": (pullback_metric(sphere_embedding(), [theta, phi]), [theta, phi]),
    "torus": (pullback_metric(torus_embedding(), [u, v]), [u, v]),
    "saddle": (pullback_metric(sp.Matrix([x, y, x * y]), [x, y]), [x, y]),
    "half-plane": (half_plane_metric(), [x, y]),
    "skew-chart": (sp.Matrix([[1 + y**2, x * y + 1], [x * y + 1, 2 + x**2]]), [x, y]),
}


@pytest.mark.parametrize("name", sorted(CURVED_SURFACES))
def test_in_two_dimensions_brioschi_equals_half_the_scalar_curvature(name):
    g, coords = CURVED_SURFACES[name]
    K = gaussian_curvature(g, coords)
    assert K != 0
    assert is_zero(K - scalar_curvature(g, coords) / 2)
    assert is_zero(K - covariant_riemann(g, coords)[0, 1, 0, 1] / g.det())
    assert is_zero(K - sectional_curvature(g, coords, [1, 2], [-1, 3]))


def test_brioschi_with_e_f_g_matches_gaussian_curvature():
    E, F, G = 1 + y**2, x * y, 1 + x**2
    assert is_zero(
        brioschi(E, F, G, x, y) - gaussian_curvature(sp.Matrix([[E, F], [F, G]]), [x, y])
    )


def test_riemann_symmetries_on_a_three_dimensional_metric():
    z = sp.Symbol("z", real=True)
    coords = [x, y, z]
    g = pullback_metric(sp.Matrix([x, y, z, x * y + z**2 * x / 2]), coords)
    upper = riemann(g, coords)
    lower = covariant_riemann(g, coords)
    assert any(entry != 0 for entry in entries(lower))
    for a in range(3):
        for b in range(3):
            for c in range(3):
                for d in range(3):
                    assert is_zero(upper[a, b, c, d] + upper[a, b, d, c])
                    assert is_zero(lower[a, b, c, d] + lower[b, a, c, d])
                    assert is_zero(lower[a, b, c, d] - lower[c, d, a, b])
                    bianchi = upper[a, b, c, d] + upper[a, c, d, b] + upper[a, d, b, c]
                    assert is_zero(bianchi)


# ---------------------------------------------------------------------------------------------
# cross-check against sympy.diffgeom (built from coord_functions(): plain symbols give zeros)


def diffgeom_tensors(metric, coords):
    k = len(coords)
    patch = Patch("P", Manifold("M", k))
    system = CoordSystem("C", patch, list(coords))
    functions = system.coord_functions()
    to_fields = dict(zip(coords, functions, strict=True))
    to_symbols = dict(zip(functions, coords, strict=True))
    forms = system.base_oneforms()
    two_form = sum(
        metric[i, j].xreplace(to_fields) * TensorProduct(forms[i], forms[j])
        for i in range(k)
        for j in range(k)
    )
    # xreplace, not subs: a coordinate field's own arguments contain the coordinate symbols.
    gamma = metric_to_Christoffel_2nd(two_form).xreplace(to_symbols)
    rie = metric_to_Riemann_components(two_form).xreplace(to_symbols)
    return gamma, rie


DIFFGEOM_CASES = {
    **CURVED_SURFACES,
    "fisher-normal": (
        sp.diag(1 / sp.Symbol("s", positive=True) ** 2, 2 / sp.Symbol("s", positive=True) ** 2),
        [sp.Symbol("m", real=True), sp.Symbol("s", positive=True)],
    ),
}


@pytest.mark.parametrize("name", sorted(DIFFGEOM_CASES))
def test_christoffel_and_riemann_agree_with_sympy_diffgeom(name):
    g, coords = DIFFGEOM_CASES[name]
    reference_gamma, reference_riemann = diffgeom_tensors(g, coords)
    assert any(not is_zero(entry) for entry in entries(reference_riemann)), (
        "diffgeom returned all zeros"
    )
    ours_gamma = christoffel(g, coords)
    ours_riemann = riemann(g, coords)
    k = len(coords)
    for a in range(k):
        for b in range(k):
            for c in range(k):
                assert is_zero(ours_gamma[a, b, c] - reference_gamma[a, b, c])
                for d in range(k):
                    assert is_zero(ours_riemann[a, b, c, d] - reference_riemann[a, b, c, d])


def test_three_sphere_agrees_with_sympy_diffgeom_and_is_fast():
    coords = [chi, theta, phi]
    g = pullback_metric(three_sphere_embedding(), coords)
    sp.core.cache.clear_cache()  # a cold cache, as for a first call
    start = time.perf_counter()
    ours = scalar_curvature(g, coords)
    ours_seconds = time.perf_counter() - start
    _, reference = diffgeom_tensors(g, coords)
    ricci_reference = sp.Matrix(3, 3, lambda b, d: sum(reference[a, b, a, d] for a in range(3)))
    reference_scalar = sp.simplify((g.inv() * ricci_reference).trace())
    assert is_zero(reference_scalar - 6 / r**2)
    assert is_zero(ours - reference_scalar)
    assert ours_seconds < 10


# ---------------------------------------------------------------------------------------------
# laws over random inputs

small_rationals = st.builds(
    sp.Rational, st.integers(min_value=-4, max_value=4), st.integers(min_value=1, max_value=3)
)


def rational_matrix(rows, cols):
    return st.lists(small_rationals, min_size=rows * cols, max_size=rows * cols).map(
        lambda entries: sp.Matrix(rows, cols, entries)
    )


@LAWS
@given(A=rational_matrix(4, 3), b=rational_matrix(4, 1))
def test_affine_maps_are_flat(A, b):
    assume(A.rank() == 3)  # an immersion, so there is a metric to speak of
    coords = sp.symbols("a0:3", real=True)
    g = pullback_metric(A * sp.Matrix(coords) + b, coords)
    assert all(entry == 0 for entry in entries(riemann(g, coords)))
    assert scalar_curvature(g, coords) == 0


@LAWS
@given(coefficients=st.lists(small_rationals, min_size=5, max_size=5))
def test_graph_surfaces_match_the_graph_formula(coefficients):
    c1, c2, c3, c4, c5 = coefficients
    h = c1 * x**2 + c2 * x * y + c3 * y**2 + c4 * x**3 + c5 * x * y**2
    K = gaussian_curvature(pullback_metric(sp.Matrix([x, y, h]), [x, y]), [x, y])
    hx, hy = sp.diff(h, x), sp.diff(h, y)
    expected = (sp.diff(h, x, 2) * sp.diff(h, y, 2) - sp.diff(h, x, y) ** 2) / (
        1 + hx**2 + hy**2
    ) ** 2
    assert sp.cancel(K - expected) == 0


def cayley_rotation(skew_entries, d):
    """An orthogonal matrix (I − S)(I + S)⁻¹ from a rational skew-symmetric S."""
    S = sp.zeros(d, d)
    entries = iter(skew_entries)
    for i in range(d):
        for j in range(i + 1, d):
            S[i, j] = next(entries)
            S[j, i] = -S[i, j]
    Q = (sp.eye(d) - S) * (sp.eye(d) + S).inv()
    assert Q.T * Q == sp.eye(d)
    return Q


SURFACES_IN_R3 = {
    "saddle": sp.Matrix([x, y, x * y]),
    "cubic-graph": sp.Matrix([x, y, x**3 / 3 - x * y**2 + y**2 / 2]),
    "tube": sp.Matrix([x, sp.cos(y), sp.sin(y) + x**2 / 2]),
}


@LAWS
@given(
    name=st.sampled_from(sorted(SURFACES_IN_R3)),
    skew=st.lists(small_rationals, min_size=3, max_size=3),
    shift=rational_matrix(3, 1),
)
def test_curvature_invariant_under_rotation_of_the_ambient_space(name, skew, shift):
    f = SURFACES_IN_R3[name]
    Q = cayley_rotation(skew, 3)
    K = gaussian_curvature(pullback_metric(f, [x, y]), [x, y])
    K_rotated = gaussian_curvature(pullback_metric(Q * f + shift, [x, y]), [x, y])
    assert is_zero(K - K_rotated)


def numeric_points(count, seed):
    rng = random.Random(seed)
    return [(rng.uniform(-0.9, 0.9), rng.uniform(-0.9, 0.9)) for _ in range(count)]


@LAWS
@given(
    name=st.sampled_from(sorted(SURFACES_IN_R3)),
    shear=small_rationals,
    cubic=st.booleans(),
    seed=st.integers(0, 10**6),
)
def test_curvature_invariant_under_change_of_coordinates(name, shear, cubic, seed):
    f = SURFACES_IN_R3[name]
    s, t = sp.symbols("s t", real=True)
    new_x = s**3 + s if cubic else s + shear * t
    change = {x: new_x, y: t}
    K_old = gaussian_curvature(pullback_metric(f, [x, y]), [x, y])
    K_new = gaussian_curvature(pullback_metric(f.subs(change), [s, t]), [s, t])
    old = sp.lambdify((x, y), K_old)
    new = sp.lambdify((s, t), K_new)
    to_old = sp.lambdify((s, t), new_x)
    for point in numeric_points(4, seed):
        assert new(*point) == pytest.approx(old(to_old(*point), point[1]), rel=1e-9, abs=1e-12)


@LAWS
@given(name=st.sampled_from(sorted(SURFACES_IN_R3)), scale=small_rationals)
def test_scaling_cov_by_s_squared_scales_curvature_by_s_squared(name, scale):
    assume(scale != 0)
    f = SURFACES_IN_R3[name]
    K = gaussian_curvature(pullback_metric(f, [x, y]), [x, y])
    K_scaled = gaussian_curvature(pullback_metric(f, [x, y], cov=scale**2 * sp.eye(3)), [x, y])
    assert is_zero(K_scaled - scale**2 * K)


def test_scaling_cov_scales_the_three_sphere_curvature_symbolically():
    s = sp.Symbol("s", positive=True)
    coords = [chi, theta, phi]
    g = pullback_metric(three_sphere_embedding(), coords, cov=s**2 * sp.eye(4))
    assert is_zero(scalar_curvature(g, coords) - 6 * s**2 / r**2)


@LAWS
@given(L=rational_matrix(3, 3))
def test_pullback_with_cov_equals_euclidean_pullback_of_the_whitened_map(L):
    """With Σ = L Lᵀ, Jᵀ Σ⁻¹ J is the Euclidean pullback of L⁻¹ f (whitening)."""
    assume(L.det() != 0)
    f = SURFACES_IN_R3["saddle"]
    g = pullback_metric(f, [x, y], cov=L * L.T)
    g_whitened = pullback_metric(L.inv() * f, [x, y])
    assert is_zero(g - g_whitened)


# ---------------------------------------------------------------------------------------------
# bad input names the argument


def test_non_square_metric_is_rejected():
    with pytest.raises(ValueError, match="metric.*square"):
        christoffel(sp.Matrix([[1, 0, 0], [0, 1, 0]]), [x, y])


def test_singular_metric_is_rejected():
    with pytest.raises(ValueError, match="metric.*singular"):
        riemann(sp.Matrix([[x**2, x * y], [x * y, y**2]]), [x, y])


def test_non_symmetric_metric_is_rejected():
    with pytest.raises(ValueError, match="metric.*symmetric"):
        ricci(sp.Matrix([[1, x], [0, 1]]), [x, y])


def test_coordinates_must_be_symbols():
    with pytest.raises(TypeError, match="coords"):
        christoffel(sp.eye(2), [x, x + y])
    with pytest.raises(TypeError, match="coords"):
        christoffel(sp.eye(2), "xy")


def test_coordinates_must_be_distinct_and_match_the_metric():
    with pytest.raises(ValueError, match="coords.*distinct"):
        christoffel(sp.eye(2), [x, x])
    with pytest.raises(ValueError, match="coords"):
        christoffel(sp.eye(2), [x, y, u])


def test_gaussian_curvature_needs_a_surface():
    with pytest.raises(ValueError, match="metric.*2x2"):
        gaussian_curvature(sp.eye(3), [x, y, u])


def test_sectional_curvature_needs_independent_vectors():
    g = pullback_metric(sphere_embedding(), [theta, phi])
    with pytest.raises(ValueError, match="X, Y"):
        sectional_curvature(g, [theta, phi], [1, 2], [2, 4])
    with pytest.raises(ValueError, match="X"):
        sectional_curvature(g, [theta, phi], [1, 2, 3], [0, 1])


def test_embedding_must_be_a_column():
    with pytest.raises(ValueError, match="embedding.*column"):
        pullback_metric(sp.Matrix([[x, y, x * y]]), [x, y])
    with pytest.raises(TypeError, match="embedding"):
        pullback_metric(x * y, [x, y])


def test_more_coordinates_than_ambient_dimensions_is_rejected():
    with pytest.raises(ValueError, match="coords"):
        pullback_metric(sp.Matrix([x + y]), [x, y])


def test_cov_must_be_symmetric_positive_definite():
    f = sp.Matrix([x, y, x * y])
    with pytest.raises(ValueError, match="cov.*symmetric"):
        pullback_metric(f, [x, y], cov=sp.Matrix([[1, 1, 0], [0, 1, 0], [0, 0, 1]]))
    with pytest.raises(ValueError, match="cov.*positive definite"):
        pullback_metric(f, [x, y], cov=sp.Matrix([[1, 2, 0], [2, 1, 0], [0, 0, 1]]))
    with pytest.raises(ValueError, match="cov.*positive definite"):
        pullback_metric(f, [x, y], cov=-(r**2) * sp.eye(3))
    with pytest.raises(ValueError, match="cov.*shape"):
        pullback_metric(f, [x, y], cov=sp.eye(2))
    with pytest.raises(ValueError, match="cov.*scalar"):
        pullback_metric(f, [x, y], cov=2)


# ---------------------------------------------------------------------------------------------
# no silently wrong curvature: names, signs, determinants


def test_a_symbol_named_like_a_coordinate_but_not_it_is_refused_naming_both():
    plain, positive = sp.Symbol("theta"), sp.Symbol("theta", positive=True)
    phi_ = sp.Symbol("phi", positive=True)
    metric = sp.diag(1, sp.sin(plain) ** 2)  # to SymPy a constant in the coordinate `positive`
    for function in (christoffel, riemann, ricci, scalar_curvature, gaussian_curvature):
        with pytest.raises(
            ValueError, match=r"Symbol\('theta'\).*Symbol\('theta', positive=True\)"
        ):
            function(metric, [positive, phi_])
    with pytest.raises(ValueError, match="embedding"):
        pullback_metric(sp.Matrix([plain, phi_, plain * phi_]), [positive, phi_])
    with pytest.raises(ValueError, match="X, Y"):
        sectional_curvature(sp.eye(2), [positive, phi_], [plain, 0], [0, 1])
    with pytest.raises(ValueError, match="E, F, G"):
        brioschi(1, 0, plain**2, positive, phi_)
    # a parameter with another name stays allowed
    a = sp.Symbol("a", positive=True)
    assert gaussian_curvature(sp.diag(a**2, a**2 * sp.sin(positive) ** 2), [positive, phi_]) == (
        1 / a**2
    )


def test_a_provably_indefinite_or_negative_metric_is_refused():
    v = sp.Symbol("v", real=True)
    with pytest.raises(ValueError, match="metric.*positive definite"):
        gaussian_curvature(sp.diag(-1, 1), [x, y])
    with pytest.raises(ValueError, match="metric.*positive definite"):
        gaussian_curvature(sp.diag(-1, -(v**2)), [x, v])
    with pytest.raises(ValueError, match="metric.*positive definite.*minor of size 2"):
        christoffel(sp.Matrix([[1, 2], [2, 1]]), [x, y])
    indefinite = [sp.diag(1, 1, -1), sp.Matrix([[1, 0, 0], [0, 1, 3], [0, 3, 1 - x**2]])]
    for metric in indefinite:
        for function in (riemann, ricci, scalar_curvature):
            with pytest.raises(ValueError, match="metric.*positive definite"):
                function(metric, [x, y, u])


def test_a_metric_whose_sign_sympy_cannot_decide_is_accepted_under_the_stated_assumption():
    c = sp.Symbol("c")  # no assumptions: c > 0 cannot be proved, nor c <= 0
    assert gaussian_curvature(sp.diag(1, c * x**2), [x, y]) == 0


def test_fraction_free_determinant_agrees_with_sympy_up_to_eight_by_eight():
    from sympy.polys.matrices import DomainMatrix

    from curvlab.symbolic.linear_algebra import adjugate, determinant

    generator = random.Random(3)
    ring, _ = sp.ring([x], sp.QQ)
    for k in range(1, 9):
        rows = [
            [sp.Integer(generator.randint(-3, 3)) + generator.randint(0, 2) * x for _ in range(k)]
            for _ in range(k)
        ]
        rows[0][0] = sp.S.Zero  # a zero pivot: the row swap path
        matrix = DomainMatrix.from_list_sympy(k, k, rows)
        reference = matrix.domain.to_sympy(matrix.det())
        polynomials = [[ring.from_expr(entry) for entry in row] for row in rows]
        fast = determinant(polynomials, ring.zero, lambda p, q: p.exquo(q))  # as the chain does
        assert sp.expand(ring(fast).as_expr() - reference) == 0
        if k <= 5:  # the same on SymPy expressions (cancel as the exact quotient)
            assert sp.expand(determinant(rows) - sp.Matrix(rows).det(method="berkowitz")) == 0
        if k <= 4:
            assert sp.expand(sp.Matrix(adjugate(rows)) - sp.Matrix(rows).adjugate()) == sp.zeros(
                k, k
            )
    assert determinant([[x, x], [x, x]]) == 0
    assert determinant([[0, 1, 2], [0, 3, 4], [0, 5, 6]]) == 0


def test_the_chain_handles_a_five_dimensional_metric():
    coords = sp.symbols("q0:5", real=True)
    embedding = sp.Matrix([*coords, sum(c**2 for c in coords) / 2])  # a paraboloid in R^6
    start = time.perf_counter()
    R = scalar_curvature(pullback_metric(embedding, coords), coords)
    assert time.perf_counter() - start < 60
    # the graph of |q|²/2 has II = I at the origin, so there R = k(k − 1) = 20 for k = 5
    assert R.subs({c: 0 for c in coords}) == 20


# ---------------------------------------------------------------------------------------------
# no silently zero curvature: a metric, an embedding or a cov in the wrong symbols


def test_a_metric_in_another_chart_is_refused_naming_the_argument():
    t1, t2 = sp.symbols("t1 t2", positive=True)  # the rational chart
    x1, x2 = sp.symbols("x1 x2", real=True)  # the exponential chart of the same slice
    curved = pullback_metric(sp.Matrix([t1, t2, t1 * t2]), [t1, t2])
    assert gaussian_curvature(curved, [t1, t2]) != 0
    for function in (christoffel, riemann, ricci, scalar_curvature, gaussian_curvature):
        with pytest.raises(
            ValueError, match=r"metric: mentions none of the coordinates \(x1, x2\)"
        ):
            function(curved, [x1, x2])
    with pytest.raises(ValueError, match="metric: mentions none"):
        sectional_curvature(curved, [x1, x2], [1, 0], [0, 1])
    with pytest.raises(ValueError, match="E, F, G: mentions none"):
        brioschi(curved[0, 0], curved[0, 1], curved[1, 1], x1, x2)
    # a numeric constant metric is flat, rightly
    assert gaussian_curvature(sp.Matrix([[2, 1], [1, 3]]), [x1, x2]) == 0


def test_an_embedding_in_another_chart_or_with_a_zero_jacobian_is_refused():
    t1, t2 = sp.symbols("t1 t2", positive=True)
    x1, x2 = sp.symbols("x1 x2", real=True)
    with pytest.raises(ValueError, match=r"embedding: mentions none of the coordinates"):
        pullback_metric(sp.Matrix([t1, t2, t1 * t2]), [x1, x2])
    with pytest.raises(ValueError, match="embedding: its Jacobian vanishes identically"):
        pullback_metric(sp.Matrix([1, 2, 3]), [x1, x2])
    with pytest.raises(ValueError, match="embedding: its Jacobian vanishes identically"):
        pullback_metric(sp.Matrix([sp.sin(x1) ** 2 + sp.cos(x1) ** 2, t1, 0]), [x1, x2])


def test_a_cov_that_depends_on_the_coordinates_is_refused_pointing_to_the_fisher_information():
    from curvlab.symbolic import gaussian_fisher_information

    mu_, sigma = sp.Symbol("mu", real=True), sp.Symbol("sigma", positive=True)
    mean = sp.Matrix([mu_, sigma])
    cov = sigma**2 * sp.eye(2)
    with pytest.raises(ValueError, match="cov: depends on the coordinates.*gaussian_fisher_info"):
        pullback_metric(mean, [mu_, sigma], cov=cov)
    # the true Fisher-Rao metric has the trace term: here K = -1/5, not the -1 of J^T cov^-1 J
    J = mean.jacobian([mu_, sigma])
    naive = (J.T * cov.inv() * J).applyfunc(sp.cancel)
    assert gaussian_curvature(naive, [mu_, sigma]) == -1
    fisher = gaussian_fisher_information(mean, cov, [mu_, sigma])
    assert gaussian_curvature(fisher, [mu_, sigma]) == sp.Rational(-1, 5)


def test_a_metric_of_undecided_sign_gets_the_curvature_of_its_levi_civita_connection():
    c = sp.Symbol("c")  # no assumptions: diag(1, c sin^2) is Riemannian for c > 0 only
    theta = sp.Symbol("theta", real=True)
    K = gaussian_curvature(sp.diag(1, c * sp.sin(theta) ** 2), [theta, y])
    assert K == 1  # the same rational identity for every c != 0, pseudo-Riemannian included
    lorentzian = sp.diag(1, -2 * sp.sin(theta) ** 2)
    with pytest.raises(ValueError, match="positive definite"):
        gaussian_curvature(lorentzian, [theta, y])  # a decided sign is refused


# ---------------------------------------------------------------------------------------------
# parameters declared, not guessed: a metric constant in the chart but written in symbols


def test_the_cylinder_of_radius_r_is_flat_with_its_radius_declared_a_parameter():
    u, v = sp.symbols("u v", real=True)
    r = sp.Symbol("r", positive=True)
    cylinder = sp.diag(r**2, 1)
    assert gaussian_curvature(cylinder, [u, v], parameters=(r,)) == 0
    assert scalar_curvature(cylinder, [u, v], parameters=(r,)) == 0
    assert christoffel(cylinder, [u, v], parameters=[r]) == sp.MutableDenseNDimArray.zeros(2, 2, 2)
    assert riemann(cylinder, [u, v], parameters=r) == sp.MutableDenseNDimArray.zeros(2, 2, 2, 2)
    assert ricci(cylinder, [u, v], parameters=(r,)) == sp.zeros(2)
    assert sectional_curvature(cylinder, [u, v], [1, 0], [0, 1], parameters=(r,)) == 0
    assert brioschi(r**2, 0, 1, u, v, parameters=(r,)) == 0
    # the same parameters beside coordinates change nothing: the sphere of radius r
    theta, phi = sp.symbols("theta phi", positive=True)
    sphere = sp.diag(r**2, r**2 * sp.sin(theta) ** 2)
    assert gaussian_curvature(sphere, [theta, phi], parameters=(r,)) == 1 / r**2


def test_an_undeclared_parameter_is_refused_with_a_message_naming_the_keyword():
    u, v = sp.symbols("u v", real=True)
    r = sp.Symbol("r", positive=True)
    for function in (christoffel, riemann, ricci, scalar_curvature, gaussian_curvature):
        with pytest.raises(ValueError, match=r"mentions none of the coordinates.*parameters="):
            function(sp.diag(r**2, 1), [u, v])
    with pytest.raises(ValueError, match=r"parameters=\(r,\)"):
        brioschi(r**2, 0, 1, u, v)


def test_declaring_one_parameter_does_not_admit_a_metric_in_another_chart():
    t1, t2 = sp.symbols("t1 t2", positive=True)  # the rational chart
    x1, x2 = sp.symbols("x1 x2", real=True)  # the exponential chart of the same slice
    curved = pullback_metric(sp.Matrix([t1, t2, t1 * t2]), [t1, t2])
    with pytest.raises(ValueError, match=r"mentions none of the coordinates \(x1, x2\).* t2"):
        gaussian_curvature(curved, [x1, x2], parameters=(t1,))
    with pytest.raises(ValueError, match="E, F, G: mentions none"):
        brioschi(curved[0, 0], curved[0, 1], curved[1, 1], x1, x2, parameters=(t1,))


def test_a_declared_parameter_that_is_a_coordinate_is_refused():
    u, v = sp.symbols("u v", real=True)
    r = sp.Symbol("r", positive=True)
    with pytest.raises(ValueError, match=r"parameters: u is one of the coordinates \(u, v\)"):
        gaussian_curvature(sp.diag(r**2, 1), [u, v], parameters=(r, u))
    # a symbol with a coordinate's name but other assumptions is refused too
    with pytest.raises(ValueError, match="parameters: v has the name of one of the coordinates"):
        gaussian_curvature(sp.diag(r**2, 1), [u, v], parameters=(r, sp.Symbol("v")))
    with pytest.raises(ValueError, match="parameters: u is one of the coordinates"):
        brioschi(r**2, 0, 1, u, v, parameters=(u,))
    with pytest.raises(TypeError, match="parameters: every parameter must be a SymPy Symbol"):
        gaussian_curvature(sp.diag(r**2, 1), [u, v], parameters=(r, 2))
