"""Attacks through the files themselves, not the code in them.

- links: a submission that is a symbolic link to a classmate's notebook, or to a right
  notebook outside ``--submissions``, a linked folder, a named pipe and a folder named
  ``*.ipynb``: each is refused (``unreadable``, 0 points), never followed, never matched to a
  roster entry by its target, and the classmate keeps their grade;
- a flood: 19 MB of 400,000 empty cells, and a smaller one of too many cells: refused within
  seconds, with the grader's memory bounded, before anything runs;
- score-sheet names: a student file named ``(possible).ipynb``, and students whose names
  start like a spreadsheet formula (``@``) or with a quote, through a ``--manual`` regrade.

The link and flood tests grade the fixture chapter ``sphere-demo.md`` through the sandbox and
are skipped on a machine without one, never in CI; the score-sheet tests grade the tiny
chapter with ``--unsafe`` (the sheets do not depend on the sandbox). Both kinds are slow. The
unit tests at the end read files and sheets only, and are fast.
"""

from __future__ import annotations

import csv
import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

import curvgrade
from curvgrade.classlist import POSSIBLE_ROW, cell, read_manual
from curvgrade.cli import main
from curvgrade.results import SubmissionResult
from curvgrade.sandbox import sandbox_problem
from curvgrade.submission import read_submission

FIXTURES = Path(__file__).parent / "fixtures"
SANDBOXED = pytest.mark.skipif(
    sandbox_problem() is not None and not os.environ.get("CI"),
    reason=f"no sandbox here: {sandbox_problem()}",
)
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
FLOOD_CELL = b'{"cell_type":"code","metadata":{},"source":""}'  # 47 bytes


def _samples_module():
    spec = importlib.util.spec_from_file_location(
        "sample_submissions", FIXTURES / "sample_submissions.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


SAMPLES = _samples_module()


def _flood(cells: int) -> bytes:
    """A notebook of ``cells`` empty code cells."""
    return b'{"cells":[' + b",".join([FLOOD_CELL] * cells) + b'],"metadata":{},"nbformat":4}'


def _rows(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def _scores(path: Path) -> dict[str, dict]:
    with path.open(newline="", encoding="utf-8") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


# --- links, pipes and folders, graded through the sandbox ---------------------------------


@pytest.fixture(scope="module")
def linked(tmp_path_factory):
    """One grading run of a class where some submissions are links, a pipe or a folder."""
    root = tmp_path_factory.mktemp("linked")
    chapter = FIXTURES / "sphere-demo.md"
    assert main(["student", str(chapter), "--out", str(root / "editions")]) == 0
    student = nbformat.read(root / "editions" / "student" / "sphere-demo.ipynb", as_version=4)
    right = SAMPLES.filled(student, SAMPLES.RIGHT)
    submissions, outside = root / "submissions", root / "outside"
    submissions.mkdir()
    (outside / "folder").mkdir(parents=True)
    nbformat.write(right, submissions / "alice.ipynb")  # honest, right work
    nbformat.write(right, outside / "right.ipynb")
    nbformat.write(right, outside / "folder" / "sphere-demo.ipynb")
    os.symlink("alice.ipynb", submissions / "bob.ipynb")  # a link to a classmate's notebook
    os.symlink(outside / "right.ipynb", submissions / "eve.ipynb")  # to one outside
    os.symlink(outside / "folder", submissions / "frank")  # a linked folder
    os.mkfifo(submissions / "gina.ipynb")  # a pipe: reading it would wait forever
    (submissions / "hal.ipynb").mkdir()  # a folder that looks like a notebook
    nbformat.write(right, submissions / "hal.ipynb" / "sphere-demo.ipynb")
    roster = root / "roster.csv"
    roster.write_text(
        "file,name,id\nalice.ipynb,Alice Ant,1\nbob.ipynb,Bob Bee,2\neve.ipynb,Eve Elk,3\n"
        "frank,Frank Fox,4\n",
        encoding="utf-8",
    )
    out = root / "grades" / "scores.csv"
    status = main(
        [
            "grade",
            "--chapter",
            str(root / "editions" / "autograder" / "sphere-demo.json"),
            "--submissions",
            str(submissions),
            "--out",
            str(out),
            "--roster",
            str(roster),
            "--timeout",
            "45",
            "--cell-timeout",
            "8",
            "--jobs",
            "2",
        ]
    )
    assert status == 0
    canvas = {row[0]: row[5] for row in _rows(out.with_name("canvas.csv"))[2:]}
    rows: dict[str, list[dict]] = {}  # every row of each name (a name may have two)
    with out.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            rows.setdefault(row["student"], []).append(row)
    return {"rows": rows, "canvas": canvas}


def _refused(rows: list[dict], what: str) -> None:
    """``rows`` is one row, ``unreadable`` because the entry is ``what``, worth nothing."""
    assert [float(row["total"]) for row in rows] == [0], [row["notes"] for row in rows]
    (row,) = rows
    assert row["status"] == "unreadable", row["notes"]
    assert f"{what}, not a file the student wrote" in row["notes"]


@pytest.mark.slow
@SANDBOXED
def test_a_link_to_a_classmates_notebook_is_refused_and_the_classmate_keeps_the_grade(linked):
    (alice,) = linked["rows"]["alice"]
    assert "duplicate-submission" not in alice["flags"].split(), alice["notes"]
    assert alice["status"] == "ok" and float(alice["total"]) == 9
    assert linked["canvas"]["Alice Ant"] == "9"  # not left blank as a duplicate
    _refused(linked["rows"]["bob"], "a symbolic link")
    assert linked["canvas"]["Bob Bee"] == "0"  # the link is Bob's own, worth nothing


@pytest.mark.slow
@SANDBOXED
def test_a_link_to_a_right_notebook_outside_the_submissions_scores_nothing(linked):
    rows = linked["rows"]
    _refused(rows["eve"], "a symbolic link")
    _refused(rows["frank"], "a symbolic link")  # a linked folder: one row, not looked into
    assert not any(name.startswith("frank/") for name in rows)
    assert linked["canvas"]["Eve Elk"] == "0" and linked["canvas"]["Frank Fox"] == "0"


@pytest.mark.slow
@SANDBOXED
def test_a_pipe_and_a_folder_named_like_a_notebook_get_a_refused_row(linked):
    rows = linked["rows"]
    _refused(rows.get("gina", []), "a named pipe")
    _refused(rows.get("hal", []), "a folder")
    assert set(rows) == {"alice", "bob", "eve", "frank", "gina", "hal"}


# --- a flood of cells --------------------------------------------------------------------

# The peak is this process's own (VmHWM, of its own address space): getrusage's ru_maxrss
# would also count the pytest worker it was forked from, whose pages it held until exec.
GRADER = """\
import sys
from curvgrade.cli import main
status = main(sys.argv[1:])
with open("/proc/self/status") as handle:
    peak = next(line.split()[1] for line in handle if line.startswith("VmHWM:"))
print("peak-rss-kib", peak, flush=True)
sys.exit(status)
"""


@pytest.mark.slow
@SANDBOXED
def test_a_flood_of_cells_is_refused_in_seconds_with_bounded_memory(tmp_path):
    """19 MB of 400,000 empty cells (over the size limit) and 4.8 MB of 100,000 (over the cell
    limit) under ``--timeout 20``: both unreadable and worth 0, in seconds, and the grader
    process (its own peak memory, measured in a process of its own) stays small."""
    chapter = FIXTURES / "sphere-demo.md"
    assert main(["student", str(chapter), "--out", str(tmp_path / "editions")]) == 0
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    (submissions / "flood.ipynb").write_bytes(_flood(400_000))
    (submissions / "flood-small.ipynb").write_bytes(_flood(100_000))
    assert (submissions / "flood.ipynb").stat().st_size > 18_000_000
    out = tmp_path / "grades" / "scores.csv"
    source = str(Path(curvgrade.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([source, os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-c", GRADER, "grade", "--chapter"]
    command += [str(tmp_path / "editions" / "autograder" / "sphere-demo.json")]
    command += ["--submissions", str(submissions), "--out", str(out), "--timeout", "20"]
    start = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=90)
    seconds = time.monotonic() - start
    assert done.returncode == 0, done.stderr
    peak_mib = int(done.stdout.rsplit("peak-rss-kib", 1)[1].split()[0]) / 1024
    scores = _scores(out)
    assert scores["flood"]["status"] == "unreadable" and float(scores["flood"]["total"]) == 0
    assert "larger than the 10 MiB limit" in scores["flood"]["notes"]
    small = scores["flood-small"]
    assert small["status"] == "unreadable" and float(small["total"]) == 0
    assert "100000 cells, more than the 5000 allowed" in small["notes"]
    assert seconds < 30, f"{seconds:.1f} s"  # the process, its imports included
    assert peak_mib < 400, f"{peak_mib:.0f} MiB"


# --- score-sheet names, graded with --unsafe ----------------------------------------------


@pytest.fixture
def tiny(tmp_path):
    """The tiny chapter with a written exercise, and its student edition."""
    chapter = tmp_path / "tiny.md"
    chapter.write_text((FIXTURES / "tiny.md").read_text() + WRITTEN, encoding="utf-8")
    assert main(["student", str(chapter), "--out", str(tmp_path / "editions")]) == 0
    student = nbformat.read(tmp_path / "editions" / "student" / "tiny.ipynb", as_version=4)
    (tmp_path / "submissions").mkdir()
    return {"root": tmp_path, "chapter": chapter, "student": student}


def _grade_tiny(tiny, *extra: str) -> int:
    return main(
        [
            "grade",
            "--chapter",
            str(tiny["chapter"]),
            "--submissions",
            str(tiny["root"] / "submissions"),
            "--out",
            str(tiny["root"] / "grades" / "scores.csv"),
            "--timeout",
            "60",
            "--unsafe",
            "--jobs",
            "2",
            *extra,
        ]
    )


def _fill_sheet(path: Path, possible: str, scores: dict[str, str]) -> None:
    """Fill in ``written.csv`` as an instructor does: the possible-points row (the row after
    the header) and each student's score, by the name the sheet shows."""
    rows = _rows(path)
    rows[1][1] = possible
    for row in rows[2:]:
        row[1] = scores.get(row[0], "")
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)


@pytest.mark.slow
def test_a_student_named_possible_does_not_break_the_manual_regrade(tiny):
    for name in ("(possible)", "alice"):
        nbformat.write(tiny["student"], tiny["root"] / "submissions" / f"{name}.ipynb")
    assert _grade_tiny(tiny) == 0
    sheet = tiny["root"] / "grades" / "written.csv"
    _fill_sheet(sheet, "2", {"(possible)": "1", "alice": "1.5"})
    assert _grade_tiny(tiny, "--manual", str(sheet)) == 0
    scores = _scores(tiny["root"] / "grades" / "scores.csv")
    assert scores["(possible)"]["manual:ex-tiny-why"] == "1"
    assert scores["alice"]["manual:ex-tiny-why"] == "1.5"
    assert scores["alice"]["possible"] == "5"  # 3 of the checks, 2 written


@pytest.mark.slow
def test_a_manual_score_of_a_name_starting_like_a_formula_survives_the_round_trip(tiny):
    names = ("@dave", "'@erin", "alice")  # @dave is written '@dave; '@erin is written ''@erin
    for name in names:
        nbformat.write(tiny["student"], tiny["root"] / "submissions" / f"{name}.ipynb")
    assert _grade_tiny(tiny) == 0
    sheet = tiny["root"] / "grades" / "written.csv"
    assert [row[0] for row in _rows(sheet)[2:]] == [cell(name) for name in sorted(names)]
    _fill_sheet(sheet, "2", {"'@dave": "1.5", "''@erin": "0.5", "alice": "2"})
    assert _grade_tiny(tiny, "--manual", str(sheet)) == 0
    scores = _scores(tiny["root"] / "grades" / "scores.csv")
    assert scores["'@dave"]["manual:ex-tiny-why"] == "1.5"  # the gradebook quotes it, too
    assert scores["''@erin"]["manual:ex-tiny-why"] == "0.5"
    assert scores["alice"]["manual:ex-tiny-why"] == "2"


@pytest.mark.slow
def test_a_sheet_naming_no_student_or_a_student_twice_is_refused(tiny, capsys):
    nbformat.write(tiny["student"], tiny["root"] / "submissions" / "alice.ipynb")
    assert _grade_tiny(tiny) == 0
    manual = tiny["root"] / "manual.csv"
    manual.write_text("student,ex-tiny-why\n(possible)/,2\nmallory,1\n", encoding="utf-8")
    assert _grade_tiny(tiny, "--manual", str(manual)) == 2
    assert "line 3: 'mallory' is no student of this grading" in capsys.readouterr().err
    manual.write_text("student,ex-tiny-why\n(possible)/,2\nalice,1\nalice,2\n", encoding="utf-8")
    assert _grade_tiny(tiny, "--manual", str(manual)) == 2
    assert "the student 'alice' is there twice (first on line 3)" in capsys.readouterr().err


# --- fast: reading files and sheets ------------------------------------------------------


def _read(path: Path, **limits) -> tuple[object, SubmissionResult]:
    result = SubmissionResult("x", path)
    return read_submission(path, result, **limits), result


def test_read_submission_reads_a_regular_notebook_and_nothing_else(tmp_path):
    notebook = tmp_path / "alice.ipynb"
    notebook.write_text('{"cells": [], "metadata": {}}', encoding="utf-8")
    assert _read(notebook)[0] is not None
    os.symlink(notebook, tmp_path / "bob.ipynb")
    os.mkfifo(tmp_path / "carol.ipynb")
    (tmp_path / "dave.ipynb").mkdir()
    os.symlink(tmp_path / "nowhere.ipynb", tmp_path / "eve.ipynb")  # a dangling link
    for name, what in [
        ("bob", "a symbolic link"),
        ("carol", "a named pipe"),
        ("dave", "a folder"),
        ("eve", "a symbolic link"),
    ]:
        read, result = _read(tmp_path / f"{name}.ipynb")
        assert read is None and result.status == "unreadable", name
        assert result.notes == [f"not a notebook: {what}, not a file the student wrote"]


def test_read_submission_refuses_too_many_bytes_or_cells_before_reading_a_cell(tmp_path):
    path = tmp_path / "flood.ipynb"
    path.write_bytes(_flood(6000))
    read, result = _read(path)
    assert read is None and result.notes == [
        "not a readable notebook (6000 cells, more than the 5000 allowed)"
    ]
    assert _read(path, max_cells=6000)[0] is not None
    read, result = _read(path, max_bytes=100_000)
    assert read is None and result.notes == ["not a notebook: larger than the 97.66 KiB limit"]


def test_the_limits_on_the_command_line_must_be_positive(tmp_path, capsys):
    (tmp_path / "submissions").mkdir()
    arguments = ["grade", "--chapter", str(FIXTURES / "tiny.md"), "--unsafe"]
    arguments += ["--submissions", str(tmp_path / "submissions"), "--out", str(tmp_path / "g.csv")]
    assert main([*arguments, "--max-size", "0"]) == 2
    assert "--max-size: expected a positive number of MiB, got 0.0" in capsys.readouterr().err
    assert main([*arguments, "--max-size", "nan"]) == 2
    assert main([*arguments, "--max-cells", "0"]) == 2
    assert "--max-cells: expected a positive number, got 0" in capsys.readouterr().err


def test_manual_names_read_back_as_written(tmp_path):
    sheet = tmp_path / "written.csv"
    names = ["@dave", "'@erin", "=x", "-y", "alice", "(possible)"]
    with sheet.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "ex-w"])
        writer.writerow([POSSIBLE_ROW, "10"])
        writer.writerows([cell(name), str(number)] for number, name in enumerate(names))
    expected = {name: {"ex-w": float(number)} for number, name in enumerate(names)}
    assert read_manual(sheet, ("ex-w",)) == (expected, {"ex-w": 10.0})
    assert read_manual(sheet, ("ex-w",), set(names)) == (expected, {"ex-w": 10.0})
    with pytest.raises(ValueError, match=r"line 7: 'alice' is no student of this grading"):
        read_manual(sheet, ("ex-w",), set(names) - {"alice"})
    with pytest.raises(ValueError, match=r"the possible points go in the row '\(possible\)/'"):
        read_manual(sheet, ("ex-w",), set(names) - {"(possible)"})
    from curvgrade.classlist import uncell

    assert all(uncell(cell(name)) == name for name in names)
