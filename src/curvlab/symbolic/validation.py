"""Input checks for :mod:`curvlab.symbolic`: every refusal, with a message naming the argument.

What is here::

    as_coords(coords)             distinct SymPy Symbols
    as_matrix, as_column, as_vector   matrices, embeddings (d×1) and tangent vectors
    as_metric(metric, coords)     a metric the chain can trust (see its docstring)
    as_parameters(parameters, coords)   declared parameters: Symbols, none a coordinate
    check_coordinate_names        a symbol named like a coordinate must be that coordinate
    check_mentions_coordinates    symbols, but none of the coordinates nor declared
                                  parameters: another chart
    check_not_provably_indefinite no diagonal entry or leading minor provably ≤ 0
    as_cov, check_symmetric_positive_definite   the fixed covariance Σ of a Gaussian

Where SymPy cannot decide a sign, the input is accepted and the result rests on the stated
assumption (positive definiteness where it is used); the docstrings of the public functions
say so.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

from curvlab.symbolic.linear_algebra import determinant
from curvlab.symbolic.simplification import is_zero, simplify, vanishes_identically

__all__ = [
    "as_column",
    "as_coords",
    "as_cov",
    "as_matrix",
    "as_metric",
    "as_parameters",
    "as_vector",
    "check_coordinate_names",
    "check_mentions_coordinates",
    "check_not_provably_indefinite",
    "check_symmetric_positive_definite",
]


def _symbols(values, name: str, noun: str) -> tuple[sp.Symbol, ...]:
    """A Symbol, a Matrix or a sequence of Symbols as a tuple (TypeError otherwise)."""
    if isinstance(values, sp.Symbol):
        values = (values,)
    if isinstance(values, sp.MatrixBase):
        values = list(values)
    if not isinstance(values, Sequence) or isinstance(values, str):
        raise TypeError(
            f"{name}: expected a sequence of SymPy Symbols, got {type(values).__name__}"
        )
    values = tuple(values)
    for value in values:
        if not isinstance(value, sp.Symbol):
            raise TypeError(f"{name}: every {noun} must be a SymPy Symbol, got {value!r}")
    return values


def as_coords(coords, name: str = "coords") -> tuple[sp.Symbol, ...]:
    """Coordinates as a tuple of distinct SymPy Symbols (TypeError / ValueError otherwise)."""
    coords = _symbols(coords, name, "coordinate")
    if not coords:
        raise ValueError(f"{name}: expected at least one coordinate, got none")
    if len(set(coords)) != len(coords):
        raise ValueError(f"{name}: coordinates must be distinct, got {coords}")
    return coords


def as_matrix(value, name: str) -> sp.Matrix:
    """A SymPy Matrix from a Matrix, a rank-2 Array or nested lists (TypeError otherwise)."""
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


def as_parameters(parameters, coords) -> tuple[sp.Symbol, ...]:
    """Declared parameters as a tuple of distinct SymPy Symbols, none of them a coordinate.

    ``None`` or an empty sequence declares none.  A parameter that is a coordinate, or has a
    coordinate's name, is refused (ValueError): it cannot be both constant and a coordinate.

    >>> import sympy as sp
    >>> u, v, r = sp.symbols("u v r", positive=True)
    >>> as_parameters((r,), (u, v))
    (r,)
    >>> as_parameters((r, u), (u, v))
    Traceback (most recent call last):
    ...
    ValueError: parameters: u is one of the coordinates (u, v); a parameter is a constant \
of the chart, not a coordinate
    """
    if parameters is None:
        return ()
    parameters = _symbols(parameters, "parameters", "parameter")
    if len(set(parameters)) != len(parameters):
        raise ValueError(f"parameters: parameters must be distinct, got {parameters}")
    names = {c.name for c in coords}
    chart = ", ".join(str(c) for c in coords)
    for p in parameters:
        if p in coords or p.name in names:
            what = "is one of" if p in coords else "has the name of one of"
            raise ValueError(
                f"parameters: {p} {what} the coordinates ({chart}); a parameter is a "
                "constant of the chart, not a coordinate"
            )
    return parameters


def as_metric(metric, coords, parameters=None) -> tuple[sp.Matrix, tuple[sp.Symbol, ...]]:
    """Validate a metric and its coordinates, or raise ValueError / TypeError saying why.

    Square, sizes agree with ``coords``, symmetric, no symbol that shares a coordinate's name
    without being it (:func:`check_coordinate_names`), not written in other symbols only
    unless all of them are declared ``parameters`` (:func:`check_mentions_coordinates`), not
    provably indefinite or negative (:func:`check_not_provably_indefinite`), determinant not
    identically zero.  ``parameters`` go through :func:`as_parameters`.
    """
    g = as_matrix(metric, "metric")
    rows, cols = g.shape
    if rows != cols:
        raise ValueError(f"metric: expected a square matrix, got shape {g.shape}")
    coords = as_coords(coords)
    parameters = as_parameters(parameters, coords)
    if len(coords) != rows:
        raise ValueError(
            f"coords: a {rows}x{rows} metric needs {rows} coordinates, got {len(coords)}"
        )
    check_coordinate_names(g, coords, "metric")
    check_mentions_coordinates(g, coords, "metric", parameters)
    for i in range(rows):
        for j in range(i + 1, rows):
            if not is_zero(g[i, j] - g[j, i]):
                raise ValueError(
                    f"metric: expected a symmetric matrix, entries [{i}, {j}] and [{j}, {i}] differ"
                )
    det = determinant(g.tolist())
    if vanishes_identically(det):
        raise ValueError("metric: the determinant is identically zero (a singular metric)")
    check_not_provably_indefinite(g, "metric", det)
    return g, coords


def check_coordinate_names(exprs, coords, name: str) -> None:
    """Refuse a symbol that has a coordinate's name but is not that coordinate.

    SymPy tells ``Symbol("theta")`` and ``Symbol("theta", positive=True)`` apart: a metric
    written in one and differentiated in the other is constant to SymPy, and its curvature
    silently comes out 0.  Other symbols (parameters with other names) are allowed.

    >>> import sympy as sp
    >>> check_coordinate_names([sp.Symbol("t") ** 2], [sp.Symbol("t", positive=True)], "metric")
    Traceback (most recent call last):
    ...
    ValueError: metric: mentions Symbol('t'), which has the name of the coordinate \
Symbol('t', positive=True) but is a different symbol to SymPy (other assumptions); \
write both with the same Symbol
    """
    by_name = {c.name: c for c in coords}
    items = exprs if isinstance(exprs, sp.MatrixBase) else list(exprs)
    for expr in items:
        for symbol in sp.sympify(expr).free_symbols:
            coordinate = by_name.get(getattr(symbol, "name", None))
            if coordinate is not None and symbol != coordinate:
                raise ValueError(
                    f"{name}: mentions {sp.srepr(symbol)}, which has the name of the coordinate "
                    f"{sp.srepr(coordinate)} but is a different symbol to SymPy (other "
                    "assumptions); write both with the same Symbol"
                )


def check_mentions_coordinates(exprs, coords, name: str, parameters=()) -> None:
    """Refuse expressions that contain symbols but none of the coordinates, unless declared.

    Such a metric (or embedding) is constant to SymPy in ``coords``: its curvature would come
    out 0 however curved it is in the chart it was written in, as when the rational chart
    ``t1, t2`` and the exponential chart ``x1, x2`` of one family sit side by side and the
    metric of one is passed with the coordinates of the other.  Expressions free of symbols
    (numbers) are accepted: a numeric constant metric is flat, rightly.  So are expressions
    whose every symbol is one of the declared ``parameters`` (the radius ``r`` of a cylinder,
    diag(r², 1)): the caller has said they are constants of the chart, and such a metric is
    flat.  An undeclared symbol is refused, since SymPy cannot tell a parameter from a
    coordinate of another chart; the message names the keyword ``parameters``.

    >>> import sympy as sp
    >>> t1, t2, x1, x2 = sp.symbols("t1 t2 x1 x2", positive=True)
    >>> check_mentions_coordinates([1 + t1**2, t1 * t2], [x1, x2], "metric")
    Traceback (most recent call last):
    ...
    ValueError: metric: mentions none of the coordinates (x1, x2) but depends on t1, t2: to \
SymPy it is constant in (x1, x2) and its curvature would be 0; write it in the coordinates \
passed (is it in another chart?) or, if they are constants of the chart, declare them: \
parameters=(t1, t2)
    >>> check_mentions_coordinates([1 + t1**2, t1 * t2], [x1, x2], "metric", (t1, t2))
    """
    items = exprs if isinstance(exprs, sp.MatrixBase) else list(exprs)
    symbols = set().union(*(sp.sympify(expr).free_symbols for expr in items))
    undeclared = symbols - set(parameters)
    if undeclared and not symbols & set(coords):
        names = ", ".join(sorted(str(symbol) for symbol in undeclared))
        chart = ", ".join(str(c) for c in coords)
        raise ValueError(
            f"{name}: mentions none of the coordinates ({chart}) but depends on {names}: to "
            f"SymPy it is constant in ({chart}) and its curvature would be 0; write it in the "
            "coordinates passed (is it in another chart?) or, if they are constants of the "
            f"chart, declare them: parameters=({names}{',' if len(undeclared) == 1 else ''})"
        )


_DECIDE_SIGNS_UP_TO = 300  # expression nodes; SymPy's sign inference costs seconds beyond


def _small(expr) -> bool:
    """True when expr has at most _DECIDE_SIGNS_UP_TO nodes (counting stops there)."""
    for count, _ in enumerate(sp.preorder_traversal(expr)):
        if count >= _DECIDE_SIGNS_UP_TO:
            return False
    return True


def check_not_provably_indefinite(g: sp.Matrix, name: str = "metric", det=None) -> None:
    """Refuse a metric that is provably not positive definite at any point.

    A positive definite matrix has every diagonal entry and every leading principal minor
    positive (Sylvester).  So a diagonal entry or a leading minor that SymPy proves
    nonpositive (from the symbols' assumptions: a negative number, −v² with v real, …) proves
    the metric is not a Riemannian metric anywhere: ValueError.  Where SymPy cannot decide
    the sign (a symbol with no assumptions, an expression positive only on part of the chart,
    or an entry too large to decide quickly: over 300 expression nodes, as in softmax charts),
    the metric is accepted, and every result rests on the assumption that it is positive
    definite on the region where it is used.
    """
    k = g.shape[0]
    for i in range(k):
        entry = sp.sympify(g[i, i])
        if _small(entry) and entry.is_nonpositive:
            raise ValueError(
                f"{name}: expected a positive definite matrix; the diagonal entry [{i}, {i}] = "
                f"{entry} is never positive"
            )
    for n in range(2, k + 1):
        minor = det if (n == k and det is not None) else determinant(g[:n, :n].tolist())
        if not _small(minor):
            continue
        minor = simplify(minor)
        if minor.is_nonpositive:
            raise ValueError(
                f"{name}: expected a positive definite matrix; the leading principal minor of "
                f"size {n} ({minor}) is never positive"
            )


def as_vector(vector, k: int, name: str) -> list[sp.Expr]:
    """k components from a sequence or a vector-shaped Matrix."""
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


def check_symmetric_positive_definite(cov: sp.Matrix, name: str = "cov") -> None:
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
            if not is_zero(cov[i, j] - cov[j, i]):
                raise ValueError(
                    f"{name}: expected a symmetric matrix, entries [{i}, {j}] and [{j}, {i}] differ"
                )
    for n in range(1, rows + 1):
        minor = simplify(determinant(cov[:n, :n].tolist()))
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


def as_cov(cov, d: int) -> sp.Matrix:
    """The covariance as a d×d Matrix (identity when None; a scalar is allowed when d == 1)."""
    if cov is None:
        return sp.eye(d)
    if isinstance(cov, (sp.MatrixBase, sp.NDimArray, list, tuple)):
        cov = as_matrix(cov, "cov")
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
    check_symmetric_positive_definite(cov)
    return cov


def as_column(embedding, name: str = "embedding") -> sp.Matrix:
    """An embedding as a d×1 column Matrix (from a column or a flat list)."""
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
