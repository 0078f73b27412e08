"""What runs in the sandbox for one submission, rebuilt from the bundle, and what the notebook
gives away.

:func:`build_plan` takes the given cells' original sources (an edited or deleted given cell is
restored and flagged), the student's answer cells (their given lines restored) and any cells
they added, and puts an export step where each exercise's checks were; the student's copies of
the checks are dropped (an edited or deleted public check is flagged). :func:`flag_copies` flags
an instructor edition or the book's own notebook (they contain hidden checks) and answers that
are the solution line for line; :func:`written_answers` collects the text of the written
exercises.
"""

from __future__ import annotations

from dataclasses import dataclass

import nbformat

from . import markup
from .bundle import Bundle, answer_digest, normalized
from .results import SubmissionResult
from .scaffold import restore_answer


def _role(cell: nbformat.NotebookNode) -> tuple[str | None, object]:
    meta = cell.metadata.get("curvlab", {})
    meta = meta if isinstance(meta, dict) else {}
    return meta.get("role"), meta


@dataclass
class Plan:
    """What runs in the sandbox: the steps, and where each answer and added cell came from."""

    steps: list[dict]
    answer_sources: dict[str, list[str]]


def _match_given(cell, bundle: Bundle, used: set[int]) -> int | None:
    role, meta = _role(cell)
    if role == "given" and isinstance(meta.get("given"), int):
        index = meta["given"]
        if 0 <= index < len(bundle.given) and index not in used:
            return index
    text = normalized(cell.source)
    for index, source in enumerate(bundle.given):
        if index not in used and normalized(source) == text:
            return index
    return None


def build_plan(bundle: Bundle, notebook: nbformat.NotebookNode, result: SubmissionResult) -> Plan:
    """Steps for the runner: originals of the given cells, the student's answers, exports.

    Flags deleted or edited given cells and public checks, and missing answer cells.
    """
    from .editions import SELF_CHECK_CELL

    self_check_source = normalized(SELF_CHECK_CELL.format(chapter=bundle.chapter))
    anchors: dict[str, list[str]] = {}  # layout entry -> student code placed after it
    answers: dict[str, list[str]] = {}
    seen_given: set[int] = set()
    edited_given: set[int] = set()
    public = {normalized(check.source): check for check in bundle.checks if not check.hidden}
    seen_checks: set[str] = set()
    anchor = "start"
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        role, meta = _role(cell)
        if role == "selfcheck" or normalized(cell.source) == self_check_source:
            continue  # the student edition's check()/check_all() set-up: feedback only
        label = _answer_label(cell)
        if label is not None and any(ex.label == label for ex in bundle.exercises):
            templates = bundle.exercise(label).templates
            placed = answers.setdefault(label, [])
            source = cell.source
            if len(placed) < len(templates):  # its given lines restored from the original
                restored = restore_answer(label, templates[len(placed)], source)
                source = restored.source
                for problem in restored.problems:
                    result.flag("tampered", problem)
            placed.append(source)
            anchor = f"answer:{label}"
            continue
        check = public.get(normalized(cell.source))
        if role == "check" or check is not None:
            if check is not None:
                seen_checks.add(check.key)
            elif role == "check":
                key = f"{meta.get('exercise')}#{meta.get('check')}"
                if key in {c.key for c in bundle.checks if not c.hidden}:
                    seen_checks.add(key)
                    result.flag(
                        "tampered", f"{key}: public check edited (graded with the original)"
                    )
            continue
        given = _match_given(cell, bundle, seen_given)
        if given is not None:
            seen_given.add(given)
            if normalized(cell.source) != normalized(bundle.given[given]):
                edited_given.add(given)
            anchor = f"given:{given}"
            continue
        anchors.setdefault(anchor, []).append(cell.source)
    for index in range(len(bundle.given)):
        if index not in seen_given:
            result.flag("tampered", f"given cell {index + 1} deleted (restored)")
    for index in sorted(edited_given):
        result.flag("tampered", f"given cell {index + 1} edited (restored before running)")
    for check in bundle.checks:
        if not check.hidden and check.key not in seen_checks:
            result.flag("tampered", f"{check.key}: public check cell deleted or changed")
    steps: list[dict] = [{"source": source, "cell": -1} for source in anchors.get("start", [])]
    for entry in bundle.layout:
        kind, _, key = entry.partition(":")
        if kind == "given":
            steps.append({"source": bundle.given[int(key)], "cell": len(steps)})
        elif kind == "answer":
            for source in answers.pop(key, []):
                steps.append({"source": source, "cell": len(steps)})
        elif kind == "checks":
            steps.append({"export": key, "names": list(bundle.exercise(key).names)})
        for source in anchors.pop(entry, []):
            steps.append({"source": source, "cell": len(steps)})
    return Plan(steps=steps, answer_sources=_answer_sources(notebook, bundle))


def _answer_sources(notebook, bundle: Bundle) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        label = _answer_label(cell)
        if label is not None:
            found.setdefault(label, []).append(cell.source)
    return found


def _answer_label(cell) -> str | None:
    """The exercise a code cell answers: its metadata's ``exercise`` or its answer marker."""
    role, meta = _role(cell)
    if role == "answer" and isinstance(meta.get("exercise"), str):
        return meta["exercise"]
    return markup.answer_label(cell.source)


def written_answers(bundle: Bundle, notebook) -> dict[str, str]:
    """The student's text in the answer cell of each written exercise (``bundle.manual``).

    An answer cell is a Markdown cell of the student edition whose first line is
    :func:`curvgrade.markup.written_marker`; the text below that line is the answer (the
    placeholder line alone counts as no answer). Cells are found by that first line or by
    their metadata, each label once.
    """
    found: dict[str, str] = {}
    for cell in notebook.cells:
        if cell.cell_type != "markdown":
            continue
        role, meta = _role(cell)
        first, _, rest = cell.source.partition("\n")
        label = markup.written_label(first)
        if label is None and role == "written" and isinstance(meta.get("exercise"), str):
            label, rest = meta["exercise"], cell.source
        if label is None or label not in bundle.manual or label in found:
            continue
        text = rest.strip()
        found[label] = "" if text == markup.WRITTEN_PLACEHOLDER else text
    return found


def flag_copies(bundle: Bundle, notebook, plan: Plan, result: SubmissionResult) -> None:
    """Flag in ``result`` a copy of what the student was not given: the instructor edition
    (by its metadata) or any notebook holding the hidden checks (points withheld pending
    review), an answer that is the solution line for line (by its digest), and a deleted or
    renamed answer cell."""
    meta = notebook.metadata.get("curvlab", {})
    meta = meta if isinstance(meta, dict) else {}
    if meta.get("edition") == "instructor":
        result.flags.append("instructor-edition")
        result.flag("flagged", "the notebook's metadata says it is the instructor edition")
    hidden = {normalized(check.source) for check in bundle.checks if check.hidden}
    if any(normalized(cell.source) in hidden for cell in notebook.cells):
        result.flags.append("contains-hidden-checks")
        result.flag(
            "flagged",
            "the notebook contains the hidden checks: an instructor edition or the book's notebook",
        )
    if result.flags:
        result.withheld = True
        result.notes.append("points withheld pending review (the checks were still run)")
    for exercise in bundle.exercises:
        lines = []
        for source in plan.answer_sources.get(exercise.label, []):
            for line in source.split("\n"):
                stripped = line.strip()
                if stripped in exercise.scaffold or stripped.startswith("# ANSWER"):
                    continue
                if stripped in (markup.BEGIN_SOLUTION, markup.END_SOLUTION):
                    continue
                lines.append(line)
        if lines and answer_digest(lines) == exercise.solution_sha256:
            result.flags.append(f"matches-solution:{exercise.label}")
            result.flag("flagged", f"{exercise.label}: the answer is the solution line for line")
        if exercise.label not in plan.answer_sources:
            result.flag("tampered", f"{exercise.label}: answer cell not found (deleted or renamed)")
