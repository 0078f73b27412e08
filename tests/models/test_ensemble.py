"""The ensemble measures the nn.Module itself; the einsum pass only trains, in parity."""

from __future__ import annotations

import copy

import pytest
import torch

from curvlab.data.realdata import load_tokens
from curvlab.data.tasks import make_task
from curvlab.geometry.gauss_equation import jets
from curvlab.models.attention import VARIANTS, build_classifier, representation_map
from curvlab.models.ensemble import (
    BACKENDS,
    ensemble_jets,
    ensemble_logits,
    ensemble_representation,
    evaluate_ensemble,
    stack,
    train_ensemble,
)

SMALL = {"d_model": 4, "n_heads": 1, "n_tokens": 2}
SHAPES = [
    *[(v, SMALL) for v in VARIANTS],
    ("gated_headwise", {"d_model": 8, "n_heads": 2, "n_tokens": 3, "depth": 2, "norm": True}),
    ("ablation", {**SMALL, "depth": 2, "residual": False, "pooling": "cls"}),
]


def _members(variant, widths, seeds=(0, 1)):
    models = [build_classifier(variant, seed=s, **widths).double() for s in seeds]
    tasks = [make_task("moons", n_train=32, n_test=8, seed=s) for s in seeds]
    points = torch.stack([t.train_points for t in tasks]).double()
    labels = torch.stack([t.train_labels for t in tasks]).double()
    return models, points, labels


def test_the_module_is_the_default_forward_pass():
    assert BACKENDS[0] == "vmap"
    models, points, _ = _members("gated_elementwise", SMALL)
    with torch.no_grad():
        expected = torch.stack([m(x) for m, x in zip(models, points, strict=True)])
        pooled = torch.stack([m.representation(x) for m, x in zip(models, points, strict=True)])
        ens = stack(models)
        # the same module: equal up to the order of the batched sums
        assert torch.allclose(ensemble_logits(ens, points), expected, rtol=0, atol=1e-14)
        assert torch.allclose(ensemble_representation(ens, points), pooled, rtol=0, atol=1e-14)


@pytest.mark.parametrize(("variant", "widths"), SHAPES)
def test_einsum_training_equals_the_module_in_float64(variant, widths):
    models, points, labels = _members(variant, widths)
    settings = {"epochs": 10, "learning_rate": 0.05, "schedule": "cosine", "snapshots": [5]}
    by_module, by_einsum = stack(copy.deepcopy(models)), stack(copy.deepcopy(models))
    expected = train_ensemble(by_module, points, labels, backend="vmap", **settings)
    fitted = train_ensemble(by_einsum, points, labels, backend="einsum", **settings)
    assert torch.allclose(fitted["loss_curve"], expected["loss_curve"], rtol=0, atol=1e-12)
    for name, parameter in by_module.params.items():
        assert torch.allclose(by_einsum.params[name], parameter, rtol=0, atol=1e-10)
    assert torch.allclose(fitted["train_loss"], expected["train_loss"], rtol=0, atol=1e-12)
    moved = sum((by_module.params[n][0] - p).abs().sum() for n, p in models[0].named_parameters())
    assert moved > 1e-3  # trained weights are compared, not the initial ones


@pytest.mark.parametrize(("variant", "widths"), SHAPES[2:4])
def test_jets_are_the_engines_jets_of_each_member_module(variant, widths):
    models, points, _ = _members(variant, widths)
    J, H = ensemble_jets(stack(models), points[:, :9])
    assert J.shape == (2, 9, widths["d_model"], 2) and H.shape == (2, 9, widths["d_model"], 2, 2)
    for e, model in enumerate(models):
        J_e, H_e = jets(representation_map(model), points[e, :9])
        assert torch.allclose(J[e], J_e, rtol=0, atol=1e-14)
        assert torch.allclose(H[e], H_e, rtol=0, atol=1e-14)


@pytest.mark.parametrize("chunk", [1, 7, 32, None])
def test_jets_do_not_depend_on_the_chunk_of_points(chunk):
    models, points, _ = _members("gated_elementwise", SMALL)
    ens = stack(models)
    J, H = ensemble_jets(ens, points, chunk=None)
    J_c, H_c = ensemble_jets(ens, points, chunk=chunk)
    # equal up to the order of batched sums (round-off), whatever the chunk
    assert torch.allclose(J_c, J, rtol=1e-13, atol=1e-15)
    assert torch.allclose(H_c, H, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("chunk", [0, -3, 2.5, True])
def test_a_bad_chunk_is_refused_by_name(chunk):
    models, points, _ = _members("ungated", SMALL)
    with pytest.raises(ValueError, match="chunk"):
        ensemble_jets(stack(models), points, chunk=chunk)


def test_structured_models_are_measured_by_the_module_and_refused_by_einsum():
    widths = {"d_model": 6, "n_heads": 1, "n_tokens": 2, "depth": 2, "structured": True}
    models, points, labels = _members("gated_headwise", widths)
    ens = stack(models)
    J, _ = ensemble_jets(ens, points[:, :4])
    expected, _ = jets(representation_map(models[1]), points[1, :4])
    assert torch.allclose(J[1], expected, rtol=0, atol=1e-14)
    assert evaluate_ensemble(ens, points, labels)["accuracy"].shape == (2,)
    with pytest.raises(ValueError, match="backend"):
        ensemble_logits(ens, points, backend="einsum")
    with pytest.raises(ValueError, match="backend"):
        train_ensemble(ens, points, labels, epochs=2, learning_rate=0.1, backend="loop")


def _digit_members(variant, seeds=(0, 1), n=48):
    """Members of ``variant`` reading digit rows (8 tokens of 8), each on its own split."""
    tasks = [load_tokens("digits", seed=s) for s in seeds]
    models = [
        build_classifier(variant, n_tokens=8, token_width=8, seed=s, **SMALL_SEQUENCE).double()
        for s in seeds
    ]
    tokens = torch.stack([t.train_tokens[:n] for t in tasks])  # (E, n, 8, 8)
    labels = torch.stack([t.train_labels[:n] for t in tasks]).double()  # (E, n)
    return models, tokens, labels


SMALL_SEQUENCE = {"d_model": 4, "n_heads": 1}


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_variant_trains_on_digit_tokens_as_an_ensemble(variant):
    models, tokens, labels = _digit_members(variant)
    ens = stack(models)
    with torch.no_grad():
        expected = torch.stack([m(x) for m, x in zip(models, tokens, strict=True)])
        assert torch.allclose(ensemble_logits(ens, tokens), expected, rtol=0, atol=1e-14)
    record = train_ensemble(ens, tokens, labels, epochs=20, learning_rate=0.05)
    curve = record["loss_curve"]  # (E, epochs)
    assert (record["train_loss"] < 0.95 * curve[:, 0]).all()  # every member's loss fell by 5%
    assert evaluate_ensemble(ens, tokens, labels)["accuracy"].shape == (2,)


def test_einsum_training_on_token_sequences_equals_the_module_in_float64():
    models, tokens, labels = _digit_members("gated_headwise", n=32)
    by_module, by_einsum = stack(copy.deepcopy(models)), stack(copy.deepcopy(models))
    expected = train_ensemble(by_module, tokens, labels, epochs=6, learning_rate=0.05)
    fitted = train_ensemble(
        by_einsum, tokens, labels, epochs=6, learning_rate=0.05, backend="einsum"
    )
    assert torch.allclose(fitted["loss_curve"], expected["loss_curve"], rtol=0, atol=1e-12)
    for name, parameter in by_module.params.items():
        assert torch.allclose(by_einsum.params[name], parameter, rtol=0, atol=1e-10)


def test_data_of_the_wrong_input_shape_are_refused_by_name():
    models, tokens, labels = _digit_members("ungated", n=8)
    with pytest.raises(ValueError, match=r"points: expected a tensor \(E, n, 8, 8\)"):
        train_ensemble(stack(models), tokens[..., :4], labels, epochs=2, learning_rate=0.1)
    point_models, points, point_labels = _members("ungated", SMALL)
    with pytest.raises(ValueError, match=r"points: expected a tensor \(E, n, 2\)"):
        evaluate_ensemble(stack(point_models), tokens, point_labels[:, :8])
