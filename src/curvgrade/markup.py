"""The exercise markup of a chapter, read line by line: pure string functions.

An exercise is declared once, by its MyST directive, and every code cell that belongs to it
names it in one way, its ``exercise`` metadata (a ``:exercise:`` line in MyST):

- ``::::{exercise} Title`` with ``:label: ex-...`` in a Markdown cell: the exercise, its title
  and statement (an optional ``Points: n`` in it must match its checks);
- its solution, shown by the book in a dropdown: a gated span ``{solution-start} <label>`` ...
  ``{solution-end}`` around its answer cells, ``:exercise: <label> answer``; or, for a written
  exercise without checks, a plain ``{solution} <label>`` block;
- its checks after the span, ``:exercise: <label> check (<n> point[s])``, or
  ``:exercise: <label> hidden check (<n> point[s])`` (also tagged ``remove-cell``, so the book
  does not show it), each starting with a comment line saying what it checks;
- inside an answer cell, an optional scaffold: the lines between ``# BEGIN SOLUTION`` and
  ``# END SOLUTION`` are the answer, the rest is given to the student.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MARKER_KEY = "exercise"
_MARKER = re.compile(
    r"^(?P<label>[A-Za-z][\w.:-]*) +(?:(?P<answer>answer)|(?P<hidden>hidden +)?check +"
    r"\((?P<points>\d+(?:\.\d+)?) (?P<unit>points?)\))$"
)
_OPENING = re.compile(
    r"^(?P<indent>\s*)(?P<fence>:{3,}|`{3,})\{(?P<name>[a-z][\w:-]*)\}\s*(?P<argument>.*?)\s*$"
)
_LITERAL_FENCE = re.compile(r"^\s*(?P<fence>`{3,}|~{3,})")
_OPTION = re.compile(r"^\s*:(?P<key>[\w-]+):\s*(?P<value>.*?)\s*$")
_POINTS_IN_STATEMENT = re.compile(r"\bPoints?:\s*(?P<points>\d+(?:\.\d+)?)")
BEGIN_SOLUTION = "# BEGIN SOLUTION"
END_SOLUTION = "# END SOLUTION"
BEGIN_ANSWER = "# BEGIN ANSWER"
END_ANSWER = "# END ANSWER"
ANSWER_MARKERS = (BEGIN_ANSWER, END_ANSWER)
SOLUTION_DIRECTIVES = ("exercise", "solution", "solution-start", "solution-end")
WRITTEN_PLACEHOLDER = "*Replace this line with your answer (text, equations in $...$, code).*"
_WRITTEN = re.compile(r"^\*\*Your answer to `(?P<label>[A-Za-z][\w.:-]*)`\*\*")


def written_marker(label: str) -> str:
    """The first line of a written exercise's answer cell in the student edition.

    >>> written_marker("ex-a")
    '**Your answer to `ex-a`** (written: graded by hand; keep this line).'
    >>> written_label(written_marker("ex-a")), written_label("**Your answer**")
    ('ex-a', None)
    """
    return f"**Your answer to `{label}`** (written: graded by hand; keep this line)."


def written_label(line: str) -> str | None:
    """The exercise label of a written answer cell's first line, or ``None``."""
    match = _WRITTEN.match(line.strip())
    return match.group("label") if match else None


def as_points(text: str) -> int | float:
    """A points count read from text: an ``int`` when whole, else a ``float``.

    >>> as_points("3"), as_points("1.5")
    (3, 1.5)
    """
    value = float(text)
    return int(value) if value.is_integer() else value


@dataclass(frozen=True)
class CellMarker:
    """What a code cell's ``exercise`` metadata says: the exercise it belongs to, its role.

    ``role`` is ``"answer"`` or ``"check"``; a check has its ``points`` and ``hidden``.
    """

    label: str
    role: str
    points: int | float = 0
    hidden: bool = False


def parse_cell_marker(value: object) -> CellMarker:
    """Read a code cell's marker, the value of its ``exercise`` metadata (``:exercise:`` line).

    The value is ``<label> answer``, ``<label> check (<n> point[s])`` or
    ``<label> hidden check (<n> point[s])``, with ``n`` a positive number.

    >>> parse_cell_marker("ex-a answer")
    CellMarker(label='ex-a', role='answer', points=0, hidden=False)
    >>> parse_cell_marker("ex-a hidden check (2 points)")
    CellMarker(label='ex-a', role='check', points=2, hidden=True)
    >>> parse_cell_marker("ex-a check")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: ':exercise: ex-a check' is not one of ...
    """
    text = value.strip() if isinstance(value, str) else ""
    match = _MARKER.match(text)
    if match is None:
        raise ValueError(
            f"':{MARKER_KEY}: {value}' is not one of ':{MARKER_KEY}: <label> answer', "
            f"':{MARKER_KEY}: <label> check (<n> point[s])', "
            f"':{MARKER_KEY}: <label> hidden check (<n> point[s])'"
        )
    if match["answer"]:
        return CellMarker(label=match["label"], role="answer")
    points = as_points(match["points"])
    if points <= 0:
        raise ValueError(f"':{MARKER_KEY}: {text}': points must be positive, got {points}")
    if (points == 1) != (match["unit"] == "point"):
        raise ValueError(
            f"':{MARKER_KEY}: {text}': write '(1 point)' for one point, '(n points)' otherwise"
        )
    return CellMarker(match["label"], "check", points, hidden=bool(match["hidden"]))


def format_cell_marker(marker: CellMarker) -> str:
    """The ``exercise`` metadata value of ``marker``; :func:`parse_cell_marker` reads it back.

    >>> format_cell_marker(CellMarker("ex-a", "check", 1))
    'ex-a check (1 point)'
    """
    if marker.role == "answer":
        return f"{marker.label} answer"
    unit = "point" if marker.points == 1 else "points"
    hidden = "hidden " if marker.hidden else ""
    return f"{marker.label} {hidden}check ({marker.points} {unit})"


def check_description(source: str) -> str:
    """What a check cell checks: the text of its first line, which must be a comment.

    >>> check_description("# two is an int\\nassert isinstance(two, int)")
    'two is an int'
    >>> check_description("assert two == 2")
    Traceback (most recent call last):
    ...
    ValueError: a check's first line must be a comment saying what it checks, got 'assert two == 2'
    """
    first_line = source.lstrip("\n").split("\n", 1)[0].strip()
    what = first_line[1:].strip() if first_line.startswith("#") else ""
    if not what:
        raise ValueError(
            f"a check's first line must be a comment saying what it checks, got {first_line[:60]!r}"
        )
    return what


def stated_points(statement: str) -> int | float | None:
    """The ``Points: n`` an exercise statement announces, or ``None`` if it announces none.

    >>> stated_points("Define `x`. Points: 3.")
    3
    >>> stated_points("Explain why.") is None
    True
    """
    match = _POINTS_IN_STATEMENT.search(statement)
    return None if match is None else as_points(match["points"])


@dataclass(frozen=True)
class Segment:
    """A piece of a Markdown cell: plain text, or one of the exercise directives.

    ``kind`` is ``"text"`` or a directive name in :data:`SOLUTION_DIRECTIVES`; ``argument`` is
    the text after the directive name (the exercise title, or the solution's exercise label);
    ``options`` the ``:key: value`` lines; ``body`` the directive's content; ``text`` the raw
    lines of the segment; ``line`` its first line, counted from 0 within the cell.
    """

    kind: str
    text: str
    line: int
    argument: str = ""
    options: tuple[tuple[str, str], ...] = ()
    body: str = ""

    def option(self, key: str) -> str | None:
        """The value of option ``key`` (``:key: value``), or ``None`` when absent."""
        for name, value in self.options:
            if name == key:
                return value
        return None


def _closing_line(lines: list[str], start: int, fence: str) -> int | None:
    """Index of the first line after ``start`` that closes a directive opened with ``fence``."""
    closing = re.compile(rf"^\s*{re.escape(fence[0])}{{{len(fence)},}}\s*$")
    for index in range(start + 1, len(lines)):
        if closing.match(lines[index]):
            return index
    return None


def split_markdown(text: str) -> list[Segment]:
    """Split Markdown ``text`` into plain text and the exercise/solution directive blocks.

    A block opens with a colon or backtick fence (``::::{exercise} Title``) and closes at the
    first later line made of at least as many of the same fence characters. Other directives
    and code blocks stay in the plain text, with whatever they contain: an exercise shown as
    an example inside a ```` ```markdown ```` block is not an exercise.

    >>> text = "Intro.\\n\\n:::{exercise} Add\\n:label: ex-add\\n\\nAdd.\\n:::\\nEnd."
    >>> segments = split_markdown(text)
    >>> [(s.kind, s.argument, s.option("label"), s.body) for s in segments]
    [('text', '', None, ''), ('exercise', 'Add', 'ex-add', 'Add.'), ('text', '', None, '')]
    >>> segments[0].text, segments[2].text
    ('Intro.\\n', 'End.')
    >>> [s.kind for s in split_markdown("````markdown\\n:::{exercise} Shown\\n:::\\n````")]
    ['text']
    """
    lines = text.split("\n")
    segments: list[Segment] = []
    plain: list[str] = []
    plain_start = 0
    index = 0
    while index < len(lines):
        match = _OPENING.match(lines[index])
        if match is None or match["name"] not in SOLUTION_DIRECTIVES:
            literal = _LITERAL_FENCE.match(lines[index])
            end = index
            if literal is not None:  # a code block or other directive: its text stays literal
                end = _closing_line(lines, index, literal["fence"])
                end = len(lines) - 1 if end is None else end
            if not plain:
                plain_start = index
            plain.extend(lines[index : end + 1])
            index = end + 1
            continue
        end = _closing_line(lines, index, match["fence"])
        if end is None:
            raise ValueError(
                f"line {index + 1}: the {{{match['name']}}} directive opened with "
                f"{match['fence']!r} is never closed"
            )
        if plain:
            segments.append(Segment("text", "\n".join(plain), plain_start))
            plain = []
        content = lines[index + 1 : end]
        options = []
        while content and _OPTION.match(content[0]):
            option = _OPTION.match(content[0])
            options.append((option["key"], option["value"]))
            content = content[1:]
        segments.append(
            Segment(
                kind=match["name"],
                text="\n".join(lines[index : end + 1]),
                line=index,
                argument=match["argument"],
                options=tuple(options),
                body="\n".join(content).strip(),
            )
        )
        index = end + 1
    if plain:
        segments.append(Segment("text", "\n".join(plain), plain_start))
    return segments


def scaffold_parts(
    source: str, markers: tuple[str, str] = (BEGIN_SOLUTION, END_SOLUTION)
) -> list[tuple[bool, list[str]]]:
    """Split an answer cell into given and answer parts at its scaffold ``markers``.

    Returns ``(is_answer, lines)`` pairs in order; the marker lines themselves belong to no
    part. A cell without markers is one answer part. ``markers`` are the chapter's
    ``# BEGIN SOLUTION``/``# END SOLUTION`` or the student edition's :data:`ANSWER_MARKERS`.

    >>> scaffold_parts("def f(x):\\n    # BEGIN SOLUTION\\n    return x\\n    # END SOLUTION")
    [(False, ['def f(x):']), (True, ['    return x'])]
    >>> scaffold_parts("y = 2")
    [(True, ['y = 2'])]
    """
    begin, end = markers
    lines = source.split("\n")
    stripped = [line.strip() for line in lines]
    if begin not in stripped and end not in stripped:
        return [(True, lines)]
    parts: list[tuple[bool, list[str]]] = []
    current: list[str] = []
    inside = False
    for number, (line, marker) in enumerate(zip(lines, stripped, strict=True), start=1):
        if marker in (begin, end):
            opens = marker == begin
            if opens == inside:
                expected = end if inside else begin
                raise ValueError(
                    f"scaffold line {number}: found {marker!r} where {expected!r} was expected"
                )
            parts.append((inside, current))
            current, inside = [], opens
            continue
        current.append(line)
    if inside:
        raise ValueError(f"scaffold: {begin!r} without a matching {end!r}")
    parts.append((False, current))
    return [(is_answer, part) for is_answer, part in parts if part or is_answer]


def placeholder_source(label: str, source: str, names: tuple[str, ...] = ()) -> str:
    """The student's version of a solution cell: the answer replaced by a marked placeholder.

    The first line, ``# ANSWER <label>``, marks the cell as the answer to ``label``; each
    answer part (the whole cell when it has no scaffold markers) becomes a line raising
    ``NotImplementedError`` at the indentation of the part's first line. In a scaffolded
    cell that line stands between :data:`ANSWER_MARKERS`: what the student writes there is
    the answer, and the lines outside are given (grading restores them).

    >>> print(placeholder_source("ex-a", "x = 1", ("x",)))
    # ANSWER ex-a: define x here, then run the checks below.
    raise NotImplementedError("ex-a: replace this line with your answer")
    >>> scaffold = "def f(x):\\n    # BEGIN SOLUTION\\n    return x\\n    # END SOLUTION"
    >>> print(placeholder_source("ex-f", scaffold))
    # ANSWER ex-f: write your answer between BEGIN ANSWER and END ANSWER, then run the checks below.
    def f(x):
        # BEGIN ANSWER
        raise NotImplementedError("ex-f: replace this line with your answer")
        # END ANSWER
    """
    what = f"define {', '.join(names)} here" if names else None
    parts = scaffold_parts(source)
    scaffolded = len(parts) > 1 or not parts[0][0]
    if scaffolded:
        what = "write your answer between BEGIN ANSWER and END ANSWER"
    elif what is None:
        what = "write your answer in place of NotImplementedError"
    lines = [f"# ANSWER {label}: {what}, then run the checks below."]
    for is_answer, part in parts:
        if not is_answer:
            lines.extend(part)
            continue
        first = next((line for line in part if line.strip()), "")
        indent = first[: len(first) - len(first.lstrip())]
        raise_line = f'raise NotImplementedError("{label}: replace this line with your answer")'
        if scaffolded:
            lines.extend(f"{indent}{line}" for line in (BEGIN_ANSWER, raise_line, END_ANSWER))
        else:
            lines.append(f"{indent}{raise_line}")
    return "\n".join(lines)


ANSWER_PREFIX = re.compile(r"^# ANSWER (?P<label>\S+?):")


def answer_label(source: str) -> str | None:
    """The exercise label of a student answer cell (its ``# ANSWER <label>:`` line), if any.

    >>> answer_label("# ANSWER ex-a: define x here.\\nx = 1")
    'ex-a'
    >>> answer_label("x = 1") is None
    True
    """
    match = ANSWER_PREFIX.match(source.lstrip("\n"))
    return None if match is None else match["label"]


def answer_lines(source: str) -> list[str]:
    """The non-blank lines of a solution cell that are the answer (not scaffold, not markers).

    >>> answer_lines("def f(x):\\n    # BEGIN SOLUTION\\n    return x\\n\\n    # END SOLUTION")
    ['    return x']
    """
    return [
        line
        for is_answer, part in scaffold_parts(source)
        if is_answer
        for line in part
        if line.strip()
    ]
