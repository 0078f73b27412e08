"""Gradebook, per-check table, per-exercise summary and per-student feedback.

- ``scores.csv`` (the gradebook, one row per file of the submissions folder, and one per
  roster entry without a file): ``student``, one column per graded exercise (points earned),
  one ``manual:<label>`` column per written exercise (the instructor's scores, from
  ``--manual``), ``late_days``, ``penalty``, ``total`` (checks + manual - penalty),
  ``possible``, ``status`` (``ok``, ``flagged``, ``tampered``, ``timeout``, ``crashed``,
  ``unreadable``, ``missing``), ``flags``, ``notes``. The instructor's table, not an LMS import
  (see :mod:`curvgrade.classlist` for those);
- ``written.csv``, the sheet for the manual scores (``--manual``), and
  ``written/<label>.md``, every student's answer to each written exercise;
- ``scores-checks.csv``: one row per student and check, with the reason of a failure;
- ``summary.csv``: per exercise, the mean, the standard deviation, the quartiles and the
  distribution of the points earned;
- ``feedback/<student>.md``: each exercise's score and its checks. A hidden check shows only
  its number and points, never its source or its description (which may state the answer);
  errors are named by their exception type only, never by text the student's code wrote.
"""

from __future__ import annotations

import csv
import re
import statistics
from collections import Counter
from pathlib import Path

from .bundle import Bundle
from .results import CheckResult, SubmissionResult  # noqa: F401 (CheckResult: doctests)


def _number(value: int | float) -> str:
    """Points as text: ``3``, ``1.5``.

    >>> _number(3.0), _number(1.5)
    ('3', '1.5')
    """
    return f"{value:g}"


def _points(value: int | float) -> str:
    """``1 point``, ``2 points``.

    >>> _points(1), _points(2.5)
    ('1 point', '2.5 points')
    """
    return f"{_number(value)} point" + ("" if value == 1 else "s")


def gradebook_header(bundle: Bundle) -> list[str]:
    """The columns of ``scores.csv``."""
    labels = [exercise.label for exercise in bundle.exercises]
    manual = [f"manual:{label}" for label in bundle.manual]
    return [
        "student",
        *labels,
        *manual,
        "late_days",
        "penalty",
        "total",
        "possible",
        "status",
        "flags",
        "notes",
    ]


def possible_points(bundle: Bundle, manual_possible: dict | None = None) -> int | float:
    """The chapter's checks' points and the written exercises' manual points."""
    return bundle.points + sum((manual_possible or {}).values())


def gradebook_row(
    bundle: Bundle, result: SubmissionResult, manual_possible: dict | None = None
) -> list[str]:
    """One row of ``scores.csv`` (text cells guarded against spreadsheet formulas)."""
    from .classlist import cell

    return [
        cell(result.student),
        *(_number(result.score(exercise.label)) for exercise in bundle.exercises),
        *(
            _number(result.manual[label]) if label in result.manual else ""
            for label in bundle.manual
        ),
        str(result.late_days),
        _number(result.penalty),
        _number(result.total),
        _number(possible_points(bundle, manual_possible)),
        result.status,
        " ".join(result.flags),
        cell("; ".join(result.notes)),
    ]


def write_scores(
    bundle: Bundle,
    results: list[SubmissionResult],
    path: str | Path,
    manual_possible: dict | None = None,
) -> list[Path]:
    """Write ``scores.csv`` at ``path``, ``<stem>-checks.csv`` and ``summary.csv`` beside it.

    >>> import tempfile
    >>> from curvgrade.chapter import read_chapter
    >>> from curvgrade.editions import autograder_bundle
    >>> folder = Path(tempfile.mkdtemp())
    >>> bundle = autograder_bundle(read_chapter(example_chapter(folder)))
    >>> result = SubmissionResult("alice", folder / "alice.ipynb")
    >>> result.checks = [
    ...     CheckResult("ex-tiny-two", 1, 1, "two is an int", False, True, "passed"),
    ...     CheckResult("ex-tiny-two", 2, 2, "two is 2", True, False, "AssertionError"),
    ... ]
    >>> scores, checks, summary = write_scores(bundle, [result], folder / "scores.csv")
    >>> print(scores.read_text().strip())
    student,ex-tiny-two,late_days,penalty,total,possible,status,flags,notes
    alice,1,0,0,1,3,ok,,
    >>> print(checks.read_text().splitlines()[2])
    alice,ex-tiny-two,2,hidden,2,0,two is 2,AssertionError
    >>> print(summary.read_text().splitlines()[1])
    ex-tiny-two,3,1,1,0,1,1,1,1,1,1:1
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    ordered = sorted(results, key=lambda result: result.student)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(gradebook_header(bundle))
        for result in ordered:
            writer.writerow(gradebook_row(bundle, result, manual_possible))
    from .classlist import cell

    checks_path = path.with_name(f"{path.stem}-checks.csv")
    with checks_path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            ["student", "exercise", "check", "visibility", "points", "earned", "what", "reason"]
        )
        for result in ordered:
            for check in result.checks:
                writer.writerow(
                    [
                        cell(result.student),
                        check.exercise,
                        check.number,
                        "hidden" if check.hidden else "public",
                        _number(check.points),
                        _number(check.earned),
                        check.what,
                        check.reason,
                    ]
                )
    summary_path = path.with_name("summary.csv")
    write_summary(bundle, ordered, summary_path)
    return [path, checks_path, summary_path]


def write_summary(bundle: Bundle, results: list[SubmissionResult], path: Path) -> Path:
    """Per exercise: possible, graded count, mean, sd, min, quartiles, max, distribution."""
    graded = [result for result in results if result.status not in ("unreadable", "missing")]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            ["exercise", "possible", "graded", "mean", "sd", "min", "q1", "median", "q3", "max"]
            + ["distribution"]
        )
        for exercise in bundle.exercises:
            scores = [float(result.score(exercise.label)) for result in graded]
            if not scores:
                writer.writerow([exercise.label, _number(exercise.points), 0] + [""] * 8)
                continue
            quartiles = (
                statistics.quantiles(scores, n=4, method="inclusive")
                if len(scores) > 1
                else [scores[0]] * 3
            )
            spread = statistics.pstdev(scores)
            counts = Counter(scores)
            writer.writerow(
                [
                    exercise.label,
                    _number(exercise.points),
                    len(scores),
                    _number(round(statistics.fmean(scores), 4)),
                    _number(round(spread, 4)),
                    _number(min(scores)),
                    *(_number(round(q, 4)) for q in quartiles),
                    _number(max(scores)),
                    " ".join(f"{_number(k)}:{counts[k]}" for k in sorted(counts)),
                ]
            )
    return path


def check_reason(check: CheckResult) -> str:
    """What a student may read of a check's outcome: ``passed``, or ``failed`` with the
    grader's reason when it is a plain name (an exception type), never text the student's code
    wrote.

    >>> check_reason(CheckResult("ex", 1, 1, "x", True, False, "AssertionError"))
    'failed (AssertionError)'
    >>> check_reason(CheckResult("ex", 1, 1, "x", True, False, "you said: 42!"))
    'failed (did not pass)'
    """
    if check.passed:
        return "passed"
    ok = check.reason.replace("_", "").replace(" ", "").isalnum() and len(check.reason) <= 80
    reason = check.reason if ok else "did not pass"
    return f"failed ({reason})"


def feedback_markdown(bundle: Bundle, result: SubmissionResult) -> str:
    """Readable feedback for one student: score, then each exercise's checks.

    >>> import tempfile
    >>> from curvgrade.chapter import read_chapter
    >>> from curvgrade.editions import autograder_bundle
    >>> bundle = autograder_bundle(read_chapter(example_chapter(tempfile.mkdtemp())))
    >>> result = SubmissionResult("alice", Path("alice.ipynb"))
    >>> result.checks = [
    ...     CheckResult("ex-tiny-two", 1, 1, "two is an int", False, True, "passed"),
    ...     CheckResult("ex-tiny-two", 2, 2, "two is 2", True, False, "AssertionError"),
    ... ]
    >>> print(feedback_markdown(bundle, result))
    # Feedback: A tiny chapter
    <BLANKLINE>
    Student: `alice`. Score: **1 / 3** points.
    <BLANKLINE>
    ## Two (`ex-tiny-two`): 1 / 3
    <BLANKLINE>
    - ✓ check 1 (1 point): two is an int: passed
    - ✗ hidden check 2 (2 points): failed (AssertionError)
    <BLANKLINE>
    """
    lines = [
        f"# Feedback: {bundle.title or bundle.chapter}",
        "",
        f"Student: `{result.student}`. Score: **{_number(result.total)} / "
        f"{_number(bundle.points)}** points.",
    ]
    if result.status != "ok":
        lines += ["", f"**Grading status: {result.status}.**"]
    if result.late_days:
        lines += [
            "",
            f"Submitted {result.late_days} day(s) late: the late policy took "
            f"{_points(result.penalty)}.",
        ]
    if result.notes:
        lines += ["", "Notes:", "", *(f"- {note}" for note in result.notes)]
    for exercise in bundle.exercises:
        label = exercise.label
        lines += [
            "",
            f"## {exercise.title} (`{label}`): "
            f"{_number(result.score(label))} / {_number(exercise.points)}",
        ]
        if label in result.answer_errors:
            lines += ["", f"Your answer could not be graded: {result.answer_errors[label]}."]
        lines.append("")
        for check in result.checks:
            if check.exercise != label:
                continue
            mark = "✓" if check.passed else "✗"
            if check.hidden:
                lines.append(
                    f"- {mark} hidden check {check.number} ({_points(check.points)}): "
                    f"{check_reason(check)}"
                )
            else:
                lines.append(
                    f"- {mark} check {check.number} ({_points(check.points)}): {check.what}: "
                    f"{check_reason(check)}"
                )
    for label in bundle.manual:
        lines += ["", f"## Written exercise `{label}`", ""]
        lines.append(
            f"Graded by hand: {_points(result.manual[label])}."
            if label in result.manual
            else "Graded by hand (not scored yet)."
            if result.written.get(label)
            else "No answer found in your notebook."
        )
    return "\n".join(lines) + "\n"


def _fenced(text: str) -> str:
    """``text`` in a code fence longer than any backtick run in it (shown, never rendered)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def write_written(
    bundle: Bundle, results: list[SubmissionResult], folder: str | Path
) -> list[Path]:
    """``written.csv`` (the manual-score sheet for ``--manual``: a ``(possible)/`` row, then a
    row per student, scores kept when already given) and ``written/<label>.md`` (each
    student's answer, as literal text) in ``folder``; nothing when no exercise is written.
    """
    from .classlist import POSSIBLE_ROW, cell

    if not bundle.manual:
        return []
    folder = Path(folder)
    ordered = sorted(results, key=lambda result: result.student)
    sheet = folder / "written.csv"
    with sheet.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", *bundle.manual])
        writer.writerow([POSSIBLE_ROW, *("" for _ in bundle.manual)])
        for result in ordered:
            writer.writerow(
                [
                    cell(result.student),
                    *(
                        _number(result.manual[label]) if label in result.manual else ""
                        for label in bundle.manual
                    ),
                ]
            )
    written = [sheet]
    (folder / "written").mkdir(parents=True, exist_ok=True)
    for label in bundle.manual:
        lines = [f"# Written answers to `{label}`: {bundle.title or bundle.chapter}", ""]
        for result in ordered:
            answer = result.written.get(label, "")
            lines += [f"## {result.student}", ""]
            lines += [_fenced(answer) if answer else "*(no answer)*", ""]
        path = folder / "written" / f"{label}.md"
        path.write_text("\n".join(lines), encoding="utf-8")
        written.append(path)
    return written


def feedback_path(folder: Path, student: str) -> Path:
    """Where the feedback of ``student`` goes: ``<folder>/<student>.md``, path kept inside."""
    safe = "/".join(part for part in student.split("/") if part not in ("", ".", ".."))
    return folder / f"{safe or 'unnamed'}.md"


def write_feedback(
    bundle: Bundle, results: list[SubmissionResult], folder: str | Path
) -> list[Path]:
    """Write ``<student>.md`` feedback files into ``folder``; returns their paths."""
    folder = Path(folder)
    written = []
    for result in results:
        target = feedback_path(folder, result.student)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(feedback_markdown(bundle, result), encoding="utf-8")
        written.append(target)
    return written
