"""The chapters a command takes: those named on its command line, or (``--all``) every chapter
a Jupyter Book ``_toc.yml`` lists, read and validated together.

``validate`` and ``student`` read their chapters here: a chapter that does not read is
reported and counted as a failure, one without exercises is skipped, and two chapters with
the same file name (the same slug, hence the same edition files) are refused.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

from .chapter import ChapterFormatError, read_chapter


def toc_chapters(toc: str | Path, numbered_only: bool = False) -> list[Path]:
    """The ``.md`` files a Jupyter Book ``_toc.yml`` lists, in order (paths from the book root).

    With ``numbered_only``, only the chapters of parts marked ``numbered: true`` (the book's
    content chapters, not its front and back matter).

    >>> import tempfile
    >>> toc = Path(tempfile.mkdtemp()) / "_toc.yml"
    >>> text = "root: intro\\nparts:\\n- numbered: true\\n  chapters:\\n  - file: a/one\\n"
    >>> _ = toc.write_text(text)
    >>> [p.relative_to(toc.parent).as_posix() for p in toc_chapters(toc)]
    ['intro.md', 'a/one.md']
    >>> [p.name for p in toc_chapters(toc, numbered_only=True)]
    ['one.md']
    """
    toc = Path(toc)
    if not toc.is_file():
        raise ValueError(f"--toc: no table of contents at {toc}")
    data = yaml.safe_load(toc.read_text(encoding="utf-8")) or {}
    files: list[str] = []

    def visit(node) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("file"), str):
                files.append(node["file"])
            if isinstance(node.get("root"), str):
                files.append(node["root"])
            for value in node.values():
                if isinstance(value, list | dict):
                    visit(value)
        elif isinstance(node, list):
            for item in node:
                visit(item)

    if numbered_only:
        parts = data.get("parts", []) if isinstance(data, dict) else []
        visit([part.get("chapters", []) for part in parts if part.get("numbered")])
    else:
        visit(data)
    paths = []
    for name in files:
        path = toc.parent / name
        path = path if path.suffix == ".md" else path.with_name(path.name + ".md")
        if path not in paths:
            paths.append(path)
    return paths


def chapter_paths(arguments: argparse.Namespace) -> list[Path]:
    """The chapter files ``arguments`` name: its ``chapters``, or with ``all`` every chapter of
    its ``toc`` that is written (one listed but not written yet is reported and skipped)."""
    if arguments.all and arguments.chapters:
        raise SystemExit("give chapter files or --all, not both")
    if not arguments.all:
        if not arguments.chapters:
            raise SystemExit("give at least one chapter .md file, or --all")
        return [Path(chapter) for chapter in arguments.chapters]
    chosen = []
    for path in toc_chapters(arguments.toc):
        if not path.is_file():
            print(f"skipped {path}: listed in {arguments.toc} but not written yet")
        else:
            chosen.append(path)
    return chosen


def read_chapters(paths: list[Path]) -> tuple[list, int]:
    """The chapters at ``paths`` that have exercises, and how many failures were reported: a
    chapter that does not read, and chapters with the same file name (counted once)."""
    chapters, failures = [], 0
    for path in paths:
        try:
            chapter = read_chapter(path)
        except (ChapterFormatError, ValueError) as error:
            print(error, file=sys.stderr)
            failures += 1
            continue
        if chapter.exercises:
            chapters.append(chapter)
        else:
            print(f"skipped {path}: no exercises")
    slugs = [chapter.slug for chapter in chapters]
    duplicated = sorted({slug for slug in slugs if slugs.count(slug) > 1})
    if duplicated:
        print(f"chapters with the same file name: {', '.join(duplicated)}", file=sys.stderr)
        failures += 1
    return chapters, failures
