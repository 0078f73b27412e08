"""Measures of a trained language model: its attention sink and largest activation per layer,
and the curvature of its sheets over a 2-D slice of one position's input embedding.

What is here (shapes: B windows, T positions, d width, nh heads, L layers)::

    layer_statistics(model, tokens)            per layer: the attention sink (mean weight on
                                               position 0 over heads, query positions t > 0
                                               and windows), the largest activation max |h|
                                               after the block, and a gate's scores: their
                                               mean and the share below SPARSE_GATE
    uniform_sink(positions)                    the sink of a causal head that attends
                                               uniformly: the mean of 1/(t + 1), t = 1 … T − 1
    context_slice_map(model, tokens)           u (2,) ↦ every layer's two sheets (:data:`SHEETS`)
                                               at the last position, stacked (2 L d,)
    context_slice_curvature(model, tokens, P)  ∫|K| dA of every sheet at P and at 2P

Loss spikes are :mod:`curvlab.measurement.loss_spikes`; the attention weights are the
attention layer's own (:meth:`curvlab.models.language_model.DecoderBlock.attention_weights`).

**The slice.**  Position p = T − 1 (the last, whose output reads every position) of three
contexts c₀, c₁, c₂ has input embeddings e₀, e₁, e₂; the slice replaces the embedding at p of
c₀ by x(u) = e₀ + u₁ (e₁ − e₀) + u₂ (e₂ − e₀) over the triangle u₁, u₂ >= 0, u₁ + u₂ <= 1, the
rest of c₀ fixed: :func:`curvlab.measurement.slices.slice_map` with the corners e₀, e₁, e₂.
Per layer l two sheets are read at p: the attention block's output A_l(LN(h_{l−1})) (without
the residual) and the residual stream h_l after the block.  Their jets come from
:func:`curvlab.geometry.gauss_equation.jets` on
:func:`curvlab.models.language_model.curvature_copy` (float64, its LayerNorms elementary),
|K| √det g from :func:`curvlab.geometry.curvature_integrals.curvature_density` (0 where a sheet
is not immersed), and ∫|K| dA from the midpoint rule on the triangle
(:func:`curvlab.measurement.slices.triangle_nodes`), the slices' one triangle rule.
"""

from __future__ import annotations

import torch

from curvlab import arguments
from curvlab.geometry.curvature_integrals import curvature_density
from curvlab.geometry.gauss_equation import jets
from curvlab.measurement.slices import slice_map, triangle_nodes
from curvlab.models.language_model import TransformerLanguageModel, curvature_copy

__all__ = [
    "SHEETS",
    "SPARSE_GATE",
    "context_slice_curvature",
    "context_slice_map",
    "layer_statistics",
    "uniform_sink",
]

SPARSE_GATE = 0.1
"""A gate score below this counts as (nearly) closed in ``gate_sparse``: the sparsity Qiu et
al. report of their gates' scores."""

SHEETS: tuple[str, ...] = ("attention", "residual")
"""The two sheets per layer: the attention block's output and the residual stream after it."""


@torch.no_grad()
def layer_statistics(model: TransformerLanguageModel, tokens: torch.Tensor) -> dict:
    """Per layer on ``tokens`` (B, T), T >= 2: ``sink`` (mean attention on position 0 over
    heads, query positions t > 0 and windows), ``max_activation`` (max |h| of the residual
    stream after the block), and for a gated layer its gate scores σ(X W_θ + b_θ) over every
    window, position and gate: ``gate_mean`` (their mean) and ``gate_sparse`` (the share below
    :data:`SPARSE_GATE`), None for a layer without a gate; lists, one entry per layer."""
    if tokens.ndim != 2 or tokens.shape[1] < 2:
        raise ValueError(f"tokens: expected (B, T) with T >= 2, got shape {tuple(tokens.shape)}")
    h = model.embed(tokens)  # (B, T, d)
    sink, largest, gate_mean, gate_sparse = [], [], [], []
    for block in model.blocks:
        weights = block.attention_weights(h)  # (B, nh, T, T)
        sink.append(float(weights[:, :, 1:, 0].mean()))
        scores = block.gate_scores(h)  # (B, T, nh or d) or None
        gate_mean.append(None if scores is None else float(scores.mean()))
        gate_sparse.append(
            None if scores is None else float((scores < SPARSE_GATE).double().mean())
        )
        h = block(h)  # (B, T, d)
        largest.append(float(h.abs().max()))
    return {
        "sink": sink,
        "max_activation": largest,
        "gate_mean": gate_mean,
        "gate_sparse": gate_sparse,
    }


def uniform_sink(positions: int) -> float:
    """The sink of :func:`layer_statistics` on ``positions`` (T >= 2) tokens for a causal head
    that attends uniformly: query t puts 1/(t + 1) on position 0, averaged over t = 1 … T − 1.
    A layer whose sink is at or below it has no preference for the first position.

    >>> round(uniform_sink(3), 6)  # (1/2 + 1/3) / 2
    0.416667
    """
    T = arguments.integer("positions", positions, 2)
    return sum(1 / (t + 1) for t in range(1, T)) / (T - 1)


def context_slice_map(model: TransformerLanguageModel, tokens: torch.Tensor):
    """The slice of the module docstring through the three contexts ``tokens`` (3, T), at the
    last position: a map u (2,) ↦ (2 L d,), the layers' sheets stacked layer by layer, the
    attention output before the residual stream (:data:`SHEETS`).  Computes in the model's
    dtype."""
    if tokens.ndim != 2 or tokens.shape[0] != 3:
        raise ValueError(f"tokens: expected three contexts (3, T), got {tuple(tokens.shape)}")
    with torch.no_grad():
        embedded = model.embed(tokens)  # (3, T, d)
    p = tokens.shape[1] - 1
    base = embedded[0]  # (T, d)

    def sheets(point: torch.Tensor) -> torch.Tensor:
        h = torch.cat([base[:p], point[None]])[None]  # (1, T, d)
        read = []
        for block in model.blocks:
            update = block.attention_block.attention(block.attention_block.norm(h))  # (1, T, d)
            h = block(h)  # (1, T, d)
            read += [update[0, p], h[0, p]]
        return torch.cat(read)  # (2 L d,)

    return slice_map(sheets, embedded[:, p])  # corners e₀, e₁, e₂: (3, d)


def context_slice_curvature(
    model: TransformerLanguageModel, tokens: torch.Tensor, resolution: int
) -> dict:
    """∫|K| dA of every layer's sheets over the slice through ``tokens`` (3, T), at
    ``resolution`` P and at 2P (module docstring): ``integrals`` {(layer, sheet): (I_P, I_2P)}
    and ``immersed`` (the share of points where every sheet is an immersion)."""
    model64 = curvature_copy(model)
    device = next(model64.parameters()).device
    f = context_slice_map(model64, tokens.to(device))
    d, depth = model.token_embedding.embedding_dim, len(model.blocks)
    integrals, immersed = {}, []
    for P in (resolution, 2 * resolution):
        u, weight = triangle_nodes(P)
        jacobian, hessian = jets(f, u.to(device))  # (N, 2Ld, 2), (N, 2Ld, 2, 2)
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
