"""The language-model study's figures: a dot per run, the seed mean inside its interval, the
book's colours, and refusals that name the argument."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from scipy import stats  # noqa: E402

from curvlab import plotting  # noqa: E402
from curvlab.plotting import tables  # noqa: E402

VARIANTS = ("ungated", "gated_elementwise")


def _runs(depth=2, seeds=4):
    rng = np.random.default_rng(0)
    runs = []
    for v, variant in enumerate(VARIANTS):
        for seed in range(seeds):
            run = {"variant": variant, "seed": seed, "bits_per_character": 2.5 - 0.1 * v}
            run["bits_per_character"] += float(rng.normal(0, 0.01))
            for layer in range(1, depth + 1):
                run[f"sink_layer{layer}"] = 0.1 * layer + v + float(rng.normal(0, 0.01))
            runs.append(run)
    return runs


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_the_seed_interval_is_the_t_interval_and_holds_the_mean():
    values = [2.0, 2.5, 2.1, 2.4, 2.2]
    mean, low, high = plotting.seed_interval(values, alpha=0.1)
    expected = stats.t.interval(0.9, 4, loc=np.mean(values), scale=stats.sem(values))
    assert mean == pytest.approx(np.mean(values))
    assert (low, high) == pytest.approx(expected)
    with pytest.raises(ValueError, match="values"):
        plotting.seed_interval([1.0])
    with pytest.raises(ValueError, match="values"):
        plotting.seed_interval([1.0, float("nan")])
    with pytest.raises(ValueError, match="alpha"):
        plotting.seed_interval([1.0, 2.0], alpha=1.5)


def test_bits_by_variant_draw_every_run_and_each_mean_in_its_colour():
    runs = _runs()
    fig, ax = plotting.plot_lm_by_variant(runs)
    assert [t.get_text() for t in ax.get_xticklabels()] == list(VARIANTS)
    dots = [c for c in ax.collections if len(c.get_offsets()) == 4]
    assert len(dots) == 2  # one scatter of four seeds per variant
    for variant, collection in zip(VARIANTS, dots, strict=True):
        drawn = sorted(np.asarray(collection.get_offsets())[:, 1])
        assert drawn == pytest.approx(
            sorted(r["bits_per_character"] for r in runs if r["variant"] == variant)
        )
        assert (
            matplotlib.colors.to_hex(collection.get_facecolor()[0])
            == plotting.COLORS[variant].lower()
        )
    assert "bits per character" in ax.get_ylabel()


def test_a_per_layer_measure_has_one_line_of_seed_means_per_variant():
    runs = _runs(depth=3)
    fig, ax = plotting.plot_lm_per_layer(runs, "sink", log=True)
    lines = {line.get_label(): line for line in ax.lines if not line.get_label().startswith("_")}
    assert set(lines) == set(VARIANTS)
    for variant, line in lines.items():
        means = [
            np.mean([r[f"sink_layer{layer}"] for r in runs if r["variant"] == variant])
            for layer in (1, 2, 3)
        ]
        assert line.get_ydata() == pytest.approx(means)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2", "3"]
    assert ax.get_yscale() == "log"


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda runs: plotting.plot_lm_per_layer(runs, "curvature_attention"), "measure"),
        (lambda runs: plotting.plot_lm_by_variant(runs, variants=["ablation"]), "variants"),
        (lambda runs: plotting.plot_lm_by_variant(runs[:1]), "runs"),
    ],
)
def test_bad_arguments_are_named(call, name):
    with pytest.raises(ValueError, match=name):
        call(_runs())


def test_the_lm_claims_table_has_one_row_per_claim_in_order():
    records = [
        {
            "measure": measure,
            "model": "gated_elementwise",
            "baseline": "ungated",
            "mean_model": 1.0,
            "mean_baseline": 2.0,
            "effect": effect,
            "ci_low": effect - 0.1,
            "ci_high": effect + 0.1,
            "p": 0.01,
            "p_holm": None if measure == "sink" else 0.03,
            "verdict": "supported",
        }
        for measure, effect in (("bits_per_character", 0.25), ("sink", -0.5))
    ]
    lines = tables.lm_claims_table(records).splitlines()
    assert len(lines) == 4
    assert lines[2].startswith("| bits_per_character | gated_elementwise vs ungated | 1; 2 |")
    assert "+0.250 [+0.150, +0.350]" in lines[2] and "| 0.03 |" in lines[2]
    assert "-0.500 [-0.600, -0.400]" in lines[3] and "(unadjusted)" in lines[3]
