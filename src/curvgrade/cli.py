"""The command line: ``python -m curvgrade <command>``.

    python -m curvgrade validate <chapter.md ...|--all>
    python -m curvgrade student <chapter.md ...|--all> --out DIR
    python -m curvgrade grade --chapter <chapter.md|bundle.json> --submissions DIR \\
        --out scores.csv [--feedback DIR] [--timeout S] [--cell-timeout S] [--jobs N] [--unsafe]
        [--max-size MIB] [--max-cells N]
        [--study-cache DIR] [--roster CSV] [--assignment "Name (ID)"] [--deadline TIME]
        [--late-policy POLICY] [--manual CSV] [--only STUDENT]
    python -m curvgrade prepare-cache --chapter <chapter.md|bundle.json> --study-cache DIR
    python -m curvgrade gradescope <chapter.md|bundle.json ...> --out autograder.zip
        [--timeout S] [--cell-timeout S] [--max-size MIB] [--max-cells N]
        [--wheel WHEEL] [--requirements TXT]
    python -m curvgrade gradescope --rehearse autograder.zip <notebook|folder>
    python -m curvgrade gradescope --run ROOT

``--all`` takes every chapter listed in the book's ``_toc.yml`` (``--toc`` to name another)
that has exercises. ``student`` writes ``DIR/student/<chapter>.ipynb`` (the only folder to hand
out), ``DIR/instructor/<chapter>.ipynb`` and ``DIR/autograder/<chapter>.json``.

``gradescope`` writes Gradescope's programming-assignment autograder for a large course: a zip
whose ``setup.sh`` installs the pins and the library's wheel in the image and whose
``run_autograder`` grades each submission as ``grade`` does (the same checks, sandbox and
limits), writing Gradescope's ``results.json`` (:mod:`curvgrade.gradescope`). ``--rehearse``
runs such a zip here on a notebook, in a temporary root laid out as ``/autograder``, and prints
the ``results.json``; ``--run ROOT`` is what ``run_autograder`` calls.

This module is the parser and the smaller commands; ``grade`` is :mod:`curvgrade.batch`, and
the chapters ``validate`` and ``student`` take are chosen and read by :mod:`curvgrade.toc`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import gradescope
from .batch import grade_command, limits_problem
from .chapter import ChapterFormatError
from .editions import bundle_from_chapter_or_file, write_editions
from .grading import SandboxUnavailable
from .studycache import prepare
from .submission import MAX_SUBMISSION_BYTES, MAX_SUBMISSION_CELLS
from .toc import chapter_paths, read_chapters


def _validate(arguments: argparse.Namespace) -> int:
    chapters, failures = read_chapters(chapter_paths(arguments))
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
    chapters, failures = read_chapters(chapter_paths(arguments))
    for chapter in chapters:
        written = write_editions(chapter, arguments.out)
        print(
            f"{chapter.path}: {len(chapter.graded_exercises)} graded exercises, "
            f"{chapter.points:g} points -> {written['student']}, {written['instructor']}, "
            f"{written['autograder']}"
        )
    return 1 if failures else 0


def _prepare_cache(arguments: argparse.Namespace) -> int:
    try:
        bundle = bundle_from_chapter_or_file(arguments.chapter)
    except (ChapterFormatError, ValueError, OSError) as error:
        print(error, file=sys.stderr)
        return 2
    failed = prepare(bundle, arguments.study_cache)
    return 1 if failed else 0


def _gradescope(arguments: argparse.Namespace) -> int:
    modes = [bool(arguments.chapters), arguments.rehearse is not None, arguments.run is not None]
    if sum(modes) != 1:
        print(
            "gradescope: give chapter files and --out, or --rehearse BUNDLE SUBMISSION, or "
            "--run ROOT",
            file=sys.stderr,
        )
        return 2
    try:
        if arguments.run is not None:
            data = gradescope.run(arguments.run)
            print(f"score {data['score']:g}\n{data['output']}", end="")
            return 0
        if arguments.rehearse is not None:
            data = gradescope.rehearse(*arguments.rehearse)
            print(json.dumps(data, indent=1, ensure_ascii=False))
            return 0
        if arguments.out is None or arguments.out.suffix != ".zip":
            raise ValueError(f"--out: expected the autograder .zip to write, got {arguments.out}")
        if (problem := limits_problem(arguments)) is not None:
            raise ValueError(problem)
        bundles = [bundle_from_chapter_or_file(chapter) for chapter in arguments.chapters]
        for chapter, bundle in zip(arguments.chapters, bundles, strict=True):
            if not bundle.exercises:
                raise ValueError(f"chapters: {chapter} has no graded exercise")
        written = gradescope.write_autograder(
            bundles,
            arguments.out,
            wheel=arguments.wheel,
            requirements=arguments.requirements,
            timeout=arguments.timeout,
            cell_timeout=arguments.cell_timeout,
            max_bytes=round(arguments.max_size * 2**20),
            max_cells=arguments.max_cells,
        )
    except SandboxUnavailable as error:
        print(f"{error}: no results written (fix the image and regrade)", file=sys.stderr)
        return 1
    except (ChapterFormatError, ValueError, OSError) as error:
        print(error, file=sys.stderr)
        return 2
    chapters = ", ".join(f"{b.chapter} ({b.points:g} points)" for b in bundles)
    print(f"wrote {written}: {chapters}; upload it as the assignment's autograder")
    return 0


def _limit_arguments(command: argparse.ArgumentParser) -> None:
    """The limits of grading, the same for ``grade`` and ``gradescope``."""
    command.add_argument("--timeout", type=float, default=600, help="seconds per notebook")
    command.add_argument("--cell-timeout", type=float, help="seconds per cell (default: --timeout)")
    command.add_argument(
        "--max-size",
        type=float,
        default=MAX_SUBMISSION_BYTES / 2**20,
        metavar="MIB",
        help="largest notebook file read, in MiB (default %(default)g): a larger one is unreadable",
    )
    command.add_argument(
        "--max-cells",
        type=int,
        default=MAX_SUBMISSION_CELLS,
        help="most cells a notebook may have (default %(default)d): more is unreadable",
    )


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
    _limit_arguments(grade)
    grade.add_argument("--jobs", type=int, default=1, help="submissions graded in parallel")
    grade.add_argument(
        "--study-cache",
        type=Path,
        help="the studies the chapter reads, prepared once (prepare-cache, or .curvlab-cache/ "
        "after make book): mounted read-only in each sandbox, read by the checks",
    )
    grade.add_argument("--roster", type=Path, help="CSV: file,name,id,sis_user_id,... per student")
    grade.add_argument("--assignment", help='the Canvas column, "Name (ID)" (default: the title)')
    grade.add_argument("--deadline", help="ISO 8601 time, e.g. 2026-05-01T23:59+02:00")
    grade.add_argument("--late-policy", help="none (default), zero, or P%%/day[,max=Nd][,grace=Mm]")
    grade.add_argument("--manual", type=Path, help="scores of the written exercises (written.csv)")
    grade.add_argument(
        "--only", metavar="STUDENT", help="regrade this student only; the other rows are kept"
    )
    grade.add_argument(
        "--unsafe",
        action="store_true",
        help="grade without a sandbox (only for trusted notebooks: student code can then read "
        "and write anything the grader can)",
    )
    lms = commands.add_parser(
        "gradescope", help="a Gradescope autograder.zip grading chapters; --rehearse runs one here"
    )
    lms.add_argument("chapters", nargs="*", help="chapter .md files, or their autograder .json")
    lms.add_argument("--out", type=Path, help="the autograder .zip to write")
    _limit_arguments(lms)
    lms.add_argument("--wheel", type=Path, help="the library's wheel (default: built from src/)")
    lms.add_argument("--requirements", type=Path, help="pins (default: the requirements.txt)")
    lms.add_argument(
        "--rehearse",
        nargs=2,
        metavar=("BUNDLE", "SUBMISSION"),
        help="run the autograder .zip BUNDLE on SUBMISSION (a notebook or a folder) here, in a "
        "temporary /autograder, and print its results.json",
    )
    lms.add_argument(
        "--run",
        metavar="ROOT",
        help="grade ROOT/submission into ROOT/results/results.json (what run_autograder does)",
    )
    prepare = commands.add_parser(
        "prepare-cache", help="run a chapter's given code once to fill a study cache"
    )
    prepare.add_argument("--chapter", required=True, help="chapter .md, or its autograder .json")
    prepare.add_argument("--study-cache", required=True, type=Path, help="the cache folder")
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
    command = {
        "validate": _validate,
        "student": _student,
        "grade": grade_command,
        "prepare-cache": _prepare_cache,
        "gradescope": _gradescope,
    }[arguments.command]
    return command(arguments)
