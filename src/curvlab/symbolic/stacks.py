"""Depth: residual stacks of symbolic attention layers, tied, untied and truly composing.

A layer is ``residual_attention_layer``, h ↦ h + γ(x) · a(x) · v: it reads x = P h, attends
with softmax(K x) over scalar values, is gated by σ(wᵀx + b) (or not), and writes along the
direction v.  The stacks, each returning ``(embedding, coords)`` on the input sheet x ∈ ℝ²:

- ``structured_stack``: weight-tied, reading the plane x and writing along a direction v
  orthogonal to it, h_L = (x, L·γ(x) a(x) v), which is one layer with its values multiplied
  by L;
- ``unstructured_stack``: untied layers whose write directions are given per layer, so their
  increments may cancel;
- ``composing_stack`` (of ``composing_layer``): layer l + 1's scores and gate read layer l's
  whole output, so the layers truly compose.

Exponentials are expanded term by term (:func:`.attention_maps.softmax_expanded`), so a state
written in logarithms of the rational chart tⱼ = e^{xⱼ} stays rational.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

from curvlab import arguments
from curvlab.symbolic.attention_inputs import (
    INTEGERS,
    as_exact_vector,
    as_keys,
    column_vector,
    exact,
)
from curvlab.symbolic.attention_maps import softmax_expanded

__all__ = [
    "composing_layer",
    "composing_stack",
    "residual_attention_layer",
    "structured_stack",
    "unstructured_stack",
]


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
    h = as_exact_vector(state, "state")
    v = as_exact_vector(write_direction, "write_direction", len(h))
    P = sp.eye(len(h))[:2, :] if read_matrix is None else sp.Matrix(read_matrix)
    if P.shape[1] != len(h):
        raise ValueError(f"read_matrix: expected {len(h)} columns, got shape {P.shape}")
    x = list(P * column_vector(h))
    u = as_exact_vector(values, "values")
    K = as_keys(keys, len(u))
    if K.shape[1] != len(x):
        raise ValueError(f"keys: expected {len(x)} columns (the read dimension), got {K.shape}")
    weights = softmax_expanded([sum(K[i, j] * x[j] for j in range(len(x))) for i in range(len(u))])
    a = sum(alpha * value for alpha, value in zip(weights, u, strict=True))
    if gate_weights is None:
        gamma = sp.S.One
    else:
        w = as_exact_vector(gate_weights, "gate_weights", len(x))
        score = sum(wj * xj for wj, xj in zip(w, x, strict=True)) + exact(gate_bias)
        gamma = 1 / (1 + _softmax_expanded_exp(-score))
    increment = sp.cancel(gamma * a)
    return column_vector([hj + increment * vj for hj, vj in zip(h, v, strict=True)])


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
        depth = arguments.integer("depth", depth, 1, type_error=True, kinds=INTEGERS)
    v, m = _write_direction(write_direction)
    coords, h = _input_sheet(rational, m)
    layer_depths = [1] if symbolic_depth else range(depth)
    for _ in layer_depths:
        h = list(residual_attention_layer(h, keys, values, v, None, gate_weights, gate_bias))
    if symbolic_depth:
        h = [h[j] if j < 2 else depth * h[j] for j in range(len(h))]
    return column_vector([sp.cancel(e) if j >= 2 else e for j, e in enumerate(h)]), coords


def _write_direction(write_direction):
    if write_direction is None:
        return _default_write(1), 1
    v = as_exact_vector(write_direction, "write_direction")
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
    directions = [
        as_exact_vector(v, f"write_directions[{i}]") for i, v in enumerate(write_directions)
    ]
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
    return column_vector([sp.cancel(e) if j >= 2 else e for j, e in enumerate(h)]), coords


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
    depth = arguments.integer("depth", depth, 1, type_error=True, kinds=INTEGERS)
    K = as_keys(keys, len(as_exact_vector(values, "values")))
    if K.shape[1] != 3:
        raise ValueError(f"keys: expected 3 columns (they read the state h ∈ ℝ³), got {K.shape}")
    coords = tuple(sp.symbols("x1:3", real=True))
    h = [*coords, sp.S.Zero]
    for _ in range(depth):
        h = list(
            residual_attention_layer(h, keys, values, [0, 0, 1], sp.eye(3), gate_weights, gate_bias)
        )
    return column_vector(h), coords
