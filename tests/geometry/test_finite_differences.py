"""The finite-difference proxies: they converge to the autodiff curvature, at the expected rate."""

from __future__ import annotations

import math

import pytest
import torch

from curvlab.geometry.curvature import gaussian_curvature, scalar_curvature
from curvlab.geometry.finite_differences import (
    finite_difference_gaussian_curvature,
    finite_difference_jet,
    finite_difference_scalar_curvature,
    second_difference_ratio,
)


def sphere(x):
    return 2 * torch.stack(
        [torch.sin(x[0]) * torch.cos(x[1]), torch.sin(x[0]) * torch.sin(x[1]), torch.cos(x[0])]
    )


def tanh_map(x):
    w = torch.tensor([[1.0, -0.5], [0.3, 0.8], [-0.7, 0.2], [0.4, 0.4]], dtype=x.dtype)
    return torch.cat([x, torch.tanh(w @ x + 0.1)])


def points(n=40, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return 0.4 + 2.2 * torch.rand(n, 2, generator=generator, dtype=torch.float64)


def median_relative_error(estimate, reference):
    return float(((estimate - reference).abs() / reference.abs()).median())


def test_finite_difference_jet_matches_autodiff_derivatives():
    u = points(10)
    J, H = finite_difference_jet(tanh_map, u, step=1e-4)
    J_exact = torch.func.vmap(torch.func.jacfwd(tanh_map))(u)
    H_exact = torch.func.vmap(torch.func.jacfwd(torch.func.jacfwd(tanh_map)))(u)
    assert J.shape == J_exact.shape and H.shape == H_exact.shape
    torch.testing.assert_close(J, J_exact, rtol=0, atol=1e-7)
    torch.testing.assert_close(H, H_exact, rtol=0, atol=1e-6)


def test_finite_difference_curvature_converges_to_autodiff_at_second_order():
    u = points()
    reference = gaussian_curvature(sphere, u)
    coarse = median_relative_error(finite_difference_gaussian_curvature(sphere, u, 1e-2), reference)
    fine = median_relative_error(finite_difference_gaussian_curvature(sphere, u, 1e-3), reference)
    assert 50 < coarse / fine < 200  # error ∝ h²: a 10× smaller step, about 100× smaller error


def test_round_off_dominates_for_tiny_steps():
    u = points()
    reference = gaussian_curvature(sphere, u)
    errors = {
        h: median_relative_error(finite_difference_gaussian_curvature(sphere, u, h), reference)
        for h in (1e-2, 1e-4, 1e-7)
    }
    assert errors[1e-4] < 1e-6  # near the optimum, h ≈ ε^(1/4)
    assert errors[1e-7] > 100 * errors[1e-4]  # round-off ∝ ε/h²
    assert errors[1e-2] > 100 * errors[1e-4]  # truncation ∝ h²


def test_finite_difference_scalar_curvature_and_covariance():
    u = points(10)
    cov = 0.25 * torch.eye(6, dtype=torch.float64)
    estimate = finite_difference_scalar_curvature(tanh_map, u, 1e-4, cov=cov)
    torch.testing.assert_close(estimate, scalar_curvature(tanh_map, u, cov=cov), rtol=0, atol=1e-5)


def test_second_difference_ratio_is_zero_for_affine_maps_and_scale_invariant():
    u = points(10)
    direction = torch.tensor([0.6, 0.8])
    affine = second_difference_ratio(
        lambda x: torch.stack([x[0], 2 * x[1], x[0] - x[1]]), u, direction
    )
    assert affine.abs().max() < 1e-12
    rho = second_difference_ratio(sphere, u, direction, step=1e-2)
    scaled = second_difference_ratio(lambda x: 7 * sphere(x), u, direction, step=1e-2)
    torch.testing.assert_close(rho, scaled)


def test_second_difference_ratio_over_step_approaches_half_acceleration_over_speed():
    x0, w = torch.tensor([1.0, 0.5], dtype=torch.float64), torch.tensor([1.0, 0.0])
    curve = lambda t: sphere(x0 + t * w)  # noqa: E731
    speed = torch.linalg.vector_norm(
        torch.func.jacfwd(curve)(torch.tensor(0.0, dtype=torch.float64))
    )
    accel = torch.func.jacfwd(torch.func.jacfwd(curve))(torch.tensor(0.0, dtype=torch.float64))
    expected = 0.5 * float(torch.linalg.vector_norm(accel) / speed)
    for h in (1e-2, 1e-3):
        rho = float(second_difference_ratio(sphere, x0, w, step=h))
        assert math.isclose(rho / h, expected, rel_tol=1e-3)


def test_bad_steps_and_directions_raise():
    u = points(2)
    with pytest.raises(ValueError, match="step"):
        finite_difference_gaussian_curvature(sphere, u, step=0.0)
    with pytest.raises(TypeError, match="step"):
        finite_difference_gaussian_curvature(sphere, u, step="small")
    with pytest.raises(ValueError, match="direction"):
        second_difference_ratio(sphere, u, torch.zeros(2))
    with pytest.raises(ValueError, match="direction"):
        second_difference_ratio(sphere, u, torch.ones(3))
    with pytest.raises(ValueError, match="u"):
        finite_difference_gaussian_curvature(lambda x: torch.cat([x, x]), torch.ones(3))
    with pytest.raises(ValueError, match="f"):
        second_difference_ratio(lambda x: torch.zeros(2, dtype=x.dtype), u, torch.ones(2))


def test_rank_deficient_points_raise_for_finite_differences_too():
    def cone(x):
        return torch.stack([x[0] * torch.cos(x[1]), x[0] * torch.sin(x[1]), x[0]])

    with pytest.raises(ValueError, match=r"not an immersion.*\[\(1,\)\]"):
        finite_difference_gaussian_curvature(cone, torch.tensor([[1.0, 0.0], [0.0, 0.0]]))
