"""The models the book draws, trained once before the chapters (curvlab.studies.drawn_models)."""

import pytest


@pytest.mark.slow
def test_the_book_runs_are_trained_once_and_then_read_back(tiny_study, monkeypatch):
    from curvlab.studies import boundaries, drawn_models

    wanted = [("xor", "ungated", 0), ("circles", "gated_elementwise", 1)]
    study = tiny_study()
    records = drawn_models.retrain_book_runs("small", wanted, **study)
    assert [(r["task"], r["model"], r["seed"]) for r in records] == wanted
    assert all(r["epochs"] >= 6 and r["parameters"] > 0 for r in records)
    assert len(list(study["directory"].glob("retrain-*.json"))) == len(wanted)

    def no_training(run, task):
        raise AssertionError("trained although the weights are cached")

    monkeypatch.setattr(boundaries, "_train", no_training)
    assert drawn_models.retrain_book_runs("small", wanted, **study) == records
