"""Symbolic attention maps: the ungated attention output in its charts, as SymPy embeddings.

Every map returns ``(embedding, coords)``: a column Matrix (d×1) of SymPy expressions and the
tuple of coordinate Symbols it depends on, ready for :func:`curvlab.symbolic.pullback_metric`
and the curvature functions.  The ungated mean μ(α) = Σᵢ αᵢ Uᵢ = U α, values Uᵢ fixed (the
columns of a d×n matrix U), in three charts:

- weight chart: free weights α₁..αₙ₋₁, αₙ = 1 − Σ αᵢ (``ungated_mean_weight_chart``);
- logit chart: α = softmax(s₁, …, sₙ₋₁, 0) (the last logit fixed, softmax is shift-invariant),
  or its rational chart tᵢ = e^{sᵢ} > 0, αᵢ = tᵢ / (1 + Σ tⱼ), αₙ = 1 / (1 + Σ tⱼ)
  (``ungated_mean_logit_chart``).  Curvature does not depend on the chart and exponentials
  make SymPy slow, so the rational chart is the default.
- input chart: α = softmax(K x + c) for an input x ∈ ℝᵏ (``input_attention_mean``), the
  lower-dimensional slices of the simplex, which may be curved.

The weights behind them are here too (``simplex_weights``, ``softmax_weights`` and
``softmax_expanded``, the softmax that keeps logits in log-coordinates rational, which the
residual layers of :mod:`.stacks` share).  The gates that bend these maps are in
:mod:`.gates`, the stacks of layers in :mod:`.stacks`.
"""

from __future__ import annotations

import sympy as sp

from curvlab import arguments
from curvlab.symbolic.attention_inputs import (
    INTEGERS,
    as_exact_vector,
    as_keys,
    as_values,
    column_vector,
)

__all__ = [
    "input_attention_mean",
    "simplex_weights",
    "softmax_expanded",
    "softmax_weights",
    "ungated_mean",
    "ungated_mean_logit_chart",
    "ungated_mean_weight_chart",
]


# ---------------------------------------------------------------------------------------------
# attention weights


def simplex_weights(n, symbol: str = "alpha") -> tuple[list[sp.Expr], tuple[sp.Symbol, ...]]:
    """The weight chart of the open simplex: α₁..αₙ₋₁ free, αₙ = 1 − Σ αᵢ.

    Returns ``(weights, coords)``: the n weights as expressions and the n − 1 free coordinates
    (real Symbols ``alpha1``, …).

    >>> weights, coords = simplex_weights(3)
    >>> weights, coords
    ([alpha1, alpha2, -alpha1 - alpha2 + 1], (alpha1, alpha2))
    """
    n = arguments.integer("n", n, 2, type_error=True, kinds=INTEGERS)
    coords = sp.symbols(f"{symbol}1:{n}", real=True)
    coords = tuple(coords) if isinstance(coords, tuple | list) else (coords,)
    return [*coords, 1 - sum(coords)], coords


def softmax_weights(logits) -> list[sp.Expr]:
    """softmax(s)ᵢ = e^{sᵢ} / Σⱼ e^{sⱼ}, for a sequence of logit expressions.

    Positive logit *exponentials* can be passed instead through ``ungated_mean_logit_chart``'s
    rational chart; here every entry is a logit.

    >>> s = sp.Symbol("s", real=True)
    >>> softmax_weights([s, 0])
    [exp(s)/(exp(s) + 1), 1/(exp(s) + 1)]
    """
    entries = as_exact_vector(logits, "logits")
    if len(entries) < 2:
        raise ValueError(f"logits: softmax needs at least 2 logits, got {len(entries)}")
    exponentials = [sp.exp(s) for s in entries]
    total = sum(exponentials)
    return [e / total for e in exponentials]


def softmax_expanded(logits) -> list[sp.Expr]:
    """softmax with each e^{sᵢ} written as a product of exponentials of the terms of sᵢ.

    e^{2 log t + log w} then evaluates to t²w, so logits in log-coordinates stay rational.
    """
    exponentials = [
        sp.Mul(*[sp.exp(term) for term in sp.Add.make_args(sp.expand(s))]) for s in logits
    ]
    total = sum(exponentials)
    return [e / total for e in exponentials]


# ---------------------------------------------------------------------------------------------
# ungated means


def ungated_mean(values, weights) -> sp.Matrix:
    """The ungated attention output μ = Σᵢ αᵢ Uᵢ = U α (a d×1 column).

    ``values``: a d×n Matrix whose columns are the Uᵢ, or a list of the n vectors Uᵢ (symbolic
    or numeric); ``weights``: n expressions α₁..αₙ (not checked to sum to 1, so any chart of the
    weights can be passed).

    >>> ungated_mean([[1, 0], [0, 1], [1, 1]], [sp.Rational(1, 4), 0, sp.Rational(3, 4)]).T
    Matrix([[1, 3/4]])
    """
    U = as_values(values)
    alpha = as_exact_vector(weights, "weights", U.shape[1])
    return U * column_vector(alpha)


def ungated_mean_weight_chart(values, symbol: str = "alpha") -> tuple[sp.Matrix, tuple]:
    """μ(α) = Σᵢ αᵢ Uᵢ in the weight chart α₁..αₙ₋₁ (αₙ = 1 − Σ αᵢ).

    ∂μ/∂αᵢ = Uᵢ − Uₙ is constant, so the pullback metric is constant and the family is flat.
    Returns ``(embedding, coords)``.

    >>> mu, coords = ungated_mean_weight_chart(sp.eye(3))
    >>> mu.T, coords
    (Matrix([[alpha1, alpha2, -alpha1 - alpha2 + 1]]), (alpha1, alpha2))
    """
    U = as_values(values)
    weights, coords = simplex_weights(U.shape[1], symbol)
    return U * column_vector(weights), coords


def ungated_mean_logit_chart(
    values, rational: bool = True, symbol: str | None = None
) -> tuple[sp.Matrix, tuple]:
    """μ(s) = Σᵢ softmax(s)ᵢ Uᵢ in the logit chart, the last logit fixed to 0.

    softmax is invariant under s ↦ s + c·1, so sₙ = 0 leaves n − 1 free logits.  With
    ``rational=True`` (default) the coordinates are tᵢ = e^{sᵢ} > 0 (Symbols ``t1``, …) and
    αᵢ = tᵢ / (1 + Σⱼ tⱼ), αₙ = 1 / (1 + Σⱼ tⱼ): rational functions, which SymPy handles far
    faster than exponentials.  Curvature is invariant under the change of chart s ↦ t, so the
    answer is the same.  With ``rational=False`` the coordinates are the logits ``s1``, … .

    >>> mu, coords = ungated_mean_logit_chart([[1, 0], [0, 0]])  # U₁ = (1, 0), U₂ = 0
    >>> mu.T, coords
    (Matrix([[t1/(t1 + 1), 0]]), (t1,))
    >>> ungated_mean_logit_chart([[1, 0], [0, 0]], rational=False)[0][0]
    exp(s1)/(exp(s1) + 1)
    """
    U = as_values(values)
    n = U.shape[1]
    if rational:
        coords = sp.symbols(f"{symbol or 't'}1:{n}", positive=True)
        coords = tuple(coords)
        total = 1 + sum(coords)
        weights = [t / total for t in coords] + [1 / total]
    else:
        coords = tuple(sp.symbols(f"{symbol or 's'}1:{n}", real=True))
        weights = softmax_weights([*coords, 0])
    return U * column_vector(weights), coords


def input_attention_mean(
    values, keys, bias=None, rational: bool = True, symbol: str | None = None
) -> tuple[sp.Matrix, tuple]:
    """μ(x) = Σᵢ softmax(K x + c)ᵢ Uᵢ for an input x ∈ ℝᵏ: a k-dimensional slice of the simplex.

    ``keys`` is the n×k matrix K (row i scores value i), ``bias`` the n logit offsets c (zeros
    when None).  With ``rational=True`` the coordinates are tⱼ = e^{xⱼ} > 0 and K must have
    integer entries, so that e^{(Kx)ᵢ} = Πⱼ tⱼ^{Kᵢⱼ} is a monomial; pass a bias as logarithms
    (c = log r) to keep it rational.  With ``rational=False`` the coordinates are ``x1``, … .
    When k < dim aff{Uᵢ} the image is a proper submanifold of the flat affine hull and in general
    it is curved.

    >>> mu, coords = input_attention_mean([[1], [0]], [[1], [0]])  # values 1 and 0 in ℝ¹
    >>> mu, coords
    (Matrix([[t1/(t1 + 1)]]), (t1,))
    """
    U = as_values(values)
    n = U.shape[1]
    K = as_keys(keys, n)
    k = K.shape[1]
    c = [sp.S.Zero] * n if bias is None else as_exact_vector(bias, "bias", n)
    if rational:
        if not all(entry.is_integer for entry in K):
            raise ValueError("keys: the rational chart t = e^x needs integer keys")
        coords = tuple(sp.symbols(f"{symbol or 't'}1:{k + 1}", positive=True))
        x = [sp.log(t) for t in coords]
    else:
        coords = tuple(sp.symbols(f"{symbol or 'x'}1:{k + 1}", real=True))
        x = list(coords)
    logits = [sum(K[i, j] * x[j] for j in range(k)) + c[i] for i in range(n)]
    weights = softmax_expanded(logits)
    return (U * column_vector(weights)).applyfunc(sp.cancel), coords
