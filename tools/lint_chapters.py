"""Lint and format the chapters' code cells with ruff, exactly as ``src/`` is linted.

The chapters are MyST Markdown notebooks: their code lives in ```` ```{code-cell} ```` fences. This
module copies each chapter's code cells into a temporary ``.ipynb`` (ruff understands notebooks:
magics are allowed, imports are checked per cell), runs ruff with the repository's
``pyproject.toml``, and reports each finding at its line in the ``.md`` file. With ``--fix`` it
applies ruff's fixes and its formatting and writes only the changed cell sources back into the
``.md`` (the Markdown around them is left byte for byte).

The line length is the width of the page's code column, not the library's 100 characters:
``CODE_COLUMNS`` for a cell in the text, ``SOLUTION_COLUMNS`` for a cell inside a solution's
dropdown (narrower by the admonition's border and padding). A line ruff cannot shorten (a long
string or comment) is a finding (E501), to be shortened by hand.

    python -m tools.lint_chapters         # check every chapter under book/; exit 1 on a finding
    python -m tools.lint_chapters --fix   # fix and format, then report what is left
    python -m tools.lint_chapters book/geometry/fisher-rao.md ...   # only these chapters
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

# The characters a code cell shows without scrolling sideways in a 1280-pixel-wide Chromium
# window (the site's theme, book/_static/curvlab.css, Debian's chromium, headless): the cell's
# <pre> is 684 px wide with 32 px of padding, and its monospace font (14 px) advances 8.43 px a
# character, so (684 - 32) / 8.43 = 77.35 columns; inside a solution's dropdown the <pre> is
# 617 px, 69.4 columns. Measured on a scratch book with this _config.yml; a 78-character line
# scrolls (scrollWidth 689 > clientWidth 684). tests/test_site.py checks every page of the
# built site in the browser at that window width.
CODE_COLUMNS = 77
SOLUTION_COLUMNS = 69
# The landing page's column is narrower: on the built site a 76-character line of
# book/intro.md scrolls by 7 px and a 77-character one by 15 px (tests/test_site.py).
PAGE_COLUMNS = {"intro.md": 75}
FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
SOLUTION = re.compile(r"^:{3,}\{solution-(?P<edge>start|end)\}")  # a solution's dropdown
OPTION = re.compile(r"^:[A-Za-z][\w-]*:")


@dataclass
class CodeCell:
    """A code cell of a chapter: its source lines and where they start in the ``.md`` (0-based)."""

    start: int
    lines: list[str]
    in_solution: bool = False


def is_chapter(path: Path) -> bool:
    """Whether ``path`` is a MyST Markdown notebook (front matter with a kernelspec)."""
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---"):
        return False
    front_matter = text.split("\n---", 1)[0]
    return re.search(r"^kernelspec:", front_matter, re.MULTILINE) is not None


def chapters_under(root: Path) -> list[Path]:
    """Every chapter notebook under ``root`` (folders starting with ``_`` or ``.`` skipped)."""
    found = []
    for path in sorted(root.rglob("*.md")):
        if any(part.startswith(("_", ".")) for part in path.relative_to(root).parts[:-1]):
            continue
        if is_chapter(path):
            found.append(path)
    return found


def _closes(line: str, fence: str) -> bool:
    """Whether ``line`` closes a block opened by ``fence`` (same character, at least as long)."""
    stripped = line.rstrip()
    return len(stripped) >= len(fence) and set(stripped) == {fence[0]}


def code_cells(lines: list[str]) -> list[CodeCell]:
    """The code cells of a chapter given as its lines (without line ends)."""
    cells = []
    index = 0
    in_solution = False
    while index < len(lines):
        solution = SOLUTION.match(lines[index])
        if solution is not None:
            in_solution = solution["edge"] == "start"
        match = FENCE.match(lines[index])
        index += 1
        if match is None:
            continue
        fence = match["fence"]
        if not match["info"].startswith("{code-cell}"):  # a displayed block: skip all of it
            while index < len(lines) and not _closes(lines[index], fence):
                index += 1
            index += 1
            continue
        options = index
        if index < len(lines) and lines[index].strip() == "---":  # a YAML options block
            index += 1
            while index < len(lines) and lines[index].strip() != "---":
                index += 1
            index += 1
        options = index
        while index < len(lines) and OPTION.match(lines[index]):  # :tags: [...] options
            index += 1
        if index > options and index < len(lines) and not lines[index].strip():
            index += 1  # the blank line that may separate the options from the code
        start = index
        while index < len(lines) and not _closes(lines[index], fence):
            index += 1
        if index >= len(lines):
            raise ValueError(f"code cell opened at line {start} is never closed")
        cells.append(CodeCell(start=start, lines=lines[start:index], in_solution=in_solution))
        index += 1
    return cells


def _notebook(cells: list[CodeCell]) -> dict:
    return {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": None,
                "id": f"cell{number}",
                "metadata": {},
                "outputs": [],
                "source": "\n".join(cell.lines),
            }
            for number, cell in enumerate(cells)
        ],
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def _sources(notebook_path: Path) -> list[list[str]]:
    notebook = json.loads(notebook_path.read_text(encoding="utf-8"))
    sources = []
    for cell in notebook["cells"]:
        source = cell["source"]
        text = "".join(source) if isinstance(source, list) else source
        sources.append(text.rstrip("\n").split("\n") if text.strip() else [])
    return sources


def _ruff() -> str:
    beside = Path(sys.executable).with_name("ruff")
    found = str(beside) if beside.is_file() else shutil.which("ruff")
    if found is None:
        raise SystemExit("ruff is not installed: run `make venv` (requirements.txt pins it)")
    return found


def page_columns(chapter: Path) -> int:
    """The characters a code cell of ``chapter``'s page shows, outside a solution."""
    return PAGE_COLUMNS.get(chapter.name if chapter.parent.name == "book" else "", CODE_COLUMNS)


def columns(cell: CodeCell, text_columns: int = CODE_COLUMNS) -> int:
    """The characters the page shows on a line of ``cell``, without scrolling sideways."""
    return min(SOLUTION_COLUMNS, text_columns) if cell.in_solution else text_columns


def _write(path: Path, cells: list[CodeCell]) -> Path:
    path.write_text(json.dumps(_notebook(cells)), encoding="utf-8")
    return path


def lint(chapters: list[Path], config: Path, fix: bool) -> list[str]:
    """Ruff's findings in the chapters' code cells, as ``path:line:column: CODE message``.

    The rules run on all of a chapter's cells together (an import serves every cell after it)
    at ``CODE_COLUMNS``; the formatter formats each cell at its own width, and a line of a
    solution longer than ``SOLUTION_COLUMNS`` is an E501 finding.
    """
    ruff = _ruff()
    findings = []
    with tempfile.TemporaryDirectory() as scratch:
        for number, chapter in enumerate(chapters):
            text = chapter.read_text(encoding="utf-8")
            lines = text.split("\n")
            cells = code_cells(lines)
            if not cells:
                continue
            notebook_path = _write(Path(scratch) / f"chapter{number}.ipynb", cells)
            base = [ruff, "--config", str(config)]
            text_columns = page_columns(chapter)
            widths = sorted({columns(cell, text_columns) for cell in cells})
            if fix:
                subprocess.run(
                    [*base, "check", "--fix-only", "--quiet", f"--line-length={text_columns}"]
                    + [str(notebook_path)]
                )
                cells = [
                    CodeCell(cell.start, source, cell.in_solution)
                    for cell, source in zip(cells, _sources(notebook_path), strict=True)
                ]
                formatted = {}
                for width in widths:
                    group = [cell for cell in cells if columns(cell, text_columns) == width]
                    path = _write(Path(scratch) / f"chapter{number}-{width}.ipynb", group)
                    subprocess.run(
                        [*base, "format", "--quiet", f"--line-length={width}", str(path)],
                        check=True,
                    )
                    formatted |= dict(zip(map(id, group), _sources(path), strict=True))
                original = code_cells(lines)
                for cell, old in reversed(list(zip(cells, original, strict=True))):
                    lines[old.start : old.start + len(old.lines)] = formatted[id(cell)]
                new_text = "\n".join(lines)
                if new_text != text:
                    chapter.write_text(new_text, encoding="utf-8")
                    print(f"fixed {chapter}")
                cells = code_cells(lines)
                notebook_path = _write(notebook_path, cells)
            else:
                for width in widths:
                    group = [cell for cell in cells if columns(cell, text_columns) == width]
                    path = _write(Path(scratch) / f"chapter{number}-{width}.ipynb", group)
                    formatted = subprocess.run(
                        [*base, "format", "--check", "--quiet", f"--line-length={width}"]
                        + [str(path)],
                        capture_output=True,
                    )
                    if formatted.returncode:
                        findings.append(
                            f"{chapter}: code cells are not formatted (run `make format`)"
                        )
                        break
            checks = [([f"--line-length={text_columns}"], notebook_path, cells)]
            solutions = [cell for cell in cells if cell.in_solution]
            if solutions:  # only the width: names and imports are checked with every cell
                path = _write(Path(scratch) / f"chapter{number}-solutions.ipynb", solutions)
                narrow = [f"--line-length={SOLUTION_COLUMNS}", "--select=E501"]
                checks.append((narrow, path, solutions))
            for options, path, group in checks:
                result = subprocess.run(
                    [*base, "check", *options, "--output-format", "json", "--exit-zero"]
                    + [str(path)],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                for finding in json.loads(result.stdout or "[]"):
                    cell = group[(finding.get("cell") or 1) - 1]
                    row = cell.start + finding["location"]["row"]
                    column = finding["location"]["column"]
                    found = f"{chapter}:{row}:{column}: {finding['code']} {finding['message']}"
                    if found not in findings:
                        findings.append(found)
    return findings


def main(arguments: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.lint_chapters", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("chapters", nargs="*", type=Path, help="chapter .md files (default: book/)")
    parser.add_argument("--fix", action="store_true", help="apply ruff's fixes and formatting")
    parser.add_argument("--config", type=Path, default=Path("pyproject.toml"))
    options = parser.parse_args(arguments)
    chapters = options.chapters or chapters_under(Path("book"))
    if not chapters:
        raise SystemExit("no chapters found (run from the repository root)")
    findings = lint(chapters, options.config.resolve(), options.fix)
    for finding in findings:
        print(finding)
    if findings:
        print(f"{len(findings)} finding(s) in the chapters' code cells", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
