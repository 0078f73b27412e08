"""Symbolic attention maps: ungated and gated attention outputs as SymPy embeddings.

Every map here returns ``(embedding, coords)``: a column Matrix (d×1) of SymPy expressions and
the tuple of coordinate Symbols it depends on, ready for :func:`curvlab.symbolic.pullback_metric`
and the curvature functions.  The families:

- ungated mean μ(α) = Σᵢ αᵢ Uᵢ = U α, values Uᵢ fixed (the columns of a d×n matrix U):

  * weight chart: free weights α₁..αₙ₋₁, αₙ = 1 − Σ αᵢ (``ungated_mean_weight_chart``);
  * logit chart: α = softmax(s₁, …, sₙ₋₁, 0) (the last logit fixed, softmax is shift-invariant),
    or its rational chart tᵢ = e^{sᵢ} > 0, αᵢ = tᵢ / (1 + Σ tⱼ), αₙ = 1 / (1 + Σ tⱼ)
    (``ungated_mean_logit_chart``).  Curvature does not depend on the chart and exponentials
    make SymPy slow, so the rational chart is the default.
  * input chart: α = softmax(K x + c) for an input x ∈ ℝᵏ (``input_attention_mean``), the
    lower-dimensional slices of the simplex, which may be curved.

- gated means (Qiu et al.'s G1 position, Y' = Y ⊙ σ(X W_θ)): a headwise gate multiplies the
  whole output by one scalar γ (``headwise_gated_mean``), an elementwise gate multiplies each
  coordinate by its own γ_j (``elementwise_gated_mean``).  The gate is any expression in the
  coordinates: ``sigmoid_gate`` builds σ(W_θᵀ q + b) from a query q, ``radial_gate`` the
  headwise gate R / ‖y‖ that puts the output on a sphere.

- depth: ``structured_stack`` (weight-tied, residual, reading the plane x and writing along a
  direction v orthogonal to it: h_L = (x, L·γ(x) a(x) v), which is one layer with its values
  multiplied by L), ``unstructured_stack`` (untied layers whose write directions are given per
  layer, so their increments may cancel) and ``composing_stack`` (layer l + 1's scores and gate
  read layer l's whole output, so the layers truly compose).
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

from curvlab import arguments

__all__ = [
    "composing_layer",
    "composing_stack",
    "elementwise_gated_mean",
    "headwise_gated_mean",
    "input_attention_mean",
    "radial_gate",
    "residual_attention_layer",
    "sigmoid",
    "sigmoid_gate",
    "simplex_weights",
    "softmax_weights",
    "structured_stack",
    "ungated_mean",
    "ungated_mean_logit_chart",
    "ungated_mean_weight_chart",
    "unstructured_stack",
]


# ---------------------------------------------------------------------------------------------
# input validation

_INTEGERS = (int, sp.Integer)
"""What a count (a depth, a number of weights) may be given as: a Python or a SymPy integer."""


def _as_values(values, name: str = "values") -> sp.Matrix:
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
    matrix = matrix.applyfunc(_exact)
    if matrix.shape[1] < 2:
        raise ValueError(f"{name}: attention needs at least n = 2 values, got {matrix.shape[1]}")
    return matrix


def _exact(entry) -> sp.Expr:
    """An entry as a SymPy expression, floats turned into exact rationals."""
    try:
        expr = sp.sympify(entry)
    except (sp.SympifyError, TypeError) as error:
        raise TypeError(f"expected a SymPy expression or a number, got {entry!r}") from error
    if expr.has(sp.Float):
        expr = sp.nsimplify(expr, rational=True)
    return expr


def _as_vector(vector, name: str, length: int | None = None) -> list[sp.Expr]:
    if isinstance(vector, sp.MatrixBase):
        if 1 not in vector.shape:
            raise ValueError(f"{name}: expected a vector, got a matrix of shape {vector.shape}")
        entries = list(vector)
    elif isinstance(vector, Sequence) and not isinstance(vector, str):
        entries = list(vector)
    else:
        raise TypeError(f"{name}: expected a sequence or a column Matrix, got {type(vector)!r}")
    try:
        entries = [_exact(e) for e in entries]
    except TypeError as error:
        raise TypeError(f"{name}: {error}") from error
    if length is not None and len(entries) != length:
        raise ValueError(f"{name}: expected {length} entries, got {len(entries)}")
    return entries


def _column(entries) -> sp.Matrix:
    return sp.Matrix(len(entries), 1, list(entries))


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
    n = arguments.integer("n", n, 2, type_error=True, kinds=_INTEGERS)
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
    entries = _as_vector(logits, "logits")
    if len(entries) < 2:
        raise ValueError(f"logits: softmax needs at least 2 logits, got {len(entries)}")
    exponentials = [sp.exp(s) for s in entries]
    total = sum(exponentials)
    return [e / total for e in exponentials]


def sigmoid(z) -> sp.Expr:
    """The logistic sigmoid σ(z) = 1 / (1 + e^{−z}), range (0, 1).

    >>> sigmoid(0), sigmoid(sp.log(3))
    (1/2, 3/4)
    """
    return 1 / (1 + sp.exp(-_exact(z)))


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
    U = _as_values(values)
    alpha = _as_vector(weights, "weights", U.shape[1])
    return U * _column(alpha)


def ungated_mean_weight_chart(values, symbol: str = "alpha") -> tuple[sp.Matrix, tuple]:
    """μ(α) = Σᵢ αᵢ Uᵢ in the weight chart α₁..αₙ₋₁ (αₙ = 1 − Σ αᵢ).

    ∂μ/∂αᵢ = Uᵢ − Uₙ is constant, so the pullback metric is constant and the family is flat.
    Returns ``(embedding, coords)``.

    >>> mu, coords = ungated_mean_weight_chart(sp.eye(3))
    >>> mu.T, coords
    (Matrix([[alpha1, alpha2, -alpha1 - alpha2 + 1]]), (alpha1, alpha2))
    """
    U = _as_values(values)
    weights, coords = simplex_weights(U.shape[1], symbol)
    return U * _column(weights), coords


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
    U = _as_values(values)
    n = U.shape[1]
    if rational:
        coords = sp.symbols(f"{symbol or 't'}1:{n}", positive=True)
        coords = tuple(coords)
        total = 1 + sum(coords)
        weights = [t / total for t in coords] + [1 / total]
    else:
        coords = tuple(sp.symbols(f"{symbol or 's'}1:{n}", real=True))
        weights = softmax_weights([*coords, 0])
    return U * _column(weights), coords


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
    U = _as_values(values)
    n = U.shape[1]
    K = _as_keys(keys, n)
    k = K.shape[1]
    c = [sp.S.Zero] * n if bias is None else _as_vector(bias, "bias", n)
    if rational:
        if not all(entry.is_integer for entry in K):
            raise ValueError("keys: the rational chart t = e^x needs integer keys")
        coords = tuple(sp.symbols(f"{symbol or 't'}1:{k + 1}", positive=True))
        x = [sp.log(t) for t in coords]
    else:
        coords = tuple(sp.symbols(f"{symbol or 'x'}1:{k + 1}", real=True))
        x = list(coords)
    logits = [sum(K[i, j] * x[j] for j in range(k)) + c[i] for i in range(n)]
    weights = _softmax_expanded(logits)
    return (U * _column(weights)).applyfunc(sp.cancel), coords


def _as_keys(keys, n: int) -> sp.Matrix:
    try:
        K = sp.Matrix(keys).applyfunc(_exact)
    except (TypeError, ValueError, sp.SympifyError) as error:
        raise TypeError(f"keys: expected an n×k matrix, got {keys!r}") from error
    if K.shape[0] != n or K.shape[1] < 1:
        raise ValueError(f"keys: expected {n} rows (one key per value), got shape {K.shape}")
    return K


def _softmax_expanded(logits) -> list[sp.Expr]:
    """softmax with each e^{sᵢ} written as a product of exponentials of the terms of sᵢ.

    e^{2 log t + log w} then evaluates to t²w, so logits in log-coordinates stay rational.
    """
    exponentials = [
        sp.Mul(*[sp.exp(term) for term in sp.Add.make_args(sp.expand(s))]) for s in logits
    ]
    total = sum(exponentials)
    return [e / total for e in exponentials]


# ---------------------------------------------------------------------------------------------
# gates


def sigmoid_gate(query, gate_weights, bias=None) -> sp.Matrix:
    """The G1 gate σ(W_θᵀ q + b) of Qiu et al. (Y' = Y ⊙ σ(X W_θ)), as an h×1 column.

    ``query`` q: m expressions (the hidden state the gate reads); ``gate_weights`` W_θ: an m×h
    Matrix (h = 1 for a headwise gate, h = d for an elementwise gate); ``bias`` b: h entries
    (zeros when None).  Every entry lies in (0, 1).

    >>> q = sp.symbols("q1 q2", real=True)
    >>> sigmoid_gate(q, sp.Matrix([[1], [-1]]))
    Matrix([[1/(exp(-q1 + q2) + 1)]])
    """
    q = _as_vector(query, "query")
    try:
        W = sp.Matrix(gate_weights).applyfunc(_exact)
    except (TypeError, ValueError, sp.SympifyError) as error:
        raise TypeError(f"gate_weights: expected an m×h matrix, got {gate_weights!r}") from error
    if W.shape[0] != len(q):
        raise ValueError(
            f"gate_weights: expected {len(q)} rows (one per query entry), got shape {W.shape}"
        )
    h = W.shape[1]
    b = [sp.S.Zero] * h if bias is None else _as_vector(bias, "bias", h)
    scores = W.T * _column(q)
    return _column([sigmoid(scores[j] + b[j]) for j in range(h)])


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
    y = _as_vector(output, "output")
    R = _exact(radius)
    if R.is_positive is False or R.is_zero:
        raise ValueError(f"radius: expected a positive radius, got {R}")
    column = _column(y)
    if cov is None:
        squared = sum(entry**2 for entry in y)
    else:
        try:
            Sigma = sp.Matrix(cov).applyfunc(_exact)
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
    y = _as_vector(mean, "mean")
    if isinstance(gate, sp.MatrixBase):
        if gate.shape != (1, 1):
            raise ValueError(f"gate: a headwise gate is one scalar, got shape {gate.shape}")
        gate = gate[0]
    gamma = _exact(gate)
    return _column([gamma * entry for entry in y])


def elementwise_gated_mean(mean, gate) -> sp.Matrix:
    """The elementwise-gated output γ ⊙ y: coordinate j multiplied by its own gate γⱼ.

    ``mean``: the ungated output y (d entries); ``gate``: d expressions (or a d×1 Matrix such as
    ``sigmoid_gate(q, W)`` with W of width d).

    >>> u, v = sp.symbols("u v", real=True)
    >>> elementwise_gated_mean([u, v, 1], [1, 1, u * v]).T
    Matrix([[u, v, u*v]])
    """
    y = _as_vector(mean, "mean")
    gamma = _as_vector(gate, "gate", len(y))
    return _column([g * entry for g, entry in zip(gamma, y, strict=True)])


# ---------------------------------------------------------------------------------------------
# depth: residual layers that read a plane and write along a direction


def residual_attention_layer(
    state, keys, values, write_direction, read_matrix=None, gate_weights=None, gate_bias=0
) -> sp.Matrix:
    """One residual attention layer h ↦ h + γ(x) · a(x) · v, with x = P h the part it reads.

    a(x) = Σᵢ αᵢ(x) uᵢ with α = softmax(K x) (``keys`` K: n×p, ``values`` u: n scalars, the
    value vectors being uᵢ v along the fixed ``write_direction`` v); γ(x) = σ(wᵀx + b) with
    ``gate_weights`` w (p entries) and ``gate_bias`` b, or γ ≡ 1 when ``gate_weights`` is None
    (ungated).  ``read_matrix`` P (p×dim h) defaults to the first two coordinates.  Exponentials
    are expanded term by term, so a state written in logarithms of rational coordinates stays
    rational.

    >>> x1, x2 = sp.symbols("x1 x2", real=True)
    >>> h = residual_attention_layer([x1, x2, 0], [[1, 0], [0, 0]], [1, 0], [0, 0, 1])
    >>> sp.simplify(h[2] - sp.exp(x1) / (sp.exp(x1) + 1))
    0
    """
    h = _as_vector(state, "state")
    v = _as_vector(write_direction, "write_direction", len(h))
    P = sp.eye(len(h))[:2, :] if read_matrix is None else sp.Matrix(read_matrix)
    if P.shape[1] != len(h):
        raise ValueError(f"read_matrix: expected {len(h)} columns, got shape {P.shape}")
    x = list(P * _column(h))
    u = _as_vector(values, "values")
    K = _as_keys(keys, len(u))
    if K.shape[1] != len(x):
        raise ValueError(f"keys: expected {len(x)} columns (the read dimension), got {K.shape}")
    weights = _softmax_expanded([sum(K[i, j] * x[j] for j in range(len(x))) for i in range(len(u))])
    a = sum(alpha * value for alpha, value in zip(weights, u, strict=True))
    if gate_weights is None:
        gamma = sp.S.One
    else:
        w = _as_vector(gate_weights, "gate_weights", len(x))
        score = sum(wj * xj for wj, xj in zip(w, x, strict=True)) + _exact(gate_bias)
        gamma = 1 / (1 + _softmax_expanded_exp(-score))
    increment = sp.cancel(gamma * a)
    return _column([hj + increment * vj for hj, vj in zip(h, v, strict=True)])


def _softmax_expanded_exp(expr) -> sp.Expr:
    return sp.Mul(*[sp.exp(term) for term in sp.Add.make_args(sp.expand(expr))])


def _input_sheet(rational: bool, m: int):
    if rational:
        coords = tuple(sp.symbols("t1:3", positive=True))
        x = [sp.log(t) for t in coords]
    else:
        coords = tuple(sp.symbols("x1:3", real=True))
        x = list(coords)
    return coords, [*x, *([sp.S.Zero] * m)]


def _default_write(m: int) -> list[sp.Expr]:
    return [sp.S.Zero, sp.S.Zero, sp.S.One, *([sp.S.Zero] * (m - 1))]


def structured_stack(
    depth,
    keys,
    values,
    gate_weights=None,
    gate_bias=0,
    write_direction=None,
    rational: bool = True,
) -> tuple[sp.Matrix, tuple]:
    """The weight-tied, residual stack that reads the plane x and writes orthogonally to it.

    State h = (x, z), x ∈ ℝ² the input sheet, z ∈ ℝᵐ; every layer is the same
    ``residual_attention_layer`` h ↦ h + γ(x) a(x) v with v = ``write_direction`` ⊥ the read
    plane (default e₃, m = 1).  The read part x never changes, so the increments add coherently:
    h_L = (x, L·φ(x)·v) with φ = γ·a, the graph of L·φ.  An integer ``depth`` composes the layers
    one by one; a symbolic ``depth`` L (a positive Symbol) uses that closed form.

    With two keys a(x) depends on x only through one combination (a ridge), so the ungated stack
    (``gate_weights=None``) is a cylinder, K ≡ 0 at every depth; gated, the graph formula gives
    K_L = L² det∇²φ / (1 + L²|∇φ|²)².  ``rational=True`` uses the chart tⱼ = e^{xⱼ} (integer
    keys and gate weights; write the bias as a logarithm to keep it rational).

    >>> f, coords = structured_stack(2, [[1, 0], [0, 0]], [1, 0])
    >>> f.T, coords
    (Matrix([[log(t1), log(t2), 2*t1/(t1 + 1)]]), (t1, t2))
    """
    symbolic_depth = isinstance(depth, sp.Expr) and not depth.is_Integer
    if symbolic_depth:
        if not depth.is_positive:
            raise ValueError(f"depth: a symbolic depth must be a positive Symbol, got {depth}")
    else:
        depth = arguments.integer("depth", depth, 1, type_error=True, kinds=_INTEGERS)
    v, m = _write_direction(write_direction)
    coords, h = _input_sheet(rational, m)
    layer_depths = [1] if symbolic_depth else range(depth)
    for _ in layer_depths:
        h = list(residual_attention_layer(h, keys, values, v, None, gate_weights, gate_bias))
    if symbolic_depth:
        h = [h[j] if j < 2 else depth * h[j] for j in range(len(h))]
    return _column([sp.cancel(e) if j >= 2 else e for j, e in enumerate(h)]), coords


def _write_direction(write_direction):
    if write_direction is None:
        return _default_write(1), 1
    v = _as_vector(write_direction, "write_direction")
    if len(v) < 3:
        raise ValueError(f"write_direction: expected 2 + m >= 3 entries, got {len(v)}")
    if v[0] != 0 or v[1] != 0:
        raise ValueError("write_direction: must be orthogonal to the read plane (v₁ = v₂ = 0)")
    if all(e == 0 for e in v):
        raise ValueError("write_direction: must be nonzero")
    return v, len(v) - 2


def unstructured_stack(
    write_directions,
    keys,
    values,
    gate_weights=None,
    gate_bias=0,
    read_matrices=None,
    rational: bool = True,
) -> tuple[sp.Matrix, tuple]:
    """A residual stack whose layers write along their own directions (and may read mixtures).

    Layer l adds γ(x_l) a(x_l) v_l with x_l = P_l h (``read_matrices``, default: the input
    plane) and v_l = ``write_directions[l]`` (each 2 + m entries).  Depth = number of write
    directions.  With v_l = (−1)ˡ v the increments cancel in pairs: the stack is the flat input
    sheet at every even depth.  Keys, values and the gate are shared across layers.

    >>> f, _ = unstructured_stack([[0, 0, 1], [0, 0, -1]], [[1, 0], [0, 0]], [1, 0])
    >>> f.T
    Matrix([[log(t1), log(t2), 0]])
    """
    if not isinstance(write_directions, Sequence) or len(write_directions) == 0:
        raise TypeError("write_directions: expected a nonempty list of write directions")
    directions = [_as_vector(v, f"write_directions[{i}]") for i, v in enumerate(write_directions)]
    sizes = {len(v) for v in directions}
    if len(sizes) != 1 or min(sizes) < 3:
        raise ValueError(
            f"write_directions: expected vectors of one length 2 + m >= 3, got {sizes}"
        )
    m = sizes.pop() - 2
    if read_matrices is not None and len(read_matrices) != len(directions):
        raise ValueError(
            f"read_matrices: expected {len(directions)} matrices (one per layer), "
            f"got {len(read_matrices)}"
        )
    coords, h = _input_sheet(rational, m)
    for i, v in enumerate(directions):
        P = None if read_matrices is None else read_matrices[i]
        h = list(residual_attention_layer(h, keys, values, v, P, gate_weights, gate_bias))
    return _column([sp.cancel(e) if j >= 2 else e for j, e in enumerate(h)]), coords


# ---------------------------------------------------------------------------------------------
# depth: layers that truly compose


def composing_layer(keys, values, gate_weights=None, gate_bias=0) -> tuple[sp.Matrix, tuple]:
    """One residual layer that reads its whole state: h ↦ h + γ(h) a(h) e₃, h = (h1, h2, h3).

    a(h) = Σᵢ softmax(K h)ᵢ uᵢ with ``keys`` K (n×3: the third column reads what earlier layers
    wrote), scalar ``values`` u, and γ(h) = σ(wᵀh + b) (``gate_weights`` w, 3 entries;
    γ ≡ 1 when None).  Returns ``(layer, state)``: the 3×1 image of the state Symbols, ready
    for :func:`curvlab.curvature.lambdify_map` and composition in torch.

    >>> layer, h = composing_layer([[1, 0, 0], [0, 0, 0]], [1, 0])
    >>> layer.T
    Matrix([[h1, h2, h3 + exp(h1)/(exp(h1) + 1)]])
    """
    state = tuple(sp.symbols("h1:4", real=True))
    layer = residual_attention_layer(
        list(state), keys, values, [0, 0, 1], sp.eye(3), gate_weights, gate_bias
    )
    return layer, state


def composing_stack(depth, keys, values, gate_weights=None, gate_bias=0) -> tuple[sp.Matrix, tuple]:
    """The depth-L residual stack of :func:`composing_layer` on the input sheet h₀ = (x, 0).

    Layer l + 1's scores K h_l and gate σ(wᵀh_l + b) read layer l's output, so
    z_{l+1} = z_l + γ(x, z_l) a(x, z_l): unlike :func:`structured_stack` the layers interact.
    With the third column of K and w zero it *is* the structured stack (h_L = (x, L φ(x))).
    The image is the graph of z_L over x ∈ ℝ² (coordinates ``x1``, ``x2``); expressions nest
    exponentials L deep, so keep L small symbolically and compose the lambdified layer in torch
    for larger depths.

    >>> f, x = composing_stack(2, [[1, 0, 0], [0, 0, 0]], [1, 0])
    >>> sp.simplify(f[2] - 2 * sp.exp(x[0]) / (sp.exp(x[0]) + 1))
    0
    """
    depth = arguments.integer("depth", depth, 1, type_error=True, kinds=_INTEGERS)
    K = _as_keys(keys, len(_as_vector(values, "values")))
    if K.shape[1] != 3:
        raise ValueError(f"keys: expected 3 columns (they read the state h ∈ ℝ³), got {K.shape}")
    coords = tuple(sp.symbols("x1:3", real=True))
    h = [*coords, sp.S.Zero]
    for _ in range(depth):
        h = list(
            residual_attention_layer(h, keys, values, [0, 0, 1], sp.eye(3), gate_weights, gate_bias)
        )
    return _column(h), coords
