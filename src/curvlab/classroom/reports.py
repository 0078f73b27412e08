"""Score tables and feedback from graded submissions.

- ``scores.csv``: one row per student, one column per exercise (points earned), then ``total``,
  ``possible``, ``status`` (``ok``, ``tampered``, ``timeout``, ``crashed``, ``unreadable``) and
  ``notes``;
- ``scores-checks.csv`` beside it: one row per student and check, with the reason of a failure;
- ``feedback/<student>.md``: what each check checks, whether it passed and why not. For hidden
  checks the feedback names what they check and the kind of error, never their source.
"""

from __future__ import annotations

import csv
from pathlib import Path

from .grading import CheckResult, SubmissionResult  # noqa: F401 (CheckResult: doctests)


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


def write_scores(bundle: dict, results: list[SubmissionResult], path: str | Path) -> list[Path]:
    """Write ``scores.csv`` at ``path`` and ``<stem>-checks.csv`` beside it; returns both paths.

    >>> import tempfile
    >>> from curvlab.classroom.chapter import read_chapter, write_example_chapter
    >>> from curvlab.classroom.editions import autograder_bundle
    >>> folder = Path(tempfile.mkdtemp())
    >>> bundle = autograder_bundle(read_chapter(write_example_chapter(folder)))
    >>> result = SubmissionResult("alice", folder / "alice.ipynb")
    >>> result.checks = [
    ...     CheckResult("ex-tiny-two", 1, 1, "two is an int", False, True, "passed"),
    ...     CheckResult("ex-tiny-two", 2, 2, "two is 2", True, False, "AssertionError"),
    ... ]
    >>> scores, checks = write_scores(bundle, [result], folder / "scores.csv")
    >>> print(scores.read_text().strip())
    student,ex-tiny-two,total,possible,status,notes
    alice,1,1,3,ok,
    >>> print(checks.read_text().splitlines()[2])
    alice,ex-tiny-two,2,hidden,2,0,two is 2,AssertionError
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    labels = [exercise["label"] for exercise in bundle["exercises"]]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", *labels, "total", "possible", "status", "notes"])
        for result in results:
            writer.writerow(
                [
                    result.student,
                    *(_number(result.score(label)) for label in labels),
                    _number(result.total),
                    _number(bundle["points"]),
                    result.status,
                    "; ".join(result.notes),
                ]
            )
    checks_path = path.with_name(f"{path.stem}-checks.csv")
    with checks_path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            ["student", "exercise", "check", "visibility", "points", "earned", "what", "reason"]
        )
        for result in results:
            for check in result.checks:
                writer.writerow(
                    [
                        result.student,
                        check.exercise,
                        check.number,
                        "hidden" if check.hidden else "public",
                        _number(check.points),
                        _number(check.earned),
                        check.what,
                        check.reason,
                    ]
                )
    return [path, checks_path]


def _student_reason(check) -> str:
    if check.passed:
        return "passed"
    if check.hidden and ":" in check.reason and not check.reason.startswith(("not run", "timed")):
        return f"failed ({check.reason.split(':', 1)[0]})"
    return f"failed: {check.reason}"


def feedback_markdown(bundle: dict, result: SubmissionResult) -> str:
    """Readable feedback for one student: score, then each exercise's checks and why they failed.

    >>> bundle = {"chapter": "tiny", "title": "Tiny", "points": 3, "exercises": [
    ...     {"label": "ex-tiny-two", "title": "Two", "points": 3}]}
    >>> result = SubmissionResult("alice", Path("alice.ipynb"))
    >>> result.checks = [
    ...     CheckResult("ex-tiny-two", 1, 1, "two is an int", False, True, "passed"),
    ...     CheckResult("ex-tiny-two", 2, 2, "two is 2", True, False, "AssertionError"),
    ... ]
    >>> print(feedback_markdown(bundle, result))
    # Feedback: Tiny
    <BLANKLINE>
    Student: `alice`. Score: **1 / 3** points.
    <BLANKLINE>
    ## Two (`ex-tiny-two`): 1 / 3
    <BLANKLINE>
    - ✓ check 1 (1 point): two is an int: passed
    - ✗ hidden check 2 (2 points): two is 2: failed: AssertionError
    <BLANKLINE>
    """
    lines = [
        f"# Feedback: {bundle.get('title') or bundle['chapter']}",
        "",
        f"Student: `{result.student}`. Score: **{_number(result.total)} / "
        f"{_number(bundle['points'])}** points.",
    ]
    if result.status != "ok":
        lines += ["", f"**Grading status: {result.status}.**"]
    if result.notes:
        lines += ["", "Notes:", "", *(f"- {note}" for note in result.notes)]
    for exercise in bundle["exercises"]:
        label = exercise["label"]
        lines += [
            "",
            f"## {exercise['title']} (`{label}`): "
            f"{_number(result.score(label))} / {_number(exercise['points'])}",
        ]
        if label in result.answer_errors:
            error = result.answer_errors[label]
            if error.startswith("NotImplementedError"):
                lines += ["", "Not answered: the answer cell still raises NotImplementedError."]
            elif error.startswith(("timed out", "not run", "the kernel")):
                lines += ["", f"Your answer cell did not finish: {error}."]
            else:
                lines += ["", f"Your answer cell raised `{error}`."]
        lines.append("")
        for check in result.checks:
            if check.exercise != label:
                continue
            mark = "✓" if check.passed else "✗"
            kind = "hidden check" if check.hidden else "check"
            lines.append(
                f"- {mark} {kind} {check.number} ({_points(check.points)}): {check.what}: "
                f"{_student_reason(check)}"
            )
    return "\n".join(lines) + "\n"


def write_feedback(bundle: dict, results: list[SubmissionResult], folder: str | Path) -> list[Path]:
    """Write ``<student>.md`` feedback files into ``folder``; returns their paths.

    >>> import tempfile
    >>> bundle = {"chapter": "tiny", "points": 0, "exercises": []}
    >>> folder = Path(tempfile.mkdtemp())
    >>> [p.name for p in write_feedback(bundle, [SubmissionResult("bob", Path("b"))], folder)]
    ['bob.md']
    """
    folder = Path(folder)
    written = []
    for result in results:
        target = folder / f"{result.student}.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(feedback_markdown(bundle, result), encoding="utf-8")
        written.append(target)
    return written
