"""The inputs of the symbolic attention maps, made exact: values, vectors, keys, counts.

Every map of :mod:`.attention_maps`, :mod:`.gates` and :mod:`.stacks` reads its arguments
through these checks, so that one refusal (a TypeError or ValueError naming the argument)
holds for all of them and floats become exact rationals before SymPy sees them::

    exact(entry)                      a SymPy expression, floats as rationals
    as_values(values)                 the d×n value matrix U (columns Uᵢ), n ≥ 2
    as_exact_vector(vector, name)     a vector of exact entries, of a given length if asked
    as_keys(keys, n)                  the n×k key matrix K (one row per value)
    column_vector(entries)            entries as a d×1 Matrix
    INTEGERS                          what a count (a depth, a number of weights) may be
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

__all__ = ["INTEGERS", "as_exact_vector", "as_keys", "as_values", "column_vector", "exact"]

INTEGERS = (int, sp.Integer)
"""What a count (a depth, a number of weights) may be given as: a Python or a SymPy integer."""


def as_values(values, name: str = "values") -> sp.Matrix:
    """Values as a d×n Matrix whose columns are the value vectors Uᵢ.

    Accepts a d×n Matrix (columns = values) or a list of n vectors (each a length-d sequence or
    a column Matrix); numbers become exact SymPy numbers (floats as rationals).
    """
    if isinstance(values, sp.MatrixBase):
        matrix = sp.Matrix(values)
    elif isinstance(values, Sequence) and not isinstance(values, str) and len(values) > 0:
        columns = []
        for i, vector in enumerate(values):
            if isinstance(vector, sp.MatrixBase):
                if 1 not in vector.shape:
                    raise ValueError(
                        f"{name}: value {i} must be a vector, got a matrix of shape {vector.shape}"
                    )
                columns.append(list(vector))
            elif isinstance(vector, Sequence) and not isinstance(vector, str):
                columns.append(list(vector))
            else:
                raise TypeError(
                    f"{name}: expected a d×n Matrix or a list of value vectors, "
                    f"got element {i} of type {type(vector).__name__}"
                )
        lengths = {len(c) for c in columns}
        if len(lengths) != 1 or 0 in lengths:
            raise ValueError(f"{name}: value vectors must share one nonzero length, got {lengths}")
        try:
            matrix = sp.Matrix(columns).T
        except (TypeError, ValueError, sp.SympifyError) as error:
            raise TypeError(f"{name}: entries must be SymPy expressions or numbers") from error
    else:
        raise TypeError(
            f"{name}: expected a d×n SymPy Matrix or a nonempty list of value vectors, "
            f"got {type(values).__name__}"
        )
    matrix = matrix.applyfunc(exact)
    if matrix.shape[1] < 2:
        raise ValueError(f"{name}: attention needs at least n = 2 values, got {matrix.shape[1]}")
    return matrix


def exact(entry) -> sp.Expr:
    """An entry as a SymPy expression, floats turned into exact rationals."""
    try:
        expr = sp.sympify(entry)
    except (sp.SympifyError, TypeError) as error:
        raise TypeError(f"expected a SymPy expression or a number, got {entry!r}") from error
    if expr.has(sp.Float):
        expr = sp.nsimplify(expr, rational=True)
    return expr


def as_exact_vector(vector, name: str, length: int | None = None) -> list[sp.Expr]:
    """A sequence or a row or column Matrix as a list of exact entries (``length`` of them if
    given)."""
    if isinstance(vector, sp.MatrixBase):
        if 1 not in vector.shape:
            raise ValueError(f"{name}: expected a vector, got a matrix of shape {vector.shape}")
        entries = list(vector)
    elif isinstance(vector, Sequence) and not isinstance(vector, str):
        entries = list(vector)
    else:
        raise TypeError(f"{name}: expected a sequence or a column Matrix, got {type(vector)!r}")
    try:
        entries = [exact(e) for e in entries]
    except TypeError as error:
        raise TypeError(f"{name}: {error}") from error
    if length is not None and len(entries) != length:
        raise ValueError(f"{name}: expected {length} entries, got {len(entries)}")
    return entries


def column_vector(entries) -> sp.Matrix:
    """``entries`` as a d×1 Matrix."""
    return sp.Matrix(len(entries), 1, list(entries))


def as_keys(keys, n: int) -> sp.Matrix:
    """The n×k key matrix K, exact, with one row per value (k ≥ 1)."""
    try:
        K = sp.Matrix(keys).applyfunc(exact)
    except (TypeError, ValueError, sp.SympifyError) as error:
        raise TypeError(f"keys: expected an n×k matrix, got {keys!r}") from error
    if K.shape[0] != n or K.shape[1] < 1:
        raise ValueError(f"keys: expected {n} rows (one key per value), got shape {K.shape}")
    return K
