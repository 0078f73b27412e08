"""The Part II study as Markdown tables (curvlab.plotting.tables): one row per record, and
escaped cells."""

import re

import pytest

from curvlab.analysis.claims import EMPIRICAL_VERDICTS
from curvlab.analysis.decidability import verdict_label
from curvlab.analysis.empirical import analyse
from curvlab.plotting import tables


def _claim(name, verdict="supported", *, statement=None, margin=None, converged=True, **fields):
    """A claims.json record; converged-only fields equal the main ones unless overridden."""
    record = {
        "claim": name,
        "statement": statement or f"statement of {name}",
        "measure": "test_accuracy",
        "effect": 0.05,
        "ci_low": 0.02,
        "ci_high": 0.08,
        "p": 0.001,
        "p_holm": 0.004,
        "n_seeds": 20,
        "mde_80": 0.031,
        "margin": margin,
        "verdict": verdict,
        "unconverged_runs": 3,
    }
    main = {k: v for k, v in fields.items() if not k.startswith("converged_")}
    record.update(main)
    for key in ("effect", "ci_low", "ci_high", "p", "n_seeds", "verdict"):
        record[f"converged_{key}"] = record[key] if converged else None
    if converged:
        record["converged_n_seeds"] = 17
    record.update({k: v for k, v in fields.items() if k.startswith("converged_")})
    return record


CLAIMS = [
    _claim("E1-sheet", statement="gated ∫|K| dA > ungated", measure="log_curvature_total_abs"),
    _claim("E1-proxy", "inconclusive", ci_low=-0.01, p_holm=0.3, converged_verdict="supported"),
    _claim("E1-extrinsic", converged=False),
    _claim("E2", "contradicted", effect=-0.04, ci_low=-0.06, ci_high=-0.02),
    _claim("E2-linear", "inconclusive", margin=0.01, ci_low=-0.02, ci_high=0.015, p_holm=0.2),
    _claim(
        "E3",
        "supported",
        effect=0.4,
        ci_low=0.2,
        ci_high=0.55,
        spearman_within=0.38,
        pooled_r=-0.12,
        paper_r=0.79,
    ),
]
GEOMETRIC = [
    {"claim": "T1", "statement": "flat", "passed": 1, "n_checks": 1, "verdict": "reproduced"},
    {
        "claim": "T3",
        "statement": "K > 0 | only gated",
        "passed": 2,
        "n_checks": 3,
        "verdict": "partly",
    },
]


def _cells(row):
    """The cells of a Markdown table row, splitting on unescaped pipes only."""
    return re.split(r"(?<!\\)\|", row)[1:-1]


def test_the_claims_table_has_one_row_per_claim_and_every_row_its_six_cells():
    lines = tables.claims_table(GEOMETRIC + CLAIMS).splitlines()
    assert len(lines) == 2 + len(GEOMETRIC) + len(CLAIMS)
    assert [len(_cells(line)) for line in lines] == [6] * len(lines)
    keys = [_cells(line)[0].strip() for line in lines[2:]]
    assert keys == [f"**{r['claim']}**" for r in GEOMETRIC + CLAIMS]


def test_pipes_in_statements_are_escaped_in_table_cells():
    table = tables.claims_table(GEOMETRIC + CLAIMS)
    assert "gated ∫\\|K\\| dA > ungated" in table
    assert "K > 0 \\| only gated" in table
    sheet = next(line for line in table.splitlines() if "E1-sheet" in line)
    assert _cells(sheet)[1].strip() == "gated ∫\\|K\\| dA > ungated"


def test_a_geometric_row_counts_its_passed_checks():
    assert tables.geometric_row(GEOMETRIC[1]).startswith(
        "| **T3** | K > 0 \\| only gated | 2 of 3 checks | | **partly** |"
    )


def test_an_empirical_row_carries_interval_mde_margin_p_and_the_converged_verdict():
    linear = tables.empirical_row(CLAIMS[4])
    assert "+0.050 [-0.020, +0.015]; margin ±0.01 (TOST, 90% CI); mde₈₀ 0.031" in linear
    cells = [c.strip() for c in _cells(linear)]
    assert cells[3:] == ["0.2", "**inconclusive**", "inconclusive"]
    assert _cells(tables.empirical_row(CLAIMS[2]))[-1].strip() == "–"  # not recomputed
    assert "mde₈₀" not in tables.empirical_row({**CLAIMS[0], "mde_80": None})


PILOT = [
    {
        "budget": 400,
        "runs": 120,
        "converged_share": 0.81,
        "baseline_accuracy": 0.91,
        "baseline_gain": 0.001,
        "qualifies": False,
        "ladder_share": 0.97,
    },
    {
        "budget": 800,
        "runs": 120,
        "converged_share": 0.85,
        "baseline_accuracy": 0.911,
        "baseline_gain": None,
        "qualifies": False,
        "ladder_share": 0.85,
    },
]


def test_the_pilot_table_has_one_row_per_budget():
    lines = tables.pilot_table(PILOT).splitlines()
    assert len(lines) == 2 + len(PILOT)
    assert lines[2] == "| 400 | 120 | 0.810 | 0.9100 | +0.0010 | no | 0.970 |"
    assert "| – |" in lines[3]


def _point(factor, value=None, e1=(0.3, 0.1, 0.5), e2=(0.02, -0.01, 0.05), share=0.9):
    row = {
        "factor": factor,
        "converged_share": share,
        "baseline_accuracy": 0.9,
        "baseline_accuracy_nonlinear": 0.87,
        "n_seeds": 8,
    }
    if factor != "default":
        row[factor] = value
    for key, (effect, low, high) in (("e1", e1), ("e2", e2)):
        row.update({f"{key}_effect": effect, f"{key}_ci_low": low, f"{key}_ci_high": high})
    return row


SWEEP = [
    _point("default"),
    _point("d_model", 16, share=0.75),
    _point("depth", 2, e1=(-0.4, -0.6, -0.2)),
    _point("n_train", 64, e2=(0.03, 0.01, 0.05)),
]


def test_the_sweep_table_has_one_row_per_point():
    lines = tables.sweep_table(SWEEP).splitlines()
    assert len(lines) == 2 + len(SWEEP)
    assert [len(_cells(line)) for line in lines] == [6] * len(lines)
    assert lines[2].startswith("| small | 0.90 | 0.900 | 0.870 | +0.300 [+0.100, +0.500] |")
    assert lines[3].startswith("| d_model = 16 | 0.75 |")


def test_the_table_reads_real_claims_of_the_analysis():
    """On claims computed by the study's own analysis: one row and one verdict each."""
    runs = []
    for seed in range(6):
        for task in (
            "half_plane",
            "blobs",
            "xor",
            "circles",
            "moons",
            "spirals",
            "spirals3",
            "checkerboard",
        ):
            for model in (
                "ungated",
                "ungated_wide",
                "gated_headwise",
                "gated_elementwise",
                "ablation",
            ):
                value = 0.8 + (0.03 + 0.004 * (seed % 3) if model.startswith("gated") else 0)
                runs.append(
                    {
                        "task": task,
                        "model": model,
                        "depth": 1,
                        "seed": seed,
                        "boundary": "linear" if task in ("half_plane", "blobs") else "x",
                        "converged": seed != 0,
                        "test_accuracy": value,
                        "log_curvature_total_abs": value + 0.01 * seed,
                        "log_rho": value - 0.02 * seed,
                        "log_rho_normal": value,
                    }
                )
    records = analyse(runs)["claims"]
    table = tables.claims_table(records).splitlines()
    assert len(table) == 2 + len(records)
    for record, row in zip(records, table[2:], strict=True):
        assert f"**{verdict_label(record)}**" in row
        assert record["verdict"] in EMPIRICAL_VERDICTS


def test_measure_checks_table_has_a_row_per_surface_and_escapes_the_pipes():
    from curvlab.studies.measure_checks import closed_form_checks

    lines = tables.measure_checks_table(closed_form_checks(resolution=4)).splitlines()
    assert len(lines) == 2 + 3
    assert lines[0].startswith("| surface | ∫\\|K\\| dA | ρ₀ | ρ⊥ |")
    assert all(line.count(" | ") == 3 for line in lines[2:])  # four cells: no pipe splits one
    assert "exact 0.5000" in lines[2]


def test_step_table_lines_up_the_models_by_step():
    gaps = {
        "a": [
            {"h": 0.1, "median_gap": 0.2, "max_gap": 3.0},
            {"h": 0.001, "median_gap": 1e-5, "max_gap": 1e-3},
        ],
        "b": [
            {"h": 0.1, "median_gap": 0.1, "max_gap": 1.0},
            {"h": 0.001, "median_gap": 2e-5, "max_gap": 4e-3},
        ],
    }
    lines = tables.step_table(gaps).splitlines()
    assert lines[0] == "| h | a: median gap | a: largest gap | b: median gap | b: largest gap |"
    assert lines[3] == "| 1e-03 | 1.0e-05 | 1.0e-03 | 2.0e-05 | 4.0e-03 |"
    gaps["b"][1]["h"] = 0.01
    with pytest.raises(ValueError, match="gaps"):
        tables.step_table(gaps)


def test_numbers_table_formats_each_kind_of_value_and_escapes_the_pipes():
    import numpy as np
    import torch

    table = tables.numbers_table(
        ["what", "∫|K| dA", "count", "converged"],
        [
            ["gated", np.float64(0.123456), np.int64(7), np.bool_(True)],
            ["a | b", torch.tensor(2.5e-9), 12, False],
        ],
        digits=3,
    )
    assert table.splitlines() == [
        "| what | ∫\\|K\\| dA | count | converged |",
        "|---|---|---|---|",
        "| gated | 0.123 | 7 | yes |",
        "| a \\| b | 2.5e-09 | 12 | no |",
    ]


def test_numbers_table_refuses_a_ragged_row_and_a_bad_precision():
    with pytest.raises(ValueError, match="rows"):
        tables.numbers_table(["a", "b"], [[1.0]])
    with pytest.raises(ValueError, match="head"):
        tables.numbers_table([], [])
    with pytest.raises(ValueError, match="digits"):
        tables.numbers_table(["a"], [[1.0]], digits=0)
