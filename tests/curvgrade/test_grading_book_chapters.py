"""The classroom tools on real chapters of the book, graded in the sandbox.

For each chapter: the instructor edition, graded as a submission, passes every check (and is
flagged, its points withheld); the student edition earns nothing; a notebook that answers only
the first graded exercise earns exactly that exercise's points. On fisher-rao, the attacks of
the classroom issue, each on top of honest wrong work (2 / 6), earn exactly that work's points.

Two Part I chapters and one of Part II, decision-boundaries, which trains the study it
discusses. That one is graded with ``--study-cache``: the studies are read
from the instructor's cache (``$CURVLAB_CACHE``, else ``.curvlab-cache/``, which ``make book``
fills; ``prepare-cache`` runs the chapter's code into it first, fast when the book was built),
mounted read-only in the sandbox, where a study missing from it could not be stored: the
instructor edition passing every check shows that no notebook trained the study again.
"""

from __future__ import annotations

import csv
import importlib.util
import os
import sys
from pathlib import Path

import nbformat
import pytest

from curvgrade import markup, read_chapter
from curvgrade.cli import main
from curvgrade.sandbox import sandbox_problem

pytestmark = [
    pytest.mark.slow,
    # Skipped on a machine without a sandbox, never in CI (CI installs bubblewrap).
    pytest.mark.skipif(
        sandbox_problem() is not None and not os.environ.get("CI"),
        reason=f"no sandbox here: {sandbox_problem()}",
    ),
]

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"
CHAPTERS = [
    ROOT / "book" / "geometry" / "fisher-rao.md",
    ROOT / "book" / "geometry" / "curvature-toolkit.md",
    ROOT / "book" / "experiments" / "decision-boundaries.md",
]
WITH_STUDIES = {"decision-boundaries"}  # chapters graded with the study cache


def _samples_module():
    spec = importlib.util.spec_from_file_location(
        "sample_submissions", FIXTURES / "sample_submissions.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


SAMPLES = _samples_module()
VARIANCE, SPHERE = "ex-fisher-rao-variance", "ex-fisher-rao-scaled-sphere"
SYMBOLS = 'mu_e = sp.Symbol("mu_e", real=True)\nv_e = sp.Symbol("v_e", positive=True)\n'
SPHERE_SYMBOLS = 'rho, tau = sp.symbols("rho tau", positive=True)\n'
FISHER_RIGHT = {
    VARIANCE: SYMBOLS
    + "I_variance = sp.diag(1 / v_e, 1 / (2 * v_e**2))\nK_variance = -sp.Rational(1, 2)",
    SPHERE: SPHERE_SYMBOLS + "K_family = tau**2 / rho**2",
}
FISHER_WRONG = {  # public checks pass, hidden ones fail: 2 / 6
    VARIANCE: SYMBOLS + "I_variance = sp.diag(1 / v_e, 1 / v_e**2)\nK_variance = sp.Integer(-1)",
    SPHERE: SPHERE_SYMBOLS + "K_family = rho / tau",
}
FISHER_YES = SAMPLES.YES.replace("K_sphere = Yes()", "K_family = Yes()")
FISHER_ATTACKS = {
    "attack-simplify": (FISHER_WRONG, SAMPLES.SIMPLIFY, None),
    "attack-rebound-sp": (FISHER_WRONG, SAMPLES.REBOUND_SP, None),
    "attack-always-equal": ({**FISHER_WRONG, SPHERE: "pass"}, FISHER_YES, None),
    "attack-input-transformer": (FISHER_WRONG, SAMPLES.TRANSFORMER, None),
    "attack-showtraceback": (FISHER_WRONG, SAMPLES.SHOWTRACEBACK, None),
    "attack-import-cell": (FISHER_WRONG, None, "patch-import-cell"),
    "attack-read-solution": (FISHER_WRONG, "READ", None),
}


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


def _write_fisher_samples(chapter_path: Path, student: Path, submissions: Path) -> None:
    edition = nbformat.read(student, as_version=4)
    read = SAMPLES.READ_SOLUTION.format(targets=[str(chapter_path)])
    samples = {"right": (FISHER_RIGHT, None, None), "wrong": (FISHER_WRONG, None, None)}
    for name, (answers, added, edit) in {**samples, **FISHER_ATTACKS}.items():
        notebook = SAMPLES.filled(edition, answers)
        if added is not None:
            SAMPLES._add_after_first_given(notebook, read if added == "READ" else added)
        if edit is not None:
            notebook = SAMPLES._edit(notebook, edit, {})
        nbformat.write(notebook, submissions / f"{name}.ipynb")


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
    student = root / "editions" / "student" / f"{chapter.slug}.ipynb"
    (submissions / "instructor.ipynb").write_bytes(
        (root / "editions" / "instructor" / f"{chapter.slug}.ipynb").read_bytes()
    )
    (submissions / "student.ipynb").write_bytes(student.read_bytes())
    nbformat.write(_answered_first_exercise(chapter, student), submissions / "first-only.ipynb")
    if chapter.slug == "fisher-rao":
        _write_fisher_samples(path, student, submissions)
    arguments = ["grade", "--chapter", str(path), "--submissions", str(submissions)]
    out = ["--out", str(root / "grades" / "scores.csv"), "--timeout", "300", "--jobs", "2"]
    if chapter.slug in WITH_STUDIES:
        from curvgrade.editions import autograder_bundle
        from curvgrade.studycache import prepare, prepared_for
        from curvlab.studies.cache import cache_dir

        cache = cache_dir()
        if not prepared_for(cache, autograder_bundle(chapter)):
            assert prepare(autograder_bundle(chapter), cache) == []
        out += ["--study-cache", str(cache)]
    assert main([*arguments, *out]) == 0
    with (root / "grades" / "scores.csv").open(encoding="utf-8") as handle:
        scores = {row["student"]: row for row in csv.DictReader(handle)}
    with (root / "grades" / "scores-checks.csv").open(encoding="utf-8") as handle:
        checks = list(csv.DictReader(handle))
    return chapter, scores, checks


def test_instructor_edition_passes_every_check_and_is_flagged(graded_chapter):
    chapter, scores, checks = graded_chapter
    row = scores["instructor"]
    assert row["status"] == "flagged" and "instructor-edition" in row["flags"].split()
    assert float(row["total"]) == 0  # withheld
    mine = [c for c in checks if c["student"] == "instructor"]
    assert len(mine) == len(chapter.checks) > 0
    assert [(c["exercise"], c["check"], c["reason"]) for c in mine if c["reason"] != "passed"] == []


def test_student_edition_earns_nothing(graded_chapter):
    chapter, scores, checks = graded_chapter
    row = scores["student"]
    assert row["status"] == "ok" and float(row["total"]) == 0, row["notes"]
    assert all(c["earned"] == "0" for c in checks if c["student"] == "student")


def test_answering_one_exercise_earns_exactly_its_points(graded_chapter):
    chapter, scores, checks = graded_chapter
    first = chapter.graded_exercises[0]
    row = scores["first-only"]
    assert float(row[first.label]) == first.points, row["notes"]
    assert float(row["total"]) == first.points
    assert f"matches-solution:{first.label}" in row["flags"].split()


def test_fisher_rao_attacks_earn_no_more_than_honest_wrong_work(graded_chapter):
    chapter, scores, checks = graded_chapter
    if chapter.slug != "fisher-rao":
        pytest.skip("the attacks of the issue are played on fisher-rao")
    assert float(scores["right"]["total"]) == chapter.points == 6, scores["right"]["notes"]
    assert float(scores["wrong"]["total"]) == 2, scores["wrong"]["notes"]
    for name in FISHER_ATTACKS:
        expected = 1 if name == "attack-always-equal" else 2  # K_family is not data: 0 of 1
        assert float(scores[name]["total"]) == expected, (name, scores[name]["notes"])
    assert scores["attack-import-cell"]["status"] == "tampered"
