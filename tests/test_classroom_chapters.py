"""The classroom tools on real chapters of the book: every graded exercise, executed.

For each chapter: the instructor edition, graded as a submission, earns every point of every
check; the student edition earns none, and its chapter cells run without the solutions; a
notebook that answers only the first graded exercise (with the instructor's code) earns exactly
that exercise's points.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import nbformat
import pytest

from curvlab.classroom import markup, read_chapter
from curvlab.classroom.cli import main

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = [
    ROOT / "book" / "geometry" / "fisher-rao.md",
    ROOT / "book" / "geometry" / "curvature-toolkit.md",
]


def _answered_first_exercise(chapter, student_edition: Path) -> nbformat.NotebookNode:
    """The student edition with the first graded exercise answered by the instructor's code."""
    exercise = chapter.graded_exercises[0]
    solutions = iter(chapter.notebook.cells[index].source for index in exercise.solution_cells)
    notebook = nbformat.read(student_edition, as_version=4)
    for cell in notebook.cells:
        meta = cell.metadata.get("curvlab", {})
        if meta.get("role") == "answer" and meta["exercise"] == exercise.label:
            code = [
                line
                for line in next(solutions).split("\n")
                if line.strip() not in (markup.BEGIN_SOLUTION, markup.END_SOLUTION)
            ]
            cell.source = "\n".join([cell.source.split("\n", 1)[0], *code])
    return notebook


@pytest.fixture(scope="module", params=CHAPTERS, ids=lambda path: path.stem)
def graded_chapter(request, tmp_path_factory):
    path = request.param
    if not path.is_file():
        pytest.skip(f"{path.relative_to(ROOT)} is not written yet")
    chapter = read_chapter(path)
    root = tmp_path_factory.mktemp(chapter.slug)
    assert main(["student", str(path), "--out", str(root / "editions")]) == 0
    submissions = root / "submissions"
    submissions.mkdir()
    student = root / "editions" / f"{chapter.slug}.ipynb"
    (submissions / "instructor.ipynb").write_bytes(
        (root / "editions" / "instructor" / f"{chapter.slug}.ipynb").read_bytes()
    )
    (submissions / "student.ipynb").write_bytes(student.read_bytes())
    nbformat.write(_answered_first_exercise(chapter, student), submissions / "first-only.ipynb")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JUPYTER_PATH", str(Path(sys.prefix) / "share" / "jupyter"))
        patch.setenv("MPLBACKEND", "Agg")
        arguments = ["grade", "--chapter", str(path), "--submissions", str(submissions)]
        assert main([*arguments, "--out", str(root / "scores.csv"), "--timeout", "600"]) == 0
    with (root / "scores.csv").open(encoding="utf-8") as handle:
        scores = {row["student"]: row for row in csv.DictReader(handle)}
    with (root / "scores-checks.csv").open(encoding="utf-8") as handle:
        checks = list(csv.DictReader(handle))
    return chapter, scores, checks


def test_instructor_solutions_pass_every_check(graded_chapter):
    chapter, scores, checks = graded_chapter
    row = scores["instructor"]
    assert row["status"] == "ok" and row["notes"] == "", row["notes"]
    assert float(row["total"]) == chapter.points > 0
    failed = [
        (c["exercise"], c["check"], c["reason"])
        for c in checks
        if c["student"] == "instructor" and c["reason"] != "passed"
    ]
    assert failed == []
    assert len([c for c in checks if c["student"] == "instructor"]) == len(chapter.checks)


def test_student_edition_fails_every_check_and_runs_without_solutions(graded_chapter):
    chapter, scores, checks = graded_chapter
    row = scores["student"]
    assert row["status"] == "ok" and float(row["total"]) == 0
    assert all(c["earned"] == "0" for c in checks if c["student"] == "student")
    # the only errors are the placeholders': no chapter cell needs a solution to run
    assert "not an answer cell" not in row["notes"], row["notes"]


def test_answering_one_exercise_earns_exactly_its_points(graded_chapter):
    chapter, scores, checks = graded_chapter
    first = chapter.graded_exercises[0]
    row = scores["first-only"]
    assert float(row[first.label]) == first.points
    assert float(row["total"]) == first.points
    assert row["status"] == "ok"
