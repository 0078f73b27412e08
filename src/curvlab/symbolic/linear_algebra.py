"""Exact determinants, adjugates and inverses of small matrices, fraction-free.

What is here::

    determinant(rows, zero, exact_quotient)   Bareiss elimination: k³ ring operations and
                                              k − 2 exact divisions, never k! cofactor terms
    adjugate(rows, zero, exact_quotient)      adj(A)[i][j] = (−1)^(i+j) det(A without row j, col i)
    inverse(g)                                g⁻¹ = adj(g) / det(g), each entry simplified

Entries are nested lists of SymPy expressions, of polynomials or of elements of a rational
function field (:mod:`curvlab.symbolic.arithmetic`): whatever supports +, −, × and an exact
quotient.  ``exact_quotient(a, b)`` divides when b divides a exactly (``a.exquo(b)`` for
polynomials, ``a / b`` in a field, ``sympy.cancel(a / b)`` for expressions, the default).
Bareiss's division-free property (each intermediate is a minor of the matrix) keeps the
entries from growing as fractions would, so no dimension limit is needed; the tests check it
against SymPy's own determinant up to 8×8.  Nothing here calls ``simplify``.
"""

from __future__ import annotations

import sympy as sp

from curvlab.symbolic.simplification import simplify

__all__ = ["adjugate", "determinant", "inverse"]


def _cancel_quotient(a, b):
    return sp.cancel(a / b)


def determinant(rows, zero=sp.S.Zero, exact_quotient=None):
    """det of a square matrix (nested lists) by fraction-free Bareiss elimination.

    Step j replaces every a_rs (r, s > j) with (a_jj a_rs − a_rj a_js) / p, p the previous
    pivot (1 at the start); the division is exact (Sylvester's identity).  A zero pivot is
    replaced by a lower row with a nonzero entry in that column (changing the sign); if there
    is none the determinant is zero.  The last pivot is the determinant.

    >>> import sympy as sp
    >>> a, b = sp.symbols("a b")
    >>> determinant([[a, 1, 0], [1, a, 1], [0, 1, b]])
    a**2*b - a - b
    """
    k = len(rows)
    if k == 1:
        return rows[0][0]
    if k == 2:
        return rows[0][0] * rows[1][1] - rows[0][1] * rows[1][0]
    divide = exact_quotient or _cancel_quotient
    a = [list(row) for row in rows]
    sign, previous = 1, None
    for j in range(k - 1):
        if a[j][j] == 0:
            swap = next((r for r in range(j + 1, k) if a[r][j] != 0), None)
            if swap is None:
                return zero
            a[j], a[swap] = a[swap], a[j]
            sign = -sign
        for r in range(j + 1, k):
            for s in range(j + 1, k):
                value = a[j][j] * a[r][s] - a[r][j] * a[j][s]
                a[r][s] = value if previous is None else divide(value, previous)
        previous = a[j][j]
    result = a[k - 1][k - 1]
    return result if sign == 1 else -result


def adjugate(rows, zero=sp.S.Zero, exact_quotient=None):
    """adj(A)[i][j] = (−1)^(i+j) det(A without row j and column i), each minor by Bareiss."""
    k = len(rows)
    if k == 1:
        return [[zero + 1]]
    result = [[zero] * k for _ in range(k)]
    for i in range(k):
        for j in range(k):
            minor = [row[:i] + row[i + 1 :] for n, row in enumerate(rows) if n != j]
            cofactor = determinant(minor, zero, exact_quotient)
            result[i][j] = cofactor if (i + j) % 2 == 0 else -cofactor
    return result


def inverse(g: sp.Matrix) -> sp.Matrix:
    """g⁻¹ = adj(g) / det(g), each entry simplified (exact, no Gaussian elimination in SymPy).

    >>> import sympy as sp
    >>> inverse(sp.Matrix([[2, 1], [1, 1]]))
    Matrix([
    [ 1, -1],
    [-1,  2]])
    """
    k = g.shape[0]
    if g.is_diagonal():
        return sp.diag(*[simplify(1 / g[i, i]) for i in range(k)])
    rows = g.tolist()
    det = simplify(determinant(rows))
    adj = adjugate(rows)
    return sp.Matrix(k, k, lambda i, j: simplify(adj[i][j] / det))
