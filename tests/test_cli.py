"""The command line runs a study at a tiny scale and writes its table."""

import csv
import subprocess
import sys

import pytest

from curvlab.cli import build_parser, main
from curvlab.models.attention import VARIANTS


def test_bad_arguments_exit_with_status_2_naming_them(capsys):
    with pytest.raises(SystemExit) as raised:
        main(["depth", "--scale", "enormous"])
    assert raised.value.code == 2
    assert "--scale" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["reproduce", "--out", "x", "--seeds", "0"])
    assert "--seeds" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["reproduce", "--out", "x", "--tasks", "mnist"])
    assert "--tasks" in capsys.readouterr().err


def test_subcommands_are_listed():
    parser = build_parser()
    assert parser.parse_args(["depth"]).scale == "small"
    assert parser.parse_args(["reproduce", "--out", "x"]).scale == "small"
    with pytest.raises(SystemExit):
        parser.parse_args(["decision"])  # retired: the reproduction supersedes it


@pytest.mark.slow
def test_module_entry_point_shows_help():
    done = subprocess.run(
        [sys.executable, "-m", "curvlab", "--help"], capture_output=True, text=True, check=True
    )
    assert "reproduce" in done.stdout and "depth" in done.stdout


def test_reproduce_needs_an_output_directory_and_a_known_device(capsys):
    with pytest.raises(SystemExit) as raised:
        main(["reproduce", "--scale", "small"])
    assert raised.value.code == 2 and "--out" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["reproduce", "--out", "x", "--device", "tpu"])
    assert "--device" in capsys.readouterr().err


@pytest.mark.slow
def test_reproduce_subcommand_writes_runs_and_claims(tmp_path):
    out = tmp_path / "out"
    arguments = "reproduce --scale small --seeds 3 --epochs 3 --tasks xor,blobs --device cpu"
    status = main(
        [
            *arguments.split(),
            "--out",
            str(out),
            "--no-progress",
            "--cache-dir",
            str(tmp_path / "cache"),
        ]
    )
    assert status == 0
    with (out / "runs.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 2 * 3 * len(VARIANTS)
    assert (out / "claims.json").is_file() and (out / "task_effects.png").is_file()
