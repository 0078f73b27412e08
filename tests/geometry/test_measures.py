"""Scale-free curvature summaries: closed forms, Gauss–Bonnet and invariance under rescaling."""

from __future__ import annotations

import math

import pytest
import torch

from curvlab.geometry.measures import (
    area,
    curve_curvature,
    curve_measures,
    curve_measures_from_samples,
    quadrature_grid,
    sheet_measures,
    surface_measures,
    surface_measures_from_grid,
)
from curvlab.geometry.surfaces import cylinder, enneper, sphere, three_sphere
from curvlab.geometry.surfaces import saddle as saddle_surface
from curvlab.geometry.surfaces import torus as torus_of

FULL_SPHERE = [(0.0, math.pi), (0.0, 2 * math.pi)]
FULL_TORUS = [(-math.pi, math.pi), (-math.pi, math.pi)]


torus = torus_of(3.0, 1.0)
saddle = saddle_surface()


def test_quadrature_integrates_polynomials_exactly():
    nodes, weights = quadrature_grid([(0.0, 1.0), (-1.0, 2.0)], 4)
    integrand = nodes[..., 0] ** 5 * nodes[..., 1] ** 3
    assert math.isclose(float((weights * integrand).sum()), (1 / 6) * (16 - 1) / 4, rel_tol=1e-13)
    nodes, weights = quadrature_grid([(0.0, 2.0)], 10, "midpoint")
    assert nodes.shape == (10, 1) and math.isclose(float(weights.sum()), 2.0)


def test_area_of_a_spherical_patch():
    radius, (a, b), (c, d) = 2.0, (0.3, 1.4), (0.0, 2.0)
    expected = radius**2 * (math.cos(a) - math.cos(b)) * (d - c)
    assert math.isclose(area(sphere(radius), [(a, b), (c, d)], 16), expected, rel_tol=1e-12)


def test_volume_of_the_three_sphere_is_two_pi_squared_r_cubed():
    patch = [(0.0, math.pi), (0.0, math.pi), (0.0, 2 * math.pi)]
    assert math.isclose(area(three_sphere(1.5), patch, 10), 2 * math.pi**2 * 1.5**3, rel_tol=1e-9)


@pytest.mark.parametrize("radius", [0.5, 3.0])
def test_gauss_bonnet_on_the_sphere(radius):
    m = surface_measures(sphere(radius), FULL_SPHERE)
    assert math.isclose(m.curvature_total, 4 * math.pi, rel_tol=1e-10)
    assert math.isclose(m.curvature_total_abs, 4 * math.pi, rel_tol=1e-10)
    assert math.isclose(m.sheet_area, 4 * math.pi * radius**2, rel_tol=1e-10)
    assert m.positive_fraction == 1.0


def test_torus_total_curvature_zero_absolute_eight_pi_and_positive_fraction():
    m = surface_measures(torus, FULL_TORUS, 96, rule="midpoint")
    assert abs(m.curvature_total) < 1e-10
    assert math.isclose(m.curvature_total_abs, 8 * math.pi, rel_tol=1e-3)
    expected_fraction = 0.5 + 1.0 / (math.pi * 3.0)  # (πR + 2r) / (2πR), R = 3, r = 1
    assert math.isclose(m.positive_fraction, expected_fraction, abs_tol=2e-2)


@pytest.mark.parametrize("scale", [0.1, 5.0])
def test_surface_measures_are_invariant_under_rescaling_the_image(scale):
    patch = [(-1.0, 1.0), (-0.5, 1.5)]
    reference = surface_measures(saddle, patch, 16)
    scaled = surface_measures(lambda x: scale * saddle(x), patch, 16)
    assert math.isclose(scaled.sheet_area, scale**2 * reference.sheet_area, rel_tol=1e-12)
    assert math.isclose(scaled.mean_curvature, reference.mean_curvature / scale**2, rel_tol=1e-10)
    for name in ("curvature_total", "curvature_total_abs", "dimensionless_curvature"):
        assert math.isclose(getattr(scaled, name), getattr(reference, name), rel_tol=1e-10)
    assert scaled.positive_fraction == reference.positive_fraction == 0.0


def test_flat_maps_have_no_curvature_and_no_positive_fraction():
    m = surface_measures(lambda x: torch.stack([x[0], x[1], x[0] + 2 * x[1]]), [(0, 1), (0, 1)], 8)
    assert abs(m.curvature_total_abs) < 1e-12 and m.positive_fraction == 0.0
    assert math.isclose(m.sheet_area, math.sqrt(6.0), rel_tol=1e-12)


def test_surface_measures_from_grid_checks_shapes_and_values():
    ones = torch.ones(3, 3, dtype=torch.float64)
    with pytest.raises(ValueError, match="common shape"):
        surface_measures_from_grid(ones, ones[:2], ones)
    with pytest.raises(ValueError, match="K"):
        surface_measures_from_grid(ones * float("nan"), ones, ones)
    with pytest.raises(ValueError, match="patch"):
        surface_measures(saddle, [(0.0, 1.0)])
    with pytest.raises(ValueError, match="patch"):
        surface_measures(saddle, [(1.0, 0.0), (0.0, 1.0)])
    with pytest.raises(ValueError, match="rule"):
        quadrature_grid([(0.0, 1.0)], 4, "simpson")
    with pytest.raises(ValueError, match="resolution"):
        quadrature_grid([(0.0, 1.0)], 0)


@pytest.mark.parametrize("radius", [0.01, 1.0, 30.0])
def test_great_circle_has_grassmannian_length_two_pi(radius):
    generator = torch.Generator().manual_seed(0)
    q, _ = torch.linalg.qr(torch.randn(10, 2, generator=generator, dtype=torch.float64))

    def circle(t):
        return radius * (q[:, 0] * torch.cos(t) + q[:, 1] * torch.sin(t))

    m = curve_measures(lambda x: x, circle, points=64)
    assert math.isclose(m.grassmannian_length, 2 * math.pi, rel_tol=1e-12)
    assert math.isclose(m.euclidean_length, 2 * math.pi * radius, rel_tol=1e-12)
    assert math.isclose(m.mean_curvature, 1 / radius, rel_tol=1e-12)


def test_grassmannian_length_is_invariant_under_scaling_and_zero_on_a_line():
    def curve(t):
        return torch.stack([torch.cos(t), 0.5 * torch.sin(t)])

    def bend(x):
        return torch.stack([x[0], x[1], torch.tanh(x[0] + x[1])])

    reference = curve_measures(bend, curve)
    scaled = curve_measures(lambda x: 0.01 * bend(x), curve)
    assert math.isclose(scaled.grassmannian_length, reference.grassmannian_length, rel_tol=1e-12)
    line = curve_measures(
        lambda x: x, lambda t: torch.stack([t, 2 * t]), (0.0, 1.0), 8, closed=False
    )
    assert line.grassmannian_length < 1e-14 and math.isclose(line.euclidean_length, math.sqrt(5))


def test_curve_curvature_of_a_helix_and_covariance():
    def helix(t):
        return torch.stack([torch.cos(t), torch.sin(t), 0.5 * t])

    kappa, speed = curve_curvature(lambda x: x, helix, torch.linspace(0, 3, 5))
    torch.testing.assert_close(kappa, torch.full((5,), 1 / 1.25, dtype=torch.float64))
    cov = 4.0 * torch.eye(3, dtype=torch.float64)  # whitening halves lengths, doubles κ
    kappa_cov, speed_cov = curve_curvature(lambda x: x, helix, torch.linspace(0, 3, 5), cov)
    torch.testing.assert_close(kappa_cov, 2 * kappa)
    torch.testing.assert_close(speed_cov, speed / 2)


def test_curve_errors():
    with pytest.raises(ValueError, match="theta"):
        curve_curvature(lambda x: x, lambda t: torch.stack([t**2, t**3]), torch.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match="points"):
        curve_measures(lambda x: x, lambda t: torch.stack([t, t]), points=1)
    with pytest.raises(ValueError, match="common shape"):
        curve_measures_from_samples(torch.ones(3), torch.ones(2), torch.ones(3))


# ---------------------------------------------------------------------------------------------
# sheet_measures: the one sheet-curvature measure


def test_sheet_measures_of_the_torus_match_its_closed_forms():
    big, small = 3.0, 1.0
    m = sheet_measures(torus, FULL_TORUS, 128)
    assert abs(m.curvature_total) < 1e-10  # Gauss–Bonnet, χ = 0
    assert math.isclose(m.curvature_total_abs, 8 * math.pi, rel_tol=1e-3)
    assert math.isclose(m.sheet_area, 4 * math.pi**2 * big * small, rel_tol=1e-12)
    # K > 0 where cos v > 0: ∫ r (R + r cos v) du dv over |v| < π/2 is 2πr(πR + 2r)
    positive = 2 * math.pi * small * (math.pi * big + 2 * small)
    negative = 2 * math.pi * small * (math.pi * big - 2 * small)
    assert math.isclose(m.positive_area, positive, rel_tol=1e-3)
    assert math.isclose(m.negative_area, negative, rel_tol=1e-3)
    assert math.isclose(m.positive_fraction, positive / m.sheet_area, rel_tol=1e-3)
    assert math.isclose(m.max_abs_curvature, 1 / (small * (big - small)), rel_tol=1e-3)
    assert (m.immersed_nodes, m.non_immersed_nodes) == (128**2, 0)


@pytest.mark.parametrize("radius", [0.5, 2.0])
def test_sheet_measures_of_the_sphere_and_cylinder(radius):
    m = sheet_measures(sphere(radius), FULL_SPHERE, 64)
    assert math.isclose(m.curvature_total, 4 * math.pi, rel_tol=1e-3)
    assert math.isclose(m.sheet_area, 4 * math.pi * radius**2, rel_tol=1e-3)
    assert math.isclose(m.mean_abs_curvature, 1 / radius**2, rel_tol=1e-12)
    assert math.isclose(m.dimensionless_curvature, m.sheet_area / radius**2, rel_tol=1e-12)
    assert m.positive_fraction == 1.0 and m.negative_area == 0.0
    tube = cylinder(radius)
    flat = sheet_measures(tube, tube.patch, 16)
    assert math.isclose(flat.sheet_area, 2 * math.pi * radius * 2.0, rel_tol=1e-12)
    assert flat.curvature_total_abs < 1e-12 and flat.max_abs_curvature < 1e-12
    assert flat.positive_area == flat.negative_area == 0.0


@pytest.mark.parametrize("scale", [0.1, 5.0])
def test_sheet_measures_scale_free_fields_do_not_change_when_the_image_is_rescaled(scale):
    patch = [(-1.0, 1.0), (-0.5, 1.5)]
    reference = sheet_measures(saddle, patch, 12)
    scaled = sheet_measures(lambda x: scale * saddle(x), patch, 12)
    for name in ("curvature_total", "curvature_total_abs", "dimensionless_curvature"):
        assert math.isclose(getattr(scaled, name), getattr(reference, name), rel_tol=1e-10)
    assert math.isclose(scaled.sheet_area, scale**2 * reference.sheet_area, rel_tol=1e-12)
    assert math.isclose(scaled.max_abs_curvature, reference.max_abs_curvature / scale**2)
    assert math.isclose(scaled.negative_area, scale**2 * reference.negative_area, rel_tol=1e-12)


def test_sheet_measures_agree_with_surface_measures_where_both_apply():
    patch = [(-1.0, 1.0), (-0.5, 1.5)]
    sheet = sheet_measures(saddle, patch, 12, rule="gauss-legendre")
    surface = surface_measures(saddle, patch, 12)
    for name in ("sheet_area", "curvature_total", "curvature_total_abs", "positive_fraction"):
        assert math.isclose(getattr(sheet, name), getattr(surface, name), rel_tol=1e-12)
    assert math.isclose(sheet.dimensionless_curvature, surface.dimensionless_curvature)


def test_sheet_measures_exclude_and_count_nodes_where_f_is_not_an_immersion():
    def cone(x):  # the Jacobian loses rank on the line x[0] = 0
        return torch.stack([x[0] * torch.cos(x[1]), x[0] * torch.sin(x[1]), x[0] ** 2])

    m = sheet_measures(cone, [(-1.0, 1.0), (0.0, 1.0)], 3)  # midpoint x[0] in {-2/3, 0, 2/3}
    assert (m.immersed_nodes, m.non_immersed_nodes) == (6, 3)
    assert m.sheet_area > 0 and m.curvature_total_abs > 0
    nothing = sheet_measures(lambda x: torch.stack([0 * x[0], 0 * x[1]]), [(0, 1), (0, 1)], 4)
    assert (nothing.immersed_nodes, nothing.non_immersed_nodes) == (0, 16)
    record = nothing.as_dict()
    assert record["sheet_area"] is None and record["max_abs_curvature"] is None
    assert set(record) >= {"positive_area", "negative_area", "mean_abs_curvature"}


def test_sheet_measures_over_a_region_integrate_only_there():
    # Enneper's surface over the disk u² + v² < ρ²: ∫K dA = −4π ρ² / (1 + ρ²)
    rho = 0.8
    inside = sheet_measures(
        enneper(), [(-rho, rho), (-rho, rho)], 200, region=lambda n: (n**2).sum(-1) < rho**2
    )
    exact = -4 * math.pi * rho**2 / (1 + rho**2)
    assert math.isclose(inside.curvature_total, exact, rel_tol=1e-2)
    assert inside.immersed_nodes + inside.non_immersed_nodes < 200**2
    half = sheet_measures(torus, FULL_TORUS, 32, region=lambda n: torch.cos(n[:, 1]) > 0)
    assert half.negative_area == 0.0 and half.positive_fraction == 1.0


def test_sheet_measures_reject_bad_arguments():
    with pytest.raises(ValueError, match="patch"):
        sheet_measures(saddle, [(0.0, 1.0)])
    with pytest.raises(TypeError, match="region"):
        sheet_measures(saddle, [(0, 1), (0, 1)], 4, region="everywhere")
    with pytest.raises(TypeError, match="region"):
        sheet_measures(saddle, [(0, 1), (0, 1)], 4, region=lambda n: n[:, 0])
    with pytest.raises(ValueError, match="region"):
        sheet_measures(saddle, [(0, 1), (0, 1)], 4, region=lambda n: n[:3, 0] > 0)
    with pytest.raises(ValueError, match="region: selects no node"):
        sheet_measures(saddle, [(0, 1), (0, 1)], 4, region=lambda n: n[:, 0] > 2)
    with pytest.raises(ValueError, match="cov"):
        sheet_measures(saddle, [(0, 1), (0, 1)], 4, cov=-torch.eye(3))
