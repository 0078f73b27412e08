"""The classroom tools without a kernel: reading chapters, validating the format, editions."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curvgrade import (
    ChapterFormatError,
    autograder_bundle,
    markup,
    read_chapter,
    student_notebook,
    write_editions,
)
from curvgrade.bundle import Bundle
from curvgrade.cli import main
from curvgrade.editions import instructor_notebook, leaked_solution_lines
from curvgrade.toc import toc_chapters

FIXTURE = Path(__file__).parent / "fixtures" / "sphere-demo.md"
ROOT = Path(__file__).resolve().parents[2]


def _mutated(tmp_path: Path, *replacements: tuple[str, str]) -> Path:
    """The fixture chapter with each ``old`` text replaced by ``new`` (each must occur)."""
    text = FIXTURE.read_text(encoding="utf-8")
    for old, new in replacements:
        assert old in text, f"fixture no longer contains {old!r}"
        text = text.replace(old, new, 1)
    path = tmp_path / FIXTURE.name
    path.write_text(text, encoding="utf-8")
    return path


def _solution_span(label: str) -> str:
    text = FIXTURE.read_text(encoding="utf-8")
    start = text.index(f"::::{{solution-start}} {label}")
    end = text.index("::::{solution-end}\n::::", start) + len("::::{solution-end}\n::::")
    return text[start:end]


def test_fixture_chapter_reads_into_its_exercises_and_checks():
    chapter = read_chapter(FIXTURE)
    text = FIXTURE.read_text(encoding="utf-8")
    labels = re.findall(r"^:label: (\S+)$", text, flags=re.MULTILINE)
    headers = re.findall(
        r"^:exercise: (\S+) (?:hidden )?check \((\d+) points?\)", text, flags=re.MULTILINE
    )
    assert [exercise.label for exercise in chapter.exercises] == labels
    assert [(check.exercise, check.points) for check in chapter.checks] == [
        (label, int(points)) for label, points in headers
    ]
    for exercise in chapter.exercises:
        stated = re.search(r"Points: (\d+)", exercise.statement)
        assert exercise.graded == (stated is not None)
        if stated:
            assert exercise.points == int(stated.group(1))
            assert exercise.solution_cells, exercise.label
    assert len(chapter.graded_exercises) >= 2 and len(chapter.exercises) >= 3
    hidden = len(re.findall(r"^:exercise: \S+ hidden check ", text, flags=re.MULTILINE))
    assert sum(check.hidden for check in chapter.checks) == hidden


MARKER_FORM = "is not one of ':exercise: <label> answer'"


@pytest.mark.parametrize(
    ("replacements", "expected"),
    [
        (
            [("ex-sphere-demo-cap-area check (1 point)", "ex-cap check (1 point)")],
            "check cell for unknown exercise label 'ex-cap'",
        ),
        (
            [("{solution-start} ex-sphere-demo-distance", "{solution-start} ex-sphere-demo-dist")],
            "no exercise labelled 'ex-sphere-demo-dist'",
        ),
        (
            [(_solution_span("ex-sphere-demo-curvature"), "")],
            "exercise 'ex-sphere-demo-curvature' has checks but no solution",
        ),
        (
            [(":label: ex-sphere-demo-cap-area", ":label: ex-sphere-demo-curvature")],
            "duplicate exercise label 'ex-sphere-demo-curvature'",
        ),
        (
            [("curvature hidden check (2 points)", "curvature hidden check (two points)")],
            MARKER_FORM,
        ),
        (
            [("curvature hidden check (2 points)", "curvature hidden check (2 point)")],
            "'(1 point)'",
        ),
        (
            [("curvature hidden check (2 points)", "curvature hidden check (0 points)")],
            "points must be positive",
        ),
        ([("curvature hidden check (2 points)", "curvature secret check (2 points)")], MARKER_FORM),
        (
            [("distance hidden check (1 point)", "distance hidden check (2 points)")],
            "states 'Points: 4' but its checks are worth 5",
        ),
        (
            [
                (
                    "cap-area hidden check (1 point)\n:tags: [remove-cell]",
                    "cap-area hidden check (1 point)",
                )
            ],
            "must also be tagged 'remove-cell'",
        ),
        (
            [
                (
                    "::::{solution-end}\n::::\n\n```{code-cell} ipython3\n"
                    ":exercise: ex-sphere-demo-distance check",
                    "```{code-cell} ipython3\n:exercise: ex-sphere-demo-distance check",
                )
            ],
            "never closed",
        ),
        ([("    # END SOLUTION\n", "")], "without a matching '# END SOLUTION'"),
        (
            [("ex-sphere-demo-curvature check (1 point)", "ex-sphere-demo-curvature answer")],
            "answer cell of 'ex-sphere-demo-curvature' outside any solution span",
        ),
        (
            [
                (
                    ":exercise: ex-sphere-demo-cap-area answer",
                    ":exercise: ex-sphere-demo-curvature answer",
                )
            ],
            "answer cell of 'ex-sphere-demo-curvature' inside the solution span of "
            "'ex-sphere-demo-cap-area'",
        ),
        (
            [(":exercise: ex-sphere-demo-cap-area answer", ":tags: [hide-output]")],
            "not marked ':exercise: ex-sphere-demo-cap-area answer'",
        ),
        (
            [("# the answer is a float between 0 and 1\n", "")],
            "check of 'ex-sphere-demo-cap-area': a check's first line must be a comment",
        ),
        (
            [
                (
                    ":exercise: ex-sphere-demo-curvature check (1 point)\n"
                    "# the answer is a SymPy expression in r alone",
                    ":tags: [check]\n# check ex-sphere-demo-curvature (1 point): in r alone",
                )
            ],
            "tag(s) ['check'] no longer mark an exercise cell",
        ),
    ],
)
def test_format_violations_are_reported_with_chapter_cell_and_label(
    tmp_path, replacements, expected
):
    path = _mutated(tmp_path, *replacements)
    with pytest.raises(ChapterFormatError) as caught:
        read_chapter(path)
    message = str(caught.value)
    assert expected in message
    assert str(path) in message
    assert re.search(r"cell \d+ \(line \d+ of ", message), message


def test_every_format_violation_is_reported_at_once(tmp_path):
    path = _mutated(
        tmp_path,
        ("distance hidden check (1 point)", "distance hidden check (2 points)"),
        (
            "cap-area hidden check (1 point)\n:tags: [remove-cell]",
            "cap-area hidden check (1 point)",
        ),
    )
    with pytest.raises(ChapterFormatError) as caught:
        read_chapter(path)
    assert len(caught.value.problems) == 2


@settings(max_examples=50, deadline=None)
@given(
    label=st.from_regex(r"ex-[a-z]+(-[a-z0-9]+){0,3}", fullmatch=True),
    role=st.sampled_from(["answer", "check"]),
    points=st.integers(min_value=1, max_value=50),
    hidden=st.booleans(),
)
def test_cell_markers_read_back_what_was_written(label, role, points, hidden):
    if role == "answer":
        points, hidden = 0, False
    marker = markup.CellMarker(label, role, points, hidden)
    assert markup.parse_cell_marker(markup.format_cell_marker(marker)) == marker


def _all_sources(notebook) -> str:
    return "\n".join(cell.source for cell in notebook.cells)


def assert_student_edition_is_clean(chapter, notebook) -> None:
    """No solution line, no hidden check, no output; public checks verbatim; placeholders."""
    nbformat.validate(notebook)
    text = _all_sources(notebook)
    assert leaked_solution_lines(chapter, notebook) == []
    for exercise in chapter.exercises:
        for check in exercise.checks:
            if check.hidden:
                assert check.source not in text, check.key
            else:
                assert any(cell.source == check.source for cell in notebook.cells), check.key
    for cell in notebook.cells:
        assert cell.get("outputs", []) == [] and cell.get("execution_count") is None
    answers = [c for c in notebook.cells if c.metadata.get("curvlab", {}).get("role") == "answer"]
    assert len(answers) == sum(len(e.solution_cells) for e in chapter.exercises)
    for cell in answers:
        assert "raise NotImplementedError" in cell.source
        assert markup.answer_label(cell.source) == cell.metadata["curvlab"]["exercise"]
    for marker in ("{solution-start}", "{solution-end}", "{solution}"):
        assert marker not in text


def test_student_edition_has_no_solution_hidden_check_or_output():
    chapter = read_chapter(FIXTURE)
    notebook = student_notebook(chapter)
    assert_student_edition_is_clean(chapter, notebook)
    text = _all_sources(notebook)
    assert "def great_circle_distance(p, q):" in text  # the scaffold is given
    assert "nearby geodesics" not in text  # the plain {solution} text is gone
    assert text.count("Hidden checks of") == len(chapter.graded_exercises)


def test_editions_are_written_the_same_way_twice(tmp_path):
    chapter = read_chapter(FIXTURE)
    first = write_editions(chapter, tmp_path / "a")
    second = write_editions(chapter, tmp_path / "b")
    for edition in ("student", "instructor", "autograder"):
        assert first[edition].read_bytes() == second[edition].read_bytes()


def test_autograder_bundle_has_every_check_and_the_points_per_question():
    chapter = read_chapter(FIXTURE)
    bundle = Bundle.from_json(autograder_bundle(chapter).to_json())
    assert bundle == autograder_bundle(chapter)
    assert bundle.points == sum(check.points for check in chapter.checks)
    by_label = {exercise.label: exercise for exercise in bundle.exercises}
    assert set(by_label) == {exercise.label for exercise in chapter.graded_exercises}
    for exercise in chapter.graded_exercises:
        sources = [check.source for check in by_label[exercise.label].checks]
        assert sources == [check.source for check in exercise.checks]
        assert by_label[exercise.label].points == exercise.points
    assert bundle.manual == tuple(e.label for e in chapter.exercises if not e.graded)


def test_the_bundle_holds_no_solution_line():
    chapter = read_chapter(FIXTURE)
    text = autograder_bundle(chapter).to_json()
    for exercise in chapter.exercises:
        for index in exercise.solution_cells:
            for line in markup.answer_lines(chapter.notebook.cells[index].source):
                assert json.dumps(line.strip())[1:-1] not in text


def test_the_leak_detector_finds_every_distinctive_answer_line_in_the_instructor_edition():
    chapter = read_chapter(FIXTURE)
    leaked = leaked_solution_lines(chapter, instructor_notebook(chapter))
    expected = [
        line.strip()
        for exercise in chapter.exercises
        for index in exercise.solution_cells
        for line in markup.answer_lines(chapter.notebook.cells[index].source)
    ]
    assert leaked == expected and len(expected) >= len(chapter.graded_exercises)


def test_instructor_edition_keeps_solutions_and_hidden_checks(tmp_path):
    chapter = read_chapter(FIXTURE)
    written = write_editions(chapter, tmp_path)
    notebook = nbformat.read(written["instructor"], as_version=4)
    text = _all_sources(notebook)
    for check in chapter.checks:
        assert check.source in text
    for exercise in chapter.exercises:
        for index in exercise.solution_cells:
            assert chapter.notebook.cells[index].source in text


def test_student_command_writes_editions_for_the_chapters_of_a_toc(tmp_path, capsys):
    book = tmp_path / "book"
    book.mkdir()
    (book / "sphere-demo.md").write_text(FIXTURE.read_text(encoding="utf-8"), encoding="utf-8")
    (book / "intro.md").write_text("# Intro\n\nNo exercises here.\n", encoding="utf-8")
    toc = tmp_path / "_toc.yml"
    toc.write_text(
        "format: jb-book\nroot: book/intro\nparts:\n  - caption: P\n    numbered: true\n"
        "    chapters:\n      - file: book/sphere-demo\n      - file: book/not-yet\n"
        "  - caption: Back\n    chapters:\n      - file: book/intro-again\n",
        encoding="utf-8",
    )
    assert toc_chapters(toc) == [
        book / "intro.md",
        book / "sphere-demo.md",
        book / "not-yet.md",
        book / "intro-again.md",
    ]
    assert toc_chapters(toc, numbered_only=True) == [book / "sphere-demo.md", book / "not-yet.md"]
    status = main(["student", "--all", "--toc", str(toc), "--out", str(tmp_path / "editions")])
    assert status == 0
    out = capsys.readouterr().out
    assert "skipped" in out and "not-yet.md" in out and "intro.md: no exercises" in out
    assert (tmp_path / "editions" / "student" / "sphere-demo.ipynb").is_file()
    assert (tmp_path / "editions" / "autograder" / "sphere-demo.json").is_file()
    assert not (tmp_path / "editions" / "student" / "intro.ipynb").exists()
    handed_out = {path.name for path in (tmp_path / "editions" / "student").iterdir()}
    assert handed_out == {"sphere-demo.ipynb"}  # the student folder holds student editions only


def test_student_command_fails_on_a_malformed_chapter(tmp_path, capsys):
    path = _mutated(tmp_path, ("curvature hidden check (2 points)", "curvature check (2 pts)"))
    assert main(["student", str(path), "--out", str(tmp_path / "out")]) == 1
    assert MARKER_FORM in capsys.readouterr().err


def test_grade_command_refuses_an_empty_submissions_folder(tmp_path, capsys):
    (tmp_path / "none").mkdir()
    arguments = ["grade", "--chapter", str(FIXTURE), "--submissions", str(tmp_path / "none")]
    assert main([*arguments, "--out", str(tmp_path / "scores.csv")]) == 2
    assert "no files" in capsys.readouterr().err


def _written_book_chapters() -> list[Path]:
    return [path for path in toc_chapters(ROOT / "_toc.yml", numbered_only=True) if path.is_file()]


@pytest.mark.parametrize("path", _written_book_chapters(), ids=lambda path: path.stem)
def test_every_book_chapter_follows_the_exercise_format(path):
    chapter = read_chapter(path)
    assert len(chapter.exercises) >= 3, "at least 3 exercises per chapter"
    assert len(chapter.graded_exercises) >= 2, "at least 2 graded exercises per chapter"
    assert_student_edition_is_clean(chapter, student_notebook(chapter))
