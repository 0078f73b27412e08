"""The study's curvature measures on closed-form surfaces, and the proxy's step stability."""

import math

import pytest
import torch

from curvlab.models.attention import build_classifier
from curvlab.studies.measure_checks import closed_form_checks, rho_step_stability


def _table(rows):
    return {(r["surface"].split("(")[0].split(" ")[0], r["measure"]): r for r in rows}


def test_closed_form_values_are_met():
    rows = closed_form_checks(resolution=32)
    assert len(rows) == 9
    for row in rows:
        assert row["error"] == abs(row["computed"] - row["exact"])
        tolerance = 1e-3 if row["measure"] == "∫|K| dA" else 1e-12
        assert row["error"] < tolerance, row
    table = _table(rows)
    assert math.isclose(table["sphere", "∫|K| dA"]["exact"], math.pi / math.sqrt(2))


def test_the_quadrature_error_falls_like_the_square_of_the_spacing():
    coarse = _table(closed_form_checks(resolution=8))["sphere", "∫|K| dA"]["error"]
    fine = _table(closed_form_checks(resolution=16))["sphere", "∫|K| dA"]["error"]
    assert 3.5 < coarse / fine < 4.5


def test_the_measures_see_different_things():
    table = _table(closed_form_checks(resolution=8))
    computed = {key: row["computed"] for key, row in table.items()}
    assert all(computed["sphere", m] > 0.1 for m in ("∫|K| dA", "ρ₀", "ρ⊥"))
    assert computed["cylinder", "∫|K| dA"] < 1e-12 < 0.1 < computed["cylinder", "ρ⊥"]
    assert computed["plane", "ρ⊥"] < 1e-12 < 0.1 < computed["plane", "ρ₀"]


@pytest.mark.parametrize("d_model", [4, 32])
def test_the_finite_difference_ratio_tends_to_the_autograd_limit(d_model):
    model = build_classifier("gated_elementwise", d_model=d_model, seed=1)
    points = 2 * torch.rand(16, 2, generator=torch.Generator().manual_seed(2)) - 1
    rows = rho_step_stability(model, points, steps=(1e-1, 1e-2, 1e-3))
    gaps = [r["median_gap"] for r in rows]
    assert gaps[2] < 1e-5 and rows[2]["max_gap"] < 1e-4
    assert gaps[0] > 30 * gaps[1] > 900 * gaps[2]  # truncation: the gap falls like h²
    assert next(model.parameters()).dtype == torch.float32  # the caller's model is untouched


def test_bad_arguments_are_named():
    model = build_classifier("ungated", seed=0)
    with pytest.raises(ValueError, match="points"):
        rho_step_stability(model, torch.zeros(3))
    with pytest.raises(ValueError, match="steps"):
        rho_step_stability(model, torch.zeros(2, 2), steps=(0.0,))
    with pytest.raises(TypeError, match="model"):
        rho_step_stability(lambda x: x, torch.zeros(2, 2))
    with pytest.raises(ValueError, match="resolution"):
        closed_form_checks(resolution=1)
