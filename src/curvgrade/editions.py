"""Editions of a chapter: the student notebook, the instructor notebook, the autograder bundle.

- student edition (``<slug>.ipynb``): every solution removed (gated spans, plain ``{solution}``
  blocks), each answer cell replaced by a marked placeholder that raises
  ``NotImplementedError`` (or by its scaffold with only the ``# BEGIN SOLUTION`` part
  replaced), hidden checks removed (a note says how many points they carry), public checks
  kept verbatim so the student can run them; no outputs.
- instructor edition (``instructor/<slug>.ipynb``): the whole chapter, solutions and hidden
  checks included, with the same cell metadata; graded as a submission it must score full marks.
- autograder bundle (``autograder/<slug>.json``): every check (public and hidden) with its
  source, points and visibility; :mod:`curvgrade.grading` grades from it.

Cells that take part in grading carry ``metadata["curvlab"]``: ``{"role": "answer",
"exercise": label}``, ``{"role": "check", "exercise": label, "check": n}`` or
``{"role": "hidden-checks", "exercise": label}``; the notebook carries
``metadata["curvlab"] = {"chapter": slug, "edition": ..., "source_sha256": ...}``.
"""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path

import nbformat

from . import markup
from .bundle import Bundle, ExerciseSpec, answer_digest
from .chapter import CellRole, Chapter, defined_names, named_in_statement


def _points_text(points: int | float) -> str:
    return f"{points} point" if points == 1 else f"{points} points"


def _new_cell(cell_type: str, source: str, metadata: dict | None = None) -> nbformat.NotebookNode:
    if cell_type == "code":
        cell = nbformat.v4.new_code_cell(source)
    else:
        cell = nbformat.v4.new_markdown_cell(source)
    cell.metadata.update(copy.deepcopy(metadata or {}))
    return cell


def _exercise_markdown(chapter: Chapter, segment: markup.Segment) -> str:
    """A student-edition rendering of an ``{exercise}`` block: plain Markdown, no directive."""
    label = segment.option("label") or ""
    exercise = chapter.exercise(label)
    if exercise.graded:
        hidden = exercise.points - exercise.public_points
        worth = (
            f"{_points_text(exercise.points)}: {_points_text(exercise.public_points)} in the "
            f"checks below that you can run, {_points_text(hidden)} in hidden checks run at grading"
        )
    else:
        worth = "not graded"
    return f"### Exercise: {exercise.title}\n\n*`{label}` · {worth}.*\n\n{exercise.statement}\n"


def markdown_without_solutions(chapter: Chapter, role: CellRole) -> str:
    """The markdown of one cell with every solution segment removed (student editions, site)."""
    kept = []
    for segment, inside in zip(role.segments, role.in_solution, strict=True):
        if inside or segment.kind in ("solution", "solution-start", "solution-end"):
            continue
        kept.append(
            _exercise_markdown(chapter, segment) if segment.kind == "exercise" else segment.text
        )
    return "\n".join(kept).strip("\n")


def _cell_ids(notebook: nbformat.NotebookNode) -> None:
    """Deterministic cell ids from position and source: editions written twice are identical."""
    for index, cell in enumerate(notebook.cells):
        cell["id"] = hashlib.sha1(f"{index}\n{cell.source}".encode()).hexdigest()[:8]


def _notebook(chapter: Chapter, cells: list, edition: str) -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = copy.deepcopy(
        chapter.notebook.metadata.get(
            "kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"}
        )
    )
    notebook.metadata["language_info"] = {"name": "python"}
    notebook.metadata["curvlab"] = {
        "chapter": chapter.slug,
        "edition": edition,
        "source_sha256": chapter.source_sha256,
    }
    notebook.cells = cells
    _cell_ids(notebook)
    return notebook


def _check_metadata(cell: nbformat.NotebookNode, check) -> dict:
    from .selfcheck import digest

    metadata = copy.deepcopy(dict(cell.metadata))
    metadata["curvlab"] = {
        "role": "check",
        "exercise": check.exercise,
        "check": check.number,
        "points": check.points,
        "what": check.what,
        "digest": digest(cell.source),
    }
    return metadata


def _check_numbers(chapter: Chapter) -> dict[int, int]:
    """Cell index -> check number within its exercise."""
    return {check.cell: check.number for check in chapter.checks}


STUDENT_PREAMBLE = """\
*Student edition of this chapter.* Write each answer in the cell that starts with
`# ANSWER <exercise label>`: in place of the line that raises `NotImplementedError`, between
`# BEGIN ANSWER` and `# END ANSWER` where the cell has them (the other lines of that cell are
given: leave them as they are). The code cells after an answer check it; the first line of
each says what it checks. Run them, and a failure tells you which check failed. Do not edit or
delete them: grading runs its own copy of every check, plus hidden checks, restores the given
code, and reports cells that were edited or deleted.

`check("<exercise label>")` runs one exercise's public checks and prints your points;
`check_all()` runs them all and then checks the notebook as saved (every answer written, run
and saved, no given cell or check edited). Run `check_all()` before you submit. A written
exercise has a Markdown cell starting with **Your answer to ...**: write your answer below
that line; it is graded by hand."""

SELF_CHECK_CELL = """\
# Self-checks (given: leave this cell as it is). check("<exercise label>") runs the public
# checks of one exercise and prints your points; check_all() runs them all, then checks the
# saved notebook before you submit it.
from curvgrade.selfcheck import self_checks

check, check_all = self_checks({chapter!r})"""


def _markdown_chunks(chapter: Chapter, role: CellRole) -> list[tuple[str, str | None]]:
    """A Markdown cell without its solutions, cut after each written exercise's statement:
    ``(text, label of the written exercise it ends with, or None)``."""
    chunks, kept = [], []
    for segment, inside in zip(role.segments, role.in_solution, strict=True):
        if inside or segment.kind in ("solution", "solution-start", "solution-end"):
            continue
        if segment.kind != "exercise":
            kept.append(segment.text)
            continue
        kept.append(_exercise_markdown(chapter, segment))
        label = segment.option("label") or ""
        if not chapter.exercise(label).graded:
            chunks.append(("\n".join(kept).strip("\n"), label))
            kept = []
    chunks.append(("\n".join(kept).strip("\n"), None))
    return chunks


def written_answer_cell(label: str) -> nbformat.NotebookNode:
    """The answer cell of a written exercise: a Markdown cell for the student to fill in."""
    source = f"{markup.written_marker(label)}\n\n{markup.WRITTEN_PLACEHOLDER}"
    return _new_cell("markdown", source, {"curvlab": {"role": "written", "exercise": label}})


def student_notebook(chapter: Chapter) -> nbformat.NotebookNode:
    """The student edition of ``chapter``: no solution, no hidden check, no output.

    >>> import tempfile
    >>> from curvgrade.chapter import read_chapter
    >>> chapter = read_chapter(example_chapter(tempfile.mkdtemp()))
    >>> notebook = student_notebook(chapter)
    >>> [cell.metadata["curvlab"]["role"] for cell in notebook.cells if "curvlab" in cell.metadata]
    ['selfcheck', 'answer', 'check', 'hidden-checks']
    >>> print(notebook.cells[3].source)
    # ANSWER ex-tiny-two: define two here, then run the checks below.
    raise NotImplementedError("ex-tiny-two: replace this line with your answer")
    >>> leaked_solution_lines(chapter, notebook)
    []
    """
    from .selfcheck import digest

    numbers = _check_numbers(chapter)
    cells = [_new_cell("markdown", STUDENT_PREAMBLE)]
    if chapter.checks:
        source = SELF_CHECK_CELL.format(chapter=chapter.slug)
        cells.append(_new_cell("code", source, {"curvlab": {"role": "selfcheck"}}))
    marked_hidden: set[str] = set()
    given = 0
    for index, (cell, role) in enumerate(zip(chapter.notebook.cells, chapter.roles, strict=True)):
        if cell.cell_type == "markdown":
            if not role.segments:
                if cell.source.strip():
                    cells.append(_new_cell("markdown", cell.source, cell.metadata))
                continue
            for text, written in _markdown_chunks(chapter, role):
                if text.strip():
                    cells.append(_new_cell("markdown", text, cell.metadata))
                if written is not None:
                    cells.append(written_answer_cell(written))
        elif role.role == "solution":
            exercise = chapter.exercise(role.exercise)
            names = named_in_statement(exercise.statement, defined_names(cell.source))
            source = markup.placeholder_source(exercise.label, cell.source, names)
            metadata = {"curvlab": {"role": "answer", "exercise": exercise.label}}
            cells.append(_new_cell("code", source, metadata))
        elif role.role == "check":
            check = chapter.exercise(role.exercise).checks[numbers[index] - 1]
            if check.hidden:
                if check.exercise not in marked_hidden:
                    marked_hidden.add(check.exercise)
                    exercise = chapter.exercise(check.exercise)
                    hidden_points = exercise.points - exercise.public_points
                    note = (
                        f"*Hidden checks of `{check.exercise}` "
                        f"({_points_text(hidden_points)}) run here when the notebook is graded.*"
                    )
                    metadata = {
                        "curvlab": {
                            "role": "hidden-checks",
                            "exercise": check.exercise,
                            "points": hidden_points,
                        }
                    }
                    cells.append(_new_cell("markdown", note, metadata))
                continue
            cells.append(_new_cell("code", cell.source, _check_metadata(cell, check)))
        elif cell.cell_type == "code":
            metadata = copy.deepcopy(dict(cell.metadata))
            metadata["curvlab"] = {"role": "given", "given": given, "digest": digest(cell.source)}
            given += 1
            cells.append(_new_cell("code", cell.source, metadata))
    notebook = _notebook(chapter, cells, "student")
    notebook.metadata["curvlab"]["answers"] = [e.label for e in chapter.graded_exercises]
    return notebook


def instructor_notebook(chapter: Chapter) -> nbformat.NotebookNode:
    """The instructor edition: the whole chapter with the grading metadata of the student one.

    >>> import tempfile
    >>> from curvgrade.chapter import read_chapter
    >>> chapter = read_chapter(example_chapter(tempfile.mkdtemp()))
    >>> for cell in instructor_notebook(chapter).cells[1:]:
    ...     print(cell.source.split("\\n")[0], cell.metadata.get("curvlab", {}).get("role"))
    two = 1 + 1 answer
    ::::{solution-end} None
    # two is an int check
    # two is 2 check
    """
    numbers = _check_numbers(chapter)
    cells = []
    for index, (cell, role) in enumerate(zip(chapter.notebook.cells, chapter.roles, strict=True)):
        metadata = copy.deepcopy(dict(cell.metadata))
        if role.role == "solution":
            metadata["curvlab"] = {"role": "answer", "exercise": role.exercise}
        elif role.role == "check":
            check = chapter.exercise(role.exercise).checks[numbers[index] - 1]
            metadata = _check_metadata(cell, check)
        cells.append(_new_cell(cell.cell_type, cell.source, metadata))
    return _notebook(chapter, cells, "instructor")


def autograder_bundle(chapter: Chapter) -> Bundle:
    """Everything grading needs (:class:`~curvgrade.bundle.Bundle`), solutions excepted.

    >>> import tempfile
    >>> from curvgrade.chapter import read_chapter
    >>> bundle = autograder_bundle(read_chapter(example_chapter(tempfile.mkdtemp())))
    >>> bundle.points, [(c.points, c.hidden) for c in bundle.exercises[0].checks]
    (3, [(1, False), (2, True)])
    >>> bundle.exercises[0].names, bundle.layout
    (('two',), ('answer:ex-tiny-two', 'checks:ex-tiny-two'))
    """
    given: list[str] = []
    layout: list[str] = []
    names: dict[str, list[str]] = {}
    scaffold: dict[str, list[str]] = {}
    solution: dict[str, list[str]] = {}
    templates: dict[str, list[str]] = {}
    for cell, role in zip(chapter.notebook.cells, chapter.roles, strict=True):
        if cell.cell_type != "code":
            continue
        if role.role == "solution":
            layout.append(f"answer:{role.exercise}")
            exercise = chapter.exercise(role.exercise)
            asked = named_in_statement(exercise.statement, defined_names(cell.source))
            templates.setdefault(role.exercise, []).append(
                markup.placeholder_source(role.exercise, cell.source, asked)
            )
            for name in defined_names(cell.source):
                if name not in names.setdefault(role.exercise, []):
                    names[role.exercise].append(name)
            for is_answer, part in markup.scaffold_parts(cell.source):
                target = solution if is_answer else scaffold
                target.setdefault(role.exercise, []).extend(part)
        elif role.role == "check":
            if f"checks:{role.exercise}" not in layout:
                layout.append(f"checks:{role.exercise}")
        else:
            layout.append(f"given:{len(given)}")
            given.append(cell.source)
    exercises = []
    for exercise in chapter.graded_exercises:
        defined = tuple(names.get(exercise.label, ()))
        exercises.append(
            ExerciseSpec(
                label=exercise.label,
                title=exercise.title,
                names=defined,
                required=named_in_statement(exercise.statement, defined),
                checks=tuple(check.spec() for check in exercise.checks),
                solution_sha256=answer_digest(solution.get(exercise.label, [])),
                scaffold=tuple(line.strip() for line in scaffold.get(exercise.label, ())),
                templates=tuple(templates.get(exercise.label, ())),
            )
        )
    return Bundle(
        chapter=chapter.slug,
        title=chapter.title,
        source_sha256=chapter.source_sha256,
        exercises=tuple(exercises),
        given=tuple(given),
        layout=tuple(layout),
        manual=tuple(e.label for e in chapter.exercises if not e.graded),
    )


def bundle_from_chapter_or_file(path: str | Path) -> Bundle:
    """The autograder bundle for ``path``: a chapter ``.md`` (read and validated) or a ``.json``.

    >>> import tempfile
    >>> from curvgrade.chapter import read_chapter
    >>> folder = tempfile.mkdtemp()
    >>> written = write_editions(read_chapter(example_chapter(folder)), folder)
    >>> bundle_from_chapter_or_file(written["autograder"]) == bundle_from_chapter_or_file(
    ...     Path(folder) / "tiny.md")
    True
    """
    from .chapter import read_chapter

    path = Path(path)
    if path.suffix == ".json":
        return Bundle.read(path)
    return autograder_bundle(read_chapter(path))


def write_notebook(notebook: nbformat.NotebookNode, path: Path) -> Path:
    """Write ``notebook`` to ``path`` (creating folders), validated against the nbformat schema.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "a" / "empty.ipynb"
    >>> nbformat.read(write_notebook(nbformat.v4.new_notebook(), path), as_version=4).cells
    []
    """
    nbformat.validate(notebook)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = nbformat.writes(notebook)
    path.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    return path


def write_editions(chapter: Chapter, out: str | Path) -> dict[str, Path]:
    """Write the three editions of ``chapter`` under ``out``; returns their paths by edition.

    >>> import tempfile
    >>> from curvgrade.chapter import read_chapter
    >>> folder = Path(tempfile.mkdtemp())
    >>> written = write_editions(read_chapter(example_chapter(folder)), folder / "out")
    >>> for edition, path in written.items():
    ...     print(edition, path.relative_to(folder).as_posix())
    student out/student/tiny.ipynb
    instructor out/instructor/tiny.ipynb
    autograder out/autograder/tiny.json
    """
    out = Path(out)
    bundle_path = out / "autograder" / f"{chapter.slug}.json"
    bundle_path.parent.mkdir(parents=True, exist_ok=True)
    bundle_path.write_text(autograder_bundle(chapter).to_json(), encoding="utf-8")
    return {
        "student": write_notebook(
            student_notebook(chapter), out / "student" / f"{chapter.slug}.ipynb"
        ),
        "instructor": write_notebook(
            instructor_notebook(chapter), out / "instructor" / f"{chapter.slug}.ipynb"
        ),
        "autograder": bundle_path,
    }


def leaked_solution_lines(chapter: Chapter, notebook: nbformat.NotebookNode) -> list[str]:
    """Lines of ``chapter``'s answers (solution cells, scaffolds excepted) found in ``notebook``.

    A line counts only if the chapter has it nowhere outside its answers (a line such as ``)``
    or ``import math`` may occur in the chapter's own code too). The student edition of a
    chapter must give ``[]``; an instructor edition gives every distinctive answer line.

    >>> import tempfile
    >>> from curvgrade.chapter import read_chapter
    >>> chapter = read_chapter(example_chapter(tempfile.mkdtemp()))
    >>> leaked_solution_lines(chapter, instructor_notebook(chapter))
    ['two = 1 + 1']
    """
    answer: list[str] = []
    given: set[str] = set()
    hidden = {check.cell for check in chapter.checks if check.hidden}
    for index, (cell, role) in enumerate(zip(chapter.notebook.cells, chapter.roles, strict=True)):
        if index in hidden:
            continue
        if role.role != "solution":
            given.update(line.strip() for line in cell.source.split("\n"))
            continue
        for is_answer, part in markup.scaffold_parts(cell.source):
            target = answer if is_answer else None
            for line in part:
                if target is None:
                    given.add(line.strip())
                elif line.strip():
                    answer.append(line.strip())
    present = {line.strip() for cell in notebook.cells for line in cell.source.split("\n")}
    return [line for line in dict.fromkeys(answer) if line in present and line not in given]
