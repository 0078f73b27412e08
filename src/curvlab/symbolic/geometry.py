"""Riemannian geometry of a metric given in coordinates, in exact SymPy arithmetic.

The public chain, in the order of this file (each function takes the metric and coordinates;
every curvature computation follows it)::

    embedding --pullback_metric--> g --christoffel--> Γ --riemann--> Rᵃ_bcd
        --ricci--> Ric_bd --scalar_curvature--> R        (k == 2: gaussian_curvature = R / 2)
    covariant_riemann (R_abcd), sectional_curvature (K(X, Y)), brioschi (K from E, F, G)

then the private ``_Chain`` that computes them.  Helpers live in modules named for what they
do: :mod:`.arithmetic` (the one arithmetic: a rational function field with a derivation),
:mod:`.linear_algebra` (fraction-free determinants), :mod:`.simplification`,
:mod:`.validation` (every refusal).

Conventions (one set for the whole library):

- ``christoffel(g, x)[a, b, c]`` is Γᵃ_bc = ½ gᵃᵈ (∂_b g_dc + ∂_c g_db − ∂_d g_bc).
- ``riemann(g, x)[a, b, c, d]`` is Rᵃ_bcd = ∂_c Γᵃ_db − ∂_d Γᵃ_cb + Γᵃ_ce Γᵉ_db − Γᵃ_de Γᵉ_cb,
  so that R(∂_c, ∂_d)∂_b = Rᵃ_bcd ∂_a.  The covariant tensor is R_abcd = g_ae Rᵉ_bcd.
- ``ricci`` is Ric_bd = Rᵃ_bad and ``scalar_curvature`` is R = gᵇᵈ Ric_bd.
- ``sectional_curvature`` is K(X, Y) = R_abcd Xᵃ Yᵇ Xᶜ Yᵈ / (|X|²|Y|² − ⟨X, Y⟩²).
- A round sphere of radius r has K = 1/r² and, in dimension k, R = k(k − 1)/r².

What is refused (ValueError / TypeError naming the argument, :mod:`.validation`): a metric
that is not square or symmetric, whose determinant vanishes identically, that is provably not
positive definite (a diagonal entry or leading minor SymPy proves ≤ 0: diag(−1, 1),
diag(−1, −v²) with v real), or that mentions a symbol with a coordinate's name that is not
that coordinate (``Symbol("theta")`` against ``Symbol("theta", positive=True)``: to SymPy a
constant, and K would silently be 0), or that contains symbols but none of the coordinates
(written in another chart: again K would silently be 0) unless every one of them is declared
in ``parameters=`` (constants of the chart: the cylinder's radius r in diag(r², 1)); a
declared parameter that is a coordinate is refused.  ``pullback_metric`` also refuses an
embedding whose Jacobian vanishes identically and a ``cov`` that depends on the coordinates.

Where SymPy cannot decide a sign (a symbol without assumptions, as ``c`` in
diag(1, c sin²θ)), the metric is accepted.  Every formula of the chain is a rational identity
in the entries of g and their derivatives, valid wherever g is symmetric with det g ≠ 0: the
results are the curvature of the Levi-Civita connection of g whatever its signature
(pseudo-Riemannian where g is indefinite: diag(1, c sin²θ) has K = 1 for every c ≠ 0), and
they are the Riemannian curvature exactly on the region where g is positive definite.  The
caller who wants a Riemannian statement states that region (assumptions on the symbols).

How it stays fast: every entry lives in one rational function field (no ``simplify`` on a
large expression, ever); Γ and R are assembled as polynomials over a common denominator with
one gcd per component; symmetries halve the work (Γᵃ_bc = Γᵃ_cb, Rᵃ_bcd = −Rᵃ_bdc);
determinants are fraction-free (Bareiss).
"""

from __future__ import annotations

import sympy as sp

from curvlab.symbolic.arithmetic import RationalFunctionArithmetic
from curvlab.symbolic.linear_algebra import adjugate, determinant, inverse
from curvlab.symbolic.simplification import simplify, tidy
from curvlab.symbolic.validation import (
    as_column,
    as_coords,
    as_cov,
    as_matrix,
    as_metric,
    as_parameters,
    as_vector,
    check_coordinate_names,
    check_mentions_coordinates,
)

__all__ = [
    "brioschi",
    "christoffel",
    "covariant_riemann",
    "gaussian_curvature",
    "pullback_metric",
    "ricci",
    "riemann",
    "scalar_curvature",
    "sectional_curvature",
]


def pullback_metric(embedding, coords, cov=None) -> sp.Matrix:
    """The pullback g = Jᵀ Σ⁻¹ J of the Mahalanobis metric ⟨a, b⟩ = aᵀ Σ⁻¹ b.

    ``embedding`` is a column Matrix (d×1) of expressions in ``coords`` (k Symbols, k ≤ d),
    ``J = ∂ embedding / ∂ coords`` is its d×k Jacobian and ``cov`` the fixed covariance Σ (d×d,
    symmetric positive definite; the identity when None).  With Σ fixed this is the Fisher-Rao
    metric of the family coords ↦ N(embedding, Σ).  Entries are returned canceled.

    Refused (ValueError): an embedding with symbols but none of the coordinates (written in
    another chart), an embedding whose Jacobian vanishes identically (a zero pullback), and a
    ``cov`` that depends on the coordinates: J^T Σ⁻¹ J is then not the Fisher-Rao metric,
    which :func:`~curvlab.symbolic.fisher.gaussian_fisher_information` derives.

    >>> import sympy as sp
    >>> u, v = sp.symbols("u v", real=True)
    >>> pullback_metric(sp.Matrix([u, v, u * v]), [u, v])
    Matrix([
    [v**2 + 1,      u*v],
    [     u*v, u**2 + 1]])
    >>> pullback_metric(sp.Matrix([u, v]), [u, v], cov=sp.diag(4, 9))
    Matrix([
    [1/4,   0],
    [  0, 1/9]])
    """
    f = as_column(embedding)
    coords = as_coords(coords)
    d, k = f.shape[0], len(coords)
    if k > d:
        raise ValueError(
            f"coords: {k} coordinates cannot be immersed in {d} dimensions (need k <= d)"
        )
    check_coordinate_names(f, coords, "embedding")
    check_mentions_coordinates(f, coords, "embedding")
    cov = as_cov(cov, d)
    check_coordinate_names(cov, coords, "cov")
    moving = sorted(str(c) for c in sp.Matrix(cov).free_symbols & set(coords))
    if moving:
        raise ValueError(
            f"cov: depends on the coordinates ({', '.join(moving)}); pullback_metric needs a "
            "fixed covariance, and J^T cov^-1 J is then not the Fisher-Rao metric (it lacks "
            "the term 1/2 tr(cov^-1 d cov cov^-1 d cov)); use "
            "gaussian_fisher_information(mean, cov, params)"
        )
    jacobian = f.jacobian(coords)  # (d, k)
    precision = cov if cov == sp.eye(d) else inverse(cov)
    g = jacobian.T * precision * jacobian  # (k, k)
    g = g.applyfunc(simplify)
    if g.is_zero_matrix:
        raise ValueError(
            "embedding: its Jacobian vanishes identically (the pullback metric is zero): "
            "the embedding does not depend on the coordinates"
        )
    return g


def christoffel(metric, coords, parameters=None) -> sp.Array:
    """Christoffel symbols of the second kind, ``result[a, b, c] = Γᵃ_bc``, shape (k, k, k).

    Γᵃ_bc = ½ gᵃᵈ (∂_b g_dc + ∂_c g_db − ∂_d g_bc): the Levi-Civita connection of ``metric``
    (a symmetric nonsingular k×k Matrix) in the coordinates ``coords`` (k distinct Symbols).
    Symmetric in (b, c).

    Refuses (ValueError) what :func:`~curvlab.symbolic.validation.as_metric` refuses; where
    SymPy cannot decide the metric's sign, the result assumes it positive definite.
    ``parameters`` (Symbols, none a coordinate) declares the constants of the chart, so that
    a metric written in them alone is accepted as constant (see :func:`gaussian_curvature`).

    >>> import sympy as sp
    >>> theta, phi = sp.symbols("theta phi", real=True)
    >>> gamma = christoffel(sp.diag(1, sp.sin(theta) ** 2), [theta, phi])
    >>> gamma[0, 1, 1], gamma[1, 0, 1]
    (-sin(theta)*cos(theta), cos(theta)/sin(theta))
    """
    geometry = _Chain(metric, coords, parameters=parameters)
    return geometry.array(geometry.gamma)


def riemann(metric, coords, parameters=None) -> sp.Array:
    """The Riemann tensor ``result[a, b, c, d] = Rᵃ_bcd``, shape (k, k, k, k).

    Rᵃ_bcd = ∂_c Γᵃ_db − ∂_d Γᵃ_cb + Γᵃ_ce Γᵉ_db − Γᵃ_de Γᵉ_cb, that is
    R(∂_c, ∂_d)∂_b = Rᵃ_bcd ∂_a with R(X, Y) = ∇_X∇_Y − ∇_Y∇_X − ∇_[X,Y].  With this
    convention the round unit sphere has R^θ_φθφ = sin²θ (positive curvature).

    Refuses (ValueError) what :func:`~curvlab.symbolic.validation.as_metric` refuses; where
    SymPy cannot decide the metric's sign, the result assumes it positive definite.
    ``parameters`` (Symbols, none a coordinate) declares the constants of the chart, so that
    a metric written in them alone is accepted as constant (see :func:`gaussian_curvature`).

    >>> import sympy as sp
    >>> theta, phi = sp.symbols("theta phi", real=True)
    >>> riemann(sp.diag(1, sp.sin(theta) ** 2), [theta, phi])[0, 1, 0, 1]
    sin(theta)**2
    """
    geometry = _Chain(metric, coords, parameters=parameters)
    return geometry.array(geometry.riemann)


def covariant_riemann(metric, coords, parameters=None) -> sp.Array:
    """The covariant Riemann tensor R_abcd = g_ae Rᵉ_bcd = ⟨R(∂_c, ∂_d)∂_b, ∂_a⟩.

    Antisymmetric in (a, b) and in (c, d); R_abcd = R_cdab.  In two dimensions R_0101 = K det g.
    This is the tensor the Gauss equation gives as ⟨II_ac, II_bd⟩ − ⟨II_ad, II_bc⟩.

    Refuses (ValueError) what :func:`~curvlab.symbolic.validation.as_metric` refuses; where
    SymPy cannot decide the metric's sign, the result assumes it positive definite.
    ``parameters`` (Symbols, none a coordinate) declares the constants of the chart, so that
    a metric written in them alone is accepted as constant (see :func:`gaussian_curvature`).

    >>> import sympy as sp
    >>> theta, phi, r = sp.symbols("theta phi r", positive=True)
    >>> covariant_riemann(sp.diag(r**2, r**2 * sp.sin(theta) ** 2), [theta, phi])[0, 1, 0, 1]
    r**2*sin(theta)**2
    """
    geometry = _Chain(metric, coords, parameters=parameters)
    return geometry.array(geometry.covariant_riemann())


def ricci(metric, coords, parameters=None) -> sp.Matrix:
    """The Ricci tensor Ric_bd = Rᵃ_bad (contraction of the upper index with the third), k×k.

    For the round sphere of radius r in dimension k, Ric = (k − 1)/r² · g.

    Refuses (ValueError) what :func:`~curvlab.symbolic.validation.as_metric` refuses; where
    SymPy cannot decide the metric's sign, the result assumes it positive definite.
    ``parameters`` (Symbols, none a coordinate) declares the constants of the chart, so that
    a metric written in them alone is accepted as constant (see :func:`gaussian_curvature`).

    >>> import sympy as sp
    >>> theta, phi = sp.symbols("theta phi", real=True)
    >>> ricci(sp.diag(1, sp.sin(theta) ** 2), [theta, phi])
    Matrix([
    [1,             0],
    [0, sin(theta)**2]])
    """
    geometry = _Chain(metric, coords, parameters=parameters)
    return sp.Matrix(_map_nested(geometry.ricci(), geometry.expr))


def scalar_curvature(metric, coords, parameters=None) -> sp.Expr:
    """The scalar curvature R = gᵇᵈ Ric_bd; k(k − 1)/r² on a round k-sphere of radius r.

    Refuses (ValueError) what :func:`~curvlab.symbolic.validation.as_metric` refuses; where
    SymPy cannot decide the metric's sign, the result assumes it positive definite.
    ``parameters`` (Symbols, none a coordinate) declares the constants of the chart, so that
    a metric written in them alone is accepted as constant (see :func:`gaussian_curvature`).

    >>> import sympy as sp
    >>> chi, theta, phi, r = sp.symbols("chi theta phi r", positive=True)
    >>> g = sp.diag(r**2, (r * sp.sin(chi)) ** 2, (r * sp.sin(chi) * sp.sin(theta)) ** 2)
    >>> scalar_curvature(g, [chi, theta, phi])
    6/r**2
    """
    geometry = _Chain(metric, coords, parameters=parameters)
    return tidy(geometry.expr(geometry.scalar()), canceled=True)


def gaussian_curvature(metric, coords, parameters=None) -> sp.Expr:
    """Gaussian curvature K = R_0101 / det g (= R / 2, = the Brioschi formula) of a 2×2 metric.

    R_0101 = g_0e Rᵉ_101 comes from the Christoffel symbols, which stay small where the metric's
    entries are large (the Brioschi determinants do not); ``brioschi`` gives the same K from
    E, F, G directly.  Raises ValueError unless the metric is 2×2.  1/r² on a sphere of radius r.

    Refuses (ValueError) what :func:`~curvlab.symbolic.validation.as_metric` refuses; where
    SymPy cannot decide the metric's sign, the result assumes it positive definite.
    ``parameters`` (Symbols, none a coordinate) declares the constants of the chart, so that
    a metric written in them alone is accepted as constant (see :func:`gaussian_curvature`).

    >>> import sympy as sp
    >>> mu, sigma = sp.Symbol("mu", real=True), sp.Symbol("sigma", positive=True)
    >>> gaussian_curvature(sp.diag(1 / sigma**2, 2 / sigma**2), [mu, sigma])
    -1/2

    A metric that mentions none of the coordinates is refused unless its symbols are declared
    ``parameters``: the cylinder of radius r, diag(r², 1) in (u, v), is flat.

    >>> u, v, r = sp.symbols("u v r", positive=True)
    >>> gaussian_curvature(sp.diag(r**2, 1), [u, v], parameters=(r,))
    0
    """
    g = as_matrix(metric, "metric")
    if g.shape != (2, 2):
        raise ValueError(
            f"metric: gaussian_curvature needs a 2x2 metric (a surface), got shape {g.shape}; "
            "use scalar_curvature or sectional_curvature in higher dimensions"
        )
    geometry = _Chain(g, coords, parameters=parameters)
    A, metric, R = geometry.A, geometry.g, geometry.riemann
    lowered = A.normal(metric[0][0] * R[0][1][0][1] + metric[0][1] * R[1][1][0][1])
    return tidy(
        geometry.expr(A.normal(lowered / determinant(metric, A.zero, _field_quotient))),
        canceled=True,
    )


def sectional_curvature(metric, coords, X, Y, parameters=None) -> sp.Expr:
    """Sectional curvature of the plane spanned by the tangent vectors X and Y.

    K(X, Y) = R_abcd Xᵃ Yᵇ Xᶜ Yᵈ / (|X|²|Y|² − ⟨X, Y⟩²) = ⟨R(X, Y)Y, X⟩ / |X ∧ Y|², with
    R_abcd = g_ae Rᵉ_bcd.  X and Y are k-component sequences or column matrices (components in
    the coordinate basis, possibly expressions in the coordinates); they must be linearly
    independent (ValueError otherwise).  +1/r² for any plane on a round sphere of radius r.

    Refuses (ValueError) what :func:`~curvlab.symbolic.validation.as_metric` refuses; where
    SymPy cannot decide the metric's sign, the result assumes it positive definite.
    ``parameters`` (Symbols, none a coordinate) declares the constants of the chart, so that
    a metric written in them alone is accepted as constant (see :func:`gaussian_curvature`).

    >>> import sympy as sp
    >>> chi, theta, phi, r = sp.symbols("chi theta phi r", positive=True)
    >>> g = sp.diag(r**2, (r * sp.sin(chi)) ** 2, (r * sp.sin(chi) * sp.sin(theta)) ** 2)
    >>> sectional_curvature(g, [chi, theta, phi], [1, 0, 0], [0, 1, 1])
    r**(-2)
    """
    k = as_matrix(metric, "metric").shape[0]
    x = as_vector(X, k, "X")
    y = as_vector(Y, k, "Y")
    check_coordinate_names([*x, *y], as_coords(coords), "X, Y")
    geometry = _Chain(metric, coords, extra=[*x, *y], parameters=parameters)
    A, g, table = geometry.A, geometry.g, geometry.riemann
    x = [A.lift(e) for e in x]
    y = [A.lift(e) for e in y]

    def inner(p, q):
        total = A.zero
        for a in range(k):
            for b in range(k):
                total += g[a][b] * p[a] * q[b]
        return total

    area_squared = A.normal(inner(x, x) * inner(y, y) - inner(x, y) ** 2)
    if area_squared == 0:
        raise ValueError("X, Y: expected linearly independent tangent vectors (they span no plane)")
    # R(X, Y)Y = Rᵉ_bcd Yᵇ Xᶜ Yᵈ ∂_e, paired with X through g.
    numerator = A.zero
    for e in range(k):
        component = A.zero
        for b in range(k):
            for c in range(k):
                for d in range(k):
                    if table[e][b][c][d] != 0:
                        component += table[e][b][c][d] * y[b] * x[c] * y[d]
        for a in range(k):
            numerator += g[a][e] * x[a] * component
    return tidy(geometry.expr(A.normal(numerator / area_squared)), canceled=True)


def brioschi(E, F, G, u, v, parameters=None) -> sp.Expr:
    """Gaussian curvature from the first fundamental form E du² + 2F du dv + G dv² (Brioschi).

    K = (det M₁ − det M₂) / (EG − F²)², with

        M₁ = [[−E_vv/2 + F_uv − G_uu/2, E_u/2, F_u − E_v/2],
              [F_v − G_u/2,             E,     F          ],
              [G_v/2,                   F,     G          ]]
        M₂ = [[0,     E_v/2, G_u/2],
              [E_v/2, E,     F    ],
              [G_u/2, F,     G    ]]

    Only E, F, G and their first and second derivatives appear, no square roots: the
    Theorema Egregium in one formula.  The result is canceled.  ``parameters`` declares the
    constants of the chart, as in :func:`gaussian_curvature`.

    >>> import sympy as sp
    >>> x, y = sp.symbols("x y", real=True)
    >>> brioschi(1 + y**2, x * y, 1 + x**2, x, y)  # the saddle z = xy
    -1/(x**4 + 2*x**2*y**2 + 2*x**2 + y**4 + 2*y**2 + 1)
    """
    u, v = as_coords([u, v], "u, v")
    E, F, G = (sp.sympify(e) for e in (E, F, G))
    check_coordinate_names([E, F, G], (u, v), "E, F, G")
    parameters = as_parameters(parameters, (u, v))
    check_mentions_coordinates([E, F, G], (u, v), "E, F, G", parameters)
    A = RationalFunctionArithmetic.build([E, F, G], (u, v))
    return simplify(A.to_expr(_brioschi(A, A.lift(E), A.lift(F), A.lift(G))))


# ---------------------------------------------------------------------------------------------
# the chain behind the public functions: one metric, one field, each tensor computed once


def _field_quotient(a, b):
    return a / b


def _brioschi(A, E, F, G):
    """The Brioschi formula in the arithmetic A (coordinate 0 is u, 1 is v)."""

    def d(entry, *indices):
        for i in indices:
            entry = A.diff(entry, i)
        return entry

    E_u, E_v, F_u, F_v, G_u, G_v = d(E, 0), d(E, 1), d(F, 0), d(F, 1), d(G, 0), d(G, 1)
    m1 = [
        [-d(E_v, 1) / 2 + d(F_u, 1) - d(G_u, 0) / 2, E_u / 2, F_u - E_v / 2],
        [F_v - G_u / 2, E, F],
        [G_v / 2, F, G],
    ]
    m2 = [[A.zero, E_v / 2, G_u / 2], [E_v / 2, E, F], [G_u / 2, F, G]]
    numerator = determinant(m1, A.zero, _field_quotient) - determinant(m2, A.zero, _field_quotient)
    return A.normal(numerator / (E * G - F**2) ** 2)


class _Chain:
    """The curvature chain of one metric, computed on demand in the field arithmetic."""

    def __init__(self, metric, coords, extra=(), parameters=None):
        self.g_expr, self.coords = as_metric(metric, coords, parameters)
        self.k = len(self.coords)
        self.A = RationalFunctionArithmetic.build([*self.g_expr, *extra], self.coords)
        k, A = self.k, self.A
        self.g = [[A.lift(self.g_expr[i, j]) for j in range(k)] for i in range(k)]
        self._g_inv = None
        self._gamma = None
        self._riemann = None

    @property
    def g_inv(self) -> list:
        """gᵃᵇ = adj(g) / det(g) (or 1/g_aa for a diagonal metric)."""
        if self._g_inv is None:
            k, A = self.k, self.A
            if self.g_expr.is_diagonal():
                self._g_inv = [
                    [A.normal(1 / self.g[i][i]) if i == j else A.zero for j in range(k)]
                    for i in range(k)
                ]
            else:
                det = determinant(self.g, A.zero, _field_quotient)
                cofactors = adjugate(self.g, A.zero, _field_quotient)
                self._g_inv = [[cofactors[i][j] / det for j in range(k)] for i in range(k)]
        return self._g_inv

    @property
    def gamma(self) -> list:
        """gamma[a][b][c] = Γᵃ_bc, symmetric in (b, c): half the work."""
        if self._gamma is None:
            self._gamma = self.A.christoffel(self.g)  # None unless derivatives stay polynomial
        if self._gamma is None:
            k, A, g = self.k, self.A, self.g
            dg = [[[A.diff(g[i][j], e) for j in range(k)] for i in range(k)] for e in range(k)]
            first_kind = [[[None] * k for _ in range(k)] for _ in range(k)]  # [d][b][c] = Γ_dbc
            for d in range(k):
                for b in range(k):
                    for c in range(b, k):
                        value = (dg[b][d][c] + dg[c][d][b] - dg[d][b][c]) / 2
                        first_kind[d][b][c] = first_kind[d][c][b] = value
            gamma = [[[None] * k for _ in range(k)] for _ in range(k)]
            for a in range(k):
                for b in range(k):
                    for c in range(b, k):
                        value = A.zero
                        for d in range(k):
                            if self.g_inv[a][d] != 0:
                                value += self.g_inv[a][d] * first_kind[d][b][c]
                        gamma[a][b][c] = gamma[a][c][b] = A.normal(value)
            self._gamma = gamma
        return self._gamma

    @property
    def riemann(self) -> list:
        """riemann[a][b][c][d] = Rᵃ_bcd, antisymmetric in (c, d): only c < d is computed."""
        if self._riemann is None:
            self._riemann = self.A.riemann(self.gamma)
        if self._riemann is None:
            k, A, G = self.k, self.A, self.gamma
            table = [[[[A.zero] * k for _ in range(k)] for _ in range(k)] for _ in range(k)]
            for a in range(k):
                for b in range(k):
                    for c in range(k):
                        for d in range(c + 1, k):
                            value = A.diff(G[a][d][b], c) - A.diff(G[a][c][b], d)
                            for e in range(k):
                                value += G[a][c][e] * G[e][d][b] - G[a][d][e] * G[e][c][b]
                            value = A.normal(value)
                            table[a][b][c][d] = value
                            table[a][b][d][c] = -value
            self._riemann = table
        return self._riemann

    def covariant_riemann(self) -> list:
        """R_abcd = g_ae Rᵉ_bcd."""
        k, A, g, R = self.k, self.A, self.g, self.riemann
        lowered = [[[[A.zero] * k for _ in range(k)] for _ in range(k)] for _ in range(k)]
        for a in range(k):
            for b in range(k):
                for c in range(k):
                    for d in range(c + 1, k):
                        value = A.zero
                        for e in range(k):
                            value += g[a][e] * R[e][b][c][d]
                        lowered[a][b][c][d] = A.normal(value)
                        lowered[a][b][d][c] = -lowered[a][b][c][d]
        return lowered

    def ricci(self) -> list:
        """Ric_bd = Rᵃ_bad, symmetric for the Levi-Civita connection."""
        k, A, R = self.k, self.A, self.riemann
        ric = [[A.zero] * k for _ in range(k)]
        for b in range(k):
            for d in range(b, k):
                value = A.zero
                for a in range(k):
                    value += R[a][b][a][d]
                ric[b][d] = ric[d][b] = A.normal(value)
        return ric

    def scalar(self):
        """R = gᵇᵈ Ric_bd."""
        k, A, ric = self.k, self.A, self.ricci()
        value = A.zero
        for b in range(k):
            for d in range(k):
                if self.g_inv[b][d] != 0:
                    value += self.g_inv[b][d] * ric[b][d]
        return A.normal(value)

    def expr(self, entry):
        """An entry as a canceled SymPy expression."""
        return self.A.to_expr(entry)  # every stored entry is already in canceled form

    def array(self, table) -> sp.ImmutableDenseNDimArray:
        return sp.ImmutableDenseNDimArray(_map_nested(table, self.expr))


def _map_nested(table, function):
    if isinstance(table, list):
        return [_map_nested(item, function) for item in table]
    return function(table)
