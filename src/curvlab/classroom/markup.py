"""The exercise markup of a chapter, read line by line: pure string functions.

Three pieces of markup make a graded exercise (the format every chapter follows):

- a MyST directive block in a Markdown cell, ``::::{exercise} Title`` with ``:label: ex-...``;
  its solution, either a plain ``{solution} <label>`` block (text only) or a gated span
  ``{solution-start} <label>`` ... ``{solution-end}`` around code cells tagged ``solution``;
- check cells whose first line is ``# check <label> (<n> point[s]): <what it checks>``;
- inside a solution cell, an optional scaffold: the lines between ``# BEGIN SOLUTION`` and
  ``# END SOLUTION`` are the answer, the rest is given to the student.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CHECK_HEADER = re.compile(
    r"^# check (?P<label>\S+) \((?P<points>\d+(?:\.\d+)?) (?P<unit>points?)\): (?P<what>\S.*)$"
)
_CHECK_PREFIX = re.compile(r"^\s*#\s*check\b")
_OPENING = re.compile(
    r"^(?P<indent>\s*)(?P<fence>:{3,}|`{3,})\{(?P<name>[a-z][\w:-]*)\}\s*(?P<argument>.*?)\s*$"
)
_LITERAL_FENCE = re.compile(r"^\s*(?P<fence>`{3,}|~{3,})")
_OPTION = re.compile(r"^\s*:(?P<key>[\w-]+):\s*(?P<value>.*?)\s*$")
_POINTS_IN_STATEMENT = re.compile(r"\bPoints?:\s*(?P<points>\d+(?:\.\d+)?)")
BEGIN_SOLUTION = "# BEGIN SOLUTION"
END_SOLUTION = "# END SOLUTION"
SOLUTION_DIRECTIVES = ("exercise", "solution", "solution-start", "solution-end")


def as_points(text: str) -> int | float:
    """A points count read from text: an ``int`` when whole, else a ``float``.

    >>> as_points("3"), as_points("1.5")
    (3, 1.5)
    """
    value = float(text)
    return int(value) if value.is_integer() else value


@dataclass(frozen=True)
class CheckHeader:
    """The first line of a check cell, ``# check <label> (<n> points): <what it checks>``."""

    label: str
    points: int | float
    what: str


def looks_like_check(source: str) -> bool:
    """Whether the first line of ``source`` starts like a check header (``# check ...``).

    >>> looks_like_check("# check ex-a (1 point): x is 1\\nassert x == 1")
    True
    >>> looks_like_check("# checking the answer by hand")
    False
    """
    first_line = source.lstrip("\n").split("\n", 1)[0]
    return bool(_CHECK_PREFIX.match(first_line))


def parse_check_header(source: str) -> CheckHeader:
    """Read the header line of a check cell's ``source``.

    The first line must be exactly ``# check <exercise-label> (<n> point[s]): <what it checks>``
    with ``n`` a positive number (``1 point``, ``2 points``).

    >>> parse_check_header("# check ex-a (2 points): matches on hidden inputs\\nassert True")
    CheckHeader(label='ex-a', points=2, what='matches on hidden inputs')
    >>> parse_check_header("# check ex-a: no points")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: check header '# check ex-a: no points' is not of the form ...
    """
    first_line = source.lstrip("\n").split("\n", 1)[0].rstrip()
    match = CHECK_HEADER.match(first_line)
    if match is None:
        raise ValueError(
            f"check header {first_line!r} is not of the form "
            "'# check <exercise-label> (<n> point[s]): <what it checks>'"
        )
    points = as_points(match["points"])
    if points <= 0:
        raise ValueError(f"check header {first_line!r}: points must be positive, got {points}")
    if (points == 1) != (match["unit"] == "point"):
        raise ValueError(
            f"check header {first_line!r}: write '(1 point)' for one point, '(n points)' otherwise"
        )
    return CheckHeader(label=match["label"], points=points, what=match["what"].strip())


def format_check_header(label: str, points: int | float, what: str) -> str:
    """The header line of a check cell; :func:`parse_check_header` reads it back.

    >>> format_check_header("ex-a", 1, "x is 1")
    '# check ex-a (1 point): x is 1'
    """
    unit = "point" if points == 1 else "points"
    return f"# check {label} ({points} {unit}): {what}"


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


def scaffold_parts(source: str) -> list[tuple[bool, list[str]]]:
    """Split a solution cell into given and answer parts at the scaffold markers.

    Returns ``(is_answer, lines)`` pairs in order; the marker lines themselves belong to no
    part. A cell without markers is one answer part.

    >>> scaffold_parts("def f(x):\\n    # BEGIN SOLUTION\\n    return x\\n    # END SOLUTION")
    [(False, ['def f(x):']), (True, ['    return x'])]
    >>> scaffold_parts("y = 2")
    [(True, ['y = 2'])]
    """
    lines = source.split("\n")
    markers = [line.strip() for line in lines]
    if BEGIN_SOLUTION not in markers and END_SOLUTION not in markers:
        return [(True, lines)]
    parts: list[tuple[bool, list[str]]] = []
    current: list[str] = []
    inside = False
    for number, (line, marker) in enumerate(zip(lines, markers, strict=True), start=1):
        if marker in (BEGIN_SOLUTION, END_SOLUTION):
            opens = marker == BEGIN_SOLUTION
            if opens == inside:
                expected = END_SOLUTION if inside else BEGIN_SOLUTION
                raise ValueError(
                    f"scaffold line {number}: found {marker!r} where {expected!r} was expected"
                )
            if current:
                parts.append((inside, current))
            current, inside = [], opens
            continue
        current.append(line)
    if inside:
        raise ValueError(f"scaffold: {BEGIN_SOLUTION!r} without a matching {END_SOLUTION!r}")
    if current:
        parts.append((False, current))
    return parts


def placeholder_source(label: str, source: str, names: tuple[str, ...] = ()) -> str:
    """The student's version of a solution cell: the answer replaced by a marked placeholder.

    The first line, ``# ANSWER <label>``, marks the cell as the answer to ``label``; each
    answer part (the whole cell when it has no scaffold markers) becomes a line raising
    ``NotImplementedError`` at the indentation of the part's first line.

    >>> print(placeholder_source("ex-a", "x = 1", ("x",)))
    # ANSWER ex-a: define x here, then run the checks below.
    raise NotImplementedError("ex-a: replace this line with your answer")
    >>> scaffold = "def f(x):\\n    # BEGIN SOLUTION\\n    return x\\n    # END SOLUTION"
    >>> print(placeholder_source("ex-f", scaffold))
    # ANSWER ex-f: write your answer in place of NotImplementedError, then run the checks below.
    def f(x):
        # YOUR ANSWER HERE
        raise NotImplementedError("ex-f: replace this line with your answer")
    """
    what = f"define {', '.join(names)} here" if names else None
    parts = scaffold_parts(source)
    scaffolded = len(parts) > 1 or not parts[0][0]
    if scaffolded or what is None:
        what = "write your answer in place of NotImplementedError"
    lines = [f"# ANSWER {label}: {what}, then run the checks below."]
    for is_answer, part in parts:
        if not is_answer:
            lines.extend(part)
            continue
        first = next((line for line in part if line.strip()), "")
        indent = first[: len(first) - len(first.lstrip())]
        if scaffolded:
            lines.append(f"{indent}# YOUR ANSWER HERE")
        lines.append(
            f'{indent}raise NotImplementedError("{label}: replace this line with your answer")'
        )
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
