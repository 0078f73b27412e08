"""The real-data study's figures: one panel per dataset, each model's interval where
mean_intervals puts it, the logistic regression's mean drawn, bad records refused by name."""

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.collections import PathCollection  # noqa: E402

from curvlab.plotting import (  # noqa: E402
    mean_intervals,
    plot_realdata_accuracy,
    plot_realdata_curvature,
)

RUNS = [
    {
        "dataset": dataset,
        "model": model,
        "seed": seed,
        "test_accuracy": base + 0.01 * seed + shift,
        "curvature_total_abs": 10.0 ** (seed - 1) * (2.0 if model == "gated_elementwise" else 1.0),
    }
    for dataset, base in (("wine", 0.9), ("digits", 0.8))
    for model, shift in (("ungated", 0.0), ("gated_elementwise", 0.02))
    for seed in range(4)
]
LOGISTIC = [
    {"dataset": d, "seed": s, "test_accuracy": 0.85} for d in ("wine", "digits") for s in range(4)
]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_an_interval_is_the_t_interval_of_the_mean_over_seeds():
    rows = mean_intervals(RUNS)
    assert [(r["dataset"], r["model"]) for r in rows][:2] == [
        ("wine", "ungated"),
        ("wine", "gated_elementwise"),
    ]
    values = np.array([0.9, 0.91, 0.92, 0.93])
    half = 3.182446305284263 * values.std(ddof=1) / 2  # t(0.975, 3) · sd / √4
    assert math.isclose(rows[0]["mean"], values.mean())
    assert math.isclose(rows[0]["ci_high"] - rows[0]["mean"], half, rel_tol=1e-9)
    assert all(r["n"] == 4 for r in rows)


def test_the_accuracy_figure_puts_each_interval_and_the_logistic_line_in_its_panel():
    fig, axes = plot_realdata_accuracy(RUNS, LOGISTIC)
    assert [ax.get_title() for ax in axes] == ["wine", "digits"]
    rows = mean_intervals(RUNS)
    for ax, dataset in zip(axes, ("wine", "digits"), strict=True):
        mine = [r for r in rows if r["dataset"] == dataset]
        bars = [c for c in ax.collections if c.get_segments()]
        tops = sorted(float(seg[:, 1].max()) for bars_ in bars for seg in bars_.get_segments())
        assert np.allclose(tops, sorted(r["ci_high"] for r in mine))
        dashed = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
        assert len(dashed) == 1 and np.allclose(dashed[0].get_ydata(), 0.85)


def test_the_curvature_figure_shows_every_positive_run_on_a_log_scale():
    runs = [*RUNS, {**RUNS[0], "seed": 9, "curvature_total_abs": None}]
    fig, axes = plot_realdata_curvature(runs)
    points = np.concatenate(
        [c.get_offsets()[:, 1] for c in axes[0].collections if isinstance(c, PathCollection)]
    )
    expected = [math.log10(r["curvature_total_abs"]) for r in RUNS if r["dataset"] == "wine"]
    assert sorted(points) == pytest.approx(sorted(expected))


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: mean_intervals([]), "runs"),
        (lambda: mean_intervals([{"dataset": "wine", "model": "ungated"}]), "runs"),
        (lambda: mean_intervals(RUNS[:1]), "runs"),
        (lambda: plot_realdata_accuracy(RUNS, []), "logistic"),
        (
            lambda: plot_realdata_curvature([{**r, "curvature_total_abs": 0.0} for r in RUNS]),
            "runs",
        ),
    ],
)
def test_bad_records_are_refused_by_name(call, name):
    with pytest.raises(ValueError, match=name):
        call()
