"""Riemannian geometry of a metric given in coordinates, in exact SymPy arithmetic.

The chain every curvature computation follows::

    embedding --pullback_metric--> g --christoffel--> Γ --riemann--> Rᵃ_bcd
        --ricci--> Ric_bd --scalar_curvature--> R        (k == 2: gaussian_curvature = R / 2)

Conventions (one set for the whole library):

- ``christoffel(g, x)[a, b, c]`` is Γᵃ_bc = ½ gᵃᵈ (∂_b g_dc + ∂_c g_db − ∂_d g_bc).
- ``riemann(g, x)[a, b, c, d]`` is Rᵃ_bcd = ∂_c Γᵃ_db − ∂_d Γᵃ_cb + Γᵃ_ce Γᵉ_db − Γᵃ_de Γᵉ_cb,
  so that R(∂_c, ∂_d)∂_b = Rᵃ_bcd ∂_a.  The covariant tensor is R_abcd = g_ae Rᵉ_bcd.
- ``ricci`` is Ric_bd = Rᵃ_bad and ``scalar_curvature`` is R = gᵇᵈ Ric_bd.
- ``sectional_curvature`` is K(X, Y) = R_abcd Xᵃ Yᵇ Xᶜ Yᵈ / (|X|²|Y|² − ⟨X, Y⟩²).
- A round sphere of radius r has K = 1/r² and, in dimension k, R = k(k − 1)/r².

How it stays fast (no step ever calls ``simplify`` on a large expression):

- Metrics rational in the coordinates, other symbols and exponentials (softmax charts) are
  computed in a rational function field (``_FieldArithmetic``): g = M/q over a common
  denominator, Γ and R assembled as polynomials, one gcd per component.
- Metrics with sin, cos, sinh, cosh are computed as expressions (``_ExpressionArithmetic``):
  every entry is canceled as soon as it is built (``_simplify``), and sin² = 1 − cos²,
  sinh² = cosh² − 1 decide when an entry vanishes.
- Symmetries halve the work (Γᵃ_bc = Γᵃ_cb, Rᵃ_bcd = −Rᵃ_bdc); inverses are adjugate /
  determinant by cofactor expansion, without SymPy's intermediate simplification.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

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

# ---------------------------------------------------------------------------------------------
# simplification, entry by entry

# Rules (f, partner, a, b) meaning f(x)² = a + b·partner(x)², from sin² + cos² = 1 and
# cosh² − sinh² = 1.
_TOWARDS_COS = ((sp.sin, sp.cos, 1, -1), (sp.sinh, sp.cosh, -1, 1))  # sin² = 1 − cos², sinh² = …
_TOWARDS_SIN = ((sp.cos, sp.sin, 1, -1), (sp.cosh, sp.sinh, 1, 1))  # cos² = 1 − sin², cosh² = …


def _rewrite_squares(expr: sp.Expr, rules) -> sp.Expr:
    """Rewrite f(x)ⁿ (n ≥ 2) as f(x)^(n mod 2) (a + b·partner(x)²)^(n div 2), then expand.

    With ``_TOWARDS_COS`` every sin and sinh is left with exponent at most 1, so a polynomial
    in sin, cos, sinh, cosh of the same arguments becomes a canonical representative modulo the
    Pythagorean identities: it is zero exactly when the original polynomial is.
    """
    for func, partner, constant, coefficient in rules:

        def is_square_power(node, func=func):
            return (
                node.is_Pow
                and isinstance(node.base, func)
                and node.exp.is_Integer
                and node.exp >= 2
            )

        def rewrite(node, partner=partner, constant=constant, coefficient=coefficient):
            arg = node.base.args[0]
            n = int(node.exp)
            square = constant + coefficient * partner(arg) ** 2
            return node.base ** (n % 2) * square ** (n // 2)

        expr = expr.replace(is_square_power, rewrite)
    return sp.expand(expr)


def _has_trig(expr: sp.Expr) -> bool:
    return expr.has(sp.sin, sp.cos, sp.sinh, sp.cosh)


def _simplify(expr) -> sp.Expr:
    """Cancel ``expr`` to p/q, decide p = 0 modulo sin² + cos² = 1, return the shortest form.

    The candidates are the canceled p/q and p/q with even powers of sin (or of cos) rewritten;
    the shortest by operation count wins, ties going to the plainer form.
    """
    expr = sp.sympify(expr)
    canceled = sp.cancel(sp.together(expr))
    if canceled == 0 or not _has_trig(canceled):
        return canceled
    numerator, denominator = sp.fraction(canceled)
    towards_cos = _rewrite_squares(numerator, _TOWARDS_COS)
    if towards_cos == 0:
        return sp.S.Zero
    candidates = [
        canceled,
        sp.cancel(towards_cos / _rewrite_squares(denominator, _TOWARDS_COS)),
        sp.cancel(
            _rewrite_squares(numerator, _TOWARDS_SIN) / _rewrite_squares(denominator, _TOWARDS_SIN)
        ),
    ]
    return min(candidates, key=sp.count_ops)


def _tidy(expr, canceled: bool = False) -> sp.Expr:
    """A final scalar: ``_simplify`` (unless ``canceled``), then ``factor`` when short."""
    simplified = expr if canceled else _simplify(expr)
    if simplified.is_number or sp.count_ops(simplified) > 400:
        return simplified
    factored = sp.factor(simplified)
    if sp.count_ops(factored) <= sp.count_ops(simplified):
        return factored
    return simplified


def _is_zero(expr) -> bool:
    return _simplify(expr) == 0


def _differs_from_zero_at_a_point(expr: sp.Expr) -> bool:
    """True when ``expr`` is visibly nonzero at a fixed rational point of its free symbols."""
    symbols = sorted(expr.free_symbols, key=lambda s: s.name)
    point = {s: sp.Rational(2 * i + 3, 4 * i + 7) for i, s in enumerate(symbols)}
    try:
        value = complex(sp.N(expr.subs(point), 30))
    except (TypeError, ValueError, ZeroDivisionError):
        return False
    return value == value and abs(value) > 1e-12 and abs(value) != float("inf")


def _vanishes_identically(expr: sp.Expr) -> bool:
    """True when ``expr`` is identically zero (a cheap numeric look first, then exact)."""
    if _differs_from_zero_at_a_point(expr):
        return False
    return _is_zero(expr)


# ---------------------------------------------------------------------------------------------
# input validation


def _as_coords(coords, name: str = "coords") -> tuple[sp.Symbol, ...]:
    """Coordinates as a tuple of distinct SymPy Symbols (TypeError / ValueError otherwise)."""
    if isinstance(coords, sp.Symbol):
        coords = (coords,)
    if isinstance(coords, sp.MatrixBase):
        coords = list(coords)
    if not isinstance(coords, Sequence) or isinstance(coords, str):
        raise TypeError(
            f"{name}: expected a sequence of SymPy Symbols, got {type(coords).__name__}"
        )
    coords = tuple(coords)
    if not coords:
        raise ValueError(f"{name}: expected at least one coordinate, got none")
    for c in coords:
        if not isinstance(c, sp.Symbol):
            raise TypeError(f"{name}: every coordinate must be a SymPy Symbol, got {c!r}")
    if len(set(coords)) != len(coords):
        raise ValueError(f"{name}: coordinates must be distinct, got {coords}")
    return coords


def _as_matrix(value, name: str) -> sp.Matrix:
    if isinstance(value, sp.MatrixBase):
        return sp.Matrix(value)
    if isinstance(value, sp.NDimArray):
        if value.rank() != 2:
            raise ValueError(
                f"{name}: expected a matrix (rank 2), got an array of rank {value.rank()}"
            )
        return sp.Matrix(value.tolist())
    if isinstance(value, (list, tuple)):
        try:
            return sp.Matrix(value)
        except (TypeError, ValueError, sp.SympifyError) as error:
            raise TypeError(f"{name}: could not read a matrix from {value!r}: {error}") from None
    raise TypeError(f"{name}: expected a SymPy Matrix, got {type(value).__name__}")


def _as_metric(metric, coords) -> tuple[sp.Matrix, tuple[sp.Symbol, ...]]:
    """Validate a metric and its coordinates: square, symmetric, nonsingular, sizes agree."""
    g = _as_matrix(metric, "metric")
    rows, cols = g.shape
    if rows != cols:
        raise ValueError(f"metric: expected a square matrix, got shape {g.shape}")
    coords = _as_coords(coords)
    if len(coords) != rows:
        raise ValueError(
            f"coords: a {rows}x{rows} metric needs {rows} coordinates, got {len(coords)}"
        )
    for i in range(rows):
        for j in range(i + 1, rows):
            if not _is_zero(g[i, j] - g[j, i]):
                raise ValueError(
                    f"metric: expected a symmetric matrix, entries [{i}, {j}] and [{j}, {i}] differ"
                )
    if _vanishes_identically(_determinant(g.tolist())):
        raise ValueError("metric: the determinant is identically zero (a singular metric)")
    return g, coords


def _as_vector(vector, k: int, name: str) -> list[sp.Expr]:
    if isinstance(vector, sp.MatrixBase):
        if 1 not in vector.shape:
            raise ValueError(f"{name}: expected a vector, got a matrix of shape {vector.shape}")
        entries = list(vector)
    elif isinstance(vector, (list, tuple, sp.NDimArray)):
        entries = list(vector)
    else:
        raise TypeError(
            f"{name}: expected a sequence or column Matrix, got {type(vector).__name__}"
        )
    if len(entries) != k:
        raise ValueError(
            f"{name}: expected {k} components (one per coordinate), got {len(entries)}"
        )
    return [sp.sympify(e) for e in entries]


def _check_symmetric_positive_definite(cov: sp.Matrix, name: str = "cov") -> None:
    """Raise ValueError when ``cov`` is not symmetric, or decidably not positive definite.

    Sylvester's criterion: a symmetric matrix is positive definite iff every leading principal
    minor is positive.  A minor that is identically zero, or whose sign SymPy can decide to be
    nonpositive, fails; a symbolic minor whose sign is undecidable is accepted.
    """
    rows, cols = cov.shape
    if rows != cols:
        raise ValueError(f"{name}: expected a square matrix, got shape {cov.shape}")
    for i in range(rows):
        for j in range(i + 1, rows):
            if not _is_zero(cov[i, j] - cov[j, i]):
                raise ValueError(
                    f"{name}: expected a symmetric matrix, entries [{i}, {j}] and [{j}, {i}] differ"
                )
    for n in range(1, rows + 1):
        minor = _simplify(_determinant(cov[:n, :n].tolist()))
        if minor == 0:
            raise ValueError(f"{name}: expected a positive definite matrix, it is singular")
        if minor.is_number:
            if not minor.is_real:
                raise ValueError(f"{name}: expected a real matrix, leading minor {n} is {minor}")
            if not minor.is_positive:
                raise ValueError(
                    f"{name}: expected a positive definite matrix, "
                    f"leading principal minor {n} is {minor}"
                )
        elif minor.is_nonpositive:
            raise ValueError(
                f"{name}: expected a positive definite matrix, "
                f"leading principal minor {n} ({minor}) is never positive"
            )


def _as_cov(cov, d: int) -> sp.Matrix:
    """The covariance as a d×d Matrix (identity when None; a scalar is allowed when d == 1)."""
    if cov is None:
        return sp.eye(d)
    if isinstance(cov, (sp.MatrixBase, sp.NDimArray, list, tuple)):
        cov = _as_matrix(cov, "cov")
    else:
        try:
            scalar = sp.sympify(cov, strict=True)
        except sp.SympifyError:
            raise TypeError(
                f"cov: expected a SymPy Matrix or scalar, got {type(cov).__name__}"
            ) from None
        if d != 1:
            raise ValueError(
                f"cov: a scalar covariance is only accepted for a 1-dimensional Gaussian; "
                f"pass a {d}x{d} matrix (for example s**2 * sympy.eye({d}))"
            )
        cov = sp.Matrix([[scalar]])
    if cov.shape != (d, d):
        raise ValueError(f"cov: expected shape ({d}, {d}) to match the mean, got {cov.shape}")
    _check_symmetric_positive_definite(cov)
    return cov


def _as_column(embedding, name: str = "embedding") -> sp.Matrix:
    if isinstance(embedding, sp.MatrixBase):
        if embedding.shape[1] != 1:
            raise ValueError(
                f"{name}: expected a column matrix of shape (d, 1), got shape {embedding.shape}"
            )
        return sp.Matrix(embedding)
    if isinstance(embedding, (list, tuple)):
        if any(isinstance(e, (list, tuple, sp.MatrixBase)) for e in embedding):
            raise ValueError(
                f"{name}: expected a flat list of d expressions (a column), got nesting"
            )
        return sp.Matrix(embedding)
    raise TypeError(
        f"{name}: expected a SymPy column Matrix (d, 1), got {type(embedding).__name__}"
    )


# ---------------------------------------------------------------------------------------------
# the chain: metric -> Christoffel -> Riemann -> Ricci -> scalar


def _determinant(rows, zero=sp.S.Zero):
    """det of a small square matrix (nested lists) by Laplace expansion along the first row.

    Entries may be SymPy expressions or elements of a rational function field; no intermediate
    simplification is attempted (SymPy's own ``det`` can spend seconds simplifying a 2×2).
    """
    k = len(rows)
    if k == 1:
        return rows[0][0]
    if k == 2:
        return rows[0][0] * rows[1][1] - rows[0][1] * rows[1][0]
    total = zero
    for j in range(k):
        if rows[0][j] == 0:
            continue
        minor = [row[:j] + row[j + 1 :] for row in rows[1:]]
        term = rows[0][j] * _determinant(minor, zero)
        total = total + term if j % 2 == 0 else total - term
    return total


def _adjugate(rows, zero=sp.S.Zero):
    """adj(A)[i][j] = (−1)^(i+j) det(A without row j and column i)."""
    k = len(rows)
    if k == 1:
        return [[zero + 1]]
    adjugate = [[zero] * k for _ in range(k)]
    for i in range(k):
        for j in range(k):
            minor = [row[:i] + row[i + 1 :] for n, row in enumerate(rows) if n != j]
            cofactor = _determinant(minor, zero)
            adjugate[i][j] = cofactor if (i + j) % 2 == 0 else -cofactor
    return adjugate


def _inverse(g: sp.Matrix) -> sp.Matrix:
    """g⁻¹ = adj(g) / det(g), each entry canceled (exact, no Gaussian elimination)."""
    k = g.shape[0]
    if g.is_diagonal():
        return sp.diag(*[_simplify(1 / g[i, i]) for i in range(k)])
    rows = g.tolist()
    det = _simplify(_determinant(rows))
    adjugate = _adjugate(rows)
    return sp.Matrix(k, k, lambda i, j: _simplify(adjugate[i][j] / det))


class _ExpressionArithmetic:
    """Entries as SymPy expressions, brought to canceled form by ``_simplify`` after each step.

    Used when the metric involves sin, cos, sinh or cosh (whose identities ``_simplify`` knows)
    or anything else a rational function field cannot hold.
    """

    zero = sp.S.Zero

    def __init__(self, coords):
        self.coords = coords

    def lift(self, expr):
        return _simplify(expr)

    def diff(self, entry, i: int):
        return sp.diff(entry, self.coords[i])

    def normal(self, entry):
        return _simplify(entry)

    def to_expr(self, entry):
        return entry


class _FieldArithmetic:
    """Entries as elements of a rational function field ℚ(x, exp(·), …) (sparse polynomials).

    Every sum and product is reduced by a polynomial gcd at once, much faster than repeated
    ``cancel`` on expression trees.  The coordinate derivative is the derivation
    ∂_i F = Σ_gen ∂F/∂gen · ∂_i gen.  Generators are symbols, exp, log and constants only
    (no trigonometric functions, whose identities the field would not know); constants
    exp(c) share one generator (``_exponential_constants``).  Results leave as reduced p/q.
    """

    def __init__(self, field, derivatives, coords):
        self.field = field
        self.zero = field.zero
        self._known = {}
        self._to_unit = self._from_unit = _identity
        self._derivatives = derivatives  # [i] -> list of (generator element, ∂_i generator)
        self.coords = coords

    @classmethod
    def build(cls, exprs, coords):
        """The arithmetic for ``exprs`` in ``coords``, or None when they do not fit a field."""
        from sympy.polys.fields import sfield

        originals = [sp.sympify(e) for e in exprs]
        if any(e.has(sp.Float) for e in originals):
            return None
        to_unit, from_unit = _exponential_constants(originals)
        exprs = [to_unit(e) for e in originals]
        try:
            field, elements = sfield([*exprs, *coords])
        except (sp.PolynomialError, sp.GeneratorsError, ValueError, TypeError):
            return None
        generators = list(field.symbols)
        if not all(isinstance(g, (sp.Symbol, sp.exp, sp.log)) or g.is_number for g in generators):
            return None
        derivatives = []
        for x in coords:
            pairs = []
            for element, generator in zip(field.gens, generators, strict=True):
                derivative = sp.diff(generator, x)
                if derivative == 0:
                    continue
                try:
                    pairs.append((element, field.from_expr(derivative)))
                except (ValueError, sp.PolynomialError, sp.CoercionFailed):
                    return None
            derivatives.append(pairs)
        arithmetic = cls(field, derivatives, coords)
        arithmetic._known = dict(zip(originals, elements, strict=False))
        arithmetic._to_unit, arithmetic._from_unit = to_unit, from_unit
        return arithmetic

    def lift(self, expr):
        expr = sp.sympify(expr)
        if expr in self._known:  # converted when the field was built (exp(x + y) = exp(x)exp(y))
            return self._known[expr]
        expr = self._to_unit(expr)
        try:
            return self.field.from_expr(expr)
        except ValueError:
            return self.field.from_expr(sp.expand_power_exp(expr))

    def _polynomials_closed_under_diff(self) -> bool:
        return all(d.denom == 1 for pairs in self._derivatives for _, d in pairs)

    def _polynomial_diff(self, p, i: int):
        """∂_i of a polynomial p (requires every generator's derivative to be a polynomial)."""
        total = self.field.ring.zero
        for generator, derivative in self._derivatives[i]:
            partial = p.diff(generator.numer)
            if partial:
                total += partial * derivative.numer
        return total

    def riemann(self, gamma: list) -> list | None:
        """Rᵃ_bcd with a single gcd per component (None when derivatives leave the polynomials).

        With Γ = N / D over a common denominator D, ∂_c Γ = (∂_c N D − N ∂_c D) / D², so
        D² Rᵃ_bcd = (∂_c Nᵃ_db − ∂_d Nᵃ_cb) D − Nᵃ_db ∂_c D + Nᵃ_cb ∂_d D
        + Σ_e (Nᵃ_ce Nᵉ_db − Nᵃ_de Nᵉ_cb), a polynomial; only the quotient is reduced.
        """
        if not self._polynomials_closed_under_diff():
            return None
        k, ring = len(gamma), self.field.ring
        D = ring.one
        for plane in gamma:
            for row in plane:
                for entry in row:
                    D = D.lcm(entry.denom)
        N = [
            [[entry.numer * D.exquo(entry.denom) for entry in row] for row in plane]
            for plane in gamma
        ]
        diff = self._polynomial_diff
        dD = [diff(D, e) for e in range(k)]
        dN = [
            [[[diff(N[a][b][c], e) for c in range(k)] for b in range(k)] for a in range(k)]
            for e in range(k)
        ]  # dN[e][a][b][c] = ∂_e Nᵃ_bc
        denominator = D * D
        table = [[[[self.zero] * k for _ in range(k)] for _ in range(k)] for _ in range(k)]
        for a in range(k):
            for b in range(k):
                for c in range(k):
                    for d in range(c + 1, k):
                        numerator = (dN[c][a][d][b] - dN[d][a][c][b]) * D
                        numerator += N[a][c][b] * dD[d] - N[a][d][b] * dD[c]
                        for e in range(k):
                            numerator += N[a][c][e] * N[e][d][b] - N[a][d][e] * N[e][c][b]
                        value = self.field.new(numerator, denominator)
                        table[a][b][c][d] = value
                        table[a][b][d][c] = -value
        return table

    def christoffel(self, g: list) -> list | None:
        """Γ with a single gcd per symbol, or None when a derivative leaves the polynomials.

        Writing g = M / q with M polynomial and q a common denominator,
        g⁻¹ = q adj(M) / det M and ∂_e g = (∂_e M q − M ∂_e q) / q², so
        Γᵃ_bc = Σ_d adj(M)_ad P_dbc / (2 q det M) with the polynomial
        P_dbc = q² (∂_b g_dc + ∂_c g_db − ∂_d g_bc).  Only the final quotient is reduced.
        """
        if not self._polynomials_closed_under_diff():
            return None
        k, ring = len(g), self.field.ring
        q = ring.one
        for row in g:
            for entry in row:
                q = q.lcm(entry.denom)
        M = [[entry.numer * q.exquo(entry.denom) for entry in row] for row in g]

        diff = self._polynomial_diff
        dq = [diff(q, e) for e in range(k)]
        dM = [
            [[diff(M[i][j], e) * q - M[i][j] * dq[e] for j in range(k)] for i in range(k)]
            for e in range(k)
        ]  # dM[e][i][j] = q² ∂_e g_ij
        det = _determinant(M, ring.zero)
        adjugate = _adjugate(M, ring.zero)
        denominator = 2 * q * det
        gamma = [[[None] * k for _ in range(k)] for _ in range(k)]
        for a in range(k):
            for b in range(k):
                for c in range(b, k):
                    numerator = ring.zero
                    for d in range(k):
                        if adjugate[a][d]:
                            numerator += adjugate[a][d] * (dM[b][d][c] + dM[c][d][b] - dM[d][b][c])
                    value = self.field.new(numerator, denominator)
                    gamma[a][b][c] = gamma[a][c][b] = value
        return gamma

    def diff(self, entry, i: int):
        total = self.zero
        for generator, derivative in self._derivatives[i]:
            partial = entry.diff(generator)
            if partial:
                total += partial * derivative
        return total

    def normal(self, entry):
        return entry

    def to_expr(self, entry):
        return self._from_unit(entry.as_expr())


def _identity(expr):
    return expr


def _exponential_constants(exprs):
    """Write every constant exp(c), c rational (and E), as a power of one symbol T = exp(1/m).

    A rational function field would otherwise hold exp(1/2) and E = exp(1/2)² as two unrelated
    generators, and expressions in both would never cancel.  Returns (to T, back from T).
    """
    constants = set()
    for expr in exprs:
        for node in expr.atoms(sp.exp):
            constant, _ = node.args[0].as_coeff_Add()
            if constant != 0 and constant.is_Rational:
                constants.add(constant)
        if expr.has(sp.E):
            constants.add(sp.Integer(1))
    if not constants:
        return _identity, _identity
    m = sp.ilcm(*[c.q for c in constants])
    unit = sp.Dummy("exp_unit", positive=True)

    def has_rational_constant(node):
        if not isinstance(node, sp.exp):
            return False
        constant, _ = node.args[0].as_coeff_Add()
        return constant != 0 and constant.is_Rational

    def split(node):
        constant, rest = node.args[0].as_coeff_Add()
        return unit ** (constant * m) * sp.exp(rest)

    def to_unit(expr):
        return expr.replace(has_rational_constant, split).xreplace({sp.E: unit**m})

    def from_unit(expr):
        return expr.xreplace({unit: sp.exp(sp.Rational(1, m))})

    return to_unit, from_unit


def _arithmetic_for(g: sp.Matrix, coords, extra=()):
    """The field arithmetic when the metric's entries (and ``extra``) allow it, else expressions."""
    entries = [*g, *(sp.sympify(e) for e in extra)]
    if not any(_has_trig(e) for e in entries):
        field = _FieldArithmetic.build(entries, coords)
        if field is not None:
            return field
    return _ExpressionArithmetic(coords)


class _Geometry:
    """The curvature chain of one metric, computed on demand in one arithmetic."""

    def __init__(self, metric, coords, extra=()):
        self.g_expr, self.coords = _as_metric(metric, coords)
        self.k = len(self.coords)
        self.A = _arithmetic_for(self.g_expr, self.coords, extra)
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
                det = A.normal(_determinant(self.g, A.zero))
                adjugate = _adjugate(self.g, A.zero)
                self._g_inv = [[A.normal(adjugate[i][j] / det) for j in range(k)] for i in range(k)]
        return self._g_inv

    @property
    def gamma(self) -> list:
        """gamma[a][b][c] = Γᵃ_bc, symmetric in (b, c): half the work."""
        if self._gamma is None and isinstance(self.A, _FieldArithmetic):
            self._gamma = self.A.christoffel(self.g)
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
        if self._riemann is None and isinstance(self.A, _FieldArithmetic):
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


def pullback_metric(embedding, coords, cov=None) -> sp.Matrix:
    """The pullback g = Jᵀ Σ⁻¹ J of the Mahalanobis metric ⟨a, b⟩ = aᵀ Σ⁻¹ b.

    ``embedding`` is a column Matrix (d×1) of expressions in ``coords`` (k Symbols, k ≤ d),
    ``J = ∂ embedding / ∂ coords`` is its d×k Jacobian and ``cov`` the fixed covariance Σ (d×d,
    symmetric positive definite; the identity when None).  With Σ fixed this is the Fisher-Rao
    metric of the family coords ↦ N(embedding, Σ).  Entries are returned canceled.

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
    f = _as_column(embedding)
    coords = _as_coords(coords)
    d, k = f.shape[0], len(coords)
    if k > d:
        raise ValueError(
            f"coords: {k} coordinates cannot be immersed in {d} dimensions (need k <= d)"
        )
    cov = _as_cov(cov, d)
    jacobian = f.jacobian(coords)  # (d, k)
    precision = cov if cov == sp.eye(d) else _inverse(cov)
    g = jacobian.T * precision * jacobian  # (k, k)
    g = g.applyfunc(_simplify)
    return g


def christoffel(metric, coords) -> sp.Array:
    """Christoffel symbols of the second kind, ``result[a, b, c] = Γᵃ_bc``, shape (k, k, k).

    Γᵃ_bc = ½ gᵃᵈ (∂_b g_dc + ∂_c g_db − ∂_d g_bc): the Levi-Civita connection of ``metric``
    (a symmetric nonsingular k×k Matrix) in the coordinates ``coords`` (k distinct Symbols).
    Symmetric in (b, c).

    >>> import sympy as sp
    >>> theta, phi = sp.symbols("theta phi", real=True)
    >>> gamma = christoffel(sp.diag(1, sp.sin(theta) ** 2), [theta, phi])
    >>> gamma[0, 1, 1], gamma[1, 0, 1]
    (-sin(theta)*cos(theta), cos(theta)/sin(theta))
    """
    geometry = _Geometry(metric, coords)
    return geometry.array(geometry.gamma)


def riemann(metric, coords) -> sp.Array:
    """The Riemann tensor ``result[a, b, c, d] = Rᵃ_bcd``, shape (k, k, k, k).

    Rᵃ_bcd = ∂_c Γᵃ_db − ∂_d Γᵃ_cb + Γᵃ_ce Γᵉ_db − Γᵃ_de Γᵉ_cb, that is
    R(∂_c, ∂_d)∂_b = Rᵃ_bcd ∂_a with R(X, Y) = ∇_X∇_Y − ∇_Y∇_X − ∇_[X,Y].  With this
    convention the round unit sphere has R^θ_φθφ = sin²θ (positive curvature).

    >>> import sympy as sp
    >>> theta, phi = sp.symbols("theta phi", real=True)
    >>> riemann(sp.diag(1, sp.sin(theta) ** 2), [theta, phi])[0, 1, 0, 1]
    sin(theta)**2
    """
    geometry = _Geometry(metric, coords)
    return geometry.array(geometry.riemann)


def covariant_riemann(metric, coords) -> sp.Array:
    """The covariant Riemann tensor R_abcd = g_ae Rᵉ_bcd = ⟨R(∂_c, ∂_d)∂_b, ∂_a⟩.

    Antisymmetric in (a, b) and in (c, d); R_abcd = R_cdab.  In two dimensions R_0101 = K det g.
    This is the tensor the Gauss equation gives as ⟨II_ac, II_bd⟩ − ⟨II_ad, II_bc⟩.

    >>> import sympy as sp
    >>> theta, phi, r = sp.symbols("theta phi r", positive=True)
    >>> covariant_riemann(sp.diag(r**2, r**2 * sp.sin(theta) ** 2), [theta, phi])[0, 1, 0, 1]
    r**2*sin(theta)**2
    """
    geometry = _Geometry(metric, coords)
    return geometry.array(geometry.covariant_riemann())


def ricci(metric, coords) -> sp.Matrix:
    """The Ricci tensor Ric_bd = Rᵃ_bad (contraction of the upper index with the third), k×k.

    For the round sphere of radius r in dimension k, Ric = (k − 1)/r² · g.

    >>> import sympy as sp
    >>> theta, phi = sp.symbols("theta phi", real=True)
    >>> ricci(sp.diag(1, sp.sin(theta) ** 2), [theta, phi])
    Matrix([
    [1,             0],
    [0, sin(theta)**2]])
    """
    geometry = _Geometry(metric, coords)
    return sp.Matrix(_map_nested(geometry.ricci(), geometry.expr))


def scalar_curvature(metric, coords) -> sp.Expr:
    """The scalar curvature R = gᵇᵈ Ric_bd; k(k − 1)/r² on a round k-sphere of radius r.

    >>> import sympy as sp
    >>> chi, theta, phi, r = sp.symbols("chi theta phi r", positive=True)
    >>> g = sp.diag(r**2, (r * sp.sin(chi)) ** 2, (r * sp.sin(chi) * sp.sin(theta)) ** 2)
    >>> scalar_curvature(g, [chi, theta, phi])
    6/r**2
    """
    geometry = _Geometry(metric, coords)
    return _tidy(geometry.expr(geometry.scalar()), canceled=True)


def brioschi(E, F, G, u, v) -> sp.Expr:
    """Gaussian curvature from the first fundamental form E du² + 2F du dv + G dv² (Brioschi).

    K = (det M₁ − det M₂) / (EG − F²)², with

        M₁ = [[−E_vv/2 + F_uv − G_uu/2, E_u/2, F_u − E_v/2],
              [F_v − G_u/2,             E,     F          ],
              [G_v/2,                   F,     G          ]]
        M₂ = [[0,     E_v/2, G_u/2],
              [E_v/2, E,     F    ],
              [G_u/2, F,     G    ]]

    Only E, F, G and their first and second derivatives appear, no square roots: the
    Theorema Egregium in one formula.  The result is canceled.

    >>> import sympy as sp
    >>> x, y = sp.symbols("x y", real=True)
    >>> brioschi(1 + y**2, x * y, 1 + x**2, x, y)  # the saddle z = xy
    -1/(x**4 + 2*x**2*y**2 + 2*x**2 + y**4 + 2*y**2 + 1)
    """
    u, v = _as_coords([u, v], "u, v")
    E, F, G = (sp.sympify(e) for e in (E, F, G))
    A = _arithmetic_for(sp.Matrix([[E, F], [F, G]]), (u, v))
    return _simplify(A.to_expr(_brioschi(A, A.lift(E), A.lift(F), A.lift(G))))


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
    numerator = _determinant(m1, A.zero) - _determinant(m2, A.zero)
    return A.normal(numerator / (E * G - F**2) ** 2)


def gaussian_curvature(metric, coords) -> sp.Expr:
    """Gaussian curvature K = R_0101 / det g (= R / 2, = the Brioschi formula) of a 2×2 metric.

    R_0101 = g_0e Rᵉ_101 comes from the Christoffel symbols, which stay small where the metric's
    entries are large (the Brioschi determinants do not); ``brioschi`` gives the same K from
    E, F, G directly.  Raises ValueError unless the metric is 2×2.  1/r² on a sphere of radius r.

    >>> import sympy as sp
    >>> mu, sigma = sp.Symbol("mu", real=True), sp.Symbol("sigma", positive=True)
    >>> gaussian_curvature(sp.diag(1 / sigma**2, 2 / sigma**2), [mu, sigma])
    -1/2
    """
    g = _as_matrix(metric, "metric")
    if g.shape != (2, 2):
        raise ValueError(
            f"metric: gaussian_curvature needs a 2x2 metric (a surface), got shape {g.shape}; "
            "use scalar_curvature or sectional_curvature in higher dimensions"
        )
    geometry = _Geometry(g, coords)
    A, metric, R = geometry.A, geometry.g, geometry.riemann
    lowered = A.normal(metric[0][0] * R[0][1][0][1] + metric[0][1] * R[1][1][0][1])
    return _tidy(geometry.expr(A.normal(lowered / _determinant(metric, A.zero))), canceled=True)


def sectional_curvature(metric, coords, X, Y) -> sp.Expr:
    """Sectional curvature of the plane spanned by the tangent vectors X and Y.

    K(X, Y) = R_abcd Xᵃ Yᵇ Xᶜ Yᵈ / (|X|²|Y|² − ⟨X, Y⟩²) = ⟨R(X, Y)Y, X⟩ / |X ∧ Y|², with
    R_abcd = g_ae Rᵉ_bcd.  X and Y are k-component sequences or column matrices (components in
    the coordinate basis, possibly expressions in the coordinates); they must be linearly
    independent (ValueError otherwise).  +1/r² for any plane on a round sphere of radius r.

    >>> import sympy as sp
    >>> chi, theta, phi, r = sp.symbols("chi theta phi r", positive=True)
    >>> g = sp.diag(r**2, (r * sp.sin(chi)) ** 2, (r * sp.sin(chi) * sp.sin(theta)) ** 2)
    >>> sectional_curvature(g, [chi, theta, phi], [1, 0, 0], [0, 1, 1])
    r**(-2)
    """
    k = _as_matrix(metric, "metric").shape[0]
    x = _as_vector(X, k, "X")
    y = _as_vector(Y, k, "Y")
    geometry = _Geometry(metric, coords, extra=[*x, *y])
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
    return _tidy(geometry.expr(A.normal(numerator / area_squared)), canceled=True)
