"""curvlab.measurement.adaptive_sheets: the adaptive integral of trained sheets on the fixed data
domain starts from the uniform domain rule's estimate, is the same from two base grids on a
trained sheet, and refuses bad arguments."""

import pytest
import torch

from curvlab.measurement.adaptive_sheets import adaptive_sheet
from curvlab.measurement.domains import DOMAIN_RADIUS, data_domain_grid
from curvlab.measurement.sheets import sheet_from_jets
from curvlab.models.ensemble import ensemble_jets, train_ensemble
from curvlab.studies.cells import build_members
from curvlab.studies.protocol import reproduce_config


def _trained_sheets(model="gated_elementwise", members=(("xor", 0), ("moons", 1)), epochs=60):
    """Small classifiers of the study's configuration, trained briefly, in float64."""
    config = {**reproduce_config("small"), "device": "cpu"}
    ens, _, train_x, train_y, _, _ = build_members(config, model, 1, list(members))
    train_ensemble(ens, train_x, train_y, epochs=epochs, learning_rate=0.05)
    ens = ens.with_params({k: v.double() for k, v in ens.params.items()})
    ens.buffers = {k: v.double() for k, v in ens.buffers.items()}
    return ens, train_x.double()


def test_the_base_grid_is_the_uniform_domain_rule():
    ens, train_x = _trained_sheets()
    out = adaptive_sheet(ens, train_x, DOMAIN_RADIUS, resolution=12, max_rounds=2)
    nodes, weights = data_domain_grid(train_x, 12, DOMAIN_RADIUS)
    uniform = sheet_from_jets(*ensemble_jets(ens, nodes), weights)
    # the same nodes, domain and immersion test: the same uniform estimate
    assert torch.allclose(
        out["curvature_total_abs_uniform"], uniform["curvature_total_abs"], rtol=1e-9
    )
    assert (out["sheet_area"] > 0).all()
    assert (out["curvature_total_abs"] >= out["curvature_total"].abs() - 1e-12).all()
    assert ((out["non_immersed"] >= 0) & (out["non_immersed"] <= 1)).all()


def test_members_integrated_together_are_each_as_alone():
    """Trained sheets of several tasks in one call and one at a time: each member's integrals,
    error, evaluations and rounds are its own.  The rule is exactly independent of its batch
    (tests/geometry/test_adaptive.py); what could differ is the round-off of the jets, and a
    value of the ensemble's jets does not depend on the points evaluated beside it when every
    call carries whole blocks of points (curvlab.geometry.density_calls.PAD): on this
    machine the two were equal to the last bit, the test allows 1e-12 relative."""
    members = (("xor", 0), ("moons", 1), ("circles", 2), ("spirals", 3))
    ens, train_x = _trained_sheets(members=members, epochs=60)
    settings = {"resolution": 8, "tolerance": 0.05}
    together = adaptive_sheet(ens, train_x, **settings)
    assert together["rounds"].max() > together["rounds"].min()  # some left the batch early
    for e in range(len(members)):
        alone = adaptive_sheet(ens.select([e]), train_x[e : e + 1], **settings)
        for key in ("evaluations", "rounds", "converged"):
            assert torch.equal(together[key][e], alone[key][0]), (e, key)
        for key in ("curvature_total_abs", "curvature_total", "sheet_area", "error"):
            assert torch.allclose(together[key][e], alone[key][0], rtol=1e-12, atol=0), (e, key)


@pytest.mark.slow
def test_a_trained_sheet_converges_from_two_base_grids():
    """The plan's convergence check on a trained sheet: started from 32² and from 64², the
    two estimates agree within the tolerance, and each says it converged."""
    ens, train_x = _trained_sheets(members=(("xor", 0),), epochs=400)
    coarse = adaptive_sheet(ens, train_x, resolution=32, tolerance=0.03)
    fine = adaptive_sheet(ens, train_x, resolution=64, tolerance=0.03)
    assert bool(coarse["converged"][0]) and bool(fine["converged"][0])
    assert (
        float((coarse["curvature_total_abs"] / fine["curvature_total_abs"]).log().abs()[0]) < 0.03
    )


def test_bad_arguments_are_named():
    ens, train_x = _trained_sheets(members=(("xor", 0),), epochs=2)
    with pytest.raises(ValueError, match="radius"):
        adaptive_sheet(ens, train_x, -1.0)
    with pytest.raises(ValueError, match="train_points"):
        adaptive_sheet(ens, train_x[0], 0.2)
    with pytest.raises(ValueError, match="train_points"):
        adaptive_sheet(ens, torch.cat([train_x, train_x]), 0.2)


def test_the_spike_map_agrees_with_the_adaptive_integral_and_its_grid():
    import numpy as np

    from curvlab.measurement.adaptive_sheets import spike_map

    ens, train_x = _trained_sheets(members=(("xor", 0),), epochs=60)
    spikes = spike_map(ens, train_x, resolution=32, adaptive_resolution=8, tolerance=0.05)
    alone = adaptive_sheet(ens, train_x, resolution=8, tolerance=0.05)
    assert spikes["curvature_total_abs"] == float(
        alone["curvature_total_abs"][0]
    )  # the same rule, recorded
    assert spikes["K_abs"].shape == spikes["sigma_max"].shape == (32, 32)
    assert spikes["peak_K"] == np.nanmax(spikes["K_abs"])
    assert (np.nan_to_num(spikes["sigma_max"]) >= np.nan_to_num(spikes["sigma_min"])).all()
    assert 0.01 <= spikes["top_share"] <= 1.0  # the top 1% of cells hold at least 1%
    low, high = train_x[0].amin(0).numpy(), train_x[0].amax(0).numpy()
    assert ((spikes["evaluated"] >= low) & (spikes["evaluated"] <= high)).all()
    assert len(spikes["evaluated"]) >= int(alone["evaluations"][0])
    # row i of the maps lies at y[i]: the peak's coordinates are its node's
    i, j = np.unravel_index(np.nanargmax(spikes["K_abs"]), spikes["K_abs"].shape)
    assert spikes["peak"] == (spikes["x"][j], spikes["y"][i])
    with pytest.raises(ValueError, match="ens"):
        spike_map(*_trained_sheets(epochs=2), resolution=16)  # two members
