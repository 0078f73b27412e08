"""Grade returned notebooks against the authoritative checks of an autograder bundle.

For each submission: read the notebook, find the student's answer cells (cell metadata, or the
``# ANSWER <label>`` first line), drop every check cell the student's copy has, and insert the
bundle's checks (public and hidden) where the exercise's checks were. Then run the notebook in a
fresh kernel, one cell at a time, errors allowed, within a per-cell and a per-notebook time
limit. A check earns its points when its cell runs to its last line: an appended line echoes a
random token only this grading run knows, so an exception anywhere in the check (or a check
that never ran) scores nothing. Notebooks that crash, time out or were tampered with are
reported in ``status`` and ``notes``; grading never stops on one notebook.
"""

from __future__ import annotations

import json
import math
import re
import secrets
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbclient.util import ensure_async

from . import markup

STATUS_ORDER = ("ok", "tampered", "timeout", "crashed", "unreadable")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@dataclass
class CheckResult:
    """The outcome of one check for one submission."""

    exercise: str
    number: int
    points: int | float
    what: str
    hidden: bool
    passed: bool = False
    reason: str = "not run"

    @property
    def earned(self) -> int | float:
        """Points earned: all of them when the check passed, none otherwise."""
        return self.points if self.passed else 0


@dataclass
class SubmissionResult:
    """The grade of one returned notebook: per-check results, a status and notes."""

    student: str
    path: Path
    checks: list[CheckResult] = field(default_factory=list)
    status: str = "ok"
    notes: list[str] = field(default_factory=list)
    answer_errors: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    def flag(self, status: str, note: str) -> None:
        """Record ``note`` and raise the status to ``status`` if that is more severe."""
        self.notes.append(note)
        if STATUS_ORDER.index(status) > STATUS_ORDER.index(self.status):
            self.status = status

    def score(self, exercise: str) -> int | float:
        """Points earned on ``exercise``."""
        return sum(check.earned for check in self.checks if check.exercise == exercise)

    @property
    def total(self) -> int | float:
        """Points earned on the whole chapter."""
        return sum(check.earned for check in self.checks)


def _normalized(source: str) -> str:
    return "\n".join(line.rstrip() for line in source.strip("\n").split("\n"))


def _error_text(output: dict) -> str:
    evalue = _ANSI.sub("", str(output.get("evalue", ""))).strip()
    first = evalue.split("\n", 1)[0][:300]
    return (
        f"{output.get('ename', 'Error')}: {first}" if first else str(output.get("ename", "Error"))
    )


def _first_error(cell: nbformat.NotebookNode) -> str | None:
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return _error_text(output)
    return None


def _mentions(cell: nbformat.NotebookNode, token: str) -> bool:
    for output in cell.get("outputs", []):
        if output.get("output_type") in ("execute_result", "display_data"):
            if token in str(output.get("data", {}).get("text/plain", "")):
                return True
        elif output.get("output_type") == "stream" and token in str(output.get("text", "")):
            return True
    return False


@dataclass
class _SubmittedCell:
    cell: nbformat.NotebookNode
    role: str  # answer | check | hidden-checks | other
    exercise: str | None = None
    number: int | None = None


def _classify(cell: nbformat.NotebookNode, bundle: dict) -> _SubmittedCell:
    meta = cell.get("metadata", {}).get("curvlab", {})
    meta = meta if isinstance(meta, dict) else {}
    role = meta.get("role")
    exercise = meta.get("exercise") if isinstance(meta.get("exercise"), str) else None
    if cell.cell_type != "code":
        if role == "hidden-checks" and exercise:
            return _SubmittedCell(cell, "hidden-checks", exercise)
        return _SubmittedCell(cell, "other")
    if role == "check" or markup.looks_like_check(cell.source):
        number = meta.get("check") if isinstance(meta.get("check"), int) else None
        if exercise is None or number is None:
            exercise, number = _check_by_header(cell.source, bundle)
        return _SubmittedCell(cell, "check", exercise, number)
    label = markup.answer_label(cell.source)
    if role == "answer" and exercise:
        return _SubmittedCell(cell, "answer", exercise)
    if label:
        return _SubmittedCell(cell, "answer", label)
    return _SubmittedCell(cell, "other")


def _check_by_header(source: str, bundle: dict) -> tuple[str | None, int | None]:
    """Identify a check cell that lost its metadata by its header line."""
    first = source.lstrip("\n").split("\n", 1)[0].strip()
    for exercise in bundle["exercises"]:
        for check in exercise["checks"]:
            if check["source"].lstrip("\n").split("\n", 1)[0].strip() == first:
                return exercise["label"], check["number"]
    return None, None


def _check_cell(exercise: dict, check: dict, token: str) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(f"{check['source'].rstrip()}\n{token!r}")
    cell.metadata["curvlab"] = {
        "role": "graded-check",
        "exercise": exercise["label"],
        "check": check["number"],
    }
    return cell


def _assemble(
    bundle: dict, cells: list[_SubmittedCell], result: SubmissionResult, token: str
) -> tuple[nbformat.NotebookNode, dict[int, tuple[str, int]], dict[int, str], dict[int, int]]:
    """The notebook to execute: the student's cells, the bundle's checks in place of theirs.

    Returns the notebook, a map from its cell index to (exercise, check number) for the
    inserted checks, a map from cell index to exercise label for the answer cells, and a map
    from cell index to the index of the submitted cell it came from.
    """
    anchors: dict[str, int] = {}
    for exercise in bundle["exercises"]:
        label = exercise["label"]
        positions = [i for i, c in enumerate(cells) if c.exercise == label and c.role != "answer"]
        answers = [i for i, c in enumerate(cells) if c.role == "answer" and c.exercise == label]
        if not answers:
            result.flag(
                "tampered",
                f"{label}: answer cell not found (its '# ANSWER {label}' cell was deleted or "
                "its first line changed); the checks ran where its checks were",
            )
        if positions:  # where the checks were, or after the answer if the student moved it
            anchors[label] = max(positions[0], answers[-1] + 1) if answers else positions[0]
        elif answers:
            anchors[label] = answers[-1] + 1
        else:
            anchors[label] = len(cells)
            result.flag(
                "tampered", f"{label}: no cell of this exercise found; checks ran at the end"
            )
        for check in exercise["checks"]:
            if check["hidden"]:
                continue
            copies = [
                c
                for c in cells
                if c.role == "check" and (c.exercise, c.number) == (label, check["number"])
            ]
            if not copies:
                result.flag("tampered", f"{label}#{check['number']}: public check cell deleted")
            elif any(_normalized(c.cell.source) != _normalized(check["source"]) for c in copies):
                result.flag(
                    "tampered",
                    f"{label}#{check['number']}: public check cell edited (graded with the "
                    "original)",
                )
    notebook = nbformat.v4.new_notebook()
    inserted: dict[int, tuple[str, int]] = {}
    answer_cells: dict[int, str] = {}
    origin: dict[int, int] = {}
    by_position: dict[int, list[dict]] = {}
    for exercise in bundle["exercises"]:
        by_position.setdefault(anchors[exercise["label"]], []).append(exercise)
    for position in range(len(cells) + 1):
        for exercise in by_position.get(position, []):
            for check in exercise["checks"]:
                inserted[len(notebook.cells)] = (exercise["label"], check["number"])
                notebook.cells.append(_check_cell(exercise, check, token))
        if position == len(cells):
            break
        submitted = cells[position]
        if submitted.role in ("check", "hidden-checks"):
            continue
        if submitted.role == "answer":
            answer_cells[len(notebook.cells)] = submitted.exercise
        cell = nbformat.v4.new_code_cell(submitted.cell.source)
        if submitted.cell.cell_type != "code":
            cell = nbformat.v4.new_markdown_cell(submitted.cell.source)
        origin[len(notebook.cells)] = position
        notebook.cells.append(cell)
    return notebook, inserted, answer_cells, origin


def _read(path: Path, result: SubmissionResult) -> nbformat.NotebookNode | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        result.flag("unreadable", f"not a readable notebook (not JSON: {error})")
        return None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        result.flag("unreadable", "not a readable notebook (a JSON file with no list of cells)")
        return None
    try:
        return nbformat.reads(json.dumps(data), as_version=4)
    except Exception as error:  # any unreadable file is reported, never raised
        result.flag("unreadable", f"not a readable notebook: {type(error).__name__}: {error}")
        return None


class _GradingClient(NotebookClient):
    """A notebook client that interrupts a cell over its time limit, and records that it did.

    The first time a cell exceeds its limit the kernel is interrupted and the client waits for
    the cell to end (a ``KeyboardInterrupt`` error); if the cell has not ended within a second
    limit, :class:`CellTimeoutError` is raised and the kernel is given up on.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.interrupted: set[int] = set()
        self.current: int | None = None

    async def _async_handle_timeout(self, timeout, cell=None):
        if self.current in self.interrupted:
            raise CellTimeoutError.error_from_timeout_and_cell(
                "Cell execution timed out and the kernel ignored the interrupt", timeout, cell
            )
        self.interrupted.add(self.current)
        await ensure_async(self.km.interrupt_kernel())
        return None


def _execute(
    notebook: nbformat.NotebookNode,
    result: SubmissionResult,
    *,
    kernel_name: str,
    timeout: float,
    cell_timeout: float,
    workdir: Path,
    names: dict[int, str],
) -> dict[int, str]:
    """Run ``notebook`` cell by cell; returns why cells that did not complete did not."""
    unfinished: dict[int, str] = {}
    client = _GradingClient(
        notebook,
        kernel_name=kernel_name,
        allow_errors=True,
        shutdown_kernel="immediate",
        record_timing=False,
        resources={"metadata": {"path": str(workdir)}},
    )
    start = time.monotonic()
    code = [i for i, cell in enumerate(notebook.cells) if cell.cell_type == "code"]
    stopped: str | None = None
    # The kernel's own stderr (transport warnings) is not the notebook's: keep it off the console.
    try:
        with client.setup_kernel(stderr=subprocess.DEVNULL):
            for index in code:
                name = names.get(index, f"cell {index + 1}")
                if stopped is not None:
                    unfinished[index] = stopped
                    continue
                remaining = timeout - (time.monotonic() - start)
                if remaining <= 0:
                    stopped = f"not run: the notebook's time limit ({timeout:g} s) was reached"
                    result.flag("timeout", f"the notebook's time limit ({timeout:g} s) was reached")
                    unfinished[index] = stopped
                    continue
                client.timeout = max(1, math.ceil(min(remaining, cell_timeout)))
                client.current = index
                try:
                    client.execute_cell(notebook.cells[index], index)
                except CellTimeoutError:
                    unfinished[index] = f"timed out after {client.timeout} s"
                    stopped = "not run: the kernel ignored the interrupt after a timeout"
                    result.flag(
                        "timeout",
                        f"{name} ran over {client.timeout} s and did not stop when interrupted; "
                        "the rest of the notebook was not run",
                    )
                except DeadKernelError:
                    unfinished[index] = "the kernel died while running this cell"
                    stopped = "not run: the kernel died earlier"
                    result.flag("crashed", f"the kernel died in {name}")
                else:
                    if index in client.interrupted:
                        unfinished[index] = f"timed out after {client.timeout} s (interrupted)"
                        result.flag(
                            "timeout", f"{name} ran over {client.timeout} s and was interrupted"
                        )
    except (RuntimeError, OSError, TimeoutError) as error:  # the kernel did not start or broke
        result.flag("crashed", f"the notebook could not be run: {type(error).__name__}: {error}")
        for index in code:
            unfinished.setdefault(index, f"not run: {type(error).__name__}")
    return unfinished


def grade_notebook(
    bundle: dict,
    path: str | Path,
    *,
    student: str | None = None,
    kernel_name: str = "python3",
    timeout: float = 600,
    cell_timeout: float | None = None,
    workdir: str | Path | None = None,
) -> SubmissionResult:
    """Grade the notebook at ``path`` with the checks of ``bundle``.

    ``timeout`` bounds the whole notebook (seconds), ``cell_timeout`` each cell (defaults to
    ``timeout``); a cell over its limit is interrupted and grading goes on with the next cell.
    The kernel is ``kernel_name`` whatever the notebook's metadata says. Runs in ``workdir``
    (default: the notebook's folder).

    A file that is not a notebook is reported, and scores nothing (no kernel is started):

    >>> import tempfile
    >>> from curvlab.classroom.chapter import read_chapter, write_example_chapter
    >>> from curvlab.classroom.editions import autograder_bundle
    >>> folder = Path(tempfile.mkdtemp())
    >>> bundle = autograder_bundle(read_chapter(write_example_chapter(folder)))
    >>> _ = (folder / "alice.ipynb").write_text("{not json")
    >>> result = grade_notebook(bundle, folder / "alice.ipynb")
    >>> result.student, result.status, result.total
    ('alice', 'unreadable', 0)
    >>> {check.reason for check in result.checks}
    {'not run: the notebook could not be read'}
    """
    path = Path(path)
    if timeout <= 0:
        raise ValueError(f"timeout: expected a positive number of seconds, got {timeout}")
    if cell_timeout is not None and cell_timeout <= 0:
        raise ValueError(f"cell_timeout: expected a positive number of seconds, got {cell_timeout}")
    result = SubmissionResult(student=student or path.stem, path=path)
    for exercise in bundle["exercises"]:
        for check in exercise["checks"]:
            result.checks.append(
                CheckResult(
                    exercise=exercise["label"],
                    number=check["number"],
                    points=check["points"],
                    what=check["what"],
                    hidden=check["hidden"],
                )
            )
    started = time.monotonic()
    submitted = _read(path, result)
    if submitted is None:
        for check in result.checks:
            check.reason = "not run: the notebook could not be read"
        return result
    chapter = submitted.metadata.get("curvlab", {})
    chapter = chapter.get("chapter") if isinstance(chapter, dict) else None
    if chapter != bundle["chapter"]:
        result.flag(
            "tampered",
            f"notebook metadata names chapter {chapter!r}, not {bundle['chapter']!r} "
            "(not a student edition of this chapter, or its metadata was removed)",
        )
    cells = [_classify(cell, bundle) for cell in submitted.cells]
    token = f"curvlab-check-completed-{secrets.token_hex(8)}"
    notebook, inserted, answers, origin = _assemble(bundle, cells, result, token)
    unfinished = _execute(
        notebook,
        result,
        kernel_name=kernel_name,
        timeout=timeout,
        cell_timeout=cell_timeout or timeout,
        workdir=Path(workdir) if workdir is not None else path.parent,
        names={
            **{index: f"cell {position + 1}" for index, position in origin.items()},
            **{index: f"check {label}#{number}" for index, (label, number) in inserted.items()},
        },
    )
    checks = {(check.exercise, check.number): check for check in result.checks}
    for index, key in inserted.items():
        check = checks[key]
        cell = notebook.cells[index]
        error = _first_error(cell)
        if index in unfinished:
            check.reason = unfinished[index]
        elif error is not None:
            check.reason = error
        elif not _mentions(cell, token):
            check.reason = "did not run to its end"
        else:
            check.passed, check.reason = True, "passed"
    for index, label in answers.items():
        if label in result.answer_errors:
            continue
        if index in unfinished:
            result.answer_errors[label] = unfinished[index]
            if not unfinished[index].startswith("not run"):
                result.notes.append(
                    f"{label}: the answer cell did not finish ({unfinished[index]})"
                )
        elif (error := _first_error(notebook.cells[index])) is not None:
            result.answer_errors[label] = error
            result.notes.append(f"{label}: the answer cell raised {error}")
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code" and index not in inserted and index not in answers:
            error = _first_error(cell)
            if error is not None:
                result.notes.append(f"cell {origin[index] + 1} (not an answer cell) raised {error}")
    result.seconds = time.monotonic() - started
    return result
