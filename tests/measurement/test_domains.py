"""curvlab.measurement.domains: ∫|K| dA on a data domain fixed independently of the grid
converges to the exact integral over that domain; the old grid-dependent region shrinks with
the grid."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate
from scipy.spatial import cKDTree

from curvlab.geometry.gauss_equation import jets
from curvlab.geometry.surfaces import paraboloid
from curvlab.measurement.domains import DOMAIN_RADIUS, data_domain_grid, grid_convergence
from curvlab.measurement.sheets import data_region_grid, sheet_from_jets


def _density(x):
    """|K| √det g of the paraboloid (x, y, (x² + y²)/2): (1 + |x|²)^(-3/2)."""
    return (1 + (x**2).sum(-1)) ** -1.5


def _curvature_total_abs(points: torch.Tensor, resolution: int, radius: float) -> torch.Tensor:
    """∫|K| dA of the paraboloid on the fixed domain of each member of ``points`` (E, n, 2)."""
    nodes, weights = data_domain_grid(points, resolution, radius)
    f = paraboloid().f
    out = []
    for e in range(points.shape[0]):
        J, H = jets(f, nodes[e])
        out.append(sheet_from_jets(J, H, weights[e])["curvature_total_abs"])
    return torch.stack(out)


def _disk_cloud(n: int, seed: int, centre=(0.1, -0.1), radius=0.7) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    rho = radius * torch.rand(n, generator=generator, dtype=torch.float64).sqrt()
    angle = 2 * math.pi * torch.rand(n, generator=generator, dtype=torch.float64)
    return torch.stack([centre[0] + rho * angle.cos(), centre[1] + rho * angle.sin()], -1)


def test_estimate_converges_to_the_exact_integral_over_a_closed_form_domain():
    # two training points (0, 0) and (1, 1), r = 0.5: the domain is two quarter disks inside
    # the unit box, and the exact ∫|K| dA over it is a polar integral (scipy.integrate)
    points = torch.tensor([[[0.0, 0.0], [1.0, 1.0]]], dtype=torch.float64)
    a = 0.5
    near_origin = math.pi / 2 * (1 - 1 / math.sqrt(1 + a * a))  # radial: closed form

    def polar(rho, theta):
        x = np.array([1 + rho * math.cos(theta), 1 + rho * math.sin(theta)])
        return rho * (1 + x @ x) ** -1.5

    near_corner = integrate.dblquad(polar, math.pi, 1.5 * math.pi, 0, a, epsabs=1e-12)[0]
    exact = near_origin + near_corner
    errors = {
        p: abs(float(_curvature_total_abs(points, p, a)[0]) / exact - 1) for p in (8, 32, 128)
    }
    assert errors[8] > errors[32] > errors[128] and errors[128] < 5e-3  # O(1/P): cut cells
    areas = [float(data_domain_grid(points, p, a)[1].sum()) for p in (32, 128, 256)]
    assert areas == pytest.approx([math.pi * a * a / 2] * 3, rel=2e-2)


def test_estimate_on_a_disk_cloud_converges_and_its_domain_does_not_shrink():
    points = _disk_cloud(120, seed=0)
    radius = 0.15
    # the exact integral over the same fixed domain, by a fine grid of the closed-form integrand
    low, high = points.amin(0).numpy(), points.amax(0).numpy()
    fine = 1000
    axes = [low[i] + (np.arange(fine) + 0.5) * (high[i] - low[i]) / fine for i in range(2)]
    grid = np.stack([g.ravel() for g in np.meshgrid(*axes)], -1)
    inside = cKDTree(points.numpy()).query(grid, distance_upper_bound=radius)[0] <= radius
    cell = float(np.prod((high - low) / fine))
    exact = float(_density(grid[inside]).sum()) * cell
    exact_area = float(inside.sum()) * cell

    estimates = {p: float(_curvature_total_abs(points[None], p, radius)[0]) for p in (16, 64, 128)}
    assert estimates[64] == pytest.approx(exact, rel=5e-3)
    assert estimates[128] == pytest.approx(exact, rel=2e-3)
    fixed = [float(data_domain_grid(points[None], p, radius)[1].sum()) for p in (10, 20, 40, 80)]
    old = [float(data_region_grid(points[None], p)[1].sum()) for p in (10, 20, 40, 80)]
    assert fixed == pytest.approx([exact_area] * 4, rel=3e-2)  # the same domain at every grid
    assert old[-1] < 0.5 * old[0]  # the grid-dependent region shrinks as the grid is refined


def test_grid_convergence_of_the_fixed_domain_estimate_is_below_the_criterion():
    points = torch.stack([_disk_cloud(80, seed=s) for s in range(3)])
    convergence = grid_convergence(
        lambda p: _curvature_total_abs(points, p, DOMAIN_RADIUS), [16, 32]
    )
    assert convergence[32]["median"] < 0.05 and convergence[32]["undefined"] == 0
    assert len(convergence[16]["log_ratio"]) == 3


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.floats(0.1, 10), min_size=1, max_size=5),
    st.floats(-5, 5),
    st.floats(0.01, 100),
)
def test_grid_convergence_is_the_log_ratio_and_scale_free(values, slope, scale):
    def integral(p):
        return torch.tensor(values, dtype=torch.float64) * (1 + slope / (p + 10))

    def scaled(p):
        return scale * integral(p)

    ours, rescaled = grid_convergence(integral, [5]), grid_convergence(scaled, [5])
    expected = abs(math.log((1 + slope / 15) / (1 + slope / 20)))
    assert ours[5]["log_ratio"] == pytest.approx([expected] * len(values), abs=1e-12)
    assert ours[5]["median"] == pytest.approx(expected, abs=1e-12)
    assert rescaled[5]["median"] == pytest.approx(ours[5]["median"], abs=1e-12)


def test_sheets_without_a_positive_estimate_are_counted_not_averaged():
    convergence = grid_convergence(lambda p: torch.tensor([1.0, 0.0, math.nan, 2.0 + 1 / p]), [4])
    assert convergence[4]["log_ratio"][1:3] == [None, None]
    assert convergence[4]["undefined"] == 2
    assert convergence[4]["median"] == pytest.approx(abs(math.log(2.25 / 2.125)) / 2)
    with pytest.raises(ValueError, match="integral"):
        grid_convergence(lambda p: torch.zeros(2), [4])
    with pytest.raises(ValueError, match="resolutions"):
        grid_convergence(lambda p: torch.ones(2), [0])


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 20),
    st.integers(2, 24),
    st.floats(0.01, 0.5),
    st.floats(1.01, 3.0),
    st.integers(0, 1000),
)
def test_the_domain_grows_with_the_radius_and_stays_near_the_data(n, grid, radius, factor, seed):
    generator = torch.Generator().manual_seed(seed)
    points = 2 * torch.rand(1, n + 1, 2, generator=generator, dtype=torch.float64) - 1
    nodes, small = data_domain_grid(points, grid, radius)
    _, large = data_domain_grid(points, grid, radius * factor)
    assert bool(((small > 0) <= (large > 0)).all())  # a larger radius keeps every node
    nearest = torch.cdist(nodes, points).amin(-1)
    assert bool((nearest[small > 0] <= radius).all())
    box = (points.amax(1) - points.amin(1)).prod()
    assert float(small.sum()) <= float(box) * (1 + 1e-12)


def test_bad_domain_arguments_are_refused():
    points = torch.zeros(1, 3, 2)
    for radius in (0, -1.0, math.inf, True):
        with pytest.raises(ValueError, match="radius"):
            data_domain_grid(points, 4, radius)
    with pytest.raises(ValueError, match="resolution"):
        data_domain_grid(points, 0)
    with pytest.raises(ValueError, match="train_points"):
        data_domain_grid(torch.zeros(3, 2), 4)
