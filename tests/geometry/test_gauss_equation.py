"""The Gauss-equation engine on precomputed jets; the one home of the immersion test."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from curvlab.geometry.gauss_equation import (
    IMMERSION_TOLERANCE,
    jets,
    row_jets,
    surface_from_jets,
)
from curvlab.geometry.surfaces import gallery

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "curvlab"
SURFACES = [s for s in gallery() if s.dimension == 2]


@pytest.mark.parametrize("surface", SURFACES, ids=lambda s: s.name)
def test_surface_from_jets_gives_the_exact_curvature_with_any_leading_shape(surface):
    generator = torch.Generator().manual_seed(0)
    low = torch.tensor([p[0] for p in surface.patch], dtype=torch.float64)
    high = torch.tensor([p[1] for p in surface.patch], dtype=torch.float64)
    u = low + (0.1 + 0.8 * torch.rand(2, 3, 5, 2, generator=generator, dtype=torch.float64)) * (
        high - low
    )
    J, H = jets(surface.f, u.reshape(-1, 2))
    d = J.shape[1]
    out = surface_from_jets(J.reshape(2, 3, 5, d, 2), H.reshape(2, 3, 5, d, 2, 2))
    assert out["immersed"].shape == (2, 3, 5) and bool(out["immersed"].all())
    assert out["second"].shape == (2, 3, 5, 2, 2, d)
    exact = surface.gaussian_curvature(u)
    assert torch.allclose(out["K"], exact, atol=1e-10, rtol=1e-8)
    volume = torch.sqrt(torch.linalg.det(J.mT @ J)).reshape(2, 3, 5)
    assert torch.allclose(out["volume_element"], volume, rtol=1e-12)


@settings(max_examples=25, deadline=None)
@given(k=st.integers(1, 4), d=st.integers(1, 5), n=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_row_jets_are_the_jets_of_each_row(k, d, n, seed):
    """For any input and output dimension: the row map's jets, by nested forward mode on its
    own batch, are the one-point map's (jacfwd twice under vmap) to round-off, H symmetric."""
    generator = torch.Generator().manual_seed(seed)
    A, B = (torch.randn(k, d, generator=generator, dtype=torch.float64) for _ in range(2))
    C = torch.randn(k, k, generator=generator, dtype=torch.float64)

    def f_rows(x):  # (M, k) -> (M, d): mixed second derivatives in every pair of coordinates
        return torch.tanh(x @ A) * torch.sin(x @ B) + ((x @ C) * x).sum(-1, keepdim=True)

    points = torch.randn(n, k, generator=generator, dtype=torch.float64)
    J, H = row_jets(f_rows, points)
    J_ref, H_ref = jets(lambda x: f_rows(x[None])[0], points)
    assert J.shape == (n, d, k) and H.shape == (n, d, k, k)
    assert torch.allclose(J, J_ref, rtol=0, atol=1e-13)
    assert torch.allclose(H, H_ref, rtol=0, atol=1e-13)
    assert torch.equal(H, H.transpose(-1, -2))


def test_degenerate_and_non_finite_jets_are_masked_not_propagated():
    J = torch.eye(3, 2, dtype=torch.float64).repeat(4, 1, 1)
    H = torch.zeros(4, 3, 2, 2, dtype=torch.float64)
    J[1, :, 1] = J[1, :, 0]  # rank one
    J[2, 0, 0] = float("nan")
    J[3, 1, 1] = 0.5 * IMMERSION_TOLERANCE[torch.float64]  # just below the tolerance
    out = surface_from_jets(J, H)
    assert out["immersed"].tolist() == [True, False, False, False]
    for key in ("K", "volume_element", "second"):
        assert torch.isfinite(out[key]).all()
    assert float(out["volume_element"][0]) == 1.0 and float(out["volume_element"][1]) == 0.0
    loose = surface_from_jets(J, H, tolerance=0.25 * IMMERSION_TOLERANCE[torch.float64])
    assert loose["immersed"].tolist() == [True, False, False, True]
    with pytest.raises(ValueError, match="hessian"):
        surface_from_jets(J, H[:, :2])


def _module_names(path: Path) -> str:
    return ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)


def test_only_the_engine_defines_an_immersion_tolerance_or_tests_immersion():
    """One home: no other module assigns a tolerance named for immersion or takes σ(J) itself."""
    defining, singular = set(), set()
    for path in sorted(PACKAGE.rglob("*.py")):
        if "classroom" in path.parts or "symbolic" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, ast.AnnAssign):
                targets = [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and "IMMERSION" in target.id.upper():
                    defining.add(_module_names(path))
            if isinstance(node, ast.Attribute) and node.attr in ("svdvals", "svd"):
                singular.add(_module_names(path))
    assert defining == {"curvlab.geometry.gauss_equation"}
    assert singular == {"curvlab.geometry.gauss_equation"}
