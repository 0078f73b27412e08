"""The adaptive midpoint rule and the curvature integrals built on it: the closed-form surfaces
of ``curvlab.geometry.surfaces``, a planted narrow bump of known ∫|K| dA (Gauss–Bonnet) that a
uniform grid misses, the domain's edge, the laws (affine integrands exact, Σ-invariance of
∫K dA, batch independence) and clear errors."""

import math
from dataclasses import fields

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from curvlab.geometry.adaptive import AdaptiveIntegral, adaptive_midpoint, disc_domain
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


def _rational_peaks(centres: torch.Tensor, widths: torch.Tensor):
    """Σⱼ wⱼ² / (π (wⱼ² + |x − cⱼ|²)²), one set of peaks (..., n, 2), widths (..., n) per box,
    each of mass 1 over the plane: + − × ÷ only, so a value is rounded the same in any array
    (a vectorised exp is not).  Called as ``density(points)`` or ``density(points, boxes)``."""

    def density(x, boxes=None):
        c, w = centres, widths
        if boxes is not None:
            c, w = c.reshape(-1, *c.shape[-2:])[boxes], w.reshape(-1, w.shape[-1])[boxes]
        total = torch.zeros(x.shape[:-1], dtype=x.dtype)
        for j in range(c.shape[-2]):
            dx, dy = x[..., 0] - c[..., None, j, 0], x[..., 1] - c[..., None, j, 1]
            w2 = w[..., None, j] * w[..., None, j]
            total = total + w2 / (math.pi * (w2 + (dx * dx + dy * dy)) ** 2)
        return total

    return density


def _fields_of(result: AdaptiveIntegral, box: int) -> dict:
    """Every field of box ``box`` (an index into the flattened boxes) of a result."""
    boxes = result.error.numel()
    return {f.name: getattr(result, f.name).reshape(boxes, -1)[box] for f in fields(result)}


_PEAKS = st.lists(  # one box: 1 to 3 peaks, (x, y, log10 width)
    st.tuples(st.floats(-0.9, 0.9), st.floats(-0.9, 0.9), st.floats(-2.5, -1.0)),
    min_size=1,
    max_size=3,
)


@settings(max_examples=15, deadline=None)
@given(st.lists(_PEAKS, min_size=2, max_size=4), st.booleans(), st.booleans())
# the first box's peak at the centre has mirror cells with equal indicators, and the second
# box pads the leaves: ties ordered by slot marked different cells in and out of the batch
@example([[(0.0, 0.0, math.log10(0.025390625))], [(0.1, -0.2, -1.5)]], False, False)
def test_a_boxs_result_does_not_depend_on_its_batch(boxes, selective, with_domain):
    """Every box integrated alone and all together, with the same values of the density at
    its points: every field of its result is equal to the last bit, whether the density is
    called on every box each round or on those still refined (``selective``)."""
    n = max(len(peaks) for peaks in boxes)  # a box with fewer peaks repeats its first
    peaks = [peaks + peaks[:1] * (n - len(peaks)) for peaks in boxes]
    centres = torch.tensor([[(x, y) for x, y, _ in box] for box in peaks], dtype=F64)
    widths = torch.tensor([[10.0**w for _, _, w in box] for box in peaks], dtype=F64)
    low, high = SQUARE[0].expand(len(boxes), 2), SQUARE[1].expand(len(boxes), 2)
    discs = centres + 0.1  # a domain cutting through the peaks' tails
    settings = {"resolution": 8, "tolerance": 0.01, "selective": selective}
    domain = disc_domain(discs, 0.5) if with_domain else None
    together = adaptive_midpoint(
        _rational_peaks(centres, widths), low, high, **settings, domain=domain
    )
    for e in range(len(boxes)):
        one = slice(e, e + 1)
        domain = disc_domain(discs[one], 0.5) if with_domain else None
        alone = adaptive_midpoint(
            _rational_peaks(centres[one], widths[one]),
            low[one],
            high[one],
            **settings,
            domain=domain,
        )
        for name, value in _fields_of(alone, 0).items():
            assert torch.equal(_fields_of(together, e)[name], value), (e, name)


def test_boxes_of_a_grid_of_leading_shape_each_as_alone():
    """Boxes of leading shape (2, 3) (an ensemble's members × slices), called selectively:
    the flat index of a box names it, and each is its own as alone."""
    generator = torch.Generator().manual_seed(3)
    centres = torch.rand(2, 3, 2, 2, generator=generator, dtype=F64) * 1.6 - 0.8
    widths = 10 ** (-2.5 + 1.5 * torch.rand(2, 3, 2, generator=generator, dtype=F64))
    low, high = SQUARE[0].expand(2, 3, 2), SQUARE[1].expand(2, 3, 2)
    density = _rational_peaks(centres, widths)
    together = adaptive_midpoint(density, low, high, resolution=8, selective=True)
    assert together.integral.shape == (2, 3) and together.rounds.shape == (2, 3)
    flat_centres, flat_widths = centres.reshape(6, 2, 2), widths.reshape(6, 2)
    for e in range(6):
        one = slice(e, e + 1)
        alone = adaptive_midpoint(
            _rational_peaks(flat_centres[one], flat_widths[one]),
            SQUARE[0][None],
            SQUARE[1][None],
            resolution=8,
        )
        assert all(
            torch.equal(_fields_of(together, e)[k], v) for k, v in _fields_of(alone, 0).items()
        )


def test_a_box_that_has_stopped_is_no_longer_evaluated():
    """A flat box and a box with a narrow peak: called selectively, the flat one is in the
    first calls only (its base grid), and every call carries a box's needed points, padded
    to a multiple of 16, no more."""
    asked: list[tuple[list[int], int]] = []
    peak = _rational_peaks(torch.tensor([[[0.3, 0.3]]] * 2, dtype=F64), torch.full((2, 1), 0.003))

    def density(x, boxes):
        asked.append((boxes.tolist(), x.shape[1]))
        return torch.where((boxes == 1)[:, None], peak(x, boxes), 1.0)

    low, high = SQUARE[0].expand(2, 2), SQUARE[1].expand(2, 2)
    out = adaptive_midpoint(density, low, high, resolution=8, selective=True)
    assert out.rounds.tolist()[0] == 0 and int(out.rounds[1]) > 3
    assert [boxes for boxes, _ in asked[:2]] == [[0, 1], [0, 1]]  # the base grid: centres, kids
    assert all(boxes == [1] for boxes, _ in asked[2:])
    assert sum(m for _, m in asked[2:]) == int(out.evaluations[1]) - 5 * 64  # 16 a split


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
