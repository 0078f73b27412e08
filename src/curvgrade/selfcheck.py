"""Self-checks in a student edition: ``check("<label>")`` and ``check_all()``.

The student edition's second cell runs ``check, check_all = self_checks("<chapter>")``:

- ``check(label)`` runs the public checks of one exercise in the notebook's kernel, on the
  student's current answers, and prints each check (✓ or ✗ with the error) and the points:
  the public ones earned, and how many more the hidden checks carry at grading;
- ``check_all()`` does that for every exercise, then reads the notebook *as saved* and lists
  what would cost points at grading: an answer cell still raising ``NotImplementedError``, a
  deleted or renamed answer cell, an edited given cell or public check (grading restores
  them and flags the notebook), a written answer left empty, an answer cell whose saved text
  was not run in this kernel (the notebook was not saved since), a notebook of another
  chapter or the instructor edition.

Nothing here grades: grading runs its own copy of every check, hidden ones included, in a
sandbox (``curvgrade.grading``). The notebook file is found through the
``JPY_SESSION_NAME`` variable that Jupyter sets for the kernel, VS Code's
``__vsc_ipynb_file__``, ``<chapter>.ipynb`` in the working folder, or the only notebook of
this chapter there.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from . import markup
from .bundle import normalized


def digest(source: str) -> str:
    """The digest of a cell's source, as the student edition records it.

    >>> digest("x = 1  \\n") == digest("x = 1")
    True
    """
    return hashlib.sha256(normalized(source).encode("utf-8")).hexdigest()[:16]


def _shell():
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency
        return None
    return get_ipython()


def find_notebook(chapter: str) -> Path | None:
    """The saved notebook of ``chapter`` this kernel runs (see the module), or ``None``."""
    shell = _shell()
    candidates = [os.environ.get("JPY_SESSION_NAME", "")]
    if shell is not None:
        candidates.append(str(shell.user_ns.get("__vsc_ipynb_file__", "")))
    candidates.append(f"{chapter}.ipynb")
    for candidate in candidates:
        if candidate.endswith(".ipynb") and Path(candidate).is_file():
            return Path(candidate)
    mine = []
    for path in sorted(Path.cwd().glob("*.ipynb")):
        try:
            meta = json.loads(path.read_text(encoding="utf-8")).get("metadata", {})
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(meta, dict) and meta.get("curvlab", {}).get("chapter") == chapter:
            mine.append(path)
    return mine[0] if len(mine) == 1 else None


def _cells(path: Path) -> tuple[list[dict], dict]:
    data = json.loads(path.read_text(encoding="utf-8"))
    cells = []
    for cell in data.get("cells", []):
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        meta = cell.get("metadata", {}).get("curvlab", {})
        cells.append({"type": cell.get("cell_type"), "source": source, "curvlab": meta})
    return cells, data.get("metadata", {}).get("curvlab", {})


def _points(value: float) -> str:
    return f"{value:g} point" + ("" if value == 1 else "s")


class SelfChecks:
    """``check`` and ``check_all`` for one chapter (see the module docstring)."""

    def __init__(self, chapter: str):
        self.chapter = chapter

    def _notebook(self) -> Path | None:
        path = find_notebook(self.chapter)
        if path is None:
            print(
                f"Could not find this notebook's file: save it as {self.chapter}.ipynb in the "
                "folder Jupyter started in, then run this again."
            )
        return path

    def check(self, label: str, *, quiet: bool = False) -> tuple[float, float]:
        """Run the public checks of exercise ``label``; returns (points earned, public points)."""
        path = self._notebook()
        if path is None:
            return 0.0, 0.0
        cells, _ = _cells(path)
        checks = [
            cell
            for cell in cells
            if cell["curvlab"].get("role") == "check" and cell["curvlab"].get("exercise") == label
        ]
        hidden = next(
            (
                cell["curvlab"].get("points", 0)
                for cell in cells
                if cell["curvlab"].get("role") == "hidden-checks"
                and cell["curvlab"].get("exercise") == label
            ),
            0,
        )
        if not checks:
            labels = sorted(
                {c["curvlab"].get("exercise") for c in cells if c["curvlab"].get("role") == "check"}
            )
            print(f"No public checks for {label!r}. Exercises with checks: {', '.join(labels)}")
            return 0.0, 0.0
        shell = _shell()
        earned = possible = 0.0
        lines = []
        for cell in checks:
            points = float(cell["curvlab"].get("points", 0))
            what = cell["curvlab"].get("what", "")
            possible += points
            try:
                code = shell.transform_cell(cell["source"]) if shell else cell["source"]
                namespace = shell.user_ns if shell else {}
                exec(compile(code, f"<check {label}>", "exec"), namespace)
            except Exception as error:  # the student's own answer failed: say how
                message = str(error).strip().split("\n")[0][:200]
                lines.append(
                    f"  ✗ check {cell['curvlab'].get('check')} ({_points(points)}): {what}"
                    f" — {type(error).__name__}" + (f": {message}" if message else "")
                )
                continue
            earned += points
            lines.append(f"  ✓ check {cell['curvlab'].get('check')} ({_points(points)}): {what}")
        if not quiet or earned < possible:
            print(f"{label}: {earned:g} / {_points(possible)} in the public checks")
            print("\n".join(lines))
            if hidden:
                print(f"  + {_points(hidden)} in hidden checks, run when the notebook is graded")
        return earned, possible

    def problems(self, path: Path) -> list[str]:
        """What grading would hold against the notebook saved at ``path``."""
        cells, meta = _cells(path)
        found = []
        if meta.get("chapter") != self.chapter:
            found.append(f"the notebook's metadata names chapter {meta.get('chapter')!r}")
        if meta.get("edition") != "student":
            found.append(
                "this is not the student edition: submit the notebook from editions/student/"
            )
        history = set()
        shell = _shell()
        if shell is not None:
            history = {normalized(text) for text in shell.user_ns.get("In", []) if text}
        answers = {}
        for cell in cells:
            role = cell["curvlab"].get("role")
            label = cell["curvlab"].get("exercise")
            recorded = cell["curvlab"].get("digest")
            if role == "answer" and cell["type"] == "code":
                answers[label] = cell
                if (
                    "NotImplementedError" in cell["source"]
                    and "replace this line" in (cell["source"])
                ):
                    found.append(f"{label}: not answered yet (the cell still raises)")
                elif history and normalized(cell["source"]) not in history:
                    found.append(
                        f"{label}: the saved answer is not what this kernel ran: save the "
                        "notebook (and run the cell) before submitting"
                    )
                if markup.answer_label(cell["source"]) != label:
                    found.append(f"{label}: keep the first line '# ANSWER {label}...'")
            elif role in ("given", "check") and recorded and digest(cell["source"]) != recorded:
                what = "given cell" if role == "given" else f"check of {label}"
                found.append(f"a {what} was edited: grading restores it and flags the notebook")
            elif role == "written":
                first, _, rest = cell["source"].partition("\n")
                if markup.written_label(first) != label:
                    found.append(f"{label}: keep the first line of the written answer cell")
                elif rest.strip() in ("", markup.WRITTEN_PLACEHOLDER):
                    found.append(f"{label}: the written answer is empty")
        for label in meta.get("answers", []):
            if label not in answers:
                found.append(f"{label}: the answer cell is missing (deleted or its metadata lost)")
        return found

    def check_all(self) -> dict:
        """Every exercise's public checks, then :meth:`problems` of the saved notebook."""
        path = self._notebook()
        if path is None:
            return {"earned": 0, "possible": 0, "problems": ["notebook file not found"]}
        cells, _ = _cells(path)
        labels = list(
            dict.fromkeys(
                cell["curvlab"]["exercise"]
                for cell in cells
                if cell["curvlab"].get("role") == "check"
            )
        )
        earned = possible = 0.0
        for label in labels:
            got, out_of = self.check(label, quiet=True)
            earned, possible = earned + got, possible + out_of
        problems = self.problems(path)
        print(f"\nPublic checks: {earned:g} / {_points(possible)} (hidden checks run at grading).")
        if problems:
            print(f"Before you submit {path.name}:")
            print("\n".join(f"  - {problem}" for problem in problems))
        else:
            print(f"{path.name} is ready to submit (saved, every cell in place).")
        return {"earned": earned, "possible": possible, "problems": problems}


def self_checks(chapter: str):
    """``check`` and ``check_all`` for ``chapter`` (the student edition's second cell)."""
    checks = SelfChecks(chapter)
    return checks.check, checks.check_all
