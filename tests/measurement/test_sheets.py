"""curvlab.measurement.sheets: the capped integrand ∫ min(|K|, 1/m) dA is blind to spikes above the
sheet's own scale, equals ∫|K| dA where no node reaches the cap, is invariant under a rescaling
of the representation as ∫|K| dA is, and is 0 (not NaN) where no node is used."""

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from curvlab.measurement.sheets import sheet_from_jets


def _jets(seed: int, members: int = 2, nodes: int = 40, d: int = 3):
    generator = torch.Generator().manual_seed(seed)
    J = torch.randn(members, nodes, d, 2, generator=generator, dtype=torch.float64)
    H = torch.randn(members, nodes, d, 2, 2, generator=generator, dtype=torch.float64)
    H = (H + H.transpose(-1, -2)) / 2  # a Hessian is symmetric in its input indices
    weights = torch.full((members, nodes), 0.01, dtype=torch.float64)
    return J, H, weights


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), scale=st.floats(0.01, 100.0))
def test_both_integrals_are_invariant_under_rescaling_the_representation(seed, scale):
    J, H, weights = _jets(seed)
    plain = sheet_from_jets(J, H, weights)
    scaled = sheet_from_jets(scale * J, scale * H, weights)
    for key in ("curvature_total_abs", "curvature_capped"):
        assert torch.allclose(plain[key], scaled[key], rtol=1e-9)


def test_a_spike_adds_at_most_the_cap_times_its_area():
    J, H, weights = _jets(1)
    plain = sheet_from_jets(J, H, weights)
    spiked_H = H.clone()
    spiked_H[:, 7] *= 1e4  # |K| at node 7 grows by 1e8
    spiked = sheet_from_jets(J, spiked_H, weights)
    assert (spiked["curvature_total_abs"] > 1e3 * plain["curvature_total_abs"]).all()
    dA = torch.linalg.det(J[:, 7].transpose(-1, -2) @ J[:, 7]).sqrt() * weights[:, 7]
    median_dA = torch.linalg.det(J.transpose(-1, -2) @ J).sqrt().median(dim=-1).values
    # node 7's capped contribution is (1/m)·dA there; it was at least 0 before
    assert (spiked["curvature_capped"] <= plain["curvature_capped"] + dA / median_dA + 1e-12).all()
    assert (spiked["curvature_capped"] < 10 * plain["curvature_capped"]).all()


def test_below_the_cap_the_two_integrals_agree():
    J, H, weights = _jets(2)
    tiny = sheet_from_jets(J, 1e-3 * H, weights)  # |K| ~ 1e-6 ≪ 1/m ~ 1
    assert torch.allclose(tiny["curvature_capped"], tiny["curvature_total_abs"], rtol=1e-12)


def test_a_sheet_without_used_nodes_has_zero_not_nan():
    J, H, weights = _jets(3)
    empty = sheet_from_jets(J, H, torch.zeros_like(weights))
    assert torch.equal(empty["curvature_capped"], torch.zeros(2, dtype=torch.float64))
