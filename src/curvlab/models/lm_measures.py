"""Measures of a trained language model: attention sink, largest activation, loss spikes, and
the curvature of its sheets over a 2-D slice of one position's input embedding.

What is here (shapes: B windows, T positions, d width, nh heads, L layers)::

    attention_weights(block, h)       a decoder block's causal attention weights (B, nh, T, T)
    layer_statistics(model, tokens)   per layer: the attention sink (mean weight on position 0
                                      over heads, query positions t > 0 and windows) and the
                                      largest activation max |h| after the block
    spike_steps(losses)               steps t >= 1 whose loss exceeds factor × the minimum of
                                      the previous min(t, window) losses (non-finite: a spike)
    count_spikes(losses)              how many there are
    slice_map(model, tokens)          u (2,) ↦ every layer's two sheets (:data:`SHEETS`) at the
                                      last position, stacked (2 L d,)
    triangle_midpoints(P)             the triangle's midpoint rule: P² centroids, weight 1/(2P²)
    slice_curvature(model, tokens, P) ∫|K| dA of every sheet at P and at 2P
    curvature_copy(model)             the float64 copy the engine differentiates

**The slice.**  Position p = T − 1 (the last, whose output reads every position) of three
contexts c₀, c₁, c₂ has input embeddings e₀, e₁, e₂; the slice replaces the embedding at p of
c₀ by x(u) = e₀ + u₁ (e₁ − e₀) + u₂ (e₂ − e₀) over the triangle u₁, u₂ >= 0, u₁ + u₂ <= 1, the
rest of c₀ fixed.  Per layer l two sheets are read at p: the attention block's output
A_l(LN(h_{l−1})) (without the residual) and the residual stream h_l after the block.  Their
jets come from :func:`curvlab.geometry.gauss_equation.jets` on :func:`curvature_copy`
(float64, its LayerNorms :class:`ElementaryLayerNorm`), |K| √det g from
:func:`curvlab.geometry.curvature_integrals.curvature_density` (0 where a sheet is not
immersed), and ∫|K| dA from the midpoint rule on the triangle.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from curvlab.geometry.curvature_integrals import curvature_density
from curvlab.geometry.gauss_equation import jets
from curvlab.models.language_model import TransformerLanguageModel, build_language_model

__all__ = [
    "SHEETS",
    "ElementaryLayerNorm",
    "attention_weights",
    "count_spikes",
    "curvature_copy",
    "layer_statistics",
    "slice_curvature",
    "slice_map",
    "spike_steps",
    "triangle_midpoints",
]

SHEETS: tuple[str, ...] = ("attention", "residual")
"""The two sheets per layer: the attention block's output and the residual stream after it."""


def spike_steps(losses, factor: float = 1.5, window: int = 50) -> list[int]:
    """The steps t >= 1 whose loss exceeds ``factor`` × the minimum of the previous min(t,
    ``window``) losses (a non-finite loss, or None, is a spike), in order.

    >>> spike_steps([3.0, 2.0, 1.0, 1.6, 0.9, 1.0], factor=1.5, window=2)
    [3]
    """
    if isinstance(factor, bool) or not isinstance(factor, int | float) or not factor > 0:
        raise ValueError(f"factor: expected a number > 0, got {factor!r}")
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError(f"window: expected an integer >= 1, got {window!r}")
    losses = [float("nan") if v is None else float(v) for v in losses]
    steps = []
    for t in range(1, len(losses)):
        previous = [v for v in losses[max(0, t - window) : t] if math.isfinite(v)]
        if not math.isfinite(losses[t]) or (previous and losses[t] > factor * min(previous)):
            steps.append(t)
    return steps


def count_spikes(losses, factor: float = 1.5, window: int = 50) -> int:
    """How many steps :func:`spike_steps` finds.

    >>> count_spikes([3.0, 2.0, 1.0, 1.6, 0.9, 1.0], factor=1.5, window=2)
    1
    """
    return len(spike_steps(losses, factor, window))


def attention_weights(block, h: torch.Tensor) -> torch.Tensor:
    """The causal attention weights (B, nh, T, T) of a decoder block on its input h (B, T, d):
    softmax(QKᵀ/√hs + M) of its attention layer on LN₁(h) (rows: queries, columns: keys)."""
    attention = block.attention
    x = block.attention_block.norm(h)  # (B, T, d)
    q, k, _ = attention.query_key_value(x).split(attention.d_model, dim=-1)  # (B, T, d) each
    B, T, _ = x.shape
    q = q.reshape(B, T, attention.n_heads, attention.head_size).transpose(1, 2)  # (B, nh, T, hs)
    k = k.reshape(B, T, attention.n_heads, attention.head_size).transpose(1, 2)  # (B, nh, T, hs)
    scores = q @ k.transpose(-2, -1) / math.sqrt(attention.head_size)  # (B, nh, T, T)
    future = torch.ones(T, T, dtype=torch.bool, device=h.device).triu(1)  # (T, T)
    return torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)  # (B, nh, T, T)


@torch.no_grad()
def layer_statistics(model: TransformerLanguageModel, tokens: torch.Tensor) -> dict:
    """Per layer on ``tokens`` (B, T), T >= 2: ``sink`` (mean attention on position 0 over
    heads, query positions t > 0 and windows) and ``max_activation`` (max |h| of the residual
    stream after the block); lists of floats, one per layer."""
    if tokens.ndim != 2 or tokens.shape[1] < 2:
        raise ValueError(f"tokens: expected (B, T) with T >= 2, got shape {tuple(tokens.shape)}")
    h = model.embed(tokens)  # (B, T, d)
    sink, largest = [], []
    for block in model.blocks:
        weights = attention_weights(block, h)  # (B, nh, T, T)
        sink.append(float(weights[:, :, 1:, 0].mean()))
        h = block(h)  # (B, T, d)
        largest.append(float(h.abs().max()))
    return {"sink": sink, "max_activation": largest}


def slice_map(model: TransformerLanguageModel, tokens: torch.Tensor):
    """The slice of the module docstring through the three contexts ``tokens`` (3, T), at the
    last position: a map u (2,) ↦ (2 L d,), the layers' sheets stacked layer by layer, the
    attention output before the residual stream (:data:`SHEETS`).  Computes in the model's
    dtype."""
    if tokens.ndim != 2 or tokens.shape[0] != 3:
        raise ValueError(f"tokens: expected three contexts (3, T), got {tuple(tokens.shape)}")
    with torch.no_grad():
        embedded = model.embed(tokens)  # (3, T, d)
    p = tokens.shape[1] - 1
    base, e0 = embedded[0], embedded[0, p]  # (T, d), (d,)
    d1, d2 = embedded[1, p] - e0, embedded[2, p] - e0  # (d,) each

    def sheets(u: torch.Tensor) -> torch.Tensor:
        point = e0 + u[0] * d1 + u[1] * d2  # (d,)
        h = torch.cat([base[:p], point[None]])[None]  # (1, T, d)
        read = []
        for block in model.blocks:
            update = block.attention_block.attention(block.attention_block.norm(h))  # (1, T, d)
            h = block(h)  # (1, T, d)
            read += [update[0, p], h[0, p]]
        return torch.cat(read)  # (2 L d,)

    return sheets


def triangle_midpoints(P: int, *, dtype=torch.float64) -> tuple[torch.Tensor, float]:
    """The midpoint rule on the triangle u₁, u₂ >= 0, u₁ + u₂ <= 1: the centroids (P², 2) of
    its P² congruent triangles and their common weight (area) 1/(2P²).  Exact for linear
    integrands.

    >>> u, w = triangle_midpoints(3)
    >>> u.shape, round(w * len(u), 12), round(float(u[:, 0].sum()) * w, 12)
    (torch.Size([9, 2]), 0.5, 0.166666666667)
    """
    if isinstance(P, bool) or not isinstance(P, int) or P < 1:
        raise ValueError(f"P: expected an integer >= 1, got {P!r}")
    up = [(i + 1 / 3, j + 1 / 3) for i in range(P) for j in range(P - i)]
    down = [(i + 2 / 3, j + 2 / 3) for i in range(P) for j in range(P - 1 - i)]
    return torch.tensor(up + down, dtype=dtype) / P, 1 / (2 * P * P)


def slice_curvature(model: TransformerLanguageModel, tokens: torch.Tensor, grid: int) -> dict:
    """∫|K| dA of every layer's sheets over the slice through ``tokens`` (3, T), at ``grid``
    and at twice it (module docstring): ``integrals`` {(layer, sheet): (I_P, I_2P)} and
    ``immersed`` (the share of points where every sheet is an immersion)."""
    model64 = curvature_copy(model)
    f = slice_map(model64, tokens.to(next(model64.parameters()).device))
    d, depth = model.token_embedding.embedding_dim, len(model.blocks)
    integrals, immersed = {}, []
    for P in (grid, 2 * grid):
        u, weight = triangle_midpoints(P)
        jacobian, hessian = jets(f, u.to(next(model64.parameters()).device))  # (N, 2Ld, 2), ...
        every = torch.ones(len(u), dtype=torch.float64, device=jacobian.device)  # (N,)
        for n, (layer, sheet) in enumerate(
            (layer, sheet) for layer in range(depth) for sheet in SHEETS
        ):
            rows = slice(n * d, (n + 1) * d)
            density = curvature_density(jacobian[:, rows], hessian[:, rows])  # (N, 4)
            integrals.setdefault((layer, sheet), []).append(float(density[:, 0].sum()) * weight)
            every = torch.minimum(every, density[:, 3])
        immersed.append(every)
    share = float(torch.cat(immersed).mean())
    return {"integrals": {k: tuple(v) for k, v in integrals.items()}, "immersed": share}


class ElementaryLayerNorm(nn.Module):
    """LayerNorm over the last dimension by elementary operations: (x − mean) / √(var + ε) ·
    weight + bias, the biased variance, as :class:`torch.nn.LayerNorm` computes it.

    Its second forward-mode derivatives are those of the formula; those of
    :class:`torch.nn.LayerNorm` are not (in PyTorch 2.13, ``jacfwd(jacfwd(layer_norm))``
    disagrees with ``jacrev(jacrev(layer_norm))``), and the curvature engine differentiates
    forward twice.

    >>> norm = nn.LayerNorm(4).double()
    >>> x = torch.randn(3, 4, dtype=torch.float64)
    >>> torch.allclose(ElementaryLayerNorm(norm)(x), norm(x))
    True
    """

    def __init__(self, norm: nn.LayerNorm):
        super().__init__()
        if not isinstance(norm, nn.LayerNorm) or len(norm.normalized_shape) != 1:
            raise ValueError(f"norm: expected a LayerNorm over the last dimension, got {norm!r}")
        self.weight, self.bias, self.eps = norm.weight, norm.bias, norm.eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        centred = x - x.mean(dim=-1, keepdim=True)  # (..., d)
        variance = (centred**2).mean(dim=-1, keepdim=True)  # (..., 1)
        return centred / torch.sqrt(variance + self.eps) * self.weight + self.bias  # (..., d)


def curvature_copy(model: TransformerLanguageModel) -> TransformerLanguageModel:
    """A float64 copy of ``model`` for the curvature engine: in eval mode, without gradients,
    every LayerNorm an :class:`ElementaryLayerNorm` with the same parameters."""
    copy = build_language_model(
        model.variant,
        vocab_size=model.vocab_size,
        context=model.context,
        d_model=model.token_embedding.embedding_dim,
        n_heads=model.blocks[0].attention.n_heads,
        depth=len(model.blocks),
    )
    copy.load_state_dict(model.state_dict())
    copy = copy.to(next(model.parameters()).device, torch.float64).eval().requires_grad_(False)
    norms = [(n, m) for n, m in copy.named_modules() if isinstance(m, nn.LayerNorm)]
    for name, norm in norms:
        parent, _, attribute = name.rpartition(".")
        setattr(
            copy.get_submodule(parent) if parent else copy, attribute, ElementaryLayerNorm(norm)
        )
    return copy
