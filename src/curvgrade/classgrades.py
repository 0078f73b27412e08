"""The class's grades: a batch of results with the class options applied, and the files
written from them.

:func:`class_options` reads what ``grade``'s class options say (``--roster``, ``--deadline``,
``--late-policy``; the manual scores are read once the students are known);
:func:`apply_class` gives each result its roster entry, its lateness and its manual scores,
flags files the roster does not know and two files for one entry, and adds a ``missing`` row
for each roster entry without a file; :func:`write_reports` writes the gradebook, the
feedback, the written answers and, with a roster, the LMS imports
(:mod:`curvgrade.classlist`, :mod:`curvgrade.reports`). The saved results
(``results.json``) stay as graded: the class options are applied again on every run.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from .classlist import (
    LatePolicy,
    file_time,
    parse_time,
    read_roster,
    roster_entry,
    write_canvas,
    write_gradescope,
)
from .reports import possible_points, write_feedback, write_scores, write_written
from .results import SubmissionResult


def _relative(path: Path, root: Path) -> str:
    """``path`` under ``root`` as the listing named it (``""`` if outside): no symbolic link is
    followed, so a link is known by its own name, never by its target's."""
    try:
        return Path(os.path.abspath(path)).relative_to(os.path.abspath(root)).as_posix()
    except ValueError:
        return ""


def missing_name(entry: dict) -> str:
    """The student name of the row of a roster entry without a file."""
    name = entry["file"].rstrip("/")
    return name[: -len(".ipynb")] if name.lower().endswith(".ipynb") else name


@dataclass
class ClassOptions:
    """What the class options say: roster, deadline and policy, manual scores."""

    roster: list[dict] | None = None
    deadline: object = None
    policy: LatePolicy | None = None
    manual: dict = field(default_factory=dict)
    manual_possible: dict = field(default_factory=dict)


def class_options(arguments: argparse.Namespace, bundle) -> ClassOptions:
    """The roster, deadline and late policy ``arguments`` give (a late policy needs a
    deadline); the manual scores are filled in by the caller, once the students are known."""
    options = ClassOptions()
    if arguments.roster:
        options.roster = read_roster(arguments.roster)
    if arguments.late_policy and not arguments.deadline:
        raise ValueError("--late-policy: give the --deadline it applies to")
    if arguments.deadline:
        options.deadline = parse_time(arguments.deadline, "--deadline")
        options.policy = LatePolicy.parse(arguments.late_policy or "none")
    return options


def apply_class(results: list[SubmissionResult], root: Path, options: ClassOptions) -> list:
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
            missing = SubmissionResult(student=missing_name(entry), path=Path(entry["file"]))
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


def write_reports(bundle, results, out, feedback, options, arguments) -> list[Path]:
    """Write the gradebook ``out`` and the files beside it, the feedback in ``feedback`` and,
    with a roster, the Canvas and Gradescope imports (the assignment named by
    ``arguments.assignment``, else the chapter's title); returns the files written but the
    feedback."""
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
