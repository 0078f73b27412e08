"""A chapter read into its exercises: statements, solution cells, public and hidden checks.

:func:`read_chapter` reads a MyST Markdown notebook (jupytext) and classifies every cell:

- ``context``   chapter code and prose, handed out unchanged;
- ``solution``  the answer cells, ``:exercise: <label> answer``, inside the exercise's
  ``solution-start``/``solution-end`` span;
- ``check``     check cells, ``:exercise: <label> check (<n> points)``, or ``hidden check``
  (see :mod:`curvgrade.markup` for the format).

Every rule of the format is validated; all problems are reported at once in a
:class:`ChapterFormatError` that names the chapter, the cell (its number and its line in the
``.md`` file) and the exercise label.
"""

from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

import jupytext
import nbformat

from . import markup
from .bundle import CheckSpec
from .evaluation import evaluating_uses


class ChapterFormatError(ValueError):
    """A chapter does not follow the exercise format; ``problems`` lists every violation."""

    def __init__(self, chapter: str, problems: list[str]):
        self.chapter = chapter
        self.problems = list(problems)
        listed = "\n".join(f"  - {problem}" for problem in self.problems)
        super().__init__(f"{chapter}: {len(self.problems)} exercise-format problem(s):\n{listed}")


@dataclass(frozen=True)
class Check(CheckSpec):
    """One check cell of a chapter: a :class:`~curvgrade.bundle.CheckSpec` and the
    index of its cell in the chapter notebook (``number`` counts 1, 2, ... in source order
    within the exercise)."""

    cell: int = -1


@dataclass(frozen=True)
class Exercise:
    """An exercise: its statement, its solution cells and its checks, in source order."""

    label: str
    title: str
    statement: str
    cell: int
    solution_cells: tuple[int, ...] = ()
    checks: tuple[Check, ...] = ()
    has_solution: bool = False

    @property
    def points(self) -> int | float:
        """Total points: the sum of the points of the exercise's checks."""
        return sum(check.points for check in self.checks)

    @property
    def public_points(self) -> int | float:
        """Points of the checks the student edition shows."""
        return sum(check.points for check in self.checks if not check.hidden)

    @property
    def graded(self) -> bool:
        """Whether the exercise has checks (and so points)."""
        return bool(self.checks)


@dataclass(frozen=True)
class CellRole:
    """What a chapter cell is for: ``role`` and, for exercise cells, the exercise label."""

    role: str  # context | solution | check
    exercise: str | None = None
    segments: tuple[markup.Segment, ...] = ()
    in_solution: tuple[bool, ...] = ()  # per Markdown segment: inside a gated solution span


@dataclass(frozen=True)
class Chapter:
    """A parsed chapter: the notebook, the role of each cell, and its exercises."""

    path: Path
    notebook: nbformat.NotebookNode
    roles: tuple[CellRole, ...]
    exercises: tuple[Exercise, ...]
    source_sha256: str
    title: str = ""
    lines: tuple[int, ...] = field(default=(), repr=False)

    @property
    def slug(self) -> str:
        """The chapter's name: its file name without ``.md`` (``fisher-rao``)."""
        return self.path.stem

    @property
    def graded_exercises(self) -> tuple[Exercise, ...]:
        """The exercises that have checks."""
        return tuple(exercise for exercise in self.exercises if exercise.graded)

    @property
    def checks(self) -> tuple[Check, ...]:
        """Every check of the chapter, in source order."""
        return tuple(check for exercise in self.exercises for check in exercise.checks)

    @property
    def points(self) -> int | float:
        """Total points of the chapter."""
        return sum(exercise.points for exercise in self.exercises)

    def exercise(self, label: str) -> Exercise:
        """The exercise labelled ``label``."""
        for exercise in self.exercises:
            if exercise.label == label:
                return exercise
        raise KeyError(f"no exercise labelled {label!r} in {self.path}")


def defined_names(source: str) -> tuple[str, ...]:
    """Names bound at the top level of Python ``source`` (assignments, defs, classes, imports).

    >>> defined_names("import math\\nx, y = 1, 2\\ndef f(t):\\n    z = t\\n    return z")
    ('math', 'x', 'y', 'f')
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ()
    names: list[str] = []

    def bind(target: ast.AST) -> None:
        for node in ast.walk(target):
            if isinstance(node, ast.Name) and node.id not in names:
                names.append(node.id)

    for statement in tree.body:
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                bind(target)
        elif isinstance(statement, ast.AnnAssign | ast.AugAssign):
            bind(statement.target)
        elif isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(statement.name)
        elif isinstance(statement, ast.Import | ast.ImportFrom):
            names.extend((alias.asname or alias.name).split(".")[0] for alias in statement.names)
    return tuple(names)


def named_in_statement(statement: str, names: tuple[str, ...]) -> tuple[str, ...]:
    """The ``names`` that the statement quotes as code (```name```): what the student defines.

    >>> named_in_statement("Define `K`, a SymPy expression in `u`.", ("u", "K", "tmp"))
    ('u', 'K')
    """
    quoted = set(re.findall(r"`([A-Za-z_]\w*)`", statement))
    return tuple(name for name in names if name in quoted)


def _cell_lines(text: str, notebook: nbformat.NotebookNode) -> tuple[int, ...]:
    """Best-effort 1-based line in the ``.md`` text where each cell's source begins."""
    lines = text.split("\n")
    found: list[int] = []
    position = 0
    for cell in notebook.cells:
        first = next((line for line in cell.source.split("\n") if line.strip()), "")
        line = position
        while line < len(lines) and (not first or lines[line].strip() != first.strip()):
            line += 1
        if line < len(lines):
            position = line + 1
            found.append(line + 1)
        else:
            found.append(0)
    return tuple(found)


def _where(chapter: str, cell: int, lines: tuple[int, ...]) -> str:
    line = lines[cell] if cell < len(lines) else 0
    return f"cell {cell + 1}" + (f" (line {line} of {chapter})" if line else "")


def read_chapter(path: str | Path) -> Chapter:
    """Read the chapter at ``path`` (a MyST Markdown notebook) and validate its exercises.

    Raises :class:`ChapterFormatError` listing every problem: a malformed ``:exercise:``
    marker, a check whose label names no exercise or whose first line does not say what it
    checks, a solution for an unknown exercise, an answer cell outside its own solution span,
    an unmarked code cell inside one, an exercise with checks but no answer cell, duplicate
    labels, unbalanced solution spans or scaffold markers, a hidden check not also tagged
    ``remove-cell``, a statement whose ``Points: n`` differs from its checks' points, a check
    that hands an answer to a function that evaluates text (``sympify`` without
    ``strict=True``, ``simplify``, ``Matrix``, ``lambdify``, ``eval``: see
    :mod:`curvgrade.evaluation`), and the markup of earlier versions (tags
    ``solution``/``check``/``hidden``, ``# check`` headers).

    >>> import tempfile
    >>> chapter = read_chapter(example_chapter(tempfile.mkdtemp()))
    >>> [(e.label, e.points, e.public_points, len(e.checks)) for e in chapter.exercises]
    [('ex-tiny-two', 3, 1, 2)]
    >>> broken = chapter.path.with_name("broken.md")
    >>> _ = broken.write_text(chapter.path.read_text().replace("(1 point)", "(one point)"))
    >>> read_chapter(broken)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    curvgrade.chapter.ChapterFormatError: ...broken.md: 2 exercise-format problem(s):
      - cell 4 (line 30 of ...): ':exercise: ex-tiny-two check (one point)' is not one of ...
      - cell 1 (line 8 of ...): exercise 'ex-tiny-two' states 'Points: 3' but its checks are ...
    """
    path = Path(path)
    if path.suffix != ".md":
        raise ValueError(f"chapter: expected a MyST Markdown notebook (.md), got {path}")
    if not path.is_file():
        raise ValueError(f"chapter: no such file {path}")
    text = path.read_text(encoding="utf-8")
    notebook = jupytext.reads(text, fmt="myst")
    reader = _Reader(str(path), _cell_lines(text, notebook))
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "markdown":
            reader.markdown_cell(index, cell)
        elif cell.cell_type == "code":
            reader.code_cell(index, cell)
        else:
            reader.roles.append(CellRole("context"))
    if reader.span is not None:
        label, cell = reader.span
        reader.problem(cell, f"{{solution-start}} {label!r} is never closed by a {{solution-end}}")
    exercises = reader.exercises()
    answers = {
        name
        for exercise in exercises
        for cell in exercise.solution_cells
        for name in defined_names(notebook.cells[cell].source)
    }
    for exercise in exercises:
        for check in exercise.checks:
            for problem in evaluating_uses(check.source, answers):
                reader.problem(check.cell, f"check of {exercise.label!r} {problem}")
    if reader.problems:
        raise ChapterFormatError(reader.name, reader.problems)
    return Chapter(
        path=path,
        notebook=notebook,
        roles=tuple(reader.roles),
        exercises=exercises,
        source_sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        title=reader.title,
        lines=reader.lines,
    )


@dataclass
class _Reader:
    """The state of :func:`read_chapter` as it walks the cells, and the problems it found."""

    name: str
    lines: tuple[int, ...]
    problems: list[str] = field(default_factory=list)
    records: dict[str, dict] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    solved: dict[str, int] = field(default_factory=dict)
    roles: list[CellRole] = field(default_factory=list)
    span: tuple[str, int] | None = None  # (label, cell) of the open solution-start
    closed_spans: dict[str, int] = field(default_factory=dict)
    checks: dict[str, list[tuple[int, markup.CellMarker, str, str]]] = field(default_factory=dict)
    title: str = ""

    def problem(self, cell: int, message: str) -> None:
        self.problems.append(f"{_where(self.name, cell, self.lines)}: {message}")

    def markdown_cell(self, index: int, cell) -> None:
        """Exercise statements, solution spans and plain solutions of a Markdown cell."""
        if not self.title:
            heading = re.search(r"^# (.+)$", cell.source, flags=re.MULTILINE)
            self.title = heading.group(1).strip() if heading else ""
        try:
            segments = markup.split_markdown(cell.source)
        except ValueError as error:
            self.problem(index, str(error))
            self.roles.append(CellRole("context"))
            return
        inside = []
        for segment in segments:
            if segment.kind == "exercise":
                self._exercise(index, segment)
            elif segment.kind in ("solution", "solution-start"):
                self._solution(index, segment)
            elif segment.kind == "solution-end":
                if self.span is None:
                    self.problem(index, "{solution-end} without a {solution-start} before it")
                else:
                    self.closed_spans[self.span[0]] = index
                    inside.append(True)
                    self.span = None
                    continue
            inside.append(self.span is not None)
        self.roles.append(CellRole("context", segments=tuple(segments), in_solution=tuple(inside)))

    def _exercise(self, index: int, segment: markup.Segment) -> None:
        label = segment.option("label") or ""
        if not label:
            self.problem(index, f"exercise {segment.argument!r} has no :label:")
        elif label in self.records:
            first = _where(self.name, self.records[label]["cell"], self.lines)
            self.problem(index, f"duplicate exercise label {label!r} (first used in {first})")
        else:
            self.records[label] = {
                "label": label,
                "title": segment.argument,
                "statement": segment.body,
                "cell": index,
            }
            self.order.append(label)

    def _solution(self, index: int, segment: markup.Segment) -> None:
        label = segment.argument.strip()
        if not label:
            self.problem(index, f"{{{segment.kind}}} without an exercise label")
        elif label not in self.records:
            self.problem(
                index,
                f"{{{segment.kind}}} {label!r}: no exercise labelled {label!r} "
                "comes before it in this chapter",
            )
        elif label in self.solved:
            first = _where(self.name, self.solved[label], self.lines)
            self.problem(
                index, f"exercise {label!r} has a second solution (the first is in {first})"
            )
        else:
            self.solved[label] = index
        if segment.kind == "solution-start":
            if self.span is not None:
                opened = _where(self.name, self.span[1], self.lines)
                self.problem(
                    index,
                    f"{{solution-start}} {label!r} opens inside the solution span "
                    f"of {self.span[0]!r} opened in {opened}",
                )
            self.span = (label, index)

    def code_cell(self, index: int, cell) -> None:
        """An answer cell (inside its solution span), a check, or chapter code."""
        tags = list(cell.metadata.get("tags", []))
        value = cell.metadata.get(markup.MARKER_KEY)
        old = [tag for tag in ("solution", "check", "hidden") if tag in tags]
        if old or (value is None and _OLD_CHECK_HEADER.match(cell.source.lstrip("\n"))):
            found = f"tag(s) {old}" if old else "a '# check <label> (<n> points):' first line"
            self.problem(
                index,
                f"{found} no longer mark an exercise cell: give the cell one line "
                f"':{markup.MARKER_KEY}: <label> answer', ':{markup.MARKER_KEY}: <label> check "
                f"(<n> points)' or ':{markup.MARKER_KEY}: <label> hidden check (<n> points)'",
            )
        if value is None:
            if self.span is not None:
                label = self.span[0]
                self.problem(
                    index,
                    f"code cell inside the solution span of {label!r} is not marked "
                    f"':{markup.MARKER_KEY}: {label} answer'",
                )
            self.roles.append(CellRole("context"))
            return
        try:
            marker = markup.parse_cell_marker(value)
        except ValueError as error:
            self.problem(index, str(error))
            self.roles.append(CellRole("context"))
            return
        if marker.role == "answer":
            self._answer(index, cell, marker.label)
        else:
            self._check(index, cell, tags, marker)

    def _answer(self, index: int, cell, label: str) -> None:
        if self.span is None or self.span[0] != label:
            where = (
                "outside any solution span"
                if self.span is None
                else f"inside the solution span of {self.span[0]!r}"
            )
            self.problem(
                index,
                f"answer cell of {label!r} {where}: it belongs between "
                f"'{{solution-start}} {label}' and its '{{solution-end}}'",
            )
        if label in self.records:
            self.records[label].setdefault("solution_cells", []).append(index)
        try:
            markup.scaffold_parts(cell.source)
        except ValueError as error:
            self.problem(index, f"answer cell of {label!r}: {error}")
        self.roles.append(CellRole("solution", exercise=label))

    def _check(self, index: int, cell, tags: list[str], marker: markup.CellMarker) -> None:
        label = marker.label
        try:
            what = markup.check_description(cell.source)
        except ValueError as error:
            self.problem(index, f"check of {label!r}: {error}")
            what = ""
        if marker.hidden and "remove-cell" not in tags:
            self.problem(
                index,
                f"hidden check of {label!r} must also be tagged 'remove-cell' "
                "(else the page shows it)",
            )
        if label not in self.records:
            self.problem(index, f"check cell for unknown exercise label {label!r}")
        elif self.span is not None:
            self.problem(index, f"check cell of {label!r} inside a solution span")
        elif label in self.solved and label not in self.closed_spans:
            if not _plain_solution(self.roles, self.solved[label], label):
                self.problem(index, f"check cell of {label!r} before its {{solution-end}}")
        self.checks.setdefault(label, []).append((index, marker, what, cell.source))
        self.roles.append(CellRole("check", exercise=label))

    def exercises(self) -> tuple[Exercise, ...]:
        """The exercises read, with their checks; points and solutions validated."""
        built: list[Exercise] = []
        for label in self.order:
            record = self.records[label]
            checks = tuple(
                Check(
                    exercise=label,
                    number=number,
                    points=marker.points,
                    what=what,
                    hidden=marker.hidden,
                    source=source,
                    cell=index,
                )
                for number, (index, marker, what, source) in enumerate(
                    self.checks.get(label, []), start=1
                )
            )
            solution_cells = tuple(record.get("solution_cells", []))
            if checks and not solution_cells:
                self.problem(
                    record["cell"],
                    f"exercise {label!r} has checks but no solution: its "
                    f"solution-start/solution-end span needs a code cell marked "
                    f"':{markup.MARKER_KEY}: {label} answer'",
                )
            stated = markup.stated_points(record["statement"])
            total = sum(check.points for check in checks)
            if stated is not None and stated != total:
                self.problem(
                    record["cell"],
                    f"exercise {label!r} states 'Points: {stated}' but its checks are worth "
                    f"{total}",
                )
            built.append(
                Exercise(
                    label=label,
                    title=record["title"],
                    statement=record["statement"],
                    cell=record["cell"],
                    solution_cells=solution_cells,
                    checks=checks,
                    has_solution=label in self.solved,
                )
            )
        return tuple(built)


_OLD_CHECK_HEADER = re.compile(r"#\s*check\s+\S+\s+\(")


def _plain_solution(roles: list[CellRole], cell: int, label: str) -> bool:
    """Whether the solution of ``label`` found in ``cell`` is a plain ``{solution}`` block."""
    if cell >= len(roles):
        return False
    return any(
        segment.kind == "solution" and segment.argument.strip() == label
        for segment in roles[cell].segments
    )
