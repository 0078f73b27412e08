"""The student site's sources: the book with every solution and hidden check removed.

``python -m curvgrade.site OUT`` copies the book (``_config.yml``, ``_toc.yml``,
``book/`` without its paired notebooks) into ``OUT`` and rewrites every chapter with exercises
as its student text (:func:`student_markdown`): no solution span, no ``{solution}`` block, no
solution cell, no hidden check. The copy's ``_config.yml`` turns execution off, so building
it (``jupyter-book build OUT``) costs seconds, not a second executed build: pages show the
chapters' code and prose without outputs, the same text a student edition gives.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import jupytext
import nbformat
import yaml

from .chapter import ChapterFormatError, read_chapter
from .editions import markdown_without_solutions


def student_markdown(path: str | Path) -> str:
    """The chapter at ``path`` as MyST Markdown without solutions or hidden checks.

    >>> import tempfile
    >>> text = student_markdown(example_chapter(tempfile.mkdtemp()))
    >>> "two = 1 + 1" in text, "two is an int" in text, "two == 2" in text, "solution" in text
    (False, True, False, False)
    """
    chapter = read_chapter(path)
    hidden = {check.cell for check in chapter.checks if check.hidden}
    notebook = nbformat.v4.new_notebook(metadata=chapter.notebook.metadata)
    for index, (cell, role) in enumerate(zip(chapter.notebook.cells, chapter.roles, strict=True)):
        if role.role == "solution" or index in hidden:
            continue
        if cell.cell_type == "markdown" and role.segments:
            text = markdown_without_solutions(chapter, role)
            if text.strip():
                notebook.cells.append(nbformat.v4.new_markdown_cell(text, metadata=cell.metadata))
            continue
        notebook.cells.append(cell)
    return jupytext.writes(notebook, fmt="md:myst")


def write_student_book(root: str | Path, out: str | Path) -> list[Path]:
    """Write the student site's sources of the book at ``root`` into ``out``; returns the
    chapters rewritten."""
    root, out = Path(root), Path(out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for name in ("_toc.yml",):
        shutil.copy(root / name, out / name)
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8")) or {}
    config.setdefault("execute", {})["execute_notebooks"] = "off"
    config["title"] = f"{config.get('title', 'Book')} (student edition)"
    (out / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    shutil.copytree(
        root / "book",
        out / "book",
        ignore=shutil.ignore_patterns(
            "*.ipynb", "_build", "__pycache__", ".ipynb_checkpoints", "node_modules"
        ),
    )
    rewritten, answers = [], set()
    for path in sorted((out / "book").rglob("*.md")):
        if "{exercise}" not in path.read_text(encoding="utf-8"):
            continue
        try:
            if not read_chapter(path).exercises:  # exercises shown as examples only
                continue
            stripped = student_markdown(path)
            # lines the chapter also shows outside its answers are public anyway
            answers |= {line for line in distinctive_answer_lines(path) if line not in stripped}
            path.write_text(stripped, encoding="utf-8")
        except (ChapterFormatError, ValueError):  # not a chapter in the exercise format
            continue
        rewritten.append(path)
    chapters = set(rewritten)
    for path in sorted((out / "book").rglob("*.md")):  # other pages quoting an answer
        if path in chapters:
            continue
        text = path.read_text(encoding="utf-8")
        if any(line in text for line in answers):
            title = next((line for line in text.split("\n") if line.startswith("# ")), "# Page")
            front = text.split("\n---\n", 1)[0] + "\n---\n" if text.startswith("---") else ""
            path.write_text(
                f"{front}\n{title}\n\nThis page quotes solutions: it is left out of the "
                "student edition of the book.\n",
                encoding="utf-8",
            )
            rewritten.append(path)
    return rewritten


def distinctive_answer_lines(path: str | Path, shortest: int = 16) -> list[str]:
    """Answer lines of the chapter at ``path`` (stripped, at least ``shortest`` characters)
    that occur nowhere else in it: what a student site must not contain."""
    from .editions import instructor_notebook, leaked_solution_lines

    chapter = read_chapter(path)
    lines = leaked_solution_lines(chapter, instructor_notebook(chapter))
    hidden = [
        line.strip()
        for check in chapter.checks
        if check.hidden
        for line in check.source.split("\n")[1:]
    ]
    return [line for line in [*lines, *hidden] if len(line) >= shortest]


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python -m curvgrade.site OUT")
    for path in write_student_book(".", sys.argv[1]):
        print(f"student text: {path}")
