"""A small decoder-only transformer language model, with the book's attention variants.

The model, top to bottom (shapes as comments: B batch, T ≤ C tokens, V vocabulary, d width,
nh heads, hs = d / nh head size, m the MLP width, L blocks)::

    h = E_tok[tokens] + E_pos[0..T-1]                   (B, T, d)   learned, both N(0, 0.02²)
    L times (DecoderBlock, pre-norm):
        h = h + A(LN₁(h))                               (B, T, d)   causal attention, variant
        h = h + W₂ GELU(W₁ LN₂(h) + b₁) + b₂            (B, T, d)   MLP d → m → d
    logits = LN_f(h) E_tokᵀ                             (B, T, V)   head tied to E_tok, no bias

A is the very layer of Parts I–II (:func:`curvlab.models.attention.build_attention` with
``causal=True``): per head, Y = softmax(QKᵀ/√hs + M) V with M_ts = −∞ for a key s after the
query t, then the gate hook at Qiu et al.'s position G1, then W_O.  Head j owns channels
j·hs … (j+1)·hs − 1 of Q, K, V and Y.  The gate reads X = LN₁(h), the query token's
normalised hidden state, which is what the Q/K/V projections read.  Qiu et al.'s gate is
Y' = Y ⊙ σ(X W_θ); ours adds a bias b_θ (W_θ and b_θ one ``nn.Linear``, with PyTorch's
default initialisation, both uniform on ±1/√d), as in Parts I–II
(:data:`LANGUAGE_MODEL_VARIANTS`):

- ``ungated``: Y' = Y;
- ``gated_headwise``: Y'_j = Y_j · σ(X W_θ + b_θ)_j, W_θ ∈ ℝ^{d×nh}, one scalar per head j;
- ``gated_elementwise``: Y' = Y ⊙ σ(X W_θ + b_θ), W_θ ∈ ℝ^{d×d}, channel c gates channel c;
- ``ablation``: Y' = Y + tanh(X W_θ + b_θ), W_θ ∈ ℝ^{d×d}: the elementwise gate's parameters,
  tanh in place of σ, its output added to Y instead of multiplying it.

Parameters (:func:`language_model_parameter_count`; the tied head has none of its own)::

    (V + C) d + L [4d(d + 1) + (2dm + m + d) + 4d + g] + 2d

4d(d + 1) for Q, K, V and W_O, 2dm + m + d for the MLP, 4d for the block's two LayerNorms,
2d for the final one, and the gate g = 0 (ungated), nh(d + 1) (headwise), d(d + 1)
(elementwise and ablation).  Only smooth functions appear (softmax, σ, tanh, GELU,
LayerNorm), so the curvature engine's derivatives are meaningful everywhere.
"""

from __future__ import annotations

import torch
from torch import nn

from curvlab import arguments
from curvlab.models.attention import AttentionBlock, build_attention

__all__ = [
    "LANGUAGE_MODEL_VARIANTS",
    "DecoderBlock",
    "ElementaryLayerNorm",
    "TransformerLanguageModel",
    "build_language_model",
    "curvature_copy",
    "language_model_parameter_count",
    "next_token_loss",
]

LANGUAGE_MODEL_VARIANTS: tuple[str, ...] = (
    "ungated",
    "gated_headwise",
    "gated_elementwise",
    "ablation",
)
"""The language model's variants, named as in :data:`curvlab.models.attention.VARIANTS`."""

EMBEDDING_STD = 0.02
"""The standard deviation of the token and position embeddings at initialisation (GPT-2's)."""


def _check_config(variant, vocab_size, context, d_model, n_heads, depth, d_mlp) -> int:
    """Validate a configuration; return the MLP width m (4d when ``d_mlp`` is None)."""
    arguments.one_of("variant", variant, LANGUAGE_MODEL_VARIANTS)
    arguments.integer("vocab_size", vocab_size, 2)
    arguments.integer("context", context, 1)
    arguments.integer("d_model", d_model, 1)
    arguments.integer("n_heads", n_heads, 1)
    arguments.integer("depth", depth, 1)
    if d_model % n_heads:
        raise ValueError(f"n_heads: must divide d_model = {d_model}, got {n_heads}")
    return 4 * d_model if d_mlp is None else arguments.integer("d_mlp", d_mlp, 1)


def language_model_parameter_count(
    variant: str,
    *,
    vocab_size: int,
    context: int,
    d_model: int,
    n_heads: int,
    depth: int,
    d_mlp: int | None = None,
) -> int:
    """The documented parameter count of :func:`build_language_model`'s model.

    (V + C) d + L [4d(d + 1) + 2dm + m + d + 4d + g] + 2d, with g = 0, nh(d + 1), d(d + 1),
    d(d + 1) for ungated, headwise, elementwise, ablation (see the module's docstring).

    >>> language_model_parameter_count(
    ...     "ungated", vocab_size=10, context=4, d_model=8, n_heads=2, depth=1, d_mlp=16
    ... )
    728
    """
    m = _check_config(variant, vocab_size, context, d_model, n_heads, depth, d_mlp)
    d = d_model
    gate = {
        "ungated": 0,
        "gated_headwise": n_heads * (d + 1),
        "gated_elementwise": d * (d + 1),
        "ablation": d * (d + 1),
    }[variant]
    block = 4 * d * (d + 1) + (2 * d * m + m + d) + 4 * d + gate
    return (vocab_size + context) * d + depth * block + 2 * d


class DecoderBlock(nn.Module):
    """Pre-norm decoder block: h ↦ h + A(LN₁(h)), then h ↦ h + MLP(LN₂(h)).

    The attention half is :class:`~curvlab.models.attention.AttentionBlock` (residual, with
    its LayerNorm), so the gate reads LN₁(h), as Q, K and V do.

    >>> block = DecoderBlock(build_attention("gated_elementwise", 8, 2, causal=True), d_mlp=16)
    >>> block(torch.randn(3, 5, 8)).shape
    torch.Size([3, 5, 8])
    """

    def __init__(self, attention: nn.Module, *, d_mlp: int):
        super().__init__()
        d = attention.d_out
        self.attention_block = AttentionBlock(attention, residual=True, norm=True)
        self.norm_mlp = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, d_mlp), nn.GELU(), nn.Linear(d_mlp, d))

    @property
    def attention(self) -> nn.Module:
        """The block's attention layer (its gate, if any, is ``attention.gate``)."""
        return self.attention_block.attention

    def attention_weights(self, h: torch.Tensor) -> torch.Tensor:
        """The causal attention weights (B, nh, T, T) of the block on its input h (B, T, d):
        its attention layer's weights on LN₁(h) (rows: queries, columns: keys)."""
        return self.attention.attention_weights(self.attention_block.norm(h))

    def gate_scores(self, h: torch.Tensor) -> torch.Tensor | None:
        """The gate's scores on the block's input h (B, T, d): its attention layer's
        ``gate_scores`` of LN₁(h), or None for a layer without a multiplicative gate."""
        if not hasattr(self.attention, "gate_scores"):
            return None
        return self.attention.gate_scores(self.attention_block.norm(h))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        h = self.attention_block(h)  # (B, T, d): h + A(LN₁(h))
        return h + self.mlp(self.norm_mlp(h))  # (B, T, d)


class TransformerLanguageModel(nn.Module):
    """Decoder-only transformer: tokens (B, T) ↦ next-token logits (B, T, V), T ≤ ``context``.

    Built by :func:`build_language_model`; the module's docstring has the architecture.
    Position t's logits depend on tokens 0..t only.

    >>> model = build_language_model("gated_headwise", vocab_size=10, context=6, d_model=8)
    >>> model(torch.zeros(2, 6, dtype=torch.long)).shape
    torch.Size([2, 6, 10])
    """

    def __init__(
        self,
        variant: str,
        *,
        vocab_size: int,
        context: int,
        d_model: int,
        n_heads: int,
        depth: int,
        d_mlp: int | None = None,
    ):
        super().__init__()
        m = _check_config(variant, vocab_size, context, d_model, n_heads, depth, d_mlp)
        self.variant, self.vocab_size, self.context = variant, vocab_size, context
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.position_embedding = nn.Embedding(context, d_model)
        for embedding in (self.token_embedding, self.position_embedding):
            nn.init.normal_(embedding.weight, std=EMBEDDING_STD)
        self.blocks = nn.ModuleList(
            DecoderBlock(build_attention(variant, d_model, n_heads, causal=True), d_mlp=m)
            for _ in range(depth)
        )
        self.final_norm = nn.LayerNorm(d_model)

    def _check_tokens(self, tokens) -> torch.Tensor:
        if not isinstance(tokens, torch.Tensor) or tokens.dtype != torch.long or tokens.ndim != 2:
            raise ValueError(f"tokens: expected a (B, T) tensor of dtype long, got {tokens!r}")
        if not 1 <= tokens.shape[1] <= self.context:
            raise ValueError(f"tokens: expected 1..{self.context} positions, got {tokens.shape[1]}")
        if tokens.numel() and not 0 <= int(tokens.min()) <= int(tokens.max()) < self.vocab_size:
            raise ValueError(f"tokens: expected ids in 0..{self.vocab_size - 1}")
        return tokens

    def embed(self, tokens: torch.Tensor) -> torch.Tensor:
        """The input embeddings E_tok[tokens] + E_pos[0..T-1], (B, T, d)."""
        tokens = self._check_tokens(tokens)
        positions = torch.arange(tokens.shape[1], device=tokens.device)  # (T,)
        return self.token_embedding(tokens) + self.position_embedding(positions)  # (B, T, d)

    def decode(self, h: torch.Tensor) -> torch.Tensor:
        """Blocks, final LayerNorm and the tied head on input embeddings h (B, T, d)."""
        for block in self.blocks:
            h = block(h)  # (B, T, d)
        return self.final_norm(h) @ self.token_embedding.weight.T  # (B, T, V)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.decode(self.embed(tokens))  # (B, T, V)


def build_language_model(
    variant: str,
    *,
    vocab_size: int,
    context: int = 64,
    d_model: int = 64,
    n_heads: int = 4,
    depth: int = 2,
    d_mlp: int | None = None,
    seed: int = 0,
) -> TransformerLanguageModel:
    """A fresh :class:`TransformerLanguageModel` of ``variant``, initialised from ``seed``.

    ``d_mlp`` defaults to 4 ``d_model``.  Linear layers and LayerNorms have PyTorch's default
    initialisation, the embeddings N(0, 0.02²); the global RNG is left untouched.  Bad
    arguments raise ValueError naming the argument.

    >>> a = build_language_model("ablation", vocab_size=5, context=4, d_model=8, seed=3)
    >>> b = build_language_model("ablation", vocab_size=5, context=4, d_model=8, seed=3)
    >>> all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    True
    """
    arguments.integer("seed", seed)
    config = dict(vocab_size=vocab_size, context=context, d_model=d_model, n_heads=n_heads)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return TransformerLanguageModel(variant, **config, depth=depth, d_mlp=d_mlp)


def next_token_loss(model: TransformerLanguageModel, tokens: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy (nats per token) of predicting tokens[:, t+1] from tokens[:, :t+1].

    ``tokens`` (B, T + 1) with T ≤ the model's context; divide by ln 2 for bits.

    >>> model = build_language_model("ungated", vocab_size=7, context=4, d_model=8)
    >>> tokens = torch.randint(7, (3, 5), generator=torch.Generator().manual_seed(0))
    >>> loss = next_token_loss(model, tokens)
    >>> import math
    >>> abs(float(loss) - math.log(7)) < 0.1  # small embeddings: near-uniform predictions
    True
    """
    if not isinstance(tokens, torch.Tensor) or tokens.ndim != 2 or tokens.shape[1] < 2:
        raise ValueError(f"tokens: expected a (B, T + 1) tensor with T >= 1, got {tokens!r}")
    logits = model(tokens[:, :-1])  # (B, T, V)
    return nn.functional.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten())


class ElementaryLayerNorm(nn.Module):
    """LayerNorm over the last dimension by elementary operations: (x − mean) / √(var + ε) ·
    weight + bias, the biased variance, as :class:`torch.nn.LayerNorm` computes it.

    Its second forward-mode derivatives are those of the formula; those of
    :class:`torch.nn.LayerNorm` are not.  In the pinned PyTorch (2.13),
    ``jacfwd(jacfwd(F.layer_norm))`` returns a wrong, non-symmetric Hessian, while
    ``jacrev(jacrev(·))``, :func:`torch.func.hessian`, finite differences and this formula
    agree: the nested forward mode differentiates layer_norm's first-order JVP rule with the
    saved mean and rstd held constant (pytorch/pytorch#196700,
    https://github.com/pytorch/pytorch/issues/196700).  The curvature engine differentiates
    forward twice (:func:`curvlab.geometry.gauss_equation.jets`), so :func:`curvature_copy`
    replaces every LayerNorm by this one.

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
