"""The student site's sources: the executed book with every solution and hidden check removed.

``python -m curvgrade.site OUT --executed _build`` copies the book (``_config.yml``,
``_toc.yml``, ``book/``) into ``OUT``. Every page that the main build executed becomes a
notebook with its outputs (:func:`executed_student_notebook`): the cells of
``_build/jupyter_execute/<page>.ipynb`` with the outputs of their execution (merged from the
execution cache ``_build/.jupyter_cache/``, glued values included), less every solution span,
``{solution}`` block, solution cell and hidden check. The copy's ``_config.yml`` turns
execution off: nothing runs a second time, and every figure, code-made table and glued number
of the main site that is not part of a solution is on the student site. Without
``--executed`` (or for a page the main build did not execute) a chapter becomes its stripped
MyST text (:func:`student_markdown`), without outputs.
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


def _strip_solutions(chapter, notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """``notebook`` (cell for cell the chapter's) without solutions and hidden checks."""
    hidden = {check.cell for check in chapter.checks if check.hidden}
    kept = nbformat.v4.new_notebook(metadata=notebook.metadata)
    for index, (cell, role) in enumerate(zip(notebook.cells, chapter.roles, strict=True)):
        if role.role == "solution" or index in hidden:
            continue
        if cell.cell_type == "markdown" and role.segments:
            text = markdown_without_solutions(chapter, role)
            if text.strip():
                kept.cells.append(nbformat.v4.new_markdown_cell(text, metadata=cell.metadata))
            continue
        kept.cells.append(cell)
    return kept


def _glue_keys(notebook: nbformat.NotebookNode) -> set[str]:
    return {
        output.get("metadata", {}).get("scrapbook", {}).get("name")
        for cell in notebook.cells
        for output in cell.get("outputs", [])
    } - {None}


def executed_notebook(build: str | Path, page: str) -> nbformat.NotebookNode | None:
    """The main build's executed notebook of ``page`` (``book/geometry/fisher-rao``), with
    its outputs, or ``None`` when the build did not execute it.

    myst-nb writes ``jupyter_execute/<page>.ipynb``; when the outputs came from the execution
    cache that file may lack them, and it never holds the glued values (myst-nb moves them to
    ``<page>.glue.json``): the outputs are merged back from the cache
    (``.jupyter_cache/``, or one of its per-library-digest folders), else the glued values are
    added from ``<page>.glue.json`` to the first code cell.
    """
    build = Path(build)
    path = build / "jupyter_execute" / f"{page}.ipynb"
    if not path.is_file():
        return None
    notebook = nbformat.read(path, as_version=4)
    caches = build / ".jupyter_cache"
    folders = [caches] if (caches / "global.db").is_file() else []
    if caches.is_dir():
        folders += sorted(
            (f for f in caches.iterdir() if (f / "global.db").is_file()),
            key=lambda f: (f / "global.db").stat().st_mtime,
            reverse=True,
        )
    merged = False
    if folders:
        from jupyter_cache import get_cache

        for folder in folders:
            try:
                _, notebook = get_cache(folder).merge_match_into_notebook(notebook)
                merged = True
                break
            except KeyError:
                continue
    glue = path.with_name(f"{Path(page).name}.glue.json")
    if not merged and glue.is_file():
        import json

        data = json.loads(glue.read_text(encoding="utf-8"))
        missing = {key: value for key, value in data.items() if key not in _glue_keys(notebook)}
        first = next((cell for cell in notebook.cells if cell.cell_type == "code"), None)
        if missing and first is not None:
            first.setdefault("outputs", []).extend(
                nbformat.from_dict(value) for value in missing.values()
            )
    return notebook


def executed_student_notebook(
    path: str | Path, executed: nbformat.NotebookNode
) -> nbformat.NotebookNode:
    """The executed notebook of the chapter at ``path`` with outputs kept and every solution
    and hidden check removed; ``ValueError`` when its cells are not the chapter's."""
    source = jupytext.reads(Path(path).read_text(encoding="utf-8"), fmt="md:myst")
    if len(source.cells) != len(executed.cells) or any(
        a.cell_type != b.cell_type or (a.cell_type == "code" and a.source != b.source)
        for a, b in zip(source.cells, executed.cells, strict=True)
    ):
        raise ValueError(f"{path}: the executed notebook is not this page's (rebuild the book)")
    metadata = {
        key: value
        for key, value in executed.metadata.items()
        if key not in ("jupytext", "source_map")
    }
    executed = nbformat.from_dict({**executed, "metadata": metadata})
    if "{exercise}" not in source_text(path):
        return executed
    try:
        chapter = read_chapter(path)
    except ChapterFormatError:
        return executed
    if not chapter.exercises:
        return executed
    return _strip_solutions(chapter, executed)


def source_text(path: str | Path) -> str:
    """The text of the file at ``path``."""
    return Path(path).read_text(encoding="utf-8")


def _output_text(notebook: nbformat.NotebookNode) -> str:
    """Every text an output shows (for the check that no page quotes a solution)."""
    parts = []
    for cell in notebook.cells:
        parts.append(cell.source)
        for output in cell.get("outputs", []):
            parts.append(str(output.get("text", "")))
            for mime, value in output.get("data", {}).items():
                if mime.startswith("text/"):
                    parts.append(value if isinstance(value, str) else "".join(value))
    return "\n".join(parts)


def write_student_book(
    root: str | Path, out: str | Path, executed: str | Path | None = None
) -> list[Path]:
    """Write the student site's sources of the book at ``root`` into ``out`` (pages with the
    outputs of the main build at ``executed``, ``_build``, when given); returns the pages
    rewritten."""
    root, out = Path(root), Path(out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for name in ("_toc.yml",):
        shutil.copy(root / name, out / name)
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8")) or {}
    config.setdefault("execute", {})["execute_notebooks"] = "off"
    config["exclude_patterns"] = [  # the pages are notebooks here
        pattern for pattern in config.get("exclude_patterns", []) if pattern != "book/**.ipynb"
    ]
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
        except (ChapterFormatError, ValueError):  # not a chapter in the exercise format
            continue
        rewritten.append(path)
    chapters = set(rewritten)
    notebooks: dict[Path, nbformat.NotebookNode] = {}
    for path in sorted((out / "book").rglob("*.md")):
        page = path.relative_to(out).with_suffix("").as_posix()
        done = executed_notebook(executed, page) if executed is not None else None
        if done is not None:
            notebooks[path] = executed_student_notebook(path, done)
        elif path in chapters:
            path.write_text(student_markdown(path), encoding="utf-8")
    for path in sorted((out / "book").rglob("*.md")):  # other pages quoting an answer
        text = path.read_text(encoding="utf-8")
        if path in notebooks:
            text = _output_text(notebooks[path])
        elif path in chapters:
            continue
        if path not in chapters and any(line in text for line in answers):
            title = next((line for line in text.split("\n") if line.startswith("# ")), "# Page")
            front = text.split("\n---\n", 1)[0] + "\n---\n" if text.startswith("---") else ""
            path.write_text(
                f"{front}\n{title}\n\nThis page quotes solutions: it is left out of the "
                "student edition of the book.\n",
                encoding="utf-8",
            )
            notebooks.pop(path, None)
            rewritten.append(path)
    for path, notebook in notebooks.items():
        nbformat.write(notebook, path.with_suffix(".ipynb"))
        path.unlink()
        if path not in rewritten:
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
    arguments = sys.argv[1:]
    build = None
    if len(arguments) == 3 and arguments[1] == "--executed":
        build = arguments[2]
        if not (Path(build) / "jupyter_execute").is_dir():
            raise SystemExit(f"--executed: no executed notebooks in {build}/jupyter_execute")
    elif len(arguments) != 1:
        raise SystemExit("usage: python -m curvgrade.site OUT [--executed BUILD]")
    for path in write_student_book(".", arguments[0], build):
        shown = path if path.exists() else path.with_suffix(".ipynb")
        print(f"student page: {shown}")
