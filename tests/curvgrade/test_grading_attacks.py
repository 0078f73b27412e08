"""The attack suite: honest and cheating submissions of the fixture chapter, graded for real.

One grading run (module fixture, ``--jobs 2``) of every sample of
tests/curvgrade/fixtures/sample_submissions.py: honest right and wrong work, crashes, loops,
tampering, every attack of the classroom issue and a few more, and malformed files. Each
sample must earn exactly the points its honest work underneath earns (cheating adds nothing),
with the status and flags it is designed for; no process may outlive grading and no file
outside the output folder may change.
"""

from __future__ import annotations

import csv
import hashlib
import importlib.util
import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from curvgrade.bundle import Bundle
from curvgrade.cli import main
from curvgrade.sandbox import SANDBOX_UIDS, sandbox_problem

pytestmark = [
    pytest.mark.slow,
    # Skipped on a machine without a sandbox, never in CI (CI installs bubblewrap).
    pytest.mark.skipif(
        sandbox_problem() is not None and not os.environ.get("CI"),
        reason=f"no sandbox here: {sandbox_problem()}",
    ),
]

FIXTURES = Path(__file__).parent / "fixtures"
CHAPTER = FIXTURES / "sphere-demo.md"
DETACHED_DELAY = 3.0


def _samples_module():
    spec = importlib.util.spec_from_file_location(
        "sample_submissions", FIXTURES / "sample_submissions.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


SAMPLES = _samples_module()


def _digests(*folders: Path) -> dict[str, str]:
    found = {}
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def _sandbox_processes() -> list[int]:
    """Live processes whose real uid is a sandbox uid (zombies, already dead and awaiting
    their reaper, are not running and are left out; /proc's owner of a process that made itself
    undumpable is root, its status still names its uid)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = dict(
                line.split(":", 1) for line in (entry / "status").read_text().splitlines()
            )
            uid = int(status["Uid"].split()[0])
            state = status["State"].split()[0]
        except (OSError, KeyError, ValueError, IndexError):
            continue
        if uid in SANDBOX_UIDS and state not in ("Z", "X"):
            pids.append(int(entry.name))
    return pids


def _still_running(grace: float = 2.0) -> list[int]:
    """Sandbox processes still alive ``grace`` seconds after grading returned: SIGKILLed
    processes of a torn-down namespace can take a moment to leave /proc on a loaded machine,
    a process that escaped the kill stays.  The grace is shorter than DETACHED_DELAY, so a
    detached attacker still waiting to strike is still alive when this looks."""
    deadline = time.monotonic() + grace
    while (pids := _sandbox_processes()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return pids


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Editions, samples, one grading run; what it wrote and what stayed untouched."""
    root = tmp_path_factory.mktemp("classroom")
    editions = root / "editions"
    assert main(["student", str(CHAPTER), "--out", str(editions)]) == 0
    chapter_copy = root / "book" / "sphere-demo.md"
    chapter_copy.parent.mkdir()
    shutil.copy(CHAPTER, chapter_copy)
    out = root / "grades"
    submissions = root / "submissions"
    bundle_path = editions / "autograder" / "sphere-demo.json"
    written = SAMPLES.write_samples(
        editions / "student" / "sphere-demo.ipynb",
        submissions,
        instructor=editions / "instructor" / "sphere-demo.ipynb",
        chapter=chapter_copy,
        bundle=bundle_path,
        scores=out / "scores.csv",
        detached_delay=DETACHED_DELAY,
    )
    before = _digests(editions, submissions, chapter_copy.parent)
    start = time.monotonic()
    status = main(
        [
            "grade",
            "--chapter",
            str(bundle_path),
            "--submissions",
            str(submissions),
            "--out",
            str(out / "scores.csv"),
            "--timeout",
            "45",
            "--cell-timeout",
            "8",
            "--jobs",
            "2",
        ]
    )
    seconds = time.monotonic() - start
    assert status == 0
    left_running = _still_running()
    time.sleep(DETACHED_DELAY + 2)  # a detached process would have struck by now
    with (out / "scores.csv").open(encoding="utf-8") as handle:
        scores = {row["student"]: row for row in csv.DictReader(handle)}
    with (out / "scores-checks.csv").open(encoding="utf-8") as handle:
        checks = list(csv.DictReader(handle))
    return {
        "root": root,
        "out": out,
        "scores": scores,
        "checks": checks,
        "bundle": Bundle.read(bundle_path),
        "seconds": seconds,
        "files": written,
        "before": before,
        "after": _digests(editions, submissions, chapter_copy.parent),
        "left_running": left_running,
        "scores_text": (out / "scores.csv").read_text(encoding="utf-8"),
    }


def test_every_file_of_the_submissions_folder_gets_a_row(graded):
    students = set(graded["scores"])
    for path in graded["files"].values():
        student = path.name[: -len(".ipynb")] if path.name.endswith(".ipynb") else path.name
        if path.suffix == ".IPYNB":
            student = path.stem
        assert student in students, f"{path.name} has no row"
        assert (graded["out"] / "feedback" / f"{student}.md").is_file()
    assert len(students) == len(graded["files"])


@pytest.mark.parametrize("name", sorted(SAMPLES.SAMPLES))
def test_each_sample_earns_exactly_what_its_honest_work_earns(graded, name):
    sample = SAMPLES.SAMPLES[name]
    row = graded["scores"][name]
    earned = {label: float(row[label]) for label in sample.expected}
    assert earned == {label: float(points) for label, points in sample.expected.items()}, row[
        "notes"
    ]
    assert row["status"] == sample.status, row["notes"]
    assert set(row["flags"].split()) >= set(sample.flags)
    for note in sample.notes:
        assert note in row["notes"]


def test_no_cheating_submission_scores_above_honest_wrong_work(graded):
    honest_wrong = float(graded["scores"]["wrong"]["total"])
    assert honest_wrong < float(graded["scores"]["right"]["total"])
    for name in SAMPLES.SAMPLES:
        if name.startswith("attack-"):
            assert float(graded["scores"][name]["total"]) <= honest_wrong, name


def test_right_work_keeps_full_marks_and_an_upper_case_suffix_is_graded(graded):
    for name in ("right", "right-upper"):
        assert float(graded["scores"][name]["total"]) == graded["bundle"].points
        assert graded["scores"][name]["status"] == "ok"


def test_malformed_files_are_unreadable_with_a_reason(graded):
    for name in SAMPLES.MALFORMED:
        student = name.removesuffix(".ipynb")
        row = graded["scores"][student]
        assert row["status"] == "unreadable" and float(row["total"]) == 0
        assert row["notes"].startswith("not a")
    assert "source is a int" in graded["scores"]["source-number"]["notes"]
    assert "nested too deeply" in graded["scores"]["nested"]["notes"]
    assert "a .md file" in graded["scores"]["essay.md"]["notes"]


def test_no_process_outlives_grading(graded):
    assert graded["left_running"] == []
    assert _sandbox_processes() == []


def test_no_file_outside_the_output_folder_changes(graded):
    assert graded["after"] == graded["before"]
    assert "mallory" not in graded["scores_text"]
    assert not Path("/tmp/curvlab-pwned").exists()


def test_instructor_edition_runs_every_check_but_its_points_are_withheld(graded):
    rows = [row for row in graded["checks"] if row["student"] == "attack-instructor-edition"]
    assert rows and all(row["reason"] == "passed" for row in rows)
    assert all(float(row["earned"]) == float(row["points"]) for row in rows)
    assert float(graded["scores"]["attack-instructor-edition"]["total"]) == 0


def test_solution_identical_answers_are_flagged(graded):
    flags = graded["scores"]["attack-instructor-edition"]["flags"].split()
    assert any(flag.startswith("matches-solution:") for flag in flags)
    assert not any(
        flag.startswith("matches-solution:") for flag in graded["scores"]["right"]["flags"].split()
    )


def test_feedback_never_shows_hidden_checks_or_student_error_text(graded):
    bundle = graded["bundle"]
    hidden = [check for check in bundle.checks if check.hidden]
    for path in (graded["out"] / "feedback").glob("*.md"):
        text = path.read_text(encoding="utf-8")
        for check in hidden:
            assert check.what not in text, path.name
            for line in check.source.split("\n")[1:]:
                if len(line.strip()) > 12:
                    assert line.strip() not in text, path.name
        assert "__import__" not in text


def test_summary_has_every_exercise_and_the_gradebook_has_manual_columns(graded):
    with (graded["out"] / "summary.csv").open(encoding="utf-8") as handle:
        summary = {row["exercise"]: row for row in csv.DictReader(handle)}
    assert set(summary) == {exercise.label for exercise in graded["bundle"].exercises}
    graded_rows = [row for row in graded["scores"].values() if row["status"] != "unreadable"]
    for label, row in summary.items():
        mean = sum(float(r[label]) for r in graded_rows) / len(graded_rows)
        assert float(row["mean"]) == pytest.approx(mean, abs=1e-4)
        counts = sum(int(item.split(":")[1]) for item in row["distribution"].split())
        assert counts == len(graded_rows)
    assert "manual:ex-sphere-demo-sign" in next(iter(graded["scores"].values()))


def test_grading_the_same_submission_twice_gives_the_same_grade(graded, tmp_path):
    submissions = tmp_path / "again"
    submissions.mkdir()
    for name in ("wrong", "attack-simplify"):
        shutil.copy(graded["files"][name], submissions / f"{name}.ipynb")
    bundle = graded["root"] / "editions" / "autograder" / "sphere-demo.json"
    arguments = ["grade", "--chapter", str(bundle), "--submissions", str(submissions)]
    assert main([*arguments, "--out", str(tmp_path / "g" / "scores.csv"), "--timeout", "45"]) == 0
    with (tmp_path / "g" / "scores.csv").open(encoding="utf-8") as handle:
        again = {row["student"]: row for row in csv.DictReader(handle)}
    for name in again:
        assert again[name] == graded["scores"][name]


def test_grading_refuses_without_a_sandbox_unless_unsafe(graded, tmp_path, monkeypatch, capsys):
    import curvgrade.batch as batch

    monkeypatch.setattr(batch, "sandbox_problem", lambda: "bubblewrap is not installed")
    submissions = tmp_path / "subs"
    submissions.mkdir()
    shutil.copy(graded["files"]["right"], submissions / "right.ipynb")
    bundle = graded["root"] / "editions" / "autograder" / "sphere-demo.json"
    arguments = ["grade", "--chapter", str(bundle), "--submissions", str(submissions)]
    out = ["--out", str(tmp_path / "g" / "scores.csv")]
    assert main([*arguments, *out]) == 2
    assert "--unsafe" in capsys.readouterr().err
    assert main([*arguments, *out, "--unsafe", "--timeout", "45"]) == 0
    with (tmp_path / "g" / "scores.csv").open(encoding="utf-8") as handle:
        (row,) = csv.DictReader(handle)
    assert float(row["total"]) == graded["bundle"].points


def test_outputs_inside_the_submissions_folder_are_refused(graded, capsys):
    submissions = graded["root"] / "submissions"
    bundle = graded["root"] / "editions" / "autograder" / "sphere-demo.json"
    status = main(
        [
            "grade",
            "--chapter",
            str(bundle),
            "--submissions",
            str(submissions),
            "--out",
            str(submissions / "scores.csv"),
        ]
    )
    assert status == 2
    assert "outside the submissions folder" in capsys.readouterr().err
