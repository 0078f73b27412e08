"""The models the book draws, trained once before the chapters (curvlab.studies.drawn_models)."""

import pytest


@pytest.mark.slow
def test_the_book_runs_are_trained_once_and_then_read_back(tiny_study, tiny_options, monkeypatch):
    from curvlab.studies import boundaries
    from curvlab.studies.drawn_models import BOUNDARIES
    from curvlab.studies.study import run_study

    wanted = [("xor", "ungated", 0), ("circles", "gated_elementwise", 1)]
    study = {k: v for k, v in tiny_study().items() if k != "confirmatory"}
    options = tiny_options()
    records = run_study(BOUNDARIES, "small", options, runs=wanted, **study).runs
    assert [(r["task"], r["model"], r["seed"]) for r in records] == wanted
    assert all(r["epochs"] >= 6 and r["parameters"] > 0 for r in records)
    assert len(list(options.directory.glob("retrain-*.json"))) == len(wanted)

    def no_training(run, task):
        raise AssertionError("trained although the weights are cached")

    monkeypatch.setattr(boundaries, "_train", no_training)
    assert run_study(BOUNDARIES, "small", options, runs=wanted, **study).runs == records
