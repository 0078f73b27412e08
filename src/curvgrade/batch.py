"""The ``grade`` command: a folder of returned notebooks graded in parallel into a gradebook.

Every entry under ``--submissions`` gets a row
(:func:`curvgrade.submission.submission_files`), each graded by
:func:`curvgrade.grading.grade_notebook` in ``--jobs`` threads (one submission that makes
grading fail is ``crashed``, never the end of the batch); ``scores.csv`` grows as each one
finishes, and ``results.json`` keeps the results as graded, so that ``--only STUDENT``
regrades one student and keeps the others. The class options are applied last
(:mod:`curvgrade.classgrades`). Nothing runs without a sandbox unless ``--unsafe`` says so.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from .chapter import ChapterFormatError
from .classgrades import apply_class, class_options, missing_name, write_reports
from .classlist import read_manual
from .editions import bundle_from_chapter_or_file
from .grading import SandboxUnavailable, grade_notebook
from .reports import gradebook_header, gradebook_row
from .results import SubmissionResult
from .sandbox import sandbox_problem
from .studycache import prepared_for, readable_snapshot, remove_snapshot
from .submission import submission_files


def _student_name(path: Path, root: Path, chapter: str) -> str:
    relative = path.relative_to(root)
    if relative.suffix.lower() == ".ipynb":
        relative = relative.with_suffix("")
    if relative.name == chapter and len(relative.parts) > 1:
        relative = relative.parent
    return relative.as_posix()


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


def limits_problem(arguments: argparse.Namespace) -> str | None:
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


def grade_command(arguments: argparse.Namespace) -> int:
    """``python -m curvgrade grade`` on its parsed ``arguments``; returns the exit status (2
    when an argument is refused, before any submission is run)."""
    try:
        bundle = bundle_from_chapter_or_file(arguments.chapter)
        options = class_options(arguments, bundle)
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
    if (problem := limits_problem(arguments)) is not None:
        print(problem, file=sys.stderr)
        return 2
    files = submission_files(root)
    if not files:
        print(f"--submissions: no files under {root}", file=sys.stderr)
        return 2
    students = {path: _student_name(path, root, bundle.chapter) for path in files}
    if arguments.manual:
        known = set(students.values()) | {missing_name(e) for e in options.roster or []}
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
    final = apply_class(results, root, options)
    written = write_reports(bundle, final, out, feedback, options, arguments)
    print(f"wrote {', '.join(map(str, written))} and feedback in {feedback}/")
    return 0
