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
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import yaml

from . import gradescope
from .chapter import ChapterFormatError, read_chapter
from .classlist import (
    LatePolicy,
    file_time,
    parse_time,
    read_manual,
    read_roster,
    roster_entry,
    write_canvas,
    write_gradescope,
)
from .editions import bundle_from_chapter_or_file, write_editions
from .grading import (
    MAX_SUBMISSION_BYTES,
    MAX_SUBMISSION_CELLS,
    SandboxUnavailable,
    SubmissionResult,
    grade_notebook,
)
from .reports import (
    gradebook_header,
    gradebook_row,
    possible_points,
    write_feedback,
    write_scores,
    write_written,
)
from .sandbox import sandbox_problem
from .studycache import prepare, prepared_for, readable_snapshot, remove_snapshot


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
    """Every entry under ``root`` that gets a row: each file, notebook or not, and each entry
    that is no file a student wrote (a symbolic link, to a file or to a folder, a pipe, a
    device, a folder named ``*.ipynb``), which grading refuses. Folders are looked into, never
    through a symbolic link; ``.ipynb_checkpoints`` is left out.

    >>> import os, tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> (root / "carol").mkdir(); (root / "x.ipynb").mkdir()
    >>> for name in ("alice.ipynb", "carol/tiny.ipynb", "x.ipynb/y.ipynb"):
    ...     _ = (root / name).write_text("{}")
    >>> os.symlink(root / "alice.ipynb", root / "bob.ipynb")
    >>> os.symlink(root / "carol", root / "dave")
    >>> [path.relative_to(root).as_posix() for path in submission_files(root)]
    ['alice.ipynb', 'bob.ipynb', 'carol/tiny.ipynb', 'dave', 'x.ipynb']
    """
    found, folders = [], [Path(root)]
    while folders:
        with os.scandir(folders.pop()) as entries:
            for entry in entries:
                if entry.name == ".ipynb_checkpoints":
                    continue
                path = Path(entry.path)
                if entry.is_dir(follow_symlinks=False) and path.suffix.lower() != ".ipynb":
                    folders.append(path)
                else:
                    found.append(path)
    return sorted(found)


def _relative(path: Path, root: Path) -> str:
    """``path`` under ``root`` as the listing named it (``""`` if outside): no symbolic link is
    followed, so a link is known by its own name, never by its target's."""
    try:
        return Path(os.path.abspath(path)).relative_to(os.path.abspath(root)).as_posix()
    except ValueError:
        return ""


def _missing_name(entry: dict) -> str:
    """The student name of the row of a roster entry without a file."""
    name = entry["file"].rstrip("/")
    return name[: -len(".ipynb")] if name.lower().endswith(".ipynb") else name


def _inside(path: Path, folder: Path) -> bool:
    path, folder = path.resolve(), folder.resolve()
    return path == folder or folder in path.parents


def _grade_one(bundle, path, student, arguments, study_cache=None) -> SubmissionResult:
    try:
        return grade_notebook(
            bundle,
            path,
            student=student,
            timeout=arguments.timeout,
            cell_timeout=arguments.cell_timeout,
            unsafe=arguments.unsafe,
            study_cache=study_cache,
            max_bytes=round(arguments.max_size * 2**20),
            max_cells=arguments.max_cells,
        )
    except SandboxUnavailable:
        raise
    except Exception as error:  # one submission never stops the batch
        result = SubmissionResult(student=student, path=path)
        result.flag("crashed", f"grading failed: {type(error).__name__}")
        return result


@dataclass
class _Class:
    """What the class options say: roster, deadline and policy, manual scores."""

    roster: list[dict] | None = None
    deadline: object = None
    policy: LatePolicy | None = None
    manual: dict = field(default_factory=dict)
    manual_possible: dict = field(default_factory=dict)


def _class_options(arguments: argparse.Namespace, bundle) -> _Class:
    options = _Class()
    if arguments.roster:
        options.roster = read_roster(arguments.roster)
    if arguments.late_policy and not arguments.deadline:
        raise ValueError("--late-policy: give the --deadline it applies to")
    if arguments.deadline:
        options.deadline = parse_time(arguments.deadline, "--deadline")
        options.policy = LatePolicy.parse(arguments.late_policy or "none")
    return options


def _apply_class(results: list[SubmissionResult], root: Path, options: _Class) -> list:
    """Copies of ``results`` with identities, lateness and manual scores; a ``missing`` row for
    each roster entry without a file."""
    results = [SubmissionResult.from_dict(result.to_dict()) for result in results]
    matched: dict[str, list[SubmissionResult]] = {}
    for result in results:
        relative = _relative(result.path, root)
        entry = None
        if options.roster is not None:
            entry = roster_entry(options.roster, relative or str(result.path), result.student)
            if entry is None:
                result.flags.append("not-in-roster")
                result.notes.append("no roster entry has this file: left out of the LMS exports")
            else:
                result.identity = entry
                matched.setdefault(entry["file"], []).append(result)
        if options.deadline is not None and result.status != "missing":
            if entry is not None and entry.get("submitted"):
                when = parse_time(entry["submitted"], "submitted")
            else:
                when = file_time(result.path) if os.path.lexists(result.path) else None
            if when is not None:
                result.submitted = when.isoformat()
                result.late_days, result.late_share = options.policy.penalty(options.deadline, when)
                if result.late_days:
                    result.notes.append(
                        f"submitted {result.late_days} day(s) late "
                        f"(policy {options.policy.text}): -{result.late_share:.0%}"
                    )
        result.manual = dict(options.manual.get(result.student, {}))
    for file, same in matched.items():
        if len(same) > 1:
            for result in same:
                result.flags.append("duplicate-submission")
                result.flag("flagged", f"{len(same)} files for the roster entry {file!r}")
    for entry in options.roster or []:
        if entry["file"] not in matched:
            missing = SubmissionResult(student=_missing_name(entry), path=Path(entry["file"]))
            missing.identity = entry
            missing.flag("missing", "no submission for this roster entry")
            missing.checks = []
            results.append(missing)
    return results


def _export_rows(results: list[SubmissionResult], roster: list[dict]) -> list[tuple]:
    """Per roster entry: (entry, grade or None, status, lateness)."""
    rows = []
    for entry in roster:
        mine = [result for result in results if result.identity is entry]
        real = [result for result in mine if result.status != "missing"]
        score, status, late = None, "Missing", None
        if len(real) == 1 and not real[0].withheld and "duplicate-submission" not in real[0].flags:
            score, status = real[0].total, "Graded"
            if real[0].late_days:
                late = timedelta(days=real[0].late_days)
        elif real:
            status = "Needs review"
        rows.append((entry, score, status, late))
    return rows


def _write_reports(bundle, results, out, feedback, options, arguments) -> list[Path]:
    written = write_scores(bundle, results, out, options.manual_possible)
    write_feedback(bundle, [r for r in results if r.status != "missing"], feedback)
    written += write_written(bundle, results, out.parent)
    if options.roster is not None:
        rows = _export_rows(results, options.roster)
        possible = possible_points(bundle, options.manual_possible)
        assignment = arguments.assignment or bundle.title or bundle.chapter
        written.append(
            write_canvas(out.with_name("canvas.csv"), assignment, possible, [r[:2] for r in rows])
        )
        written.append(write_gradescope(out.with_name("gradescope.csv"), possible, rows))
    return written


def _limits_problem(arguments: argparse.Namespace) -> str | None:
    """What is wrong with the limits ``grade`` and ``gradescope`` take, or ``None``."""
    if not arguments.timeout > 0:
        return f"--timeout: expected a positive number of seconds, got {arguments.timeout}"
    if arguments.cell_timeout is not None and not arguments.cell_timeout > 0:
        return (
            f"--cell-timeout: expected a positive number of seconds, got {arguments.cell_timeout}"
        )
    if not 1 <= arguments.max_size * 2**20 < 2**63:  # false for nan: refused too
        return f"--max-size: expected a positive number of MiB, got {arguments.max_size}"
    if arguments.max_cells < 1:
        return f"--max-cells: expected a positive number, got {arguments.max_cells}"
    return None


def _grade(arguments: argparse.Namespace) -> int:
    try:
        bundle = bundle_from_chapter_or_file(arguments.chapter)
        options = _class_options(arguments, bundle)
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
    if arguments.study_cache and _inside(out.parent, Path(arguments.study_cache)):
        print("--out: must be outside the study cache", file=sys.stderr)
        return 2
    if arguments.jobs < 1:
        print(f"--jobs: expected a positive number, got {arguments.jobs}", file=sys.stderr)
        return 2
    if (problem := _limits_problem(arguments)) is not None:
        print(problem, file=sys.stderr)
        return 2
    files = submission_files(root)
    if not files:
        print(f"--submissions: no files under {root}", file=sys.stderr)
        return 2
    students = {path: _student_name(path, root, bundle.chapter) for path in files}
    if arguments.manual:
        known = set(students.values()) | {_missing_name(e) for e in options.roster or []}
        try:
            options.manual, options.manual_possible = read_manual(
                arguments.manual, bundle.manual, known
            )
        except ValueError as error:
            print(error, file=sys.stderr)
            return 2
    saved = out.with_name("results.json")
    previous: list[SubmissionResult] = []
    if arguments.only is not None:
        files = [path for path in files if students[path] == arguments.only]
        if not files:
            print(f"--only: no submission of {arguments.only!r} under {root}", file=sys.stderr)
            return 2
        try:
            data = json.loads(saved.read_text(encoding="utf-8"))
            previous = [SubmissionResult.from_dict(item) for item in data["results"]]
        except (OSError, ValueError, KeyError, TypeError):
            print(f"--only: no earlier grading in {saved} to update", file=sys.stderr)
            return 2
        if data.get("chapter") != bundle.chapter:
            print(f"--only: {saved} grades another chapter", file=sys.stderr)
            return 2
    if not arguments.unsafe and (problem := sandbox_problem()) is not None:
        print(
            f"cannot sandbox submissions: {problem}. Refusing to run student code without a "
            "sandbox; --unsafe grades anyway (only for notebooks you trust).",
            file=sys.stderr,
        )
        return 2
    cache, copied = None, False
    if arguments.study_cache:
        try:
            cache, copied = readable_snapshot(arguments.study_cache)
        except ValueError as error:
            print(error, file=sys.stderr)
            return 2
        if not prepared_for(arguments.study_cache, bundle):
            print(
                f"warning: {arguments.study_cache} was not prepared for {bundle.chapter} "
                "(python -m curvgrade prepare-cache): a study missing from it is trained in "
                "each sandbox, where it cannot be stored, and fails there",
                file=sys.stderr,
            )
    out.parent.mkdir(parents=True, exist_ok=True)
    results: list[SubmissionResult] = []
    try:
        with ThreadPoolExecutor(max_workers=arguments.jobs) as pool:
            futures = {
                pool.submit(_grade_one, bundle, path, students[path], arguments, cache): path
                for path in files
            }
            progress = None
            if arguments.only is None:
                progress = out.open("w", newline="", encoding="utf-8")
                writer = csv.writer(progress)
                writer.writerow(gradebook_header(bundle))
                progress.flush()
            try:
                for future in as_completed(futures):
                    result = future.result()
                    results.append(result)
                    if progress is not None:
                        writer.writerow(gradebook_row(bundle, result))  # as each one finishes
                        progress.flush()
                    print(
                        f"{result.student}: {result.auto:g}/{bundle.points:g} points, "
                        f"{result.status} ({result.seconds:.1f} s)"
                        + (f": {'; '.join(result.notes)}" if result.notes else ""),
                        flush=True,
                    )
            finally:
                if progress is not None:
                    progress.close()
    finally:
        if copied:
            remove_snapshot(cache)
    if arguments.only is not None:
        results = [r for r in previous if r.student != arguments.only] + results
    payload = {"chapter": bundle.chapter, "results": [r.to_dict() for r in results]}
    saved.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    final = _apply_class(results, root, options)
    written = _write_reports(bundle, final, out, feedback, options, arguments)
    print(f"wrote {', '.join(map(str, written))} and feedback in {feedback}/")
    return 0


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
        if (problem := _limits_problem(arguments)) is not None:
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
        "grade": _grade,
        "prepare-cache": _prepare_cache,
        "gradescope": _gradescope,
    }[arguments.command]
    return command(arguments)
