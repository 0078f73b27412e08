"""Grading the fixture chapter's sample submissions in real kernels, through the command line.

One grading run (module fixture) of every sample in tests/fixtures/classroom/sample_submissions.py
plus the instructor edition; the tests read the score tables and feedback it wrote.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import shutil
import sys
import time
from pathlib import Path

import pytest

from curvlab.classroom import read_chapter
from curvlab.classroom.cli import main

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).parent / "fixtures" / "classroom"
CHAPTER = FIXTURES / "sphere-demo.md"
CELL_TIMEOUT = 8  # seconds: far above any fixture cell, well below a test's patience


def _samples_module():
    spec = importlib.util.spec_from_file_location(
        "sample_submissions", FIXTURES / "sample_submissions.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SAMPLES = _samples_module()


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Write the editions and the samples, grade them all once; returns what grading wrote."""
    root = tmp_path_factory.mktemp("classroom")
    assert main(["student", str(CHAPTER), "--out", str(root / "editions")]) == 0
    submissions = root / "submissions"
    SAMPLES.write_samples(root / "editions" / "sphere-demo.ipynb", submissions)
    shutil.copy(
        root / "editions" / "instructor" / "sphere-demo.ipynb", submissions / "instructor.ipynb"
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JUPYTER_PATH", str(Path(sys.prefix) / "share" / "jupyter"))
        patch.setenv("MPLBACKEND", "Agg")
        start = time.monotonic()
        status = main(
            [
                "grade",
                "--chapter",
                str(root / "editions" / "autograder" / "sphere-demo.json"),
                "--submissions",
                str(submissions),
                "--out",
                str(root / "scores.csv"),
                "--timeout",
                "120",
                "--cell-timeout",
                str(CELL_TIMEOUT),
                "--workdir",
                str(root),
            ]
        )
        seconds = time.monotonic() - start
    assert status == 0
    with (root / "scores.csv").open(encoding="utf-8") as handle:
        scores = {row["student"]: row for row in csv.DictReader(handle)}
    with (root / "scores-checks.csv").open(encoding="utf-8") as handle:
        checks = list(csv.DictReader(handle))
    bundle = json.loads((root / "editions" / "autograder" / "sphere-demo.json").read_text())
    return {
        "root": root,
        "scores": scores,
        "checks": checks,
        "bundle": bundle,
        "seconds": seconds,
        "notebooks": len(list(submissions.glob("*.ipynb"))),
    }


def _passing(graded, student: str) -> dict[str, tuple[int, ...]]:
    rows = [row for row in graded["checks"] if row["student"] == student]
    passing: dict[str, list[int]] = {
        exercise["label"]: [] for exercise in graded["bundle"]["exercises"]
    }
    for row in rows:
        assert float(row["earned"]) in (0.0, float(row["points"]))
        if float(row["earned"]) > 0:
            passing[row["exercise"]].append(int(row["check"]))
    return {label: tuple(numbers) for label, numbers in passing.items()}


def _points(bundle: dict, passing: dict[str, tuple[int, ...]]) -> float:
    return sum(
        check["points"]
        for exercise in bundle["exercises"]
        for check in exercise["checks"]
        if check["number"] in passing[exercise["label"]]
    )


def test_every_returned_notebook_gets_a_row_and_feedback(graded):
    assert set(graded["scores"]) == set(SAMPLES.PASSING) | {"instructor"}
    assert len(graded["scores"]) == graded["notebooks"]
    for student in graded["scores"]:
        feedback = (graded["root"] / "feedback" / f"{student}.md").read_text(encoding="utf-8")
        assert f"Student: `{student}`" in feedback
        for exercise in graded["bundle"]["exercises"]:
            assert exercise["label"] in feedback


def test_instructor_solution_passes_every_check(graded):
    row = graded["scores"]["instructor"]
    assert float(row["total"]) == graded["bundle"]["points"] == float(row["possible"])
    assert row["status"] == "ok" and row["notes"] == ""
    chapter = read_chapter(CHAPTER)
    assert _passing(graded, "instructor") == {
        exercise.label: tuple(check.number for check in exercise.checks)
        for exercise in chapter.graded_exercises
    }


def test_student_edition_fails_every_check(graded):
    row = graded["scores"]["unanswered"]
    assert float(row["total"]) == 0 and row["status"] == "ok"
    assert all(numbers == () for numbers in _passing(graded, "unanswered").values())
    reasons = [row["reason"] for row in graded["checks"] if row["student"] == "unanswered"]
    # each check fails because of the placeholder: it raises, or the name is never defined
    assert all(reason.startswith(("NotImplementedError", "NameError")) for reason in reasons)


@pytest.mark.parametrize("student", sorted(SAMPLES.PASSING))
def test_each_sample_earns_exactly_the_checks_designed_for_it(graded, student):
    row = graded["scores"][student]
    assert _passing(graded, student) == SAMPLES.PASSING[student]
    expected = _points(graded["bundle"], SAMPLES.PASSING[student])
    assert float(row["total"]) == expected
    assert row["status"] == SAMPLES.EXPECTED_STATUS[student], row["notes"]
    for exercise in graded["bundle"]["exercises"]:
        label = exercise["label"]
        assert float(row[label]) == _points(
            graded["bundle"],
            {label: SAMPLES.PASSING[student][label]}
            | {
                other["label"]: ()
                for other in graded["bundle"]["exercises"]
                if other["label"] != label
            },
        )


def test_wrong_answer_gets_partial_marks(graded):
    total = float(graded["scores"]["wrong"]["total"])
    assert 0 < total < graded["bundle"]["points"]


def test_a_crash_in_one_answer_leaves_the_other_exercises_graded(graded):
    row = graded["scores"]["crash"]
    assert float(row[SAMPLES.CURVATURE]) == 0
    assert "ZeroDivisionError" in row["notes"]
    assert float(row[SAMPLES.CAP]) > 0 and float(row[SAMPLES.DISTANCE]) > 0


def test_infinite_loops_are_interrupted_reported_and_grading_continues(graded):
    loop, stubborn = graded["scores"]["loop"], graded["scores"]["stubborn-loop"]
    assert loop["status"] == stubborn["status"] == "timeout"
    assert "interrupted" in loop["notes"]
    assert float(loop[SAMPLES.DISTANCE]) > 0  # the exercise after the loop is still graded
    assert "did not stop when interrupted" in stubborn["notes"]
    reasons = {
        row["reason"]
        for row in graded["checks"]
        if row["student"] == "stubborn-loop" and row["exercise"] == SAMPLES.DISTANCE
    }
    assert reasons == {"not run: the kernel ignored the interrupt after a timeout"}
    # both loops together cost about three cell time limits, not the notebook limit
    assert graded["seconds"] < 120


def test_a_kernel_that_dies_is_reported_as_crashed(graded):
    row = graded["scores"]["dies"]
    assert row["status"] == "crashed" and "the kernel died" in row["notes"]
    assert float(row[SAMPLES.CURVATURE]) > 0


def test_edited_or_deleted_public_checks_are_reported_and_graded_with_the_original(graded):
    row = graded["scores"]["tampered"]
    assert row["status"] == "tampered"
    assert f"{SAMPLES.DISTANCE}#1: public check cell edited" in row["notes"]
    assert f"{SAMPLES.CAP}#1: public check cell deleted" in row["notes"]
    assert 1 not in _passing(graded, "tampered")[SAMPLES.DISTANCE]  # 'assert True' did not count


def test_an_unreadable_file_scores_nothing_and_says_why(graded):
    row = graded["scores"]["unreadable"]
    assert row["status"] == "unreadable" and float(row["total"]) == 0
    assert "not a readable notebook" in row["notes"]


def test_feedback_never_shows_a_hidden_check(graded):
    hidden = [
        check["source"].split("\n", 1)[1]
        for exercise in graded["bundle"]["exercises"]
        for check in exercise["checks"]
        if check["hidden"]
    ]
    for path in (graded["root"] / "feedback").glob("*.md"):
        text = path.read_text(encoding="utf-8")
        for source in hidden:
            for line in source.split("\n"):
                assert line.strip() not in text or len(line.strip()) < 8, (path.name, line)


def test_feedback_on_a_public_check_shows_its_assertion_message(graded):
    text = (graded["root"] / "feedback" / "wrong.md").read_text(encoding="utf-8")
    line = next(line for line in text.split("\n") if "the pole is a quarter circle" in line)
    assert line.startswith("- ✗") and "expected pi/2 = 1.570796, got 1.414" in line
