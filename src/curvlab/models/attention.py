"""Ungated and gated softmax self-attention, stacks of it, and a small point classifier.

The file, top to bottom (one concept per class; shapes as comments, B batch, T tokens,
nh heads, hs head size, d model width):

- :class:`SoftmaxSelfAttention`  ungated multi-head attention, Y = softmax(QKᵀ/√hs) V, then
  the output projection W_O; ``causal=True`` masks the future (token t attends to s ≤ t only:
  the scores of s > t are −∞ before the softmax, so their weights are exactly 0), as in a
  language model (:mod:`curvlab.models.language_model`).  Y = Σ_s α_ts V_s is affine in the
  attention weights.  Its inner width (of Q, K, V and Y) is ``d_attn``, by default
  ``d_model``; the width-matched ungated model raises it until its parameter count matches the
  elementwise gate's (:func:`matched_width`).
- :class:`GatedSelfAttention`  a gate at Qiu et al.'s G1 position: Y' = Y ⊙ σ(X W_θ + b_θ)
  right after the attention and before W_O, X the (pre-norm) hidden state the Q/K/V
  projections read (Qiu et al. write Y ⊙ σ(X W_θ); the bias b_θ is this book's).
  ``gate="headwise"``: W_θ ∈ ℝ^{d×nh}, one scalar per head broadcast over its hs channels;
  ``gate="elementwise"``: W_θ ∈ ℝ^{d×d}, one gate per channel.
- :class:`AdditiveSelfAttention`  the controls for "the gate helps": Y' = Y + φ(X W_θ + b_θ)
  with the elementwise gate's parameters, but added, not multiplied.  φ = tanh is the plain
  (non-multiplicative) nonlinearity ablation; φ = identity (an extra affine term, which adds
  parameters but no capacity, since the tokens are already affine in x) is kept for tests.
- :class:`AttentionBlock`  pre-norm block h ↦ h + A(N(h)), residual and LayerNorm N optional.
- :class:`ReadWriteBlock`  the structured regime's layer: reads the first r coordinates, writes
  only into the other d − r, always residual: h ↦ h + (0, A(h_read)).
- :class:`AttentionClassifier`  tokeniser, a stack of blocks, pooling (mean over tokens or the
  CLS token), linear readout to one logit.  The tokeniser takes a point x ∈ ℝ²
  (:class:`~curvlab.data.tasks.PointTokenizer`) or, with ``token_width=w``, a sequence of
  given tokens (B, T, w) (:class:`~curvlab.data.tasks.SequenceTokenizer`, real data).

:func:`build_attention` makes one layer of a variant of :data:`VARIANTS`,
:func:`build_classifier` assembles the book's five variants into a classifier,
:func:`parameter_count` counts trainable parameters, and :func:`representation_map` turns a
trained classifier into the map x ∈ ℝ² ↦ pooled representation ∈ ℝ^d that
:mod:`curvlab.curvature` measures.  The same read-out as a pure function of one point, with
fixed keys and values (:func:`gated_attention_point_map`, :data:`GATES`), lives in
:mod:`curvlab.models.point_map` and is re-exported here.

The structured regime (``structured=True``): one :class:`ReadWriteBlock` is repeated L times
(weight-tied).  The tokeniser fills only the read coordinates (``write_dim`` = m zero
coordinates at the end of every token), Q, K, V and the gate read only the first r = d − m
coordinates, and W_O maps into the last m.  Read and write subspaces are orthogonal coordinate
subspaces, so the read part of every token is never changed, every layer adds the same
increment Δ(x), and h_L = h_0 + L·(0, Δ(x)) exactly: the torch analogue of the regime in which
curvature accumulates coherently with depth.  Only smooth functions appear (softmax, sigmoid,
tanh, LayerNorm), so second derivatives, and hence curvature, are meaningful everywhere.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable

import torch
from torch import nn

from curvlab import arguments
from curvlab.data.tasks import PointTokenizer, SequenceTokenizer
from curvlab.models.point_map import GATES, gated_attention_point_map

__all__ = [
    "GATES",  # the point map's, re-exported (curvlab.models.point_map): one gate vocabulary
    "VARIANTS",
    "AdditiveSelfAttention",
    "AttentionBlock",
    "AttentionClassifier",
    "GatedSelfAttention",
    "ReadWriteBlock",
    "SoftmaxSelfAttention",
    "build_attention",
    "build_classifier",
    "gated_attention_point_map",  # re-exported from curvlab.models.point_map
    "matched_width",
    "parameter_count",
    "representation_map",
]

VARIANTS: tuple[str, ...] = (
    "ungated",
    "ungated_wide",
    "gated_headwise",
    "gated_elementwise",
    "ablation",
)
"""The model variants of the book's studies:

- ``ungated``: :class:`SoftmaxSelfAttention`;
- ``ungated_wide``: :class:`SoftmaxSelfAttention` with the inner width d_attn of
  :func:`matched_width`, so its parameter count is the nearest an ungated layer gets to the
  elementwise-gated one (capacity matched, not just a count padded with an affine term);
- ``gated_headwise``, ``gated_elementwise``: :class:`GatedSelfAttention` (G1 position);
- ``ablation``: :class:`AdditiveSelfAttention` with φ = tanh, Y' = Y + tanh(XW_θ + b_θ), the
  parameters of ``gated_elementwise`` with the nonlinearity added instead of multiplied.
"""


class SoftmaxSelfAttention(nn.Module):
    """Ungated multi-head softmax self-attention, Y W_O with Y = softmax(QKᵀ/√hs + M) V.

    Reads hidden states of width ``d_in`` (default ``d_model``), attends with ``n_heads`` heads
    of size d_model / n_heads, and writes width ``d_out`` (default ``d_model``).  The mask M is
    absent by default; ``causal=True`` sets M_ts = −∞ for s > t (query t, key s), so a token
    never reads a later one (the non-causal path is untouched by the option).
    :meth:`modulate` is the hook at Qiu et al.'s G1 position (after the attention, before W_O);
    here it is the identity.

    >>> attn = SoftmaxSelfAttention(8, 2)
    >>> attn(torch.randn(3, 5, 8)).shape
    torch.Size([3, 5, 8])
    """

    def __init__(
        self, d_model: int, n_heads: int = 2, *, d_in=None, d_out=None, d_attn=None, causal=False
    ):
        super().__init__()
        if not isinstance(causal, bool):
            raise ValueError(f"causal: expected True or False, got {causal!r}")
        self.causal = causal
        arguments.integer("d_model", d_model, 1)
        arguments.integer("n_heads", n_heads, 1)
        self.d_in = d_model if d_in is None else arguments.integer("d_in", d_in, 1)
        self.d_out = d_model if d_out is None else arguments.integer("d_out", d_out, 1)
        d_model = d_model if d_attn is None else arguments.integer("d_attn", d_attn, 1)
        if d_model % n_heads:
            raise ValueError(f"n_heads: must divide the inner width {d_model}, got {n_heads}")
        # d_model is the inner width from here on (Q, K, V, Y); d_in/d_out are the outer ones
        self.d_model, self.n_heads, self.head_size = d_model, n_heads, d_model // n_heads
        self.query_key_value = nn.Linear(self.d_in, 3 * d_model)
        self.output = nn.Linear(d_model, self.d_out)

    def _heads(self, t: torch.Tensor) -> torch.Tensor:
        B, T, _ = t.shape
        return t.reshape(B, T, self.n_heads, self.head_size).transpose(1, 2)  # (B, nh, T, hs)

    def modulate(self, y: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """The G1 hook: y (B, nh, T, hs), x the block input (B, T, d_in); identity here."""
        return y

    def weights_and_values(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The attention weights softmax(QKᵀ/√hs + M) (B, nh, T, T) on the input x (B, T, d_in)
        (rows: queries t, columns: keys s; each row on the simplex) and the values V
        (B, nh, T, hs): what :meth:`forward` mixes."""
        T = x.shape[1]
        q, k, v = self.query_key_value(x).split(self.d_model, dim=-1)  # (B, T, d) each
        q, k, v = self._heads(q), self._heads(k), self._heads(v)  # (B, nh, T, hs)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_size)  # (B, nh, T, T)
        if self.causal:
            future = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)  # (T, T): s > t
            scores = scores.masked_fill(future, float("-inf"))  # (B, nh, T, T)
        return torch.softmax(scores, dim=-1), v  # (B, nh, T, T), (B, nh, T, hs)

    def attention_weights(self, x: torch.Tensor) -> torch.Tensor:
        """The attention weights (B, nh, T, T) on the input x (B, T, d_in)
        (:meth:`weights_and_values`).

        >>> attn = SoftmaxSelfAttention(8, 2, causal=True)
        >>> w = attn.attention_weights(torch.randn(3, 5, 8)).detach()
        >>> w.shape, bool(torch.allclose(w.sum(-1), torch.ones(3, 2, 5))), float(w[0, 0, 0, 1])
        (torch.Size([3, 2, 5, 5]), True, 0.0)
        """
        return self.weights_and_values(x)[0]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, _ = x.shape
        weights, v = self.weights_and_values(x)  # (B, nh, T, T), (B, nh, T, hs)
        y = weights @ v  # (B, nh, T, hs)
        y = self.modulate(y, x)  # (B, nh, T, hs)
        y = y.transpose(1, 2).reshape(B, T, self.d_model)  # (B, T, d)
        return self.output(y)  # (B, T, d_out)


class GatedSelfAttention(SoftmaxSelfAttention):
    """Gated attention at G1: Y' = Y ⊙ σ(X W_θ + b_θ), then W_O (the position of Qiu et al.
    2025, whose gate σ(X W_θ) has no bias; b_θ is this book's).

    ``gate="headwise"``: one gate per head and token, W_θ ∈ ℝ^{d_in×nh};
    ``gate="elementwise"``: one gate per channel and token, W_θ ∈ ℝ^{d_in×d}.

    >>> attn = GatedSelfAttention(8, 2, gate="headwise")
    >>> attn(torch.randn(3, 5, 8)).shape, tuple(attn.gate.weight.shape)
    (torch.Size([3, 5, 8]), (2, 8))
    """

    def __init__(self, d_model: int, n_heads: int = 2, *, gate: str = "headwise", **options):
        super().__init__(d_model, n_heads, **options)
        if gate not in ("headwise", "elementwise"):
            raise ValueError(f"gate: expected 'headwise' or 'elementwise', got {gate!r}")
        self.gate_kind = gate
        self.gate = nn.Linear(self.d_in, n_heads if gate == "headwise" else d_model)

    def gate_scores(self, x: torch.Tensor) -> torch.Tensor:
        """The gate's values σ(X W_θ + b_θ) on the hidden states x (B, T, d_in): (B, T, nh)
        headwise, (B, T, d) elementwise, each in (0, 1) (Qiu et al.'s gate scores)."""
        return torch.sigmoid(self.gate(x))

    def modulate(self, y: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        scores = self.gate(x)  # (B, T, nh) or (B, T, d)
        if self.gate_kind == "headwise":
            gate = torch.sigmoid(scores).transpose(1, 2).unsqueeze(-1)  # (B, nh, T, 1)
        else:
            gate = torch.sigmoid(self._heads(scores))  # (B, nh, T, hs)
        return y * gate  # (B, nh, T, hs)


class AdditiveSelfAttention(SoftmaxSelfAttention):
    """Controls: Y' = Y + φ(X W_θ + b_θ), W_θ ∈ ℝ^{d_in×d}, then W_O (no multiplication).

    ``nonlinearity="tanh"`` is the plain-nonlinearity ablation; ``"identity"`` the
    parameter-matched ungated model.  Both have exactly the parameters of the elementwise gate.

    >>> a = AdditiveSelfAttention(8, 2, nonlinearity="identity")
    >>> parameter_count(a) == parameter_count(GatedSelfAttention(8, 2, gate="elementwise"))
    True
    """

    _NONLINEARITIES: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
        "tanh": torch.tanh,
        "identity": lambda t: t,
    }

    def __init__(self, d_model: int, n_heads: int = 2, *, nonlinearity: str = "tanh", **options):
        super().__init__(d_model, n_heads, **options)
        arguments.one_of("nonlinearity", nonlinearity, self._NONLINEARITIES)
        self.nonlinearity = nonlinearity
        self.shift = nn.Linear(self.d_in, d_model)

    def modulate(self, y: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        shift = self._NONLINEARITIES[self.nonlinearity](self._heads(self.shift(x)))
        return y + shift  # (B, nh, T, hs)


class AttentionBlock(nn.Module):
    """Pre-norm block: h ↦ h + A(N(h)) (``residual``) or A(N(h)); N = LayerNorm or identity.

    >>> block = AttentionBlock(SoftmaxSelfAttention(8, 2), residual=True, norm=True)
    >>> block(torch.randn(2, 5, 8)).shape
    torch.Size([2, 5, 8])
    """

    def __init__(self, attention: SoftmaxSelfAttention, *, residual=True, norm=False):
        super().__init__()
        if attention.d_in != attention.d_out:
            raise ValueError("attention: a stackable block needs d_in == d_out")
        self.attention, self.residual = attention, bool(residual)
        self.norm = nn.LayerNorm(attention.d_in) if norm else nn.Identity()

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        update = self.attention(self.norm(h))  # (B, T, d)
        return h + update if self.residual else update


class ReadWriteBlock(nn.Module):
    """The structured layer h ↦ h + (0, A(h[..., :r])): reads r coordinates, writes d − r.

    The attention must read width r (``d_in``) and write width d − r (``d_out``); read and
    write coordinates are complementary, so the read part passes through unchanged.

    >>> attn = GatedSelfAttention(4, 2, gate="headwise", d_in=6, d_out=2)
    >>> h = torch.randn(3, 5, 8)
    >>> out = ReadWriteBlock(attn)(h)
    >>> bool(torch.equal(out[..., :6], h[..., :6]))
    True
    """

    def __init__(self, attention: SoftmaxSelfAttention):
        super().__init__()
        self.attention, self.read_dim = attention, attention.d_in

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        update = self.attention(h[..., : self.read_dim])  # (B, T, d - r)
        return torch.cat([h[..., : self.read_dim], h[..., self.read_dim :] + update], dim=-1)


class AttentionClassifier(nn.Module):
    """Point classifier: tokens -> blocks -> pool -> one logit.

    ``forward(points)`` maps (B, 2) to logits (B,) (or (B, T, w) sequences, with a
    :class:`~curvlab.data.tasks.SequenceTokenizer`); :meth:`representation` gives the pooled
    hidden state (B, d) after ``layer`` blocks (0 = the tokens, -1 = the last block).
    ``pooling="mean"`` averages over all tokens, ``"cls"`` takes token 0.

    >>> model = build_classifier("gated_headwise", depth=2, seed=0)
    >>> model(torch.zeros(4, 2)).shape, model.representation(torch.zeros(4, 2), 1).shape
    (torch.Size([4]), torch.Size([4, 8]))
    """

    def __init__(
        self, tokenizer: PointTokenizer | SequenceTokenizer, blocks, *, pooling: str = "mean"
    ):
        super().__init__()
        if pooling not in ("mean", "cls"):
            raise ValueError(f"pooling: expected 'mean' or 'cls', got {pooling!r}")
        self.tokenizer, self.pooling = tokenizer, pooling
        self.blocks = nn.ModuleList(blocks)
        self.readout = nn.Linear(tokenizer.d_model, 1)

    @property
    def depth(self) -> int:
        """The number of blocks L."""
        return len(self.blocks)

    def layer_index(self, layer: int) -> int:
        """``layer`` as 0..L (0 = tokens, L = last block); ValueError outside -(L+1)..L."""
        what = f"-{self.depth + 1}..{self.depth}"
        layer = arguments.integer(
            "layer", layer, -self.depth - 1, self.depth, expected=what, type_expected="an integer"
        )
        return layer % (self.depth + 1)

    def _pool(self, h: torch.Tensor) -> torch.Tensor:
        return h.mean(dim=1) if self.pooling == "mean" else h[:, 0]  # (B, d)

    def representation(self, points: torch.Tensor, layer: int = -1) -> torch.Tensor:
        """Pooled hidden state (B, d) after ``layer`` blocks (negative counts from the end)."""
        layer = self.layer_index(layer)
        h = self.tokenizer(points)  # (B, T + 1, d)
        for block in self.blocks[:layer]:
            h = block(h)  # (B, T + 1, d)
        return self._pool(h)  # (B, d)

    def forward(self, points: torch.Tensor) -> torch.Tensor:
        return self.readout(self.representation(points, -1)).squeeze(-1)  # (B,)


def _attention_parameters(d_in: int, d_attn: int, d_out: int, gate: int = 0) -> int:
    """Parameters of one attention layer: QKV, W_O, and a gate of ``gate`` outputs."""
    return (d_in + 1) * 3 * d_attn + (d_attn + 1) * d_out + (d_in + 1) * gate


def matched_width(d_model: int, n_heads: int = 2, *, d_in=None, d_out=None) -> int:
    """The inner width d_attn ≥ d_model (a multiple of ``n_heads``) whose ungated layer has
    the parameter count nearest the elementwise-gated layer of width ``d_model``.

    Ungated: 3 d_attn (d_in + 1) + d_out (d_attn + 1); gated adds d_model (d_in + 1).

    >>> matched_width(4, 1), matched_width(16, 2)
    (5, 20)
    """
    arguments.integer("d_model", d_model, 1)
    arguments.integer("n_heads", n_heads, 1)
    d_in = d_model if d_in is None else d_in
    d_out = d_model if d_out is None else d_out
    target = _attention_parameters(d_in, d_model, d_out, gate=d_model)
    widths = range(d_model, 4 * d_model + n_heads + 1)
    widths = [w for w in widths if w % n_heads == 0]
    return min(widths, key=lambda w: (abs(_attention_parameters(d_in, w, d_out) - target), w))


def build_attention(variant: str, d_model: int, n_heads: int, **options) -> SoftmaxSelfAttention:
    """One attention layer of ``variant`` (one of :data:`VARIANTS`); ``options`` are the
    layer's keywords (``d_in``, ``d_out``, ``causal``).

    >>> type(build_attention("ablation", 8, 2, causal=True)).__name__
    'AdditiveSelfAttention'
    """
    if variant == "ungated":
        return SoftmaxSelfAttention(d_model, n_heads, **options)
    if variant == "ungated_wide":
        widths = {name: options[name] for name in ("d_in", "d_out") if name in options}
        d_attn = matched_width(d_model, n_heads, **widths)
        return SoftmaxSelfAttention(d_model, n_heads, d_attn=d_attn, **options)
    if variant in ("gated_headwise", "gated_elementwise"):
        return GatedSelfAttention(d_model, n_heads, gate=variant.removeprefix("gated_"), **options)
    if variant == "ablation":
        return AdditiveSelfAttention(d_model, n_heads, nonlinearity="tanh", **options)
    raise ValueError(f"variant: expected one of {VARIANTS}, got {variant!r}")


def build_classifier(
    variant: str,
    *,
    depth: int = 1,
    d_model: int = 8,
    n_heads: int = 2,
    n_tokens: int = 4,
    residual: bool = True,
    norm: bool = False,
    pooling: str = "mean",
    structured: bool = False,
    write_dim: int = 2,
    token_width: int | None = None,
    seed: int = 0,
) -> AttentionClassifier:
    """A fresh :class:`AttentionClassifier` of one of :data:`VARIANTS`, initialised from ``seed``.

    Generic stack (``structured=False``): ``depth`` untied :class:`AttentionBlock`\\ s of width
    ``d_model``.  Structured regime (``structured=True``): one :class:`ReadWriteBlock` repeated
    ``depth`` times (weight-tied), reading r = d_model − ``write_dim`` coordinates and writing
    the last ``write_dim``; the tokeniser leaves the write coordinates zero; ``residual`` and
    ``norm`` do not apply (the layer is residual by construction, no normalisation).  The
    tokeniser and the weights are drawn from ``seed`` without touching the global RNG.
    ``token_width=None``: the model reads points (B, 2) (:class:`PointTokenizer`, ``n_tokens``
    affine maps of the point); ``token_width=w``: it reads sequences (B, ``n_tokens``, w) of
    given tokens (:class:`SequenceTokenizer`, each token embedded by its own affine map).

    >>> a = build_classifier("ungated", seed=1)
    >>> b = build_classifier("ungated", seed=1)
    >>> all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    True
    >>> digits = build_classifier("gated_elementwise", n_tokens=8, token_width=8)
    >>> digits(torch.zeros(3, 8, 8)).shape
    torch.Size([3])
    """
    arguments.one_of("variant", variant, VARIANTS)
    arguments.integer("depth", depth, 1)
    arguments.integer("d_model", d_model, 2)
    arguments.integer("seed", seed)
    if token_width is not None:
        arguments.integer("token_width", token_width, 1)

    def tokenizer_of(write: int):
        if token_width is None:
            return PointTokenizer(n_tokens, d_model, write_dim=write, seed=seed)
        return SequenceTokenizer(n_tokens, token_width, d_model, write_dim=write, seed=seed)

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        if structured:
            arguments.integer("write_dim", write_dim, 1)
            read_dim = d_model - write_dim
            if read_dim < 2:
                raise ValueError(
                    f"write_dim: must leave at least 2 read coordinates of d_model = {d_model}, "
                    f"got {write_dim}"
                )
            tokenizer = tokenizer_of(write_dim)
            attention = build_attention(variant, d_model, n_heads, d_in=read_dim, d_out=write_dim)
            blocks = [ReadWriteBlock(attention)] * depth  # one module, L times: weight-tied
        else:
            tokenizer = tokenizer_of(0)
            blocks = [
                AttentionBlock(
                    build_attention(variant, d_model, n_heads), residual=residual, norm=norm
                )
                for _ in range(depth)
            ]
        return AttentionClassifier(tokenizer, blocks, pooling=pooling)


def parameter_count(model: nn.Module) -> int:
    """The number of trainable parameters, each shared (tied) tensor counted once.

    >>> parameter_count(nn.Linear(3, 2))
    8
    """
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def representation_map(model: AttentionClassifier, layer: int = -1, *, dtype=torch.float64):
    """The map x (2,) -> pooled representation (d,) after ``layer`` blocks, for curvlab.curvature.

    A frozen copy of ``model`` in ``dtype`` (float64 by default; eval mode, no gradients
    tracked) on the model's device; pure torch ops, so it works under ``torch.func.vmap`` and
    ``jacfwd``.  Later changes to ``model`` do not affect the map.

    >>> from curvlab.curvature import gaussian_curvature
    >>> f = representation_map(build_classifier("gated_headwise", seed=0))
    >>> f(torch.zeros(2, dtype=torch.float64)).shape
    torch.Size([8])
    >>> gaussian_curvature(f, torch.zeros(3, 2)).shape
    torch.Size([3])
    """
    if not isinstance(model, AttentionClassifier):
        raise TypeError(f"model: expected an AttentionClassifier, got {type(model)!r}")
    layer = model.layer_index(layer)
    frozen = copy.deepcopy(model).to(dtype).eval().requires_grad_(False)

    def represent(x: torch.Tensor) -> torch.Tensor:
        return frozen.representation(x.unsqueeze(0), layer)[0]  # (d,)

    return represent
