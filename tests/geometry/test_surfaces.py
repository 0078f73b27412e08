"""The closed-form gallery: each surface's exact curvature against the Gauss-equation engine."""

from __future__ import annotations

import math

import pytest
import torch

from curvlab.geometry import surfaces
from curvlab.geometry.curvature import gaussian_curvature, immersion_mask, scalar_curvature

GALLERY = surfaces.gallery()


def interior_points(surface, n=64, seed=0):
    """Random points strictly inside the surface's patch (10% margin on each side)."""
    generator = torch.Generator().manual_seed(seed)
    columns = []
    for low, high in surface.patch:
        margin = 0.1 * (high - low)
        uniform = torch.rand(n, generator=generator, dtype=torch.float64)
        columns.append(low + margin + (high - low - 2 * margin) * uniform)
    return torch.stack(columns, dim=-1)


@pytest.mark.parametrize("surface", GALLERY, ids=lambda s: s.name)
def test_exact_curvature_agrees_with_autodiff(surface):
    u = interior_points(surface)
    assert immersion_mask(surface, u).all()
    torch.testing.assert_close(
        scalar_curvature(surface, u), surface.scalar_curvature(u), rtol=1e-9, atol=1e-12
    )
    if surface.dimension == 2:
        torch.testing.assert_close(
            gaussian_curvature(surface, u), surface.gaussian_curvature(u), rtol=1e-9, atol=1e-12
        )
    else:
        assert surface.gaussian_curvature is None


def test_the_gallery_covers_every_sign_of_curvature():
    signs = {}
    for surface in GALLERY:
        if surface.dimension == 2:
            K = surface.gaussian_curvature(interior_points(surface))
            signs[surface.name] = {int(s) for s in torch.sign(K.round(decimals=14)).tolist()}
    assert signs["plane"] == signs["cylinder(r=1)"] == {0}
    assert signs["sphere(r=1)"] == signs["paraboloid"] == {1}
    assert signs["saddle"] == signs["enneper"] == signs["catenoid(c=1)"] == {-1}
    assert signs["torus(R=2, r=1)"] == {-1, 1}


def test_parameters_set_the_curvature_and_bad_ones_are_refused():
    point = torch.tensor([[1.0, 0.5]], dtype=torch.float64)
    assert math.isclose(float(surfaces.sphere(3.0).gaussian_curvature(point)), 1 / 9)
    assert math.isclose(
        float(surfaces.catenoid(2.0).gaussian_curvature(point)), -1 / (4 * math.cosh(0.25) ** 4)
    )
    with pytest.raises(ValueError, match="radius"):
        surfaces.sphere(-1.0)
    with pytest.raises(TypeError, match="radius"):
        surfaces.cylinder("1")
    with pytest.raises(ValueError, match="big, small"):
        surfaces.torus(1.0, 2.0)
