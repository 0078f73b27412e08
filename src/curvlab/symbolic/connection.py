"""The metric and its Levi-Civita connection, in exact SymPy arithmetic: the chain's first links.

The public chain (each function takes the metric and coordinates; every curvature computation
follows it)::

    embedding --pullback_metric--> g --christoffel--> Γ --riemann--> Rᵃ_bcd
        --ricci--> Ric_bd --scalar_curvature--> R        (k == 2: gaussian_curvature = R / 2)
    covariant_riemann (R_abcd), sectional_curvature (K(X, Y)), brioschi (K from E, F, G)

Here are its first links, ``pullback_metric`` and ``christoffel``, and ``Connection``: one
metric lifted into one rational function field, with its inverse and Γ each computed once,
which :class:`~curvlab.symbolic.curvature.Curvature` extends with the curvature tensors of
:mod:`.curvature`.  Helpers live in modules named for what they do: :mod:`.arithmetic` (the
one arithmetic: a rational function field with a derivation), :mod:`.linear_algebra`
(fraction-free determinants), :mod:`.simplification`, :mod:`.validation` (every refusal).

Convention (one set for the whole library; the curvature's in :mod:`.curvature`):
``christoffel(g, x)[a, b, c]`` is Γᵃ_bc = ½ gᵃᵈ (∂_b g_dc + ∂_c g_db − ∂_d g_bc).

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
from curvlab.symbolic.simplification import simplify
from curvlab.symbolic.validation import (
    as_column,
    as_coords,
    as_cov,
    as_metric,
    check_coordinate_names,
    check_mentions_coordinates,
)

__all__ = ["Connection", "christoffel", "field_quotient", "map_nested", "pullback_metric"]


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
    a metric written in them alone is accepted as constant (see
    :func:`~curvlab.symbolic.curvature.gaussian_curvature`).

    >>> import sympy as sp
    >>> theta, phi = sp.symbols("theta phi", real=True)
    >>> gamma = christoffel(sp.diag(1, sp.sin(theta) ** 2), [theta, phi])
    >>> gamma[0, 1, 1], gamma[1, 0, 1]
    (-sin(theta)*cos(theta), cos(theta)/sin(theta))
    """
    geometry = Connection(metric, coords, parameters=parameters)
    return geometry.array(geometry.gamma)


# ---------------------------------------------------------------------------------------------
# the connection behind the public functions: one metric, one field, each table computed once


def field_quotient(a, b):
    """a / b in the rational function field: the exact quotient the determinants divide by."""
    return a / b


class Connection:
    """The Levi-Civita connection of one metric, computed on demand in the field arithmetic.

    The metric (checked by :func:`~curvlab.symbolic.validation.as_metric`) lifted into one
    rational function field ``A`` built from its entries and ``extra`` expressions (tangent
    vectors that must live in the same field); ``g_inv`` and ``gamma`` are computed once, on
    first use.  :class:`~curvlab.symbolic.curvature.Curvature` adds the curvature tensors.
    """

    def __init__(self, metric, coords, extra=(), parameters=None):
        self.g_expr, self.coords = as_metric(metric, coords, parameters)
        self.k = len(self.coords)
        self.A = RationalFunctionArithmetic.build([*self.g_expr, *extra], self.coords)
        k, A = self.k, self.A
        self.g = [[A.lift(self.g_expr[i, j]) for j in range(k)] for i in range(k)]
        self._g_inv = None
        self._gamma = None

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
                det = determinant(self.g, A.zero, field_quotient)
                cofactors = adjugate(self.g, A.zero, field_quotient)
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

    def expr(self, entry):
        """An entry as a canceled SymPy expression."""
        return self.A.to_expr(entry)  # every stored entry is already in canceled form

    def array(self, table) -> sp.ImmutableDenseNDimArray:
        """A nested table of field entries (Γ, R, …) as an immutable SymPy array."""
        return sp.ImmutableDenseNDimArray(map_nested(table, self.expr))


def map_nested(table, function):
    """``function`` applied to every entry of a table of nested lists, keeping its shape."""
    if isinstance(table, list):
        return [map_nested(item, function) for item in table]
    return function(table)
