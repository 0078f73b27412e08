"""Gates: the G1 gate of Qiu et al. and the gated attention outputs, as SymPy expressions.

At the G1 position the gated output is Y' = Y ⊙ σ(X W_θ): a headwise gate multiplies the whole
output by one scalar γ (``headwise_gated_mean``), an elementwise gate multiplies each
coordinate by its own γⱼ (``elementwise_gated_mean``).  The gate is any expression in the
coordinates: ``sigmoid_gate`` builds σ(W_θᵀ q + b) from a query q (with ``sigmoid``, the
logistic function), ``radial_gate`` the headwise gate ρ / ‖y‖ that puts the output on a
sphere.  Applied to the embedding of an ungated map of :mod:`.attention_maps`, the result is
again an embedding in the same coordinates, ready for :func:`curvlab.symbolic.pullback_metric`.
"""

from __future__ import annotations

import sympy as sp

from curvlab.symbolic.attention_inputs import as_exact_vector, column_vector, exact

__all__ = [
    "elementwise_gated_mean",
    "headwise_gated_mean",
    "radial_gate",
    "sigmoid",
    "sigmoid_gate",
]


def sigmoid(z) -> sp.Expr:
    """The logistic sigmoid σ(z) = 1 / (1 + e^{−z}), range (0, 1).

    >>> sigmoid(0), sigmoid(sp.log(3))
    (1/2, 3/4)
    """
    return 1 / (1 + sp.exp(-exact(z)))


def sigmoid_gate(query, gate_weights, bias=None) -> sp.Matrix:
    """The G1 gate σ(W_θᵀ q + b) of Qiu et al. (Y' = Y ⊙ σ(X W_θ)), as an h×1 column.

    ``query`` q: m expressions (the hidden state the gate reads); ``gate_weights`` W_θ: an m×h
    Matrix (h = 1 for a headwise gate, h = d for an elementwise gate); ``bias`` b: h entries
    (zeros when None).  Every entry lies in (0, 1).

    >>> q = sp.symbols("q1 q2", real=True)
    >>> sigmoid_gate(q, sp.Matrix([[1], [-1]]))
    Matrix([[1/(exp(-q1 + q2) + 1)]])
    """
    q = as_exact_vector(query, "query")
    try:
        W = sp.Matrix(gate_weights).applyfunc(exact)
    except (TypeError, ValueError, sp.SympifyError) as error:
        raise TypeError(f"gate_weights: expected an m×h matrix, got {gate_weights!r}") from error
    if W.shape[0] != len(q):
        raise ValueError(
            f"gate_weights: expected {len(q)} rows (one per query entry), got shape {W.shape}"
        )
    h = W.shape[1]
    b = [sp.S.Zero] * h if bias is None else as_exact_vector(bias, "bias", h)
    scores = W.T * column_vector(q)
    return column_vector([sigmoid(scores[j] + b[j]) for j in range(h)])


def radial_gate(output, radius, cov=None) -> sp.Expr:
    """The headwise gate γ = ρ / ‖y‖_Σ that moves the output y radially onto a sphere of radius ρ.

    ``output``: the ungated output y (a vector); ``radius``: ρ > 0; ``cov``: the fixed covariance
    Σ of the Fisher–Rao metric (identity when None), the norm being ‖y‖_Σ = √(yᵀ Σ⁻¹ y).
    Applied to an affine image that misses the origin, γ·y is a piece of the sphere of radius ρ
    *in the metric Σ⁻¹* (K = 1/ρ²); with the Euclidean norm and Σ ≠ s²I it is an ellipsoid.
    The gate is not of the sigmoid form σ(w·q + b) and may exceed 1 (it does where ‖y‖_Σ < ρ).

    >>> u, v = sp.symbols("u v", real=True)
    >>> radial_gate([u, v, 1], 2)
    2/sqrt(u**2 + v**2 + 1)
    >>> radial_gate([u, v, 1], 1, cov=sp.diag(4, 1, 1))
    1/sqrt(u**2/4 + v**2 + 1)
    """
    y = as_exact_vector(output, "output")
    R = exact(radius)
    if R.is_positive is False or R.is_zero:
        raise ValueError(f"radius: expected a positive radius, got {R}")
    column = column_vector(y)
    if cov is None:
        squared = sum(entry**2 for entry in y)
    else:
        try:
            Sigma = sp.Matrix(cov).applyfunc(exact)
        except (TypeError, ValueError, sp.SympifyError) as error:
            raise TypeError(f"cov: expected a {len(y)}×{len(y)} matrix, got {cov!r}") from error
        if Sigma.shape != (len(y), len(y)):
            raise ValueError(f"cov: expected shape ({len(y)}, {len(y)}), got {Sigma.shape}")
        if Sigma.det() == 0:
            raise ValueError("cov: expected an invertible (positive definite) covariance")
        squared = sp.expand((column.T * Sigma.inv() * column)[0])
    return R / sp.sqrt(squared)


def headwise_gated_mean(mean, gate) -> sp.Matrix:
    """The headwise-gated output γ · y: one scalar gate γ for the whole head.

    ``mean``: the ungated output y (a vector of expressions); ``gate``: a scalar expression (for
    example ``sigmoid_gate(...)[0]`` or ``radial_gate(...)``), or a 1×1 Matrix.

    >>> u = sp.Symbol("u", real=True)
    >>> headwise_gated_mean([u, 1], 2 * u).T
    Matrix([[2*u**2, 2*u]])
    """
    y = as_exact_vector(mean, "mean")
    if isinstance(gate, sp.MatrixBase):
        if gate.shape != (1, 1):
            raise ValueError(f"gate: a headwise gate is one scalar, got shape {gate.shape}")
        gate = gate[0]
    gamma = exact(gate)
    return column_vector([gamma * entry for entry in y])


def elementwise_gated_mean(mean, gate) -> sp.Matrix:
    """The elementwise-gated output γ ⊙ y: coordinate j multiplied by its own gate γⱼ.

    ``mean``: the ungated output y (d entries); ``gate``: d expressions (or a d×1 Matrix such as
    ``sigmoid_gate(q, W)`` with W of width d).

    >>> u, v = sp.symbols("u v", real=True)
    >>> elementwise_gated_mean([u, v, 1], [1, 1, u * v]).T
    Matrix([[u, v, u*v]])
    """
    y = as_exact_vector(mean, "mean")
    gamma = as_exact_vector(gate, "gate", len(y))
    return column_vector([g * entry for g, entry in zip(gamma, y, strict=True)])
