"""Laws of the decoder-only language model: the forward pass is the documented formula, an open
gate is no gate, the parameter counts are the documented ones, position t never reads a later
token, a seed fixes the model, bad arguments are named, and a tiny model learns."""

import math

import pytest
import torch

from curvlab.models.attention import GatedSelfAttention, parameter_count
from curvlab.models.language_model import (
    LANGUAGE_MODEL_VARIANTS,
    build_language_model,
    language_model_parameter_count,
    next_token_loss,
)

TINY = dict(vocab_size=11, context=7, d_model=8, n_heads=2, depth=2, d_mlp=12)


def _tokens(batch, length, vocab, seed=0):
    return torch.randint(vocab, (batch, length), generator=torch.Generator().manual_seed(seed))


def _layer_norm(x, norm):
    mean = x.mean(-1, keepdim=True)
    variance = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(variance + norm.eps) * norm.weight + norm.bias


def _by_hand(model, tokens):
    """The model's forward pass written out head by head with explicit torch operations."""
    T = tokens.shape[1]
    h = model.token_embedding.weight[tokens] + model.position_embedding.weight[:T]  # (B, T, d)
    mask = torch.full((T, T), -math.inf, dtype=h.dtype).triu(1)  # −∞ where key s > query t
    for block in model.blocks:
        attention = block.attention
        d, nh, hs = attention.d_model, attention.n_heads, attention.head_size
        x = _layer_norm(h, block.attention_block.norm)  # X: what Q, K, V and the gate read
        qkv = x @ attention.query_key_value.weight.T + attention.query_key_value.bias
        heads = []
        for j in range(nh):
            cols = slice(j * hs, (j + 1) * hs)
            q, k, v = qkv[..., :d][..., cols], qkv[..., d : 2 * d][..., cols], qkv[..., 2 * d :]
            v = v[..., cols]
            weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(hs) + mask, dim=-1)
            y = weights @ v  # (B, T, hs)
            if model.variant != "ungated":  # the gate's (or the additive shift's) W_θ, b_θ
                theta = attention.gate if hasattr(attention, "gate") else attention.shift
                W, b = theta.weight, theta.bias
            if model.variant == "gated_elementwise":
                y = y * (1 / (1 + torch.exp(-(x @ W[cols].T + b[cols]))))
            elif model.variant == "gated_headwise":
                y = y * (1 / (1 + torch.exp(-(x @ W[j] + b[j])))).unsqueeze(-1)
            elif model.variant == "ablation":
                y = y + torch.tanh(x @ W[cols].T + b[cols])
            heads.append(y)
        y = torch.cat(heads, dim=-1)  # (B, T, d), head j in channels j·hs..(j+1)·hs − 1
        h = h + y @ attention.output.weight.T + attention.output.bias
        first, second = block.mlp[0], block.mlp[2]
        u = _layer_norm(h, block.norm_mlp) @ first.weight.T + first.bias
        u = 0.5 * u * (1 + torch.erf(u / math.sqrt(2)))  # GELU
        h = h + u @ second.weight.T + second.bias
    return _layer_norm(h, model.final_norm) @ model.token_embedding.weight.T  # (B, T, V)


@pytest.mark.parametrize("variant", LANGUAGE_MODEL_VARIANTS)
def test_forward_pass_is_the_documented_formula(variant):
    model = build_language_model(variant, **TINY, seed=1).double()
    with torch.no_grad():  # a gate and a shift far from their initial values
        for block in model.blocks:
            for name in ("gate", "shift"):
                if hasattr(block.attention, name):
                    getattr(block.attention, name).bias.normal_(
                        generator=torch.Generator().manual_seed(0)
                    )
    tokens = _tokens(3, TINY["context"], TINY["vocab_size"])
    with torch.no_grad():
        expected, got = _by_hand(model, tokens), model(tokens)
    assert got.shape == (3, TINY["context"], TINY["vocab_size"])
    assert torch.allclose(got, expected, atol=1e-12, rtol=0)


@pytest.mark.parametrize("variant", ["gated_headwise", "gated_elementwise"])
def test_gate_fixed_at_one_reproduces_the_ungated_model_exactly(variant):
    ungated = build_language_model("ungated", **TINY, seed=2)
    gated = build_language_model(variant, **TINY, seed=3)
    missing, unexpected = gated.load_state_dict(ungated.state_dict(), strict=False)
    assert not unexpected and all(".gate." in key for key in missing) and missing
    tokens = _tokens(4, TINY["context"], TINY["vocab_size"])
    with torch.no_grad():
        assert not torch.allclose(gated(tokens), ungated(tokens))  # the gate at init matters
        gate_scores = []
        for block in gated.blocks:
            block.attention.gate.weight.zero_()
            block.attention.gate.bias.fill_(1e4)  # exp(−1e4) underflows to 0: σ = 1 exactly
            block.attention.gate.register_forward_hook(lambda m, i, o: gate_scores.append(o))
        out_gated, out_ungated = gated(tokens), ungated(tokens)
    assert len(gate_scores) == TINY["depth"]
    assert all(torch.equal(torch.sigmoid(s), torch.ones_like(s)) for s in gate_scores)
    assert torch.equal(out_gated, out_ungated)


@pytest.mark.parametrize(
    "config",
    [TINY, dict(vocab_size=97, context=64, d_model=64, n_heads=4, depth=3, d_mlp=None)],
)
def test_parameter_counts_are_the_documented_formula(config):
    V, C, d, nh, L = (config[k] for k in ("vocab_size", "context", "d_model", "n_heads", "depth"))
    m = 4 * d if config["d_mlp"] is None else config["d_mlp"]
    gates = {"ungated": 0, "gated_headwise": nh * (d + 1)}
    gates |= {"gated_elementwise": d * (d + 1), "ablation": d * (d + 1)}
    counts = {}
    for variant in LANGUAGE_MODEL_VARIANTS:
        # tied head: no parameters of its own; QKV + W_O, MLP, two LayerNorms, gate; final LN
        formula = (V + C) * d + L * (4 * d * (d + 1) + 2 * d * m + m + d + 4 * d + gates[variant])
        formula += 2 * d
        counts[variant] = parameter_count(build_language_model(variant, **config))
        assert counts[variant] == formula
        assert language_model_parameter_count(variant, **config) == formula
    assert counts["ablation"] == counts["gated_elementwise"]
    assert counts["ungated"] < counts["gated_headwise"] < counts["gated_elementwise"]


@pytest.mark.parametrize("variant", LANGUAGE_MODEL_VARIANTS)
def test_a_later_token_never_changes_an_earlier_output(variant):
    model = build_language_model(variant, **TINY, seed=4)
    tokens = _tokens(3, TINY["context"], TINY["vocab_size"])
    with torch.no_grad():
        before = model(tokens)
        for t in range(TINY["context"]):
            changed = tokens.clone()
            changed[:, t] = (changed[:, t] + 1) % TINY["vocab_size"]
            after = model(changed)
            assert torch.equal(after[:, :t], before[:, :t])
            assert not torch.allclose(after[:, t], before[:, t])  # position t does read it


def test_a_seed_fixes_the_model_and_leaves_the_global_rng_alone():
    state = torch.random.get_rng_state()
    a, b = (build_language_model("gated_elementwise", **TINY, seed=5) for _ in range(2))
    c = build_language_model("gated_elementwise", **TINY, seed=6)
    assert torch.equal(torch.random.get_rng_state(), state)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))
    assert not all(torch.equal(p, q) for p, q in zip(a.parameters(), c.parameters(), strict=True))
    tokens = _tokens(2, 5, TINY["vocab_size"])
    with torch.no_grad():
        assert torch.equal(a(tokens), b(tokens))


def test_attention_is_the_parts_one_and_two_layer_made_causal():
    model = build_language_model("gated_headwise", **TINY)
    for block in model.blocks:
        assert type(block.attention) is GatedSelfAttention and block.attention.causal
        assert block.attention.gate_kind == "headwise"


@pytest.mark.parametrize(
    ("change", "argument"),
    [
        (dict(vocab_size=1), "vocab_size"),
        (dict(vocab_size=2.5), "vocab_size"),
        (dict(context=0), "context"),
        (dict(d_model=10, n_heads=4), "n_heads"),
        (dict(d_model=0), "d_model"),
        (dict(depth=0), "depth"),
        (dict(d_mlp=0), "d_mlp"),
        (dict(variant="gated"), "variant"),
        (dict(variant="ungated_wide"), "variant"),
        (dict(seed=True), "seed"),
    ],
)
def test_bad_arguments_are_named(change, argument):
    config = dict(TINY, variant="ungated") | change
    variant = config.pop("variant")
    with pytest.raises(ValueError, match=argument):
        build_language_model(variant, **config)
    if "seed" not in change:
        with pytest.raises(ValueError, match=argument):
            language_model_parameter_count(variant, **config)


@pytest.mark.parametrize(
    "tokens",
    [
        torch.zeros(2, TINY["context"] + 1, dtype=torch.long),  # longer than the context
        torch.full((2, 3), TINY["vocab_size"]),  # an id outside the vocabulary
        torch.full((2, 3), -1),
        torch.zeros(2, 3),  # not integer ids
        torch.zeros(3, dtype=torch.long),  # not (B, T)
    ],
)
def test_bad_tokens_are_named(tokens):
    model = build_language_model("ungated", **TINY)
    with pytest.raises(ValueError, match="tokens"):
        model(tokens)


@pytest.mark.parametrize("variant", LANGUAGE_MODEL_VARIANTS)
def test_a_tiny_model_learns_random_tokens(variant):
    model = build_language_model(variant, **TINY, seed=7)
    tokens = _tokens(8, TINY["context"] + 1, TINY["vocab_size"], seed=8)
    optimiser = torch.optim.Adam(model.parameters(), lr=3e-2)
    losses = []
    for _ in range(15):
        loss = next_token_loss(model, tokens)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses.append(loss.item())
    assert abs(losses[0] - math.log(TINY["vocab_size"])) < 0.1  # near-uniform at init
    assert losses[-1] < 0.9 * losses[0]
