"""The command line: ``python -m curvlab.classroom <command>``.

    python -m curvlab.classroom validate <chapter.md ...|--all>
    python -m curvlab.classroom student <chapter.md ...|--all> --out DIR
    python -m curvlab.classroom grade --chapter <chapter.md|bundle.json> --submissions DIR \\
        --out scores.csv [--feedback DIR] [--timeout S] [--cell-timeout S] [--kernel NAME]

``--all`` takes every chapter listed in the book's ``_toc.yml`` (``--toc`` to name another)
that has exercises. ``student`` writes ``DIR/<chapter>.ipynb`` (student edition),
``DIR/instructor/<chapter>.ipynb`` and ``DIR/autograder/<chapter>.json``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml
from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

from .chapter import ChapterFormatError, read_chapter
from .editions import bundle_from_chapter_or_file, write_editions
from .grading import grade_notebook
from .reports import write_feedback, write_scores


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


def _chapters(arguments: argparse.Namespace) -> list[Path]:
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


def _read_all(paths: list[Path]) -> tuple[list, int]:
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


def _validate(arguments: argparse.Namespace) -> int:
    chapters, failures = _read_all(_chapters(arguments))
    for chapter in chapters:
        graded = chapter.graded_exercises
        print(
            f"{chapter.path}: {len(chapter.exercises)} exercises, {len(graded)} graded, "
            f"{len(chapter.checks)} checks "
            f"({sum(check.hidden for check in chapter.checks)} hidden), {chapter.points:g} points"
        )
        for exercise in chapter.exercises:
            print(
                f"  {exercise.label}: {exercise.points:g} points "
                f"({exercise.public_points:g} public), {len(exercise.checks)} checks"
            )
    return 1 if failures else 0


def _student(arguments: argparse.Namespace) -> int:
    chapters, failures = _read_all(_chapters(arguments))
    for chapter in chapters:
        written = write_editions(chapter, arguments.out)
        print(
            f"{chapter.path}: {len(chapter.graded_exercises)} graded exercises, "
            f"{chapter.points:g} points -> {written['student']}, {written['instructor']}, "
            f"{written['autograder']}"
        )
    return 1 if failures else 0


def _student_name(path: Path, root: Path, chapter: str) -> str:
    relative = path.relative_to(root).with_suffix("")
    if relative.name == chapter and len(relative.parts) > 1:
        relative = relative.parent
    return relative.as_posix()


def _grade(arguments: argparse.Namespace) -> int:
    try:
        bundle = bundle_from_chapter_or_file(arguments.chapter)
    except (ChapterFormatError, ValueError) as error:
        print(error, file=sys.stderr)
        return 2
    try:
        KernelSpecManager().get_kernel_spec(arguments.kernel)
    except NoSuchKernel:
        print(
            f"--kernel: no Jupyter kernel named {arguments.kernel!r} "
            "(set JUPYTER_PATH to the environment's share/jupyter)",
            file=sys.stderr,
        )
        return 2
    root = Path(arguments.submissions)
    if not root.is_dir():
        print(f"--submissions: no folder {root}", file=sys.stderr)
        return 2
    notebooks = sorted(
        path for path in root.rglob("*.ipynb") if ".ipynb_checkpoints" not in path.parts
    )
    if not notebooks:
        print(f"--submissions: no .ipynb files under {root}", file=sys.stderr)
        return 2
    workdir = arguments.workdir
    if workdir is None and Path(arguments.chapter).suffix == ".md":
        workdir = Path(arguments.chapter).resolve().parent
    results = []
    for path in notebooks:
        student = _student_name(path, root, bundle["chapter"])
        result = grade_notebook(
            bundle,
            path,
            student=student,
            kernel_name=arguments.kernel,
            timeout=arguments.timeout,
            cell_timeout=arguments.cell_timeout,
            workdir=workdir,
        )
        results.append(result)
        print(
            f"{student}: {result.total:g}/{bundle['points']:g} points, {result.status} "
            f"({result.seconds:.1f} s)" + (f": {'; '.join(result.notes)}" if result.notes else "")
        )
    written = write_scores(bundle, results, arguments.out)
    feedback = arguments.feedback or Path(arguments.out).parent / "feedback"
    write_feedback(bundle, results, feedback)
    print(f"wrote {', '.join(map(str, written))} and feedback in {feedback}/")
    return 0


def parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m curvlab.classroom``.

    >>> parser().parse_args(["student", "a.md", "--out", "editions"]).out
    PosixPath('editions')
    """
    main = argparse.ArgumentParser(
        prog="python -m curvlab.classroom",
        description="Student editions of the book's chapters, and grading of returned notebooks.",
    )
    commands = main.add_subparsers(dest="command", required=True)
    for name, help_text in (
        ("validate", "check the exercise markup of chapters and list their points"),
        ("student", "write student, instructor and autograder editions"),
    ):
        command = commands.add_parser(name, help=help_text)
        command.add_argument("chapters", nargs="*", help="chapter .md files")
        command.add_argument("--all", action="store_true", help="every chapter in the toc")
        command.add_argument("--toc", default="_toc.yml", help="the book's _toc.yml")
        if name == "student":
            command.add_argument("--out", required=True, type=Path, help="output folder")
    grade = commands.add_parser("grade", help="grade a folder of returned notebooks")
    grade.add_argument("--chapter", required=True, help="chapter .md, or its autograder .json")
    grade.add_argument("--submissions", required=True, help="folder of returned .ipynb files")
    grade.add_argument("--out", required=True, type=Path, help="the scores CSV to write")
    grade.add_argument("--feedback", type=Path, help="feedback folder (default: beside --out)")
    grade.add_argument("--timeout", type=float, default=600, help="seconds per notebook")
    grade.add_argument("--cell-timeout", type=float, help="seconds per cell (default: --timeout)")
    grade.add_argument("--kernel", default="python3", help="Jupyter kernel name")
    grade.add_argument("--workdir", type=Path, help="working folder (default: the chapter's)")
    return main


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status.

    >>> import tempfile
    >>> from curvlab.classroom.chapter import write_example_chapter
    >>> main(["validate", str(write_example_chapter(tempfile.mkdtemp()))])  # doctest: +ELLIPSIS
    /.../tiny.md: 1 exercises, 1 graded, 2 checks (1 hidden), 3 points
      ex-tiny-two: 3 points (1 public), 2 checks
    0
    """
    arguments = parser().parse_args(argv)
    command = {"validate": _validate, "student": _student, "grade": _grade}[arguments.command]
    return command(arguments)
