"""curvlab.studies.cells: a cell's adaptive integrals, all members in one call, are each
member's own (as one member at a time)."""

import pytest

from curvlab.models.ensemble import train_ensemble
from curvlab.studies.cells import adaptive_members, build_members
from curvlab.studies.protocol import reproduce_config
from curvlab.studies.reproduce import confirmatory_overrides


def test_adaptive_members_together_are_as_one_at_a_time():
    config = {**reproduce_config("small"), **confirmatory_overrides(), "device": "cpu"}
    config["adaptive_tolerance"] = 0.1
    members = [("xor", 0), ("moons", 1), ("circles", 2)]
    ens, _, train_x, train_y, _, _ = build_members(config, "gated_elementwise", 1, members)
    train_ensemble(ens, train_x, train_y, epochs=40, learning_rate=0.05)
    ens = ens.with_params({k: v.double() for k, v in ens.params.items()})
    ens.buffers = {k: v.double() for k, v in ens.buffers.items()}
    chosen = [2, 0]  # a subset, out of order: the keys are the members' indices
    together = adaptive_members(ens, train_x.double(), config, chosen, 8)
    alone = adaptive_members(ens, train_x.double(), config, chosen, 8, batched=False)
    assert sorted(together) == sorted(alone) == [0, 2]
    for e in chosen:
        assert together[e]["evaluations"] == alone[e]["evaluations"] > 5 * 8 * 8
        assert together[e]["converged"] == alone[e]["converged"]
        for key in ("curvature_total_abs", "error"):
            assert together[e][key] == pytest.approx(alone[e][key], rel=1e-12, abs=0)
    assert adaptive_members(ens, train_x.double(), config, [], 8) == {}
