"""A class around the grades: roster, LMS exports, deadline, regrading one student, written
answers and manual scores, the students' self-checks, and the study cache.

The class logic is tested on the tiny fixture chapter graded with ``--unsafe`` (the logic does
not depend on the sandbox; the attack suite covers it); grading runs take more than five
seconds, so those tests are marked slow. The test that needs the sandbox (a student reading,
then trying to change, the study cache, and forging a roster) is skipped on a machine without
one, never in CI.
"""

from __future__ import annotations

import csv
import os
import shutil
from pathlib import Path

import nbformat
import pytest

from curvgrade import markup
from curvgrade.cli import main
from curvgrade.sandbox import sandbox_problem

FIXTURES = Path(__file__).parent / "fixtures"
WRITTEN = """

::::{exercise} Why two
:label: ex-tiny-why

Say why $1 + 1 = 2$.
::::

```{solution} ex-tiny-why
:class: dropdown

Peano.
```
"""


def _answer(notebook: nbformat.NotebookNode, label: str, code: str) -> None:
    for cell in notebook.cells:
        if cell.metadata.get("curvlab", {}).get("role") == "answer":
            if cell.metadata["curvlab"]["exercise"] == label:
                cell.source = cell.source.split("\n", 1)[0] + "\n" + code


def _write(notebook: nbformat.NotebookNode, label: str, text: str) -> None:
    for cell in notebook.cells:
        if cell.metadata.get("curvlab", {}).get("role") == "written":
            if cell.metadata["curvlab"]["exercise"] == label:
                cell.source = f"{markup.written_marker(label)}\n\n{text}"


@pytest.fixture
def course(tmp_path):
    """The tiny chapter with a written exercise, its editions, and a folder of submissions."""
    chapter = tmp_path / "tiny.md"
    chapter.write_text((FIXTURES / "tiny.md").read_text() + WRITTEN, encoding="utf-8")
    assert main(["student", str(chapter), "--out", str(tmp_path / "editions")]) == 0
    student = nbformat.read(tmp_path / "editions" / "student" / "tiny.ipynb", as_version=4)
    submissions = tmp_path / "submissions"
    (submissions / "carol").mkdir(parents=True)
    right = nbformat.reads(nbformat.writes(student), as_version=4)
    _answer(right, "ex-tiny-two", "two = 1 + 1")
    _write(right, "ex-tiny-why", "Because the successor of 1 is 2.")
    nbformat.write(right, submissions / "alice.ipynb")
    wrong = nbformat.reads(nbformat.writes(student), as_version=4)
    _answer(wrong, "ex-tiny-two", "two = 3")
    wrong.metadata["curvlab"]["student"] = "alice"  # a claim in the notebook: never read
    nbformat.write(wrong, submissions / "bob.ipynb")
    nbformat.write(right, submissions / "carol" / "tiny.ipynb")
    for name in ("Alice.ipynb", "аlice.ipynb", "=HYPERLINK(0).ipynb"):  # Cyrillic а
        nbformat.write(wrong, submissions / name)
    os.utime(submissions / "bob.ipynb", (1_800_000_000, 1_800_000_000))  # 2027: late
    roster = tmp_path / "roster.csv"
    roster.write_text(
        "File,Name,ID,SIS User ID,SIS Login ID,Section,Email,Submitted\n"
        "alice.ipynb,Alice Ant,101,s101,alice,A,alice@example.org,2026-05-01T10:00+00:00\n"
        "bob.ipynb,Bob Bee,102,s102,bob,A,bob@example.org,\n"
        "carol,Carol Cat,103,s103,carol,B,carol@example.org,2026-05-03T12:30+00:00\n"
        "dave.ipynb,Dave Dog,104,s104,dave,B,dave@example.org,\n",
        encoding="utf-8",
    )
    return {"root": tmp_path, "chapter": chapter, "submissions": submissions, "roster": roster}


def _grade(course, *extra: str) -> int:
    out = course["root"] / "grades" / "scores.csv"
    return main(
        [
            "grade",
            "--chapter",
            str(course["chapter"]),
            "--submissions",
            str(course["submissions"]),
            "--out",
            str(out),
            "--timeout",
            "60",
            "--unsafe",
            "--jobs",
            "2",
            *extra,
        ]
    )


def _rows(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def _scores(course) -> dict[str, dict]:
    with (course["root"] / "grades" / "scores.csv").open(encoding="utf-8") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


@pytest.mark.slow
def test_roster_exports_deadline_manual_scores_and_regrading_one_student(course):
    grades = course["root"] / "grades"
    roster = ["--roster", str(course["roster"]), "--assignment", "Tiny (77)"]
    late = ["--deadline", "2026-05-01T23:59+00:00", "--late-policy", "10%/day,max=5d"]
    assert _grade(course, *roster, *late) == 0
    scores = _scores(course)
    assert scores["alice"]["total"] == "3" and scores["alice"]["late_days"] == "0"
    # carol is two started days late (roster time); bob's file is from 2027: past max=5d
    assert scores["carol"]["total"] == "2.4" and scores["carol"]["late_days"] == "2"
    assert scores["bob"]["total"] == "0" and scores["bob"]["penalty"] == "1"
    assert scores["dave"]["status"] == "missing"
    spoofs = [name for name in scores if name not in ("alice", "bob", "carol", "dave")]
    assert sorted(spoofs) == sorted(["Alice", "аlice", "'=HYPERLINK(0)"])
    for name in spoofs:  # lookalike names are not Alice; a formula is not a formula
        assert "not-in-roster" in scores[name]["flags"].split()

    canvas = _rows(grades / "canvas.csv")
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Tiny (77)"]
    assert canvas[1][0] == "Points Possible" and canvas[1][5] == "3"
    assert canvas[2:] == [
        ["Alice Ant", "101", "s101", "alice", "A", "3"],
        ["Bob Bee", "102", "s102", "bob", "A", "0"],
        ["Carol Cat", "103", "s103", "carol", "B", "2.4"],
        ["Dave Dog", "104", "s104", "dave", "B", ""],
    ]
    gradescope = _rows(grades / "gradescope.csv")
    assert gradescope[0][:5] == ["Name", "SID", "Email", "Total Score", "Max Points"]
    assert [row[3] for row in gradescope[1:]] == ["3", "0", "2.4", ""]

    # the written answers, collected per exercise; a manual score folded into the total
    answers = (grades / "written" / "ex-tiny-why.md").read_text(encoding="utf-8")
    assert "Because the successor of 1 is 2." in answers and "*(no answer)*" in answers
    sheet = _rows(grades / "written.csv")
    assert sheet[0] == ["student", "ex-tiny-why"] and sheet[1][0] == "(possible)/"
    manual = course["root"] / "manual.csv"
    manual.write_text("student,ex-tiny-why\n(possible)/,2\nalice,1.5\n", encoding="utf-8")
    assert _grade(course, *roster, *late, "--manual", str(manual), "--only", "alice") == 0
    scores = _scores(course)
    assert scores["alice"]["manual:ex-tiny-why"] == "1.5" and scores["alice"]["total"] == "4.5"
    assert scores["alice"]["possible"] == "5" and scores["carol"]["total"] == "2.4"
    assert len(scores) == 7  # the other rows kept, not graded again
    assert _rows(grades / "canvas.csv")[2][5] == "4.5"


@pytest.mark.slow
def test_two_files_for_one_roster_entry_are_not_exported(course):
    shutil.copy(course["submissions"] / "alice.ipynb", course["submissions"] / "carol.ipynb")
    assert _grade(course, "--roster", str(course["roster"])) == 0
    with (course["root"] / "grades" / "scores.csv").open(encoding="utf-8") as handle:
        carol = [row for row in csv.DictReader(handle) if row["student"] == "carol"]
    assert len(carol) == 2 and all("duplicate-submission" in r["flags"] for r in carol)
    canvas = {row[0]: row for row in _rows(course["root"] / "grades" / "canvas.csv")}
    assert canvas["Carol Cat"][5] == ""


@pytest.mark.slow
def test_only_needs_an_earlier_run_and_a_known_student(course, capsys):
    assert _grade(course, "--only", "alice") == 2
    assert "no earlier grading" in capsys.readouterr().err
    assert _grade(course) == 0
    assert _grade(course, "--only", "nobody") == 2


@pytest.mark.slow
def test_bad_class_options_are_refused(course, capsys):
    assert _grade(course, "--late-policy", "10%/day") == 2
    assert _grade(course, "--deadline", "tomorrow") == 2
    assert _grade(course, "--deadline", "2026-05-01", "--late-policy", "lots") == 2
    manual = course["root"] / "manual.csv"
    manual.write_text("student,ex-tiny-why\n(possible)/,1\nalice,2\n", encoding="utf-8")
    assert _grade(course, "--manual", str(manual)) == 2
    assert "more than the 1 possible" in capsys.readouterr().err


def test_student_edition_self_checks(course, monkeypatch, capsys):
    """check() and check_all() in the student's kernel: points, and the saved notebook."""
    from curvgrade.shell import new_shell

    folder = course["root"] / "student"
    folder.mkdir()
    edition = course["root"] / "editions" / "student" / "tiny.ipynb"
    shutil.copy(edition, folder / "tiny.ipynb")
    monkeypatch.chdir(folder)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    shell = new_shell()
    shell.reset()
    notebook = nbformat.read(folder / "tiny.ipynb", as_version=4)
    code = [cell.source for cell in notebook.cells if cell.cell_type == "code"]
    assert "check, check_all = self_checks('tiny')" in code[0]
    shell.run_cell(code[0], store_history=True)
    shell.run_cell("two = 3", store_history=True)  # wrong, but an int: the public check passes
    capsys.readouterr()
    assert shell.user_ns["check"]("ex-tiny-two") == (1, 1)
    printed = capsys.readouterr().out
    assert "✓ check 1 (1 point): two is an int" in printed and "2 points in hidden" in printed
    shell.run_cell("del two")
    assert shell.user_ns["check"]("ex-tiny-two") == (0, 1)
    assert "✗ check 1 (1 point): two is an int — NameError" in capsys.readouterr().out
    summary = shell.user_ns["check_all"]()
    problems = "\n".join(summary["problems"])
    assert "ex-tiny-two: not answered yet" in problems
    assert "ex-tiny-why: the written answer is empty" in problems

    _answer(notebook, "ex-tiny-two", "two = 1 + 1")
    _write(notebook, "ex-tiny-why", "Successor.")
    nbformat.write(notebook, folder / "tiny.ipynb")
    roles = [cell.metadata.get("curvlab", {}).get("role") for cell in notebook.cells]
    answer = notebook.cells[roles.index("answer")].source
    assert "not what this kernel ran" in "\n".join(shell.user_ns["check_all"]()["problems"])
    shell.run_cell(answer, store_history=True)
    assert shell.user_ns["check_all"]() == {"earned": 1, "possible": 1, "problems": []}
    assert "ready to submit" in capsys.readouterr().out

    given = next(c for c in notebook.cells if c.metadata.get("curvlab", {}).get("role") == "check")
    given.source += "\nassert True"
    nbformat.write(notebook, folder / "tiny.ipynb")
    assert "check of ex-tiny-two was edited" in "\n".join(shell.user_ns["check_all"]()["problems"])


@pytest.mark.slow
def test_the_self_check_cell_is_not_graded_as_student_code(course):
    assert _grade(course) == 0
    alice = _scores(course)["alice"]
    assert alice["flags"] == "matches-solution:ex-tiny-two", alice["notes"]  # only that
    assert alice["total"] == "3"


@pytest.mark.slow
@pytest.mark.skipif(
    sandbox_problem() is not None and not os.environ.get("CI"),
    reason=f"no sandbox here: {sandbox_problem()}",
)
def test_the_study_cache_is_read_only_in_the_sandbox(course, tmp_path):
    """A student reads the instructor's study cache and cannot change it, nor the roster."""
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "study-abc.json").write_text('{"config": {}, "result": {"answer": 2}}')
    os.chmod(cache / "study-abc.json", 0o600)  # curvlab writes its files this way
    (cache / "curvgrade-prepared-tiny.json").write_text("{}")
    before = {p.name: p.read_bytes() for p in cache.iterdir()}
    submissions = course["submissions"]
    for path in list(submissions.rglob("*.ipynb")):
        path.unlink()
    edition = nbformat.read(course["root"] / "editions" / "student" / "tiny.ipynb", as_version=4)
    attacks = {
        # reads the study result through curvlab's cache: 3 points
        "reader": "import json, os\n"
        "data = json.load(open(os.path.join(os.environ['CURVLAB_CACHE'], 'study-abc.json')))\n"
        "two = data['result']['answer']",
        # overwrites, deletes and adds study results, then answers honestly wrong: 1 point
        "writer": "import os, pathlib\n"
        "cache = pathlib.Path(os.environ['CURVLAB_CACHE'])\n"
        "for action in (lambda: (cache / 'study-abc.json').write_text('{}'),\n"
        "               lambda: (cache / 'study-abc.json').unlink(),\n"
        "               lambda: (cache / 'study-new.json').write_text('{}'),\n"
        "               lambda: os.chmod(cache, 0o777)):\n"
        "    try:\n"
        "        action()\n"
        "    except OSError:\n"
        "        pass\n"
        "two = 3",
        # writes a roster and a canvas.csv wherever it can: nothing outside its folder
        "roster-forger": "import pathlib\n"
        "for folder in ('/tmp', '.', '/studies'):\n"
        "    try:\n"
        "        forged = 'file,name\\nroster-forger,Alice Ant\\n'\n"
        "        pathlib.Path(folder, 'roster.csv').write_text(forged)\n"
        "    except OSError:\n"
        "        pass\n"
        "two = 3",
    }
    for name, code in attacks.items():
        notebook = nbformat.reads(nbformat.writes(edition), as_version=4)
        _answer(notebook, "ex-tiny-two", code)
        nbformat.write(notebook, submissions / f"{name}.ipynb")
    roster_before = course["roster"].read_bytes()
    out = course["root"] / "grades" / "scores.csv"
    status = main(
        [
            "grade",
            "--chapter",
            str(course["chapter"]),
            "--submissions",
            str(submissions),
            "--out",
            str(out),
            "--timeout",
            "60",
            "--study-cache",
            str(cache),
            "--roster",
            str(course["roster"]),
        ]
    )
    assert status == 0
    scores = _scores(course)
    assert scores["reader"]["ex-tiny-two"] == "3", scores["reader"]["notes"]
    assert scores["writer"]["ex-tiny-two"] == "1", scores["writer"]["notes"]
    assert scores["roster-forger"]["ex-tiny-two"] == "1"
    assert "not-in-roster" in scores["roster-forger"]["flags"]
    assert {p.name: p.read_bytes() for p in cache.iterdir()} == before
    assert oct(os.stat(cache / "study-abc.json").st_mode & 0o777) == "0o600"
    assert course["roster"].read_bytes() == roster_before
    canvas = _rows(course["root"] / "grades" / "canvas.csv")
    assert [row[5] for row in canvas[2:]] == ["", "", "", ""]  # nobody in the roster submitted
