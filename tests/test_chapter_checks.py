"""One convention for a chapter's checks, in Parts I, II and III alike: the chapter collects
them in one ``CheckTable``, shows it in a cell of its own (``checks``), and asserts nothing
outside its exercises (whose checks are the grader's, and stay plain ``assert`` statements)."""

import ast
import re
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parents[1] / "book"
PARTS = ("geometry", "experiments", "beyond")
CHAPTERS = sorted(path for part in PARTS for path in BOOK.glob(f"{part}/*.md"))


def _cells(path: Path) -> list[tuple[list[str], str]]:
    """(cell options, code) of every code cell: the ``:key: value`` lines or the ``---`` front
    matter that open a cell are its options."""
    text = path.read_text(encoding="utf-8")
    cells = []
    for body in re.findall(r"```\{code-cell\} ipython3\n(.*?)\n```", text, flags=re.DOTALL):
        lines = body.split("\n")
        options = []
        if lines[0] == "---":
            end = lines.index("---", 1)
            options, lines = lines[: end + 1], lines[end + 1 :]
        while lines and lines[0].startswith(":"):
            options.append(lines.pop(0))
        cells.append((options, "\n".join(lines)))
    return cells


def _is_exercise(options: list[str]) -> bool:
    return any(line.startswith(":exercise:") for line in options)


def bare_asserts(code: str) -> list[int]:
    """The lines of ``code`` that hold an ``assert`` statement (IPython magics read as comments)."""
    code = re.sub(r"^(\s*)([%!])", r"\1# \2", code, flags=re.MULTILINE)
    return [node.lineno for node in ast.walk(ast.parse(code)) if isinstance(node, ast.Assert)]


def test_the_chapters_are_found():
    assert {path.parent.name for path in CHAPTERS} == set(PARTS)
    assert len(CHAPTERS) >= 9


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda path: path.stem)
def test_a_chapter_collects_its_checks_in_one_table_and_shows_it(path):
    code = [code for options, code in _cells(path) if not _is_exercise(options)]
    assert sum("CheckTable(" in cell for cell in code) == 1
    assert any(cell.strip().splitlines()[-1:] == ["checks"] for cell in code)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda path: path.stem)
def test_a_chapter_asserts_only_in_its_exercises(path):
    found = {
        index: bare_asserts(code)
        for index, (options, code) in enumerate(_cells(path))
        if not _is_exercise(options)
    }
    assert {index: lines for index, lines in found.items() if lines} == {}


def test_the_assert_detector_finds_an_assert_and_nothing_else():
    assert bare_asserts("x = 1\nif x:\n    assert x == 1, 'one'\n") == [3]
    assert bare_asserts('%matplotlib inline\nchecks.holds("assert-free", x == 1)\n# assert x') == []
