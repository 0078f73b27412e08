"""The command line is a table of studies: common options once, a folder for --out, no
command falling through into another, and each study writing its result."""

import csv
import dataclasses
import functools
import json
import subprocess
import sys

import pytest

from curvlab import cli
from curvlab.cli import STUDIES, build_parser, main
from curvlab.models.attention import VARIANTS
from curvlab.studies.result import StudyResult
from curvlab.studies.study import Options

COMMANDS = (
    "reproduce",
    "pilot",
    "sweep",
    "boundaries",
    "depth",
    "poole",
    "lm",
    "ensemble-benchmark",
    "adaptive-benchmark",
    "realdata",
)


def test_every_study_is_registered_with_the_common_options():
    assert set(COMMANDS) == set(STUDIES)
    parser = build_parser()
    for name, study in STUDIES.items():
        assert study.name == name
        args = parser.parse_args([name, "--out", "here", "--no-progress", "--device", "cpu"])
        assert (args.command, args.out, args.no_progress, args.device) == (
            name,
            "here",
            True,
            "cpu",
        )
        assert args.scale == "small"
        if study.caches:
            assert parser.parse_args([name, "--refresh", "--cache-dir", "c"]).refresh


def test_bad_arguments_exit_with_status_2_naming_them(capsys):
    for argv, option in (
        (["depth", "--scale", "enormous"], "--scale"),
        (["depth", "--seeds", "0"], "--seeds"),
        (["reproduce", "--seeds", "0"], "--seeds"),
        (["lm", "--steps", "0"], "--steps"),
        (["reproduce", "--tasks", "mnist"], "--tasks"),
        (["reproduce", "--device", "tpu"], "--device"),
        (["pilot", "--depths", "2"], "--depths"),  # another study's option
        (["realdata", "--datasets", "iris"], "--datasets"),
        (["realdata", "--seeds", "0"], "--seeds"),
    ):
        with pytest.raises(SystemExit) as raised:
            main(argv)
        assert raised.value.code == 2
        assert option in capsys.readouterr().err


@pytest.fixture
def driver(monkeypatch):
    """The driver replaced by a recorder: each call's study name, scale, options, overrides;
    every study's report and special writer removed, so that any result can stand in."""
    calls = []

    def run_study(study, scale, options, **overrides):
        calls.append((study.name, scale, options, overrides))
        return StudyResult(runs=[{"study": study.name}], meta={"scale": scale})

    monkeypatch.setattr(cli, "run_study", run_study)
    monkeypatch.setattr(cli, "WRITERS", {})
    for name, study in STUDIES.items():
        monkeypatch.setitem(cli.STUDIES, name, dataclasses.replace(study, report=None))
    return calls


def test_an_unknown_command_is_refused_and_never_runs_another_study(driver):
    for command in ("decision", "depths", "unknown"):
        with pytest.raises(SystemExit) as raised:
            main([command])
        assert raised.value.code == 2
    assert driver == []


def test_each_command_runs_its_own_study_and_writes_its_result_into_the_folder(tmp_path, driver):
    for command in COMMANDS:
        assert main([command, "--out", str(tmp_path / command)]) == 0
        assert StudyResult.read(tmp_path / command).runs == ({"study": command},)
    assert [call[0] for call in driver] == list(COMMANDS)


def test_the_common_options_make_the_options_and_a_studys_own_its_overrides(tmp_path, driver):
    main(["depth", "--seeds", "2", "--depths", "1", "4", "--device", "cpu", "--jobs", "1"])
    main(["reproduce", "--confirmatory-seeds", "0", "--tasks", "xor,blobs", "--refresh"])
    main(["realdata", "--cache-dir", str(tmp_path), "--no-progress", "--datasets", "wine"])
    (depth, scale, options, overrides), reproduce, realdata = driver
    assert (depth, scale, overrides) == ("depth", "small", {"seeds": [0, 1], "depths": [1, 4]})
    assert options == Options(device="cpu", jobs=1)
    assert reproduce[3] == {"confirmatory": False, "tasks": ["xor", "blobs"]}
    assert reproduce[2].refresh and not realdata[2].progress
    assert realdata[2].directory == str(tmp_path) and realdata[3] == {"datasets": ["wine"]}


def test_a_study_error_is_a_usage_error(monkeypatch, capsys):
    def fail(study, scale, options, **overrides):
        raise ValueError("seeds: expected at least three")

    monkeypatch.setattr(cli, "run_study", fail)
    with pytest.raises(SystemExit) as raised:
        main(["reproduce"])
    assert raised.value.code == 2 and "seeds" in capsys.readouterr().err


@pytest.mark.slow
def test_the_depth_study_writes_depth_csv_into_the_out_folder(tmp_path):
    out = tmp_path / "out"
    argv = ["depth", "--seeds", "1", "--depths", "1", "--out", str(out), "--device", "cpu"]
    assert main([*argv, "--cache-dir", str(tmp_path / "cache"), "--no-progress"]) == 0
    result = StudyResult.read(out, names={"runs": "depth.csv"})
    assert {r["depth"] for r in result.runs} == {1} and result.meta["growth_laws"]
    assert not (out / "runs.csv").exists()


@pytest.mark.slow
def test_module_entry_point_shows_help():
    done = subprocess.run(
        [sys.executable, "-m", "curvlab", "--help"], capture_output=True, text=True, check=True
    )
    assert all(command in done.stdout for command in COMMANDS)


@pytest.mark.slow
def test_reproduce_subcommand_writes_runs_and_claims(tmp_path, monkeypatch, tiny_study):
    import curvlab.studies.reproduce as reproduce_module

    geometric = [{"claim": "T1", "statement": "flat", "checks": {"a": True}, "passed": 1}]
    geometric[0] |= {"n_checks": 1, "verdict": "reproduced"}
    monkeypatch.setattr(reproduce_module, "geometric_claims", lambda directory: geometric)
    # The command line has no quadrature options: the study it starts estimates curvature on
    # the tiny configuration's coarse grid, not on the plan's (the costly part of a study).
    quadrature = {
        key: tiny_study()[key]
        for key in (
            "resolution",
            "resolution_check",
            "rho_points",
            "adaptive_resolution",
            "adaptive_resolution_check",
        )
    }
    configure = functools.partial(reproduce_module.reproduction_config, **quadrature)
    study = dataclasses.replace(reproduce_module.REPRODUCE, configure=configure)
    monkeypatch.setitem(cli.STUDIES, "reproduce", study)
    out = tmp_path / "out"
    arguments = (
        "reproduce --scale small --seeds 3 --epochs 3 --tasks xor,blobs --device cpu "
        "--confirmatory-seeds 3"
    )
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
    studies = [(r["study"], r["rule"]) for r in rows]
    assert studies.count(("exploratory", "ladder")) == 2 * 3 * len(VARIANTS)
    assert studies.count(("confirmatory", "fixed_budget")) == 2 * 3 * len(VARIANTS)
    assert (out / "claims.json").is_file() and (out / "task_effects.png").is_file()
    document = json.loads((out / "claims.json").read_text())
    assert document["geometric"] == geometric and len(document["plan_sha256"]) == 64
    named = {(c["claim"], c["study"]) for c in document["claims"]}
    assert {("E1-sheet", "exploratory"), ("E3", "confirmatory")} <= named
    assert StudyResult.read(out).claims_document() == document
