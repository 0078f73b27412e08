"""The adaptive midpoint rule and the curvature integrals built on it: the closed-form surfaces
of ``curvlab.geometry.surfaces``, a planted narrow bump of known ∫|K| dA (Gauss–Bonnet) that a
uniform grid misses, the domain's edge, the laws (affine integrands exact, Σ-invariance of
∫K dA, batch independence) and clear errors."""

import math

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from curvlab.geometry.adaptive import adaptive_midpoint, disc_domain
from curvlab.geometry.curvature import metric
from curvlab.geometry.curvature_integrals import adaptive_curvature, curvature_density
from curvlab.geometry.quadrature import quadrature_grid
from curvlab.geometry.surfaces import gallery

F64 = torch.float64
SQUARE = (torch.tensor([-1.0, -1.0], dtype=F64), torch.tensor([1.0, 1.0], dtype=F64))


def _gaussian(centres: torch.Tensor, width: float):
    """Unit-mass Gaussians of standard deviation ``width``, one centre (..., 2) per box."""

    def density(x):
        squared = ((x - centres[..., None, :]) ** 2).sum(-1)
        return torch.exp(-squared / (2 * width**2)) / (2 * math.pi * width**2)

    return density


def _bump(height: float, width: float, centre=(0.13, -0.07)):
    """The graph (x, y, h exp(−|x − c|²/(2w²))) of a narrow bump."""
    c = torch.tensor(centre, dtype=F64)

    def f(x):
        return torch.stack([x[0], x[1], height * torch.exp(-((x - c) ** 2).sum() / (2 * width**2))])

    return f


def _bump_curvature_total_abs(height: float, width: float) -> float:
    """∫|K| dA of the whole bump by Gauss–Bonnet: K > 0 inside the radius w, < 0 outside, and
    ∫_{r<R} K dA = 2π(1 − cos θ(R)) with cos θ = 1/√(1 + f'(R)²), while ∫K dA over the plane
    is 0; so ∫|K| dA = 4π(1 − cos θ(w)), with f'(w) = (h/w) e^{−1/2}."""
    slope = height / width * math.exp(-0.5)
    return 4 * math.pi * (1 - 1 / math.sqrt(1 + slope**2))


def _box(surface):
    low, high = zip(*surface.patch, strict=True)
    return torch.tensor(low, dtype=F64), torch.tensor(high, dtype=F64)


SURFACES = [s for s in gallery() if s.dimension == 2]


@pytest.mark.parametrize("surface", SURFACES, ids=lambda s: s.name)
def test_closed_form_surfaces_within_the_tolerance(surface):
    """Against ∫|K_exact| √det g and ∫K_exact √det g on a fine Gauss–Legendre grid."""
    nodes, weights = quadrature_grid(surface.patch, 96)
    volume = torch.sqrt(torch.linalg.det(metric(surface.f, nodes)))
    exact = surface.gaussian_curvature(nodes)
    reference_abs = float((weights * exact.abs() * volume).sum())
    reference = float((weights * exact * volume).sum())
    out = adaptive_curvature(surface.f, *_box(surface), resolution=16, tolerance=0.01)
    assert bool(out["converged"])
    assert float(out["curvature_total_abs"]) == pytest.approx(reference_abs, rel=0.01, abs=1e-8)
    assert float(out["curvature_total"]) == pytest.approx(reference, rel=0.01, abs=1e-6)
    assert float(out["non_immersed"]) == 0.0


def test_gauss_bonnet_on_the_sphere_and_the_torus():
    sphere, torus = (next(s for s in SURFACES if s.name.startswith(n)) for n in ("sph", "tor"))
    out = adaptive_curvature(sphere.f, *_box(sphere), resolution=16, tolerance=0.001)
    assert float(out["curvature_total"]) == pytest.approx(4 * math.pi, rel=0.001)  # χ = 2
    out = adaptive_curvature(torus.f, *_box(torus), resolution=16, tolerance=0.001)
    assert float(out["curvature_total"]) == pytest.approx(0.0, abs=0.001 * 8 * math.pi)  # χ = 0
    assert float(out["curvature_total_abs"]) == pytest.approx(
        8 * math.pi, rel=0.001
    )  # ∫∫|cos v| du dv


@pytest.mark.parametrize(("height", "width"), [(0.05, 0.02), (0.02, 0.005), (0.1, 0.01)])
def test_a_planted_narrow_bump_the_uniform_grid_misses(height, width):
    exact = _bump_curvature_total_abs(height, width)
    out = adaptive_curvature(_bump(height, width), *SQUARE, resolution=64, tolerance=0.03)
    assert int(out["rounds"]) > 0
    assert abs(float(out["curvature_total_abs_uniform"]) / exact - 1) > 0.3  # 64² misses it
    assert bool(out["converged"])
    assert abs(float(out["curvature_total_abs"]) / exact - 1) < 0.03
    # K > 0 and K < 0 cancel
    assert float(out["curvature_total"]) == pytest.approx(0.0, abs=0.03 * exact)
    # it says what it cost and how wrong it thinks it is
    assert 5 * 64**2 < int(out["evaluations"]) < 100_000
    assert 0 < float(out["error"]) <= 0.03 * float(out["curvature_total_abs"])


def test_peaks_narrower_than_a_cell_get_their_mass():
    """Twenty Gaussians of width 0.01 at seeded places, 1/12 of a base cell: the uniform grid
    misses most of them, the rule gets every one within its tolerance."""
    generator = torch.Generator().manual_seed(7)
    centres = torch.rand(20, 2, generator=generator, dtype=F64) * 1.6 - 0.8
    low, high = SQUARE[0].expand(20, 2), SQUARE[1].expand(20, 2)
    out = adaptive_midpoint(_gaussian(centres, 0.01), low, high, resolution=16, tolerance=0.01)
    assert out.integral.shape == (20,) and out.converged.all()
    assert ((out.integral - 1).abs() < 0.01).all()
    assert ((out.coarse - 1).abs() > 0.3).sum() >= 15
    stopped = adaptive_midpoint(_gaussian(centres, 0.01), low, high, resolution=16, max_rounds=2)
    assert not stopped.converged.any() and (stopped.rounds == 2).all()


def test_a_peak_across_a_cells_edge_is_counted_whole():
    """A peak centred on the edge between two base cells: half its mass on each side.  The
    balance (neighbours of a split cell at most one level coarser) refines the other side."""
    for centre in ([0.0, 0.3], [0.125, 0.125], [0.1251, -0.5]):
        peak = _gaussian(torch.tensor(centre, dtype=F64), 0.004)
        out = adaptive_midpoint(peak, *SQUARE, resolution=16, tolerance=0.01)
        assert abs(float(out.integral) - 1) < 0.01, centre


def test_the_domains_edge_leaves_no_error_beyond_the_tolerance():
    """Two disjoint discs of radius 0.3 in the square: the area 2π·0.09, and a density whose
    mass is on the edge (a ring at the boundary of one disc), both within the tolerance."""
    phi = disc_domain(torch.tensor([[-0.4, -0.3], [0.45, 0.35]], dtype=F64), 0.3)
    for tolerance in (0.03, 0.01):
        out = adaptive_midpoint(
            lambda x: torch.ones_like(x[..., 0]), *SQUARE, domain=phi, tolerance=tolerance
        )
        assert bool(out.converged)
        assert float(out.integral) == pytest.approx(2 * math.pi * 0.09, rel=tolerance)

    def ring(x):  # 1 + 10·(r/0.3)² about the first centre: its mass on the disc is π·0.09·6
        r2 = ((x - torch.tensor([-0.4, -0.3], dtype=F64)) ** 2).sum(-1)
        return torch.where(r2 < 0.5, 1 + 10 * r2 / 0.09, torch.zeros_like(r2))

    one = disc_domain(torch.tensor([[-0.4, -0.3]], dtype=F64), 0.3)
    out = adaptive_midpoint(ring, *SQUARE, domain=one, tolerance=0.01)
    assert float(out.integral) == pytest.approx(math.pi * 0.09 * 6, rel=0.01)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.floats(-3, 3), min_size=3, max_size=3),
    st.floats(-2, 1),
    st.floats(-2, 1),
    st.floats(0.1, 3),
    st.floats(0.1, 3),
)
def test_affine_integrands_are_exact_and_never_refined(coefficients, x0, y0, width, height):
    a, b, c = coefficients
    low = torch.tensor([x0, y0], dtype=F64)
    high = low + torch.tensor([width, height], dtype=F64)
    out = adaptive_midpoint(lambda x: a + b * x[..., 0] + c * x[..., 1], low, high, resolution=4)
    centre = (low + high) / 2
    exact = (a + b * centre[0] + c * centre[1]) * width * height
    assert float(out.integral) == pytest.approx(float(exact), abs=1e-9)
    assert int(out.rounds) == 0 and int(out.evaluations) == 5 * 16


@settings(max_examples=10, deadline=None)
@given(st.floats(-0.8, 0.8), st.floats(-0.8, 0.8), st.floats(0.002, 0.05), st.integers(1, 3))
# a peak at the centre has mirror cells with equal indicators, and a twin box in the batch
# pads the leaves differently: ties ordered by slot marked different cells in and out of it
@example(0.0, 0.0, 0.025390625, 2)
def test_a_boxs_result_does_not_depend_on_its_batch(x, y, width, others):
    centres = torch.tensor([[x, y]] + [[0.1 * k, -0.2 * k] for k in range(others)], dtype=F64)
    low, high = SQUARE[0].expand(len(centres), 2), SQUARE[1].expand(len(centres), 2)
    together = adaptive_midpoint(_gaussian(centres, width), low, high, resolution=8)
    alone = adaptive_midpoint(_gaussian(centres[0], width), *SQUARE, resolution=8)
    assert torch.allclose(together.integral[0], alone.integral, rtol=1e-12)
    assert int(together.rounds[0]) == int(alone.rounds)
    assert int(together.evaluations[0]) == int(alone.evaluations)


def test_any_leading_shape_of_boxes_and_several_channels():
    centres = torch.tensor([[[0.1, 0.2], [-0.3, 0.0], [0.5, -0.5]]] * 2, dtype=F64)  # (2, 3, 2)
    low, high = SQUARE[0].expand(2, 3, 2), SQUARE[1].expand(2, 3, 2)
    gaussian = _gaussian(centres, 0.01)
    out = adaptive_midpoint(lambda x: torch.stack([gaussian(x), x[..., 0] ** 2], -1), low, high)
    assert out.integral.shape == (2, 3, 2) and out.error.shape == (2, 3)
    assert torch.allclose(out.integral[..., 0], torch.ones(2, 3, dtype=F64), rtol=0.03)
    assert torch.allclose(out.integral[..., 1], torch.full((2, 3), 4 / 3, dtype=F64), rtol=1e-3)


@pytest.mark.parametrize("s", [0.5, 3.0])
def test_the_integral_of_k_does_not_depend_on_the_covariance_scale(s):
    """Σ = s²I: g → g/s², K → s²K, dA → dA/s², so ∫K dA and ∫|K| dA stay, the area scales."""
    bump = _bump(0.3, 0.2)
    plain = adaptive_curvature(bump, *SQUARE, resolution=16, tolerance=0.01)
    scaled = adaptive_curvature(bump, *SQUARE, torch.eye(3) * s**2, resolution=16, tolerance=0.01)
    assert float(scaled["curvature_total_abs"]) == pytest.approx(
        float(plain["curvature_total_abs"]), rel=1e-9
    )
    assert float(scaled["sheet_area"]) == pytest.approx(float(plain["sheet_area"]) / s**2, rel=1e-9)


def test_curvature_density_is_zero_where_the_map_is_not_an_immersion():
    J = torch.zeros(2, 3, 2, dtype=F64)
    J[0] = torch.eye(3, 2, dtype=F64)
    H = torch.zeros(2, 3, 2, 2, dtype=F64)
    H[:, 2, 0, 0] = H[:, 2, 1, 1] = -1.0  # a sphere of radius 1 at the first point
    values = curvature_density(J, H)
    assert values[0].tolist() == [1.0, 1.0, 1.0, 1.0]
    assert values[1].tolist() == [0.0, 0.0, 0.0, 0.0]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"resolution": 0}, "resolution"),
        ({"max_rounds": -1}, "max_rounds"),
        ({"cells_per_round": 0}, "cells_per_round"),
        ({"tolerance": 0.0}, "tolerance"),
        ({"tolerance": 1.5}, "tolerance"),
        ({"marking": 0}, "marking"),
        ({"absolute": -1.0}, "absolute"),
        ({"domain": lambda x: x[..., :1, 0]}, "domain"),
    ],
)
def test_bad_settings_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        adaptive_midpoint(lambda x: x[..., 0], *SQUARE, **kwargs)


def test_bad_boxes_maps_and_densities_are_named():
    low, high = SQUARE
    with pytest.raises(ValueError, match="low, high"):
        adaptive_midpoint(lambda x: x[..., 0], high, low)
    with pytest.raises(ValueError, match="low, high"):
        adaptive_midpoint(lambda x: x[..., 0], low[:1], high[:1])
    with pytest.raises(ValueError, match="not finite"):
        adaptive_midpoint(lambda x: x[..., 0] / 0.0, low, high)
    with pytest.raises(ValueError, match="density"):
        adaptive_midpoint(lambda x: x[..., :1, 0], low, high)
    with pytest.raises(TypeError, match="density"):
        adaptive_midpoint(None, low, high)
    with pytest.raises(ValueError, match="cov"):
        adaptive_curvature(_bump(0.1, 0.1), low, high, -torch.eye(3))
    with pytest.raises(ValueError, match="radius"):
        disc_domain(torch.zeros(1, 2), 0.0)
    with pytest.raises(ValueError, match="centres"):
        disc_domain(torch.zeros(2), 1.0)
