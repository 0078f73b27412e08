"""Gradescope's programming-assignment autograder running the book's grading.

A course of hundreds of students, who resubmit until the deadline, grades on the platform it
already uses: Gradescope builds an image once from an ``autograder.zip`` (its ``setup.sh`` runs
as root on Ubuntu), then runs the zip's ``run_autograder`` in a fresh container for each
submission, with the submitted files in ``/autograder/submission/``, and shows the student the
``/autograder/results/results.json`` it writes. :func:`write_autograder` writes that zip:

- ``setup.sh``: bubblewrap (the sandbox), Python 3.11 or newer, and a virtual environment at
  :data:`VENV` holding the pinned ``requirements.txt`` and the project's wheel;
- the wheel: ``curvlab`` and ``curvgrade`` only, built as ``make kit`` builds it (no chapter, no
  test, no solution: :func:`wheel_problems`), so that the image holds no repository checkout;
- ``run_autograder``: ``python -m curvgrade gradescope --run /autograder``, that is :func:`run`;
- ``curvgrade-gradescope.json``: the chapters and the limits, those of ``curvgrade grade``;
- ``bundles/<chapter>.json``: each chapter's autograder bundle (every check, hidden ones
  included, and the given cells; of each solution only a digest).

:func:`run` grades the submission's one notebook with :func:`curvgrade.grading.grade_notebook`,
the same sandbox, checks and limits as ``curvgrade grade``, and writes :func:`results`: one
Gradescope test per check, visible at once for a public check and after the grades are
published for a hidden one (its name and output never show its source or its description),
and one test per written exercise, worth nothing here and graded by hand. The chapter is the
one the notebook's metadata names, else the one its file name names, else the zip's only one.

:func:`rehearse` runs a zip on this machine, in a temporary folder laid out as
``/autograder``: it checks a zip before students submit to it, with the current environment
and without installing anything (``run_autograder`` reads its root from
:data:`ROOT_VARIABLE` and its Python from :data:`PYTHON_VARIABLE`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from .bundle import Bundle
from .grading import SandboxUnavailable, check_budget, grade_notebook
from .reports import check_reason
from .results import CheckResult, SubmissionResult
from .submission import (
    MAX_SUBMISSION_BYTES,
    MAX_SUBMISSION_CELLS,
    read_submission,
    submission_files,
)

FORMAT = "curvgrade-gradescope/1"
CONFIG = "curvgrade-gradescope.json"  # in the zip, beside setup.sh
VENV = "/opt/curvgrade-venv"  # the virtual environment setup.sh makes in the image
ROOT_VARIABLE = "CURVGRADE_AUTOGRADER_ROOT"  # run_autograder's root (default /autograder)
PYTHON_VARIABLE = "CURVGRADE_PYTHON"  # run_autograder's Python (default the image's venv)
VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
ALLOWED_IN_WHEEL = ("curvlab/", "curvgrade/")
FORBIDDEN_IN_WHEEL = (".md", ".ipynb", ".json", ".bib")
IGNORED = (".ipynb_checkpoints", "__MACOSX")  # folders a student's upload may carry

SETUP_SH = f"""\
#!/usr/bin/env bash
# Builds the grading image once (Gradescope runs this as root on Ubuntu): bubblewrap for the
# sandbox each notebook runs in, Python 3.11 or newer, and a virtual environment with the
# pinned requirements and the course's wheel (curvlab and curvgrade; no chapter, no solution).
set -euo pipefail
SOURCE=/autograder/source
VENV={VENV}
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends bubblewrap util-linux ca-certificates
PYTHON=""
for candidate in python3.13 python3.12 python3.11; do
  if command -v "$candidate" >/dev/null; then PYTHON=$candidate; break; fi
done
if [ -z "$PYTHON" ]; then
  apt-get install -y --no-install-recommends python3.11 || {{
    echo "setup.sh: no Python 3.11 or newer on this image: choose a newer Ubuntu base" >&2
    exit 1
  }}
  PYTHON=python3.11
fi
apt-get install -y --no-install-recommends "$PYTHON-venv" || true
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --no-cache-dir --upgrade pip
"$VENV/bin/python" -m pip install --no-cache-dir -r "$SOURCE/requirements.txt"
"$VENV/bin/python" -m pip install --no-cache-dir --no-deps "$SOURCE"/*.whl
"$VENV/bin/python" -m curvgrade gradescope --help >/dev/null
"""

RUN_AUTOGRADER = f"""\
#!/usr/bin/env bash
# Grades the one notebook in $ROOT/submission into $ROOT/results/results.json. Gradescope runs
# this once per submission; a rehearsal (python -m curvgrade gradescope --rehearse) sets
# {ROOT_VARIABLE} and {PYTHON_VARIABLE} to a temporary root and its own Python.
set -uo pipefail
ROOT="${{{ROOT_VARIABLE}:-/autograder}}"
PYTHON="${{{PYTHON_VARIABLE}:-{VENV}/bin/python}}"
cd "$ROOT"
exec "$PYTHON" -m curvgrade gradescope --run "$ROOT"
"""


def project_root() -> Path:
    """The project's sources this ``curvgrade`` runs from (``pyproject.toml``, ``src/``), from
    which the wheel is built; ``ValueError`` when it runs from an installed wheel instead."""
    root = Path(__file__).resolve().parents[2]
    if not (root / "pyproject.toml").is_file() or not (root / "src" / "curvgrade").is_dir():
        raise ValueError(
            "--wheel: curvgrade runs from an installed wheel, not the project's sources: give "
            "the course kit's wheel (make kit) with --wheel and its requirements.txt with "
            "--requirements"
        )
    return root


def build_wheel(folder: Path) -> Path:
    """The project's wheel, built into ``folder`` as ``make kit`` builds it (``pip wheel
    --no-deps --no-build-isolation``), from a copy of the sources so that no ``build/`` is left
    in the project."""
    root = project_root()
    with tempfile.TemporaryDirectory(prefix="curvgrade-wheel-") as scratch:
        source = Path(scratch) / "source"
        source.mkdir()
        for name in ("pyproject.toml", "README.md"):
            shutil.copy(root / name, source / name)
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
        shutil.copytree(root / "src", source / "src", ignore=ignore)
        before = set(Path(folder).glob("*.whl"))
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation"]
            + [str(source), "-w", str(folder)],
            check=True,
            timeout=600,
        )
    (wheel,) = set(Path(folder).glob("*.whl")) - before
    return wheel


def wheel_problems(wheel: Path) -> list[str]:
    """What in ``wheel`` does not belong in an image students' code runs in: anything but the
    packages ``curvlab`` and ``curvgrade`` and the wheel's metadata, or a file that may hold a
    chapter or its checks (the rule of tools/check_kit.py)."""
    found = []
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if name.split("/", 1)[0].endswith(".dist-info"):
                continue
            if not name.startswith(ALLOWED_IN_WHEEL):
                found.append(f"{wheel.name}: {name} is not part of the libraries")
            elif name.endswith(FORBIDDEN_IN_WHEEL):
                found.append(f"{wheel.name}: {name} may hold a chapter or its checks")
    return found


def _add(archive: zipfile.ZipFile, name: str, data: bytes, executable: bool = False) -> None:
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))  # the same zip every time
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = (0o100755 if executable else 0o100644) << 16
    archive.writestr(info, data)


def write_autograder(
    bundles: list[Bundle],
    out: str | Path,
    *,
    wheel: str | Path | None = None,
    requirements: str | Path | None = None,
    timeout: float = 600,
    cell_timeout: float | None = None,
    max_bytes: int = MAX_SUBMISSION_BYTES,
    max_cells: int = MAX_SUBMISSION_CELLS,
) -> Path:
    """Write the Gradescope ``autograder.zip`` grading ``bundles`` at ``out`` (see the module
    docstring). ``wheel`` and ``requirements`` default to a wheel built from the project's
    sources and the project's ``requirements.txt``; the limits are those of ``curvgrade grade``.
    """
    if not bundles:
        raise ValueError("chapters: expected at least one chapter with graded exercises")
    slugs = [bundle.chapter for bundle in bundles]
    if len(set(slugs)) != len(slugs):
        twice = sorted({slug for slug in slugs if slugs.count(slug) > 1})
        raise ValueError(f"chapters: the same chapter given twice: {', '.join(twice)}")
    if timeout <= 0 or (cell_timeout is not None and cell_timeout <= 0):
        raise ValueError(f"--timeout/--cell-timeout: expected positive seconds, got {timeout}")
    requirements = Path(requirements or project_root() / "requirements.txt")
    if not requirements.is_file():
        raise ValueError(f"--requirements: no pinned requirements file at {requirements}")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    config = {
        "format": FORMAT,
        "chapters": {
            bundle.chapter: {
                "bundle": f"bundles/{bundle.chapter}.json",
                "title": bundle.title,
                "points": bundle.points,
            }
            for bundle in bundles
        },
        "timeout": timeout,
        "cell_timeout": cell_timeout,
        "max_bytes": max_bytes,
        "max_cells": max_cells,
    }
    with tempfile.TemporaryDirectory(prefix="curvgrade-gradescope-") as scratch:
        wheel = Path(wheel) if wheel is not None else build_wheel(Path(scratch))
        if wheel.suffix != ".whl" or not wheel.is_file():
            raise ValueError(f"--wheel: expected the library's .whl file, got {wheel}")
        problems = wheel_problems(wheel)
        if problems:
            raise ValueError("--wheel: " + "; ".join(problems))
        with zipfile.ZipFile(out, "w") as archive:
            _add(archive, "setup.sh", SETUP_SH.encode(), executable=True)
            _add(archive, "run_autograder", RUN_AUTOGRADER.encode(), executable=True)
            _add(archive, "requirements.txt", requirements.read_bytes())
            _add(archive, wheel.name, wheel.read_bytes())
            _add(archive, CONFIG, (json.dumps(config, indent=1) + "\n").encode())
            for bundle in bundles:
                _add(archive, f"bundles/{bundle.chapter}.json", bundle.to_json().encode())
    return out


def submitted_files(folder: Path) -> list[Path]:
    """Every entry of a submission folder, looked into without following a link: each file,
    and each link, pipe or folder named ``*.ipynb`` as itself (grading refuses those);
    :data:`IGNORED` left out (:func:`curvgrade.submission.submission_files`)."""
    return submission_files(folder, ignored=IGNORED)


def choose_chapter(path: Path, bundles: dict[str, Bundle], config: dict) -> Bundle | str:
    """The bundle that grades the notebook at ``path``: the chapter its metadata names, else
    the one its file name names (``<chapter>.ipynb``), else the only one; otherwise why not."""
    probe = SubmissionResult(student=path.stem, path=path)
    notebook = read_submission(
        path, probe, max_bytes=config["max_bytes"], max_cells=config["max_cells"]
    )
    named = None
    if notebook is not None:
        meta = notebook.metadata.get("curvlab", {})
        named = meta.get("chapter") if isinstance(meta, dict) else None
    if isinstance(named, str) and named in bundles:
        return bundles[named]
    stem = path.name[: -len(".ipynb")] if path.name.lower().endswith(".ipynb") else path.stem
    if stem in bundles:
        return bundles[stem]
    if len(bundles) == 1:
        return next(iter(bundles.values()))
    why = f"; it could not be read: {probe.notes[0]}" if notebook is None else ""
    return (
        f"this autograder grades the chapters {', '.join(sorted(bundles))}, and the notebook "
        f"{path.name!r} names none of them in its metadata or its file name{why}. Submit the "
        "student edition of one of these chapters, saved as <chapter>.ipynb."
    )


def results(bundle: Bundle, result: SubmissionResult) -> dict:
    """Gradescope's ``results.json`` for ``result``: one test per check (public ones visible,
    hidden ones after the grades are published, named by number and points only), one per
    written exercise (0 points, graded by hand), and the grading's status, flags and notes in
    the submission's output. Points withheld pending review count 0 in every test."""
    numbers = {exercise.label: index for index, exercise in enumerate(bundle.exercises, 1)}
    tests = []
    for check in result.checks:
        exercise = bundle.exercise(check.exercise)
        name = f"{exercise.title} ({exercise.label}): "
        name += f"hidden check {check.number}" if check.hidden else f"check {check.number}"
        tests.append(
            {
                "name": name if check.hidden else f"{name}: {check.what}",
                "number": f"{numbers[check.exercise]}.{check.number}",
                "score": 0 if result.withheld else check.earned,
                "max_score": check.points,
                "status": "passed" if check.passed else "failed",
                "output": check_reason(check),
                "visibility": "after_published" if check.hidden else "visible",
                "tags": [exercise.label],
            }
        )
    for index, label in enumerate(bundle.manual, start=len(bundle.exercises) + 1):
        found = "Your answer was found" if result.written.get(label) else "No answer was found"
        tests.append(
            {
                "name": f"Written exercise ({label}): graded by hand",
                "number": f"{index}.1",
                "score": 0,
                "max_score": 0,
                "output": f"{found}; written answers are graded by hand.",
                "visibility": "visible",
                "tags": [label],
            }
        )
    return {
        "score": result.total,
        "execution_time": round(result.seconds),
        "output": summary(bundle, result),
        "output_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {"status": result.status, "flags": list(result.flags)},
    }


def summary(bundle: Bundle, result: SubmissionResult) -> str:
    """The submission's output: what was graded, the public points, the hidden points still to
    be shown, the status, flags and notes, and answers that could not be graded."""
    public = [check for check in result.checks if not check.hidden]
    hidden = sum(check.points for check in result.checks if check.hidden)
    earned = 0 if result.withheld else sum(check.earned for check in public)
    lines = [
        f"{bundle.title or bundle.chapter} ({bundle.chapter}), graded from {result.path.name}.",
        f"Public checks: {earned:g} of {sum(c.points for c in public):g} points. Hidden checks: "
        f"{hidden:g} points, their results shown once the grades are published.",
    ]
    if result.status != "ok":
        lines.append(f"Grading status: {result.status}.")
    if result.flags:
        lines.append(f"Flags: {' '.join(result.flags)}.")
    lines += [f"- {note}" for note in result.notes]
    for exercise in bundle.exercises:
        if exercise.label in result.answer_errors:
            lines.append(
                f"{exercise.label}: your answer could not be graded: "
                f"{result.answer_errors[exercise.label]}."
            )
    return "\n".join(lines) + "\n"


def refusal(message: str, bundles: dict[str, Bundle]) -> dict:
    """``results.json`` for a submission that cannot be graded: 0 points and ``message``;
    where the zip has one chapter, its checks are listed as not run."""
    tests = []
    if len(bundles) == 1:
        (bundle,) = bundles.values()
        blank = SubmissionResult(student="", path=Path("-"), checks=not_run(bundle))
        tests = results(bundle, blank)["tests"]
    return {
        "score": 0,
        "execution_time": 0,
        "output": message + "\n",
        "output_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def not_run(bundle: Bundle) -> list[CheckResult]:
    """Every check of ``bundle``, not run (no points)."""
    return [CheckResult(c.exercise, c.number, c.points, c.what, c.hidden) for c in bundle.checks]


def load(root: Path) -> tuple[dict, dict[str, Bundle]]:
    """The configuration and the bundles of the autograder unpacked in ``root/source``."""
    source = Path(root) / "source"
    try:
        config = json.loads((source / CONFIG).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ValueError(f"--run: no autograder configuration in {source} ({error})") from None
    if not isinstance(config, dict) or config.get("format") != FORMAT:
        raise ValueError(f"--run: {source / CONFIG} is not a {FORMAT} configuration")
    bundles = {
        slug: Bundle.read(source / entry["bundle"]) for slug, entry in config["chapters"].items()
    }
    return config, bundles


def run(root: str | Path) -> dict:
    """Grade the submission in ``root/submission`` and write ``root/results/results.json``
    (Gradescope's layout); returns what it wrote. A submission holding no notebook or several
    gets 0 points and says why. Without a working sandbox nothing is written and
    :class:`~curvgrade.grading.SandboxUnavailable` is raised: Gradescope then reports the
    autograder as failed, to be fixed and rerun, rather than give every student 0 points."""
    root = Path(root)
    config, bundles = load(root)
    folder = root / "submission"
    files = submitted_files(folder) if folder.is_dir() else []
    notebooks = [path for path in files if path.name.lower().endswith(".ipynb")]
    others = [path.relative_to(folder).as_posix() for path in files if path not in notebooks]
    ignored = f" (other files, not graded: {', '.join(others)})" if others else ""
    if len(notebooks) != 1:
        found = ", ".join(path.relative_to(folder).as_posix() for path in notebooks)
        message = (
            "The submission holds no notebook (.ipynb): submit your saved student edition."
            if not notebooks
            else f"The submission holds {len(notebooks)} notebooks ({found}): submit only the "
            "one to grade."
        ) + ignored
        data = refusal(message, bundles)
    else:
        (path,) = notebooks
        chosen = choose_chapter(path, bundles, config)
        if isinstance(chosen, str):
            data = refusal(chosen + ignored, bundles)
        else:
            try:
                result = grade_notebook(
                    chosen,
                    path,
                    student=path.stem,
                    timeout=config["timeout"],
                    cell_timeout=config["cell_timeout"],
                    max_bytes=config["max_bytes"],
                    max_cells=config["max_cells"],
                )
            except SandboxUnavailable:
                raise
            except Exception as error:  # as `curvgrade grade`: the submission is reported
                result = SubmissionResult(path.stem, path, checks=not_run(chosen))
                result.flag("crashed", f"grading failed: {type(error).__name__}")
            if ignored:
                result.notes.append(ignored.strip(" ()"))
            data = results(chosen, result)
    (root / "results").mkdir(parents=True, exist_ok=True)
    target = root / "results" / "results.json"
    target.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return data


def _unpack(archive: zipfile.ZipFile, target: Path) -> None:
    """Unpack ``archive`` into ``target``, refusing a member that would land outside it."""
    for member in archive.infolist():
        name = Path(member.filename)
        if name.is_absolute() or ".." in name.parts:
            raise ValueError(f"BUNDLE: the zip member {member.filename!r} leaves the folder")
        archive.extract(member, target)
        mode = member.external_attr >> 16
        if mode & 0o111:
            os.chmod(target / name, 0o755)


def rehearse(bundle: str | Path, submission: str | Path, python: str | None = None) -> dict:
    """Run the autograder zip ``bundle`` on ``submission`` (a notebook, or a folder as a
    student would upload it) the way Gradescope does, in a temporary root laid out as
    ``/autograder`` (``source/``, ``submission/``, ``results/``), with this machine's Python
    (or ``python``) and nothing installed; returns the ``results.json`` it wrote."""
    bundle, submission = Path(bundle), Path(submission)
    if not zipfile.is_zipfile(bundle):
        raise ValueError(f"BUNDLE: expected an autograder .zip, got {bundle}")
    if not os.path.lexists(submission):
        raise ValueError(f"SUBMISSION: no notebook or folder at {submission}")
    with tempfile.TemporaryDirectory(prefix="curvgrade-autograder-") as scratch:
        root = Path(scratch)
        with zipfile.ZipFile(bundle) as archive:
            _unpack(archive, root / "source")
        if not (root / "source" / "run_autograder").is_file():
            raise ValueError(f"BUNDLE: {bundle} has no run_autograder at its root")
        shutil.copy(root / "source" / "run_autograder", root / "run_autograder")
        os.chmod(root / "run_autograder", 0o755)
        if submission.is_dir() and not submission.is_symlink():
            shutil.copytree(submission, root / "submission", symlinks=True)
        else:
            (root / "submission").mkdir()
            shutil.copy2(submission, root / "submission", follow_symlinks=False)
        (root / "results").mkdir()
        config, _ = load(root)
        limit = config["timeout"] + check_budget(config["timeout"]) + 120
        environment = {**os.environ, ROOT_VARIABLE: str(root)}
        environment[PYTHON_VARIABLE] = python or sys.executable
        finished = subprocess.run(
            [str(root / "run_autograder")],
            cwd=root,
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=limit,
        )
        written = root / "results" / "results.json"
        if not written.is_file():
            output = finished.stdout.decode(errors="replace")[-2000:]
            raise RuntimeError(f"run_autograder wrote no results.json:\n{output}")
        return json.loads(written.read_text(encoding="utf-8"))
