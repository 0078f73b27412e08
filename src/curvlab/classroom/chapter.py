"""A chapter read into its exercises: statements, solution cells, public and hidden checks.

:func:`read_chapter` reads a MyST Markdown notebook (jupytext) and classifies every cell:

- ``context``   chapter code and prose, handed out unchanged;
- ``solution``  code cells tagged ``solution`` inside a ``solution-start``/``solution-end`` span
  (the answer cells), and ``solution-extra`` for other code cells of such a span;
- ``check``     check cells (tag ``check``, first line ``# check <label> (<n> points): ...``),
  hidden when also tagged ``hidden``.

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

EXAMPLE_CHAPTER = """\
---
kernelspec:
  display_name: Python 3 (curvlab)
  language: python
  name: python3
---

# A tiny chapter

::::{exercise} Two
:label: ex-tiny-two

Define `two`, the integer 1 + 1. Points: 3.
::::

::::{solution-start} ex-tiny-two
:class: dropdown
::::

```{code-cell} ipython3
:tags: [solution]
two = 1 + 1
```

::::{solution-end}
::::

```{code-cell} ipython3
:tags: [check]
# check ex-tiny-two (1 point): two is an int
assert isinstance(two, int)
```

```{code-cell} ipython3
:tags: [check, hidden, remove-cell]
# check ex-tiny-two (2 points): two is 2
assert two == 2
```
"""
"""The smallest chapter in the exercise format: one exercise, one public and one hidden check.

The doctests of this package read it; ``write_example_chapter`` writes it to a file.
"""


def write_example_chapter(folder: str | Path) -> Path:
    """Write :data:`EXAMPLE_CHAPTER` to ``folder/tiny.md`` and return the path.

    >>> import tempfile
    >>> write_example_chapter(tempfile.mkdtemp()).name
    'tiny.md'
    """
    path = Path(folder) / "tiny.md"
    path.write_text(EXAMPLE_CHAPTER, encoding="utf-8")
    return path


class ChapterFormatError(ValueError):
    """A chapter does not follow the exercise format; ``problems`` lists every violation."""

    def __init__(self, chapter: str, problems: list[str]):
        self.chapter = chapter
        self.problems = list(problems)
        listed = "\n".join(f"  - {problem}" for problem in self.problems)
        super().__init__(f"{chapter}: {len(self.problems)} exercise-format problem(s):\n{listed}")


@dataclass(frozen=True)
class Check:
    """One check cell: ``points`` earned when its ``source`` runs to the end without error."""

    exercise: str
    number: int  # 1, 2, ... in source order within the exercise
    points: int | float
    what: str
    hidden: bool
    source: str
    cell: int  # index of the cell in the chapter notebook

    @property
    def key(self) -> str:
        """A stable name for the check, ``<exercise-label>#<number>``."""
        return f"{self.exercise}#{self.number}"


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

    role: str  # context | solution | solution-extra | check
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

    Raises :class:`ChapterFormatError` listing every problem: a check cell whose label names no
    exercise, a malformed check header, a solution for an unknown exercise, an exercise with
    checks but no solution cell, duplicate labels, unbalanced solution spans or scaffold
    markers, a hidden check not also tagged ``remove-cell``, a statement whose ``Points: n``
    differs from the sum of its checks' points.

    >>> import tempfile
    >>> chapter = read_chapter(write_example_chapter(tempfile.mkdtemp()))
    >>> [(e.label, e.points, e.public_points, len(e.checks)) for e in chapter.exercises]
    [('ex-tiny-two', 3, 1, 2)]
    >>> broken = chapter.path.with_name("broken.md")
    >>> _ = broken.write_text(EXAMPLE_CHAPTER.replace("(1 point)", "(one point)"))
    >>> read_chapter(broken)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    curvlab.classroom.chapter.ChapterFormatError: ...broken.md: 2 exercise-format problem(s):
      - cell 4 (line 30 of ...): check header '# check ex-tiny-two (one point): ...' is not ...
      - cell 1 (line 8 of ...): exercise 'ex-tiny-two' states 'Points: 3' but its checks are ...
    """
    path = Path(path)
    if path.suffix != ".md":
        raise ValueError(f"chapter: expected a MyST Markdown notebook (.md), got {path}")
    if not path.is_file():
        raise ValueError(f"chapter: no such file {path}")
    text = path.read_text(encoding="utf-8")
    notebook = jupytext.reads(text, fmt="myst")
    lines = _cell_lines(text, notebook)
    name = str(path)
    problems: list[str] = []

    def problem(cell: int, message: str) -> None:
        problems.append(f"{_where(name, cell, lines)}: {message}")

    exercises: dict[str, dict] = {}
    order: list[str] = []
    solved: dict[str, int] = {}
    roles: list[CellRole] = []
    span: tuple[str, int] | None = None  # (label, cell) of the open solution-start
    closed_spans: dict[str, int] = {}
    checks_by_label: dict[str, list[tuple[int, markup.CheckHeader, bool, str]]] = {}
    title = ""

    for index, cell in enumerate(notebook.cells):
        tags = list(cell.metadata.get("tags", []))
        if cell.cell_type == "markdown":
            if not title:
                heading = re.search(r"^# (.+)$", cell.source, flags=re.MULTILINE)
                title = heading.group(1).strip() if heading else ""
            try:
                segments = markup.split_markdown(cell.source)
            except ValueError as error:
                problem(index, str(error))
                roles.append(CellRole("context"))
                continue
            inside = []
            for segment in segments:
                label = segment.argument.strip()
                if segment.kind == "exercise":
                    label = segment.option("label") or ""
                    if not label:
                        problem(index, f"exercise {segment.argument!r} has no :label:")
                    elif label in exercises:
                        problem(
                            index,
                            f"duplicate exercise label {label!r} (first used in "
                            f"{_where(name, exercises[label]['cell'], lines)})",
                        )
                    else:
                        exercises[label] = {
                            "label": label,
                            "title": segment.argument,
                            "statement": segment.body,
                            "cell": index,
                        }
                        order.append(label)
                elif segment.kind in ("solution", "solution-start"):
                    if not label:
                        problem(index, f"{{{segment.kind}}} without an exercise label")
                    elif label not in exercises:
                        problem(
                            index,
                            f"{{{segment.kind}}} {label!r}: no exercise labelled {label!r} "
                            "comes before it in this chapter",
                        )
                    elif label in solved:
                        problem(
                            index,
                            f"exercise {label!r} has a second solution (the first is in "
                            f"{_where(name, solved[label], lines)})",
                        )
                    else:
                        solved[label] = index
                    if segment.kind == "solution-start":
                        if span is not None:
                            problem(
                                index,
                                f"{{solution-start}} {label!r} opens inside the solution span "
                                f"of {span[0]!r} opened in {_where(name, span[1], lines)}",
                            )
                        span = (label, index)
                elif segment.kind == "solution-end":
                    if span is None:
                        problem(index, "{solution-end} without a {solution-start} before it")
                    else:
                        closed_spans[span[0]] = index
                        inside.append(True)
                        span = None
                        continue
                inside.append(span is not None)
            roles.append(CellRole("context", segments=tuple(segments), in_solution=tuple(inside)))
            continue

        if cell.cell_type != "code":
            roles.append(CellRole("context"))
            continue
        is_check = "check" in tags or markup.looks_like_check(cell.source)
        if is_check:
            if "check" not in tags:
                problem(index, "a cell whose first line is a check header must be tagged 'check'")
            try:
                header = markup.parse_check_header(cell.source)
            except ValueError as error:
                problem(index, str(error))
                roles.append(CellRole("context"))
                continue
            hidden = "hidden" in tags
            if hidden and "remove-cell" not in tags:
                problem(
                    index,
                    f"hidden check of {header.label!r} must also be tagged 'remove-cell' "
                    "(else the page shows it)",
                )
            if header.label not in exercises:
                problem(index, f"check cell for unknown exercise label {header.label!r}")
            elif span is not None:
                problem(index, f"check cell of {header.label!r} inside a solution span")
            elif header.label in solved and header.label not in closed_spans:
                if not _plain_solution(roles, solved[header.label], header.label):
                    problem(index, f"check cell of {header.label!r} before its {{solution-end}}")
            checks_by_label.setdefault(header.label, []).append(
                (index, header, hidden, cell.source)
            )
            roles.append(CellRole("check", exercise=header.label))
            continue
        if span is not None:
            if "solution" in tags:
                exercises.get(span[0], {}).setdefault("solution_cells", []).append(index)
                try:
                    markup.scaffold_parts(cell.source)
                except ValueError as error:
                    problem(index, f"solution of {span[0]!r}: {error}")
                roles.append(CellRole("solution", exercise=span[0]))
            else:
                roles.append(CellRole("solution-extra", exercise=span[0]))
            continue
        if "solution" in tags:
            problem(index, "code cell tagged 'solution' outside a solution-start/solution-end span")
        roles.append(CellRole("context"))

    if span is not None:
        problem(span[1], f"{{solution-start}} {span[0]!r} is never closed by a {{solution-end}}")

    built: list[Exercise] = []
    for label in order:
        record = exercises[label]
        checks = tuple(
            Check(
                exercise=label,
                number=number,
                points=header.points,
                what=header.what,
                hidden=hidden,
                source=source,
                cell=index,
            )
            for number, (index, header, hidden, source) in enumerate(
                checks_by_label.get(label, []), start=1
            )
        )
        solution_cells = tuple(record.get("solution_cells", []))
        if checks and not solution_cells:
            problem(
                record["cell"],
                f"exercise {label!r} has checks but no solution: its solution-start/solution-end "
                "span needs a code cell tagged 'solution'",
            )
        stated = markup.stated_points(record["statement"])
        total = sum(check.points for check in checks)
        if stated is not None and stated != total:
            problem(
                record["cell"],
                f"exercise {label!r} states 'Points: {stated}' but its checks are worth {total}",
            )
        built.append(
            Exercise(
                label=label,
                title=record["title"],
                statement=record["statement"],
                cell=record["cell"],
                solution_cells=solution_cells,
                checks=checks,
                has_solution=label in solved,
            )
        )
    if problems:
        raise ChapterFormatError(name, problems)
    return Chapter(
        path=path,
        notebook=notebook,
        roles=tuple(roles),
        exercises=tuple(built),
        source_sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        title=title,
        lines=lines,
    )


def _plain_solution(roles: list[CellRole], cell: int, label: str) -> bool:
    """Whether the solution of ``label`` found in ``cell`` is a plain ``{solution}`` block."""
    if cell >= len(roles):
        return False
    return any(
        segment.kind == "solution" and segment.argument.strip() == label
        for segment in roles[cell].segments
    )
