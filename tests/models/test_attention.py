"""Laws of the attention layers and classifiers: shapes, the gate's position, parameter
matching, the structured regime's coherent increments, and the representation map."""

import pytest
import torch
from torch.func import jacfwd, vmap

from curvlab.geometry.curvature import gaussian_curvature
from curvlab.models.attention import (
    VARIANTS,
    AdditiveSelfAttention,
    AttentionBlock,
    GatedSelfAttention,
    ReadWriteBlock,
    SoftmaxSelfAttention,
    build_attention,
    build_classifier,
    parameter_count,
    representation_map,
)


def _copy_weights(source, target):
    target.query_key_value.load_state_dict(source.query_key_value.state_dict())
    target.output.load_state_dict(source.output.state_dict())


def test_ungated_output_is_a_convex_combination_of_values():
    torch.manual_seed(0)
    attention = SoftmaxSelfAttention(6, 2).double()
    x = torch.randn(3, 5, 6, dtype=torch.float64)
    q, k, v = attention.query_key_value(x).split(6, dim=-1)
    head = slice(0, 3)
    weights = torch.softmax(q[..., head] @ k[..., head].mT / 3**0.5, dim=-1)
    y = weights @ v[..., head]  # (B, T, hs) of head 0
    assert torch.allclose(weights.sum(-1), torch.ones(3, 5, dtype=torch.float64))
    captured = {}
    attention.modulate = lambda y_, x_: captured.setdefault("y", y_)
    attention(x)
    assert torch.allclose(captured["y"][:, 0], y, atol=1e-12)


@pytest.mark.parametrize("gate", ["headwise", "elementwise"])
def test_gate_multiplies_the_attention_output_before_the_output_projection(gate):
    torch.manual_seed(1)
    gated = GatedSelfAttention(4, 2, gate=gate).double()
    ungated = SoftmaxSelfAttention(4, 2).double()
    _copy_weights(gated, ungated)
    x = torch.randn(2, 3, 4, dtype=torch.float64)
    sigma = torch.sigmoid(gated.gate(x))  # (B, T, nh) or (B, T, d)
    if gate == "headwise":
        sigma = sigma.repeat_interleave(2, dim=-1)  # each head's scalar over its 2 channels
    captured = {}
    original = ungated.modulate
    ungated.modulate = lambda y_, x_: captured.setdefault("y", original(y_, x_))
    ungated(x)
    y = captured["y"].transpose(1, 2).reshape(2, 3, 4)  # (B, T, d) before W_O
    assert torch.allclose(gated(x), ungated.output(y * sigma), atol=1e-12)


def test_gate_fully_open_recovers_ungated_attention():
    torch.manual_seed(2)
    gated = GatedSelfAttention(4, 2, gate="elementwise").double()
    ungated = SoftmaxSelfAttention(4, 2).double()
    _copy_weights(gated, ungated)
    with torch.no_grad():
        gated.gate.weight.zero_()
        gated.gate.bias.fill_(50.0)  # σ(50) = 1 to double precision
    x = torch.randn(2, 3, 4, dtype=torch.float64)
    assert torch.allclose(gated(x), ungated(x), atol=1e-15)


def test_additive_identity_control_is_linear_in_the_extra_map():
    torch.manual_seed(3)
    control = AdditiveSelfAttention(4, 2, nonlinearity="identity").double()
    ungated = SoftmaxSelfAttention(4, 2).double()
    _copy_weights(control, ungated)
    x = torch.randn(2, 3, 4, dtype=torch.float64)
    expected = ungated(x) + control.shift(x) @ control.output.weight.T
    assert torch.allclose(control(x), expected, atol=1e-12)


@pytest.mark.parametrize("variant", VARIANTS)
def test_causal_attention_reads_only_the_prefix(variant):
    torch.manual_seed(4)
    causal = build_attention(variant, 4, 2, causal=True).double()
    plain = build_attention(variant, 4, 2).double()
    plain.load_state_dict(causal.state_dict())
    x = torch.randn(2, 5, 4, dtype=torch.float64)
    out = causal(x)
    for t in range(5):  # output t is the unmasked layer's last output on tokens 0..t
        assert torch.allclose(out[:, t], plain(x[:, : t + 1])[:, t], atol=1e-12)
    assert not torch.allclose(out, plain(x))  # the mask matters on the whole sequence


def test_gate_ablation_and_matched_control_have_equal_parameter_counts():
    counts = {v: parameter_count(build_classifier(v, d_model=8, n_heads=2)) for v in VARIANTS}
    assert counts["gated_elementwise"] == counts["ablation"]
    # the width-matched ungated model is within one inner width of the gated count
    assert abs(counts["ungated_wide"] - counts["gated_elementwise"]) < counts["ungated"] // 4
    assert counts["ungated"] < counts["gated_headwise"] < counts["gated_elementwise"]
    d, heads = 8, 2
    assert counts["gated_headwise"] - counts["ungated"] == d * heads + heads
    assert counts["gated_elementwise"] - counts["ungated"] == d * d + d


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("structured", [False, True])
def test_classifier_shapes(variant, structured):
    model = build_classifier(variant, depth=3, d_model=6, n_heads=2, structured=structured)
    points = torch.randn(7, 2)
    assert model(points).shape == (7,)
    for layer in range(4):
        assert model.representation(points, layer).shape == (7, 6)


def test_blocks_with_and_without_residual_and_norm():
    attention = SoftmaxSelfAttention(4, 2)
    h = torch.randn(2, 3, 4)
    plain = AttentionBlock(attention, residual=False, norm=False)
    residual = AttentionBlock(attention, residual=True, norm=False)
    assert torch.allclose(residual(h), h + plain(h))
    normed = AttentionBlock(attention, residual=False, norm=True)
    assert torch.allclose(normed(h), attention(torch.nn.functional.layer_norm(h, (4,))), atol=1e-6)


@pytest.mark.parametrize("variant", ["ungated", "gated_headwise", "gated_elementwise"])
def test_structured_stack_adds_the_same_increment_at_every_layer(variant):
    model = build_classifier(variant, depth=4, d_model=6, structured=True, write_dim=2, seed=5)
    model = model.double()
    points = torch.randn(9, 2, dtype=torch.float64)
    h0 = model.representation(points, 0)
    increment = model.representation(points, 1) - h0
    assert torch.equal(increment[:, :4], torch.zeros(9, 4, dtype=torch.float64))
    for layer in range(2, 5):
        assert torch.allclose(model.representation(points, layer), h0 + layer * increment)


def test_structured_stack_is_weight_tied():
    one = build_classifier("gated_headwise", depth=1, structured=True)
    four = build_classifier("gated_headwise", depth=4, structured=True)
    assert parameter_count(one) == parameter_count(four)
    assert four.blocks[0] is four.blocks[3]
    untied = build_classifier("gated_headwise", depth=4)
    assert parameter_count(untied) > parameter_count(build_classifier("gated_headwise", depth=1))


def test_read_write_block_never_changes_the_read_coordinates():
    block = ReadWriteBlock(GatedSelfAttention(4, 2, d_in=3, d_out=3))
    h = torch.randn(2, 5, 6)
    assert torch.equal(block(h)[..., :3], h[..., :3])


def test_same_seed_same_weights_different_seed_different_weights():
    a, b = build_classifier("ablation", seed=3), build_classifier("ablation", seed=3)
    c = build_classifier("ablation", seed=4)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))
    assert not all(torch.equal(p, q) for p, q in zip(a.parameters(), c.parameters(), strict=True))
    state = torch.random.get_rng_state()
    build_classifier("ungated", seed=9)
    assert torch.equal(state, torch.random.get_rng_state())


def test_representation_map_matches_the_model_and_works_under_vmap():
    model = build_classifier("gated_elementwise", depth=2, seed=0)
    f = representation_map(model, layer=1)
    points = torch.randn(5, 2, dtype=torch.float64)
    expected = model.double().representation(points, 1)
    assert torch.allclose(vmap(f)(points), expected, atol=1e-12)
    assert vmap(jacfwd(f))(points).shape == (5, 8, 2)
    curvature = gaussian_curvature(f, points)
    assert curvature.shape == (5,) and torch.isfinite(curvature).all()


def test_representation_map_is_frozen_against_later_training():
    model = build_classifier("ungated", seed=0)
    f = representation_map(model)
    x = torch.tensor([0.2, 0.1], dtype=torch.float64)
    before = f(x)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(1.0)
    assert torch.equal(f(x), before)


def test_layer_zero_is_the_flat_affine_token_sheet():
    f = representation_map(build_classifier("ungated", seed=0), layer=0)
    curvature = gaussian_curvature(f, torch.randn(6, 2, dtype=torch.float64))
    assert curvature.abs().max() < 1e-12


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("structured", [False, True])
def test_classifier_reads_token_sequences_of_a_given_width(variant, structured):
    model = build_classifier(
        variant, depth=2, d_model=6, n_tokens=5, token_width=3, structured=structured, seed=1
    )
    sequences = torch.randn(7, 5, 3)
    assert model(sequences).shape == (7,)
    assert model.representation(sequences, 1).shape == (7, 6)
    points = build_classifier(
        variant, depth=2, d_model=6, n_tokens=5, structured=structured, seed=1
    )
    # the same attention weights whatever the tokeniser reads (it draws from its own generator)
    blocks = dict(model.blocks.named_parameters())
    assert all(torch.equal(blocks[n], p) for n, p in points.blocks.named_parameters())


def test_bad_configuration_names_the_argument():
    with pytest.raises(ValueError, match="variant"):
        build_classifier("gated_sideways")
    with pytest.raises(ValueError, match="n_heads"):
        SoftmaxSelfAttention(6, 4)
    with pytest.raises(ValueError, match="gate"):
        GatedSelfAttention(4, 2, gate="tokenwise")
    with pytest.raises(ValueError, match="causal"):
        GatedSelfAttention(4, 2, causal="yes")
    with pytest.raises(ValueError, match="variant"):
        build_attention("gated_sideways", 4, 2)
    with pytest.raises(ValueError, match="nonlinearity"):
        AdditiveSelfAttention(4, 2, nonlinearity="relu")
    with pytest.raises(ValueError, match="write_dim"):
        build_classifier("ungated", d_model=4, structured=True, write_dim=3)
    with pytest.raises(ValueError, match="layer"):
        build_classifier("ungated", depth=2).representation(torch.zeros(1, 2), 3)
    with pytest.raises(ValueError, match="pooling"):
        build_classifier("ungated", pooling="max")
    with pytest.raises(ValueError, match="token_width"):
        build_classifier("ungated", token_width=0)
    with pytest.raises(TypeError, match="model"):
        representation_map(torch.nn.Linear(2, 2))
