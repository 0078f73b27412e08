"""The command line: ``python -m curvgrade <command>``.

    python -m curvgrade validate <chapter.md ...|--all>
    python -m curvgrade student <chapter.md ...|--all> --out DIR
    python -m curvgrade grade --chapter <chapter.md|bundle.json> --submissions DIR \\
        --out scores.csv [--feedback DIR] [--timeout S] [--cell-timeout S] [--jobs N] [--unsafe]

``--all`` takes every chapter listed in the book's ``_toc.yml`` (``--toc`` to name another)
that has exercises. ``student`` writes ``DIR/student/<chapter>.ipynb`` (the only folder to hand
out), ``DIR/instructor/<chapter>.ipynb`` and ``DIR/autograder/<chapter>.json``.
"""

from __future__ import annotations

import argparse
import csv
import sys
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

import yaml

from .chapter import ChapterFormatError, read_chapter
from .editions import bundle_from_chapter_or_file, write_editions
from .grading import SandboxUnavailable, SubmissionResult, grade_notebook
from .reports import gradebook_header, gradebook_row, write_feedback, write_scores
from .sandbox import sandbox_problem


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
    relative = path.relative_to(root)
    if relative.suffix.lower() == ".ipynb":
        relative = relative.with_suffix("")
    if relative.name == chapter and len(relative.parts) > 1:
        relative = relative.parent
    return relative.as_posix()


def submission_files(root: Path) -> list[Path]:
    """Every file under ``root`` (notebook or not: each gets a row), checkpoints left out."""
    return sorted(
        path
        for path in root.rglob("*")
        if path.is_file() and ".ipynb_checkpoints" not in path.relative_to(root).parts
    )


def _inside(path: Path, folder: Path) -> bool:
    path, folder = path.resolve(), folder.resolve()
    return path == folder or folder in path.parents


def _grade_one(bundle, path, student, arguments) -> SubmissionResult:
    try:
        return grade_notebook(
            bundle,
            path,
            student=student,
            timeout=arguments.timeout,
            cell_timeout=arguments.cell_timeout,
            unsafe=arguments.unsafe,
        )
    except SandboxUnavailable:
        raise
    except Exception as error:  # one submission never stops the batch
        result = SubmissionResult(student=student, path=path)
        result.flag("crashed", f"grading failed: {type(error).__name__}")
        return result


def _grade(arguments: argparse.Namespace) -> int:
    try:
        bundle = bundle_from_chapter_or_file(arguments.chapter)
    except (ChapterFormatError, ValueError, OSError) as error:
        print(error, file=sys.stderr)
        return 2
    root = Path(arguments.submissions)
    if not root.is_dir():
        print(f"--submissions: no folder {root}", file=sys.stderr)
        return 2
    out = Path(arguments.out)
    feedback = arguments.feedback or out.parent / "feedback"
    for name, target in (("--out", out.parent), ("--feedback", feedback)):
        if _inside(target, root):
            print(f"{name}: must be outside the submissions folder {root}", file=sys.stderr)
            return 2
    if arguments.jobs < 1:
        print(f"--jobs: expected a positive number, got {arguments.jobs}", file=sys.stderr)
        return 2
    files = submission_files(root)
    if not files:
        print(f"--submissions: no files under {root}", file=sys.stderr)
        return 2
    if not arguments.unsafe and (problem := sandbox_problem()) is not None:
        print(
            f"cannot sandbox submissions: {problem}. Refusing to run student code without a "
            "sandbox; --unsafe grades anyway (only for notebooks you trust).",
            file=sys.stderr,
        )
        return 2
    out.parent.mkdir(parents=True, exist_ok=True)
    results: list[SubmissionResult] = []
    students = {path: _student_name(path, root, bundle.chapter) for path in files}
    with out.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(gradebook_header(bundle))
        handle.flush()
        with ThreadPoolExecutor(max_workers=arguments.jobs) as pool:
            futures = {
                pool.submit(_grade_one, bundle, path, students[path], arguments): path
                for path in files
            }
            for future in as_completed(futures):
                result = future.result()
                results.append(result)
                writer.writerow(gradebook_row(bundle, result))  # as each one finishes
                handle.flush()
                print(
                    f"{result.student}: {result.total:g}/{bundle.points:g} points, "
                    f"{result.status} ({result.seconds:.1f} s)"
                    + (f": {'; '.join(result.notes)}" if result.notes else ""),
                    flush=True,
                )
    written = write_scores(bundle, results, out)  # the same rows, sorted by student
    write_feedback(bundle, results, feedback)
    print(f"wrote {', '.join(map(str, written))} and feedback in {feedback}/")
    return 0


def parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m curvgrade``.

    >>> parser().parse_args(["student", "a.md", "--out", "editions"]).out
    PosixPath('editions')
    """
    main = argparse.ArgumentParser(
        prog="python -m curvgrade",
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
    grade.add_argument("--jobs", type=int, default=1, help="submissions graded in parallel")
    grade.add_argument(
        "--unsafe",
        action="store_true",
        help="grade without a sandbox (only for trusted notebooks: student code can then read "
        "and write anything the grader can)",
    )
    return main


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status.

    >>> import tempfile
    >>> main(["validate", str(example_chapter(tempfile.mkdtemp()))])  # doctest: +ELLIPSIS
    /.../tiny.md: 1 exercises, 1 graded, 2 checks (1 hidden), 3 points
      ex-tiny-two: 3 points (1 public), 2 checks
    0
    """
    arguments = parser().parse_args(argv)
    command = {"validate": _validate, "student": _student, "grade": _grade}[arguments.command]
    return command(arguments)
