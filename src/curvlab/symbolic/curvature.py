"""Curvature of a metric given in coordinates, in exact SymPy arithmetic: the chain after Γ.

The chain's links after the metric and its connection (:mod:`.connection`, where the whole
chain is drawn)::

    Γ --riemann--> Rᵃ_bcd --ricci--> Ric_bd --scalar_curvature--> R
                                                     (k == 2: gaussian_curvature = R / 2)
    covariant_riemann (R_abcd), sectional_curvature (K(X, Y)), brioschi (K from E, F, G)

and ``Curvature``, which computes them all: the
:class:`~curvlab.symbolic.connection.Connection` of the metric extended with the curvature
tensors, each computed once.

Conventions (one set for the whole library; Γᵃ_bc = ``christoffel[a, b, c]`` in
:mod:`.connection`):

- ``riemann(g, x)[a, b, c, d]`` is Rᵃ_bcd = ∂_c Γᵃ_db − ∂_d Γᵃ_cb + Γᵃ_ce Γᵉ_db − Γᵃ_de Γᵉ_cb,
  so that R(∂_c, ∂_d)∂_b = Rᵃ_bcd ∂_a.  The covariant tensor is R_abcd = g_ae Rᵉ_bcd.
- ``ricci`` is Ric_bd = Rᵃ_bad and ``scalar_curvature`` is R = gᵇᵈ Ric_bd.
- ``sectional_curvature`` is K(X, Y) = R_abcd Xᵃ Yᵇ Xᶜ Yᵈ / (|X|²|Y|² − ⟨X, Y⟩²).
- A round sphere of radius r has K = 1/r² and, in dimension k, R = k(k − 1)/r².

What is refused, what is assumed where SymPy cannot decide a sign, and how the chain stays
fast are the connection's (:mod:`.connection`): every function here reads its metric through
:func:`~curvlab.symbolic.validation.as_metric` and computes in the same field.
"""

from __future__ import annotations

import sympy as sp

from curvlab.symbolic.arithmetic import RationalFunctionArithmetic
from curvlab.symbolic.connection import Connection, field_quotient, map_nested
from curvlab.symbolic.linear_algebra import determinant
from curvlab.symbolic.simplification import simplify, tidy
from curvlab.symbolic.validation import (
    as_coords,
    as_matrix,
    as_parameters,
    as_vector,
    check_coordinate_names,
    check_mentions_coordinates,
)

__all__ = [
    "Curvature",
    "brioschi",
    "covariant_riemann",
    "gaussian_curvature",
    "ricci",
    "riemann",
    "scalar_curvature",
    "sectional_curvature",
]


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
    geometry = Curvature(metric, coords, parameters=parameters)
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
    geometry = Curvature(metric, coords, parameters=parameters)
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
    geometry = Curvature(metric, coords, parameters=parameters)
    return sp.Matrix(map_nested(geometry.ricci(), geometry.expr))


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
    geometry = Curvature(metric, coords, parameters=parameters)
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
    geometry = Curvature(g, coords, parameters=parameters)
    A, metric, R = geometry.A, geometry.g, geometry.riemann
    lowered = A.normal(metric[0][0] * R[0][1][0][1] + metric[0][1] * R[1][1][0][1])
    return tidy(
        geometry.expr(A.normal(lowered / determinant(metric, A.zero, field_quotient))),
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
    geometry = Curvature(metric, coords, extra=[*x, *y], parameters=parameters)
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
    numerator = determinant(m1, A.zero, field_quotient) - determinant(m2, A.zero, field_quotient)
    return A.normal(numerator / (E * G - F**2) ** 2)


class Curvature(Connection):
    """The curvature tensors of one metric, computed on demand in the connection's arithmetic.

    Rᵃ_bcd is computed once, from Γ, on first use; R_abcd, Ric and R are read from it.
    """

    def __init__(self, metric, coords, extra=(), parameters=None):
        super().__init__(metric, coords, extra, parameters)
        self._riemann = None

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
