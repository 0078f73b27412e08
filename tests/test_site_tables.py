"""Every Markdown table of the book keeps all its columns, in the sources and on the built site.

A pipe table whose header row has fewer cells than its rows still renders: the extra cells of
each row are dropped without a warning, and the columns they held vanish from the page (a
header with a different number of cells from its delimiter row does not render as a table at
all). Tables come from two places: the chapters' prose and the Markdown that cells print
(``Markdown(...)`` outputs, known only after execution). So:

- every prose table of every chapter is well formed: header, delimiter and rows have one
  number of cells (fast; no build needed);
- on the executed book (``make book``: ``_build/jupyter_execute`` and ``_build/html``), every
  table of the executed notebooks, prose and printed alike, is well formed, and its page holds
  a rendered ``<table>`` with that many columns in its header and in every row (slow: reads the
  built site).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]
BOOK = REPOSITORY / "book"
BUILD = REPOSITORY / "_build"
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
DELIMITER_CELL = re.compile(r"^\s*:?-{3,}:?\s*$")


def _split_row(line: str) -> list[str]:
    """The cells of one pipe-table row (escaped pipes and pipes inside code spans kept)."""
    text = line.strip()
    text = text[1:] if text.startswith("|") else text
    text = text[:-1] if text.endswith("|") and not text.endswith("\\|") else text
    cells, current, in_code = [], "", False
    for index, char in enumerate(text):
        if char == "`":
            in_code = not in_code
        if char == "|" and not in_code and (index == 0 or text[index - 1] != "\\"):
            cells.append(current.strip())
            current = ""
        else:
            current += char
    cells.append(current.strip())
    return cells


def markdown_tables(text: str) -> list[dict]:
    """The pipe tables of a Markdown text outside fenced blocks: for each, its first line
    (1-based), its header cells and the cell counts of its delimiter row and body rows.

    >>> tables = markdown_tables("a\\n\\n| x | y |\\n|---|---|\\n| 1 | 2 | 3 |\\n")
    >>> [(t["line"], t["header"], t["delimiter"], t["rows"]) for t in tables]
    [(3, ['x', 'y'], 2, [3])]
    """
    tables, lines, fence = [], text.splitlines(), None
    index = 0
    while index < len(lines):
        line = lines[index]
        opened = FENCE.match(line)
        if fence is None and opened:
            fence = opened.group(1)[0] * len(opened.group(1))
        elif fence is not None and line.strip().startswith(fence):
            fence = None
        elif fence is None and line.lstrip().startswith("|") and index + 1 < len(lines):
            delimiter = _split_row(lines[index + 1])
            if lines[index + 1].lstrip().startswith("|") and all(
                DELIMITER_CELL.match(cell) for cell in delimiter
            ):
                end = index + 2
                while end < len(lines) and lines[end].lstrip().startswith("|"):
                    end += 1
                tables.append(
                    {
                        "line": index + 1,
                        "header": _split_row(line),
                        "delimiter": len(delimiter),
                        "rows": [len(_split_row(row)) for row in lines[index + 2 : end]],
                    }
                )
                index = end
                continue
        index += 1
    return tables


def malformed(tables: list[dict]) -> list[str]:
    """A line for each table whose delimiter or some row has not the header's cell count.

    >>> malformed(markdown_tables("| x | y |\\n|---|---|\\n| 1 | 2 | 3 |\\n"))
    ['line 1: header of 2 cells (x | y), delimiter 2, rows [3]']
    >>> malformed(markdown_tables("| x | y |\\n|---|---|\\n| 1 | 2 |\\n"))
    []
    """
    problems = []
    for table in tables:
        width = len(table["header"])
        if table["delimiter"] != width or any(row != width for row in table["rows"]):
            header = " | ".join(table["header"])
            problems.append(
                f"line {table['line']}: header of {width} cells ({header}), "
                f"delimiter {table['delimiter']}, rows {table['rows']}"
            )
    return problems


def _chapters() -> list[Path]:
    return sorted(path for path in BOOK.rglob("*.md") if "_vendor" not in path.parts)


def test_a_header_short_of_its_rows_is_found():
    text = "| depth | K |\n|---|---|\n| 1 | 0.2 | 0.3 |\n| 2 | 0.1 | 0.2 |\n"
    assert malformed(markdown_tables(text)) == [
        "line 1: header of 2 cells (depth | K), delimiter 2, rows [3, 3]"
    ]
    # the depth chapter's feedback table once had this header: four "|---" lines, one cell each
    old = "| L | k = -4 | k = 0 | k = 2 |\n" + "|--- |\n" * 3 + "|---|\n| 1 | 0.1 | 0.2 | 0.3 |\n"
    assert malformed(markdown_tables(old)) == [
        "line 1: header of 4 cells (L | k = -4 | k = 0 | k = 2), delimiter 1, rows [1, 1, 1, 4]"
    ]
    fenced = "```\n| a |\n|---|---|\n```\n"
    assert markdown_tables(fenced) == []  # a table inside a fence is code, not a table
    escaped = "| a | b |\n|---|---|\n| `x|y` | a \\| b |\n"
    assert malformed(markdown_tables(escaped)) == []


@pytest.mark.parametrize("chapter", _chapters(), ids=lambda p: p.relative_to(BOOK).as_posix())
def test_every_prose_table_of_a_chapter_is_well_formed(chapter):
    problems = malformed(markdown_tables(chapter.read_text(encoding="utf-8")))
    assert not problems, f"{chapter.relative_to(REPOSITORY)}:\n" + "\n".join(problems)


class _RenderedTables(HTMLParser):
    """The column count of the header and of each body row of every <table> of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[dict] = []
        self._row: list[int] | None = None
        self._in_head = False

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append({"header": 0, "rows": []})
        elif not self.tables:
            return
        elif tag == "thead":
            self._in_head = True
        elif tag == "tr":
            self._row = [0]
        elif tag in ("th", "td") and self._row is not None:
            self._row[0] += 1

    def handle_endtag(self, tag):
        if tag == "thead":
            self._in_head = False
        elif tag == "tr" and self._row is not None and self.tables:
            if self._in_head:
                self.tables[-1]["header"] = self._row[0]
            else:
                self.tables[-1]["rows"].append(self._row[0])
            self._row = None


def _executed_tables(notebook: Path) -> list[dict]:
    """The pipe tables of an executed notebook's Markdown cells and Markdown outputs."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    texts = [c["source"] for c in cells if c["cell_type"] == "markdown"]
    for cell in cells:
        for output in cell.get("outputs", []):
            texts.append(output.get("data", {}).get("text/markdown", ""))
    tables = []
    for text in texts:
        tables.extend(markdown_tables("".join(text) if isinstance(text, list) else text))
    return tables


def _executed_pages() -> list[tuple[Path, Path]]:
    """(executed notebook, built page) of each executed chapter of the last `make book`."""
    if not (BUILD / "html" / "index.html").is_file():
        pytest.fail(f"no built book at {BUILD / 'html'}: run `make book` first")
    pairs = []
    for notebook in sorted((BUILD / "jupyter_execute").rglob("*.ipynb")):
        relative = notebook.relative_to(BUILD / "jupyter_execute").with_suffix(".html")
        page = BUILD / "html" / relative
        if page.is_file():
            pairs.append((notebook, page))
    return pairs


@pytest.mark.slow
def test_every_table_of_the_executed_book_renders_with_all_its_columns():
    pairs = _executed_pages()
    assert len(pairs) >= 9, f"expected the executed chapters, found {len(pairs)}"
    problems, tables_seen = [], 0
    for notebook, page in pairs:
        name = page.relative_to(BUILD / "html").as_posix()
        tables = _executed_tables(notebook)
        tables_seen += len(tables)
        problems.extend(f"{name}, {line}" for line in malformed(tables))
        parser = _RenderedTables()
        parser.feed(page.read_text(encoding="utf-8", errors="replace"))
        rendered = Counter(
            t["header"] for t in parser.tables if all(r == t["header"] for r in t["rows"])
        )
        wanted = Counter(len(t["header"]) for t in tables)
        for width, count in wanted.items():
            if rendered[width] < count:
                problems.append(
                    f"{name}: {count} table(s) of {width} columns in the notebook, "
                    f"{rendered[width]} rendered with {width} columns in every row"
                )
    assert tables_seen > 0, "no Markdown table found in the executed book"
    assert not problems, "tables whose columns vanish:\n" + "\n".join(problems)
