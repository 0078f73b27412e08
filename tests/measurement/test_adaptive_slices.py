"""The adaptive rule on a triangle of inputs: the collapsed map takes the square onto the
triangle with Jacobian determinant 1 − s, its jets are the chain rule's through the slice's,
and the rule's integrals agree with the centroid rule on a fine subdivision of the triangle."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.func import jacfwd

from curvlab.data.realdata import load_tokens
from curvlab.measurement.adaptive_slices import (
    adaptive_slice_curvature,
    collapsed_map,
    collapsed_slice_jets,
)
from curvlab.measurement.slices import draw_triangles, slice_curvature, slice_jets
from curvlab.models.attention import build_classifier
from curvlab.models.ensemble import stack

unit = st.floats(0, 1, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(unit, unit)
def test_the_collapsed_map_takes_the_square_into_the_triangle_with_determinant_1_minus_s(s, t):
    point = torch.tensor([s, t], dtype=torch.float64)
    u = collapsed_map(point)
    assert float(u.min()) >= 0 and float(u.sum()) <= 1 + 1e-15
    assert float(torch.linalg.det(jacfwd(collapsed_map)(point))) == pytest.approx(1 - s, abs=1e-15)


def _ensemble_and_corners(seeds=(0, 1), triangles=2):
    task = load_tokens("wine", seed=0)
    models = [
        build_classifier("gated_elementwise", d_model=10, n_tokens=7, token_width=2, seed=s)
        for s in seeds
    ]
    ens = stack(models).to(dtype=torch.float64)
    drawn = [draw_triangles(task.train_labels.numpy(), triangles, [3, s]) for s in seeds]
    corners = torch.stack(
        [torch.stack([task.train_tokens[list(t)] for t in per]) for per in drawn]
    )  # (E, M, 3, 7, 2)
    return ens, corners


def test_collapsed_jets_are_the_chain_rule_through_the_slice():
    ens, corners = _ensemble_and_corners()
    points = torch.rand(2, 2, 5, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    J, H = collapsed_slice_jets(ens, corners, points)
    for e in range(2):
        for m in range(2):
            u = collapsed_map(points[e, m])
            Ju, Hu = slice_jets(ens.select([e]), corners[e : e + 1, m : m + 1], u)
            Ju, Hu = Ju[0, 0], Hu[0, 0]  # (N, d, 2), (N, d, 2, 2)
            s, t = points[e, m, :, 0], points[e, m, :, 1]
            D = torch.zeros(5, 2, 2, dtype=torch.float64)  # ∂u/∂(s, t)
            D[:, 0, 0], D[:, 1, 0], D[:, 1, 1] = 1, -t, 1 - s
            expected_J = Ju @ D
            # ∂²u₂/∂s∂t = −1 is the map's only second derivative
            expected_H = D.transpose(1, 2)[:, None] @ Hu @ D[:, None]
            expected_H[:, :, 0, 1] -= Ju[:, :, 1]
            expected_H[:, :, 1, 0] -= Ju[:, :, 1]
            assert torch.allclose(J[e, m], expected_J, atol=1e-12)
            assert torch.allclose(H[e, m], expected_H, atol=1e-10)


def test_the_adaptive_integrals_agree_with_a_fine_centroid_rule_on_the_triangle():
    ens, corners = _ensemble_and_corners()
    out = adaptive_slice_curvature(ens, corners, resolution=4, tolerance=0.01)
    fine = slice_curvature(ens, corners, 48)
    assert out["converged"].all()
    assert torch.allclose(out["sheet_area"], fine["sheet_area"], rtol=1e-3)
    assert torch.allclose(out["curvature_total_abs"], fine["curvature_total_abs"], rtol=0.02)
    assert torch.allclose(out["curvature_total"], fine["curvature_total"], rtol=0.05, atol=1e-3)
    assert out["curvature_total_abs"].shape == (2, 2)


def test_a_member_is_integrated_as_if_alone():
    ens, corners = _ensemble_and_corners()
    both = adaptive_slice_curvature(ens, corners, resolution=4, tolerance=0.03)
    alone = adaptive_slice_curvature(ens.select([1]), corners[1:], resolution=4, tolerance=0.03)
    assert torch.allclose(both["curvature_total_abs"][1], alone["curvature_total_abs"][0])
    assert torch.equal(both["evaluations"][1], alone["evaluations"][0])


def test_bad_arguments_are_refused_by_name():
    ens, corners = _ensemble_and_corners()
    with pytest.raises(ValueError, match="corners"):
        adaptive_slice_curvature(ens, corners[:, :, :2], resolution=4, tolerance=0.03)
    with pytest.raises(ValueError, match="resolution"):
        adaptive_slice_curvature(ens, corners, resolution=0, tolerance=0.03)
    with pytest.raises(ValueError, match="tolerance"):
        adaptive_slice_curvature(ens, corners, resolution=4, tolerance=0)
    with pytest.raises(ValueError, match="points"):
        collapsed_slice_jets(ens, corners, torch.zeros(2, 2, 3))
