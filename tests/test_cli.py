"""The command line runs a study at a tiny scale and writes its table."""

import csv
import subprocess
import sys

import pytest

from curvlab.__main__ import build_parser, main
from curvlab.attention import VARIANTS


@pytest.mark.slow
def test_decision_subcommand_writes_a_csv(tmp_path, monkeypatch):
    monkeypatch.setenv("CURVLAB_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "results.csv"
    arguments = "decision --scale small --seeds 1 --epochs 1 --tasks xor,blobs --device cpu"
    status = main([*arguments.split(), "--out", str(out), "--no-progress"])
    assert status == 0
    with out.open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 2 * len(VARIANTS)  # tasks × models, one seed, depth 1
    assert {row["task"] for row in rows} == {"xor", "blobs"}
    assert {"task", "model", "depth", "seed", "accuracy", "curvature_total_abs"} <= set(rows[0])
    assert list((tmp_path / "cache").glob("decision-*.json"))


def test_bad_arguments_exit_with_status_2_naming_them(capsys):
    with pytest.raises(SystemExit) as raised:
        main(["decision", "--scale", "enormous"])
    assert raised.value.code == 2
    assert "--scale" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["decision", "--seeds", "0"])
    assert "--seeds" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["decision", "--tasks", "mnist"])
    assert "--tasks" in capsys.readouterr().err


def test_subcommands_are_listed():
    parser = build_parser()
    assert parser.parse_args(["decision"]).scale == "small"


@pytest.mark.slow
def test_module_entry_point_shows_help():
    done = subprocess.run(
        [sys.executable, "-m", "curvlab", "--help"], capture_output=True, text=True, check=True
    )
    assert "decision" in done.stdout
