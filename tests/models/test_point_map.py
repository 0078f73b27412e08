"""The gated attention point map y = W_o (g(x) ⊙ Σ_i softmax(β K W_q x)_i V_i)."""

from __future__ import annotations

import functools
import re

import pytest
import torch

from curvlab.geometry.curvature import gaussian_curvature
from curvlab.models.attention import gated_attention_point_map


def parameters(seed=0, k=2, m=3, n=4, e=6, d=5):
    generator = torch.Generator().manual_seed(seed)

    def draw(*shape):
        return torch.randn(*shape, generator=generator, dtype=torch.float64)

    return {
        "keys": draw(n, m),
        "values": draw(n, e),
        "query_weight": draw(m, k),
        "output_weight": draw(d, e),
        "x": draw(k),
    }


def test_elementwise_gate_is_the_formula_written_out():
    p = parameters()
    w_gate, b_gate = torch.randn(6, 2, dtype=torch.float64), torch.randn(6, dtype=torch.float64)
    y = gated_attention_point_map(
        p["x"],
        p["keys"],
        p["values"],
        query_weight=p["query_weight"],
        gate="elementwise",
        gate_weight=w_gate,
        gate_bias=b_gate,
        output_weight=p["output_weight"],
        beta=0.7,
    )
    weights = torch.softmax(0.7 * p["keys"] @ (p["query_weight"] @ p["x"]), dim=-1)
    expected = p["output_weight"] @ (
        torch.sigmoid(w_gate @ p["x"] + b_gate) * (weights @ p["values"])
    )
    torch.testing.assert_close(y, expected, rtol=1e-14, atol=1e-14)


def test_headwise_gate_scales_each_head_by_one_sigmoid():
    p = parameters()
    w_gate = torch.tensor([[1.0, -2.0], [0.5, 3.0]], dtype=torch.float64)  # two heads of 3
    common = dict(keys=p["keys"], values=p["values"], query_weight=p["query_weight"])
    ungated = gated_attention_point_map(p["x"], gate="none", **common)
    gated = gated_attention_point_map(p["x"], gate="headwise", gate_weight=w_gate, **common)
    sigma = torch.sigmoid(w_gate @ p["x"])
    torch.testing.assert_close(gated[:3], sigma[0] * ungated[:3])
    torch.testing.assert_close(gated[3:], sigma[1] * ungated[3:])


def test_ungated_read_out_of_three_values_is_flat_and_the_gate_bends_it():
    keys = torch.tensor([[1.0, 0.0], [-0.5, 0.8], [-0.5, -0.8]], dtype=torch.float64)
    values = torch.tensor(
        [[1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [-1.0, -1.0, 1.0]], dtype=torch.float64
    )
    u = torch.rand(20, 2, generator=torch.Generator().manual_seed(1), dtype=torch.float64) - 0.5
    flat = functools.partial(gated_attention_point_map, keys=keys, values=values, gate="none")
    assert gaussian_curvature(flat, u).abs().max() < 1e-10
    bent = functools.partial(
        gated_attention_point_map,
        keys=keys,
        values=values,
        gate="headwise",
        gate_weight=torch.tensor([2.0, 0.0], dtype=torch.float64),
    )
    assert gaussian_curvature(bent, u).abs().min() > 1e-4


DROP = object()  # a BAD_PARAMETERS change that leaves the argument out

# (name the error must start with, changes to a valid ungated call, from parameters())
BAD_PARAMETERS = [
    ("x", lambda p: {"x": p["x"].reshape(1, 2)}),
    ("keys", lambda p: {"query_weight": DROP}),
    ("keys, values", lambda p: {"values": p["values"][:3]}),
    ("query_weight", lambda p: {"query_weight": p["query_weight"].T}),
    ("gate", lambda p: {"gate": "sideways"}),
    ("gate_weight", lambda p: {"gate": DROP}),
    ("gate_weight", lambda p: {"gate_weight": torch.ones(2)}),
    ("gate_weight", lambda p: {"gate": "headwise", "gate_weight": torch.ones(4, 2)}),
    (
        "gate_bias",
        lambda p: {
            "gate": "elementwise",
            "gate_weight": torch.ones(6, 2),
            "gate_bias": torch.ones(5),
        },
    ),
    ("output_weight", lambda p: {"output_weight": torch.ones(5, 4)}),
]


@pytest.mark.parametrize(("name", "changes"), BAD_PARAMETERS)
def test_bad_parameters_are_refused_naming_the_argument(name, changes):
    p = parameters()
    kwargs = {key: p[key] for key in ("x", "keys", "values", "query_weight")} | {"gate": "none"}
    kwargs |= changes(p)
    kwargs = {key: value for key, value in kwargs.items() if value is not DROP}
    with pytest.raises(ValueError, match="^" + re.escape(name) + ":"):
        gated_attention_point_map(**kwargs)
