"""Grade one returned notebook: student code in a sandbox, checks in a fresh grader process.

:func:`grade_notebook` never raises on a bad submission; it

1. reads the file (:func:`curvgrade.submission.read_submission`: anything that is not a
   notebook is ``unreadable``, with the reason);
2. rebuilds what will run from the bundle (:func:`curvgrade.plan.build_plan`): the given
   cells' original sources (an edited or deleted given cell is restored and flagged), the
   student's answer cells and any cells they added, and an export step where each exercise's
   checks were; the student's copies of the checks are dropped (an edited or deleted public
   check is flagged);
3. runs that in the sandbox (:mod:`curvgrade.sandbox`, :mod:`~.runner`): answers
   leave it as data only;
4. runs every check in a fresh process (:mod:`curvgrade.checker`) on the decoded
   answers: patched SymPy, rebound names, fake ``__eq__``, input transformers or a replaced
   ``showtraceback`` in the student's kernel cannot reach it;
5. kills the sandbox and everything it started, and only then returns the result, a
   :class:`curvgrade.results.SubmissionResult`.

Submissions that are an instructor edition or the book's own notebook (they contain hidden
checks), or whose answers are the solution line for line, are flagged
(:func:`curvgrade.plan.flag_copies`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from .bundle import Bundle
from .cgroup import SandboxGroup, sandbox_group
from .plan import build_plan, flag_copies, written_answers
from .results import CheckResult, SubmissionResult
from .sandbox import (
    Limits,
    claim_uid,
    kill_everything,
    kill_group,
    sandbox_command,
    sandbox_problem,
)
from .submission import MAX_SUBMISSION_BYTES, MAX_SUBMISSION_CELLS, read_submission


class SandboxUnavailable(RuntimeError):
    """The machine cannot sandbox submissions (and grading was not told ``unsafe``)."""


CHECK_SECONDS = 120  # the most the checks may take after the notebook's own time limit


def check_budget(timeout: float) -> float:
    """Seconds the checks may run after the notebook's ``timeout``: as long again, at most
    :data:`CHECK_SECONDS`. The grader kills the checker at ``timeout + check_budget(timeout)``
    whatever it is doing (decoding an answer, a check that does not end), so that one
    submission is graded within that time.

    >>> check_budget(30), check_budget(600)
    (30, 120)
    """
    return min(timeout, CHECK_SECONDS)


def checker_environment(home: Path, study_cache: Path | None) -> dict[str, str]:
    """The checker's environment: none of the grader's own, only what the checks need.

    >>> sorted(checker_environment(Path("/g"), None))  # doctest: +NORMALIZE_WHITESPACE
    ['HOME', 'LANG', 'MKL_NUM_THREADS', 'MPLBACKEND', 'MPLCONFIGDIR', 'OMP_NUM_THREADS',
     'PATH', 'PYTHONDONTWRITEBYTECODE', 'PYTHONHASHSEED']
    """
    env = {
        "PATH": f"{os.path.dirname(sys.executable)}:/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": str(home),
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    if study_cache is not None:
        env["CURVLAB_CACHE"] = str(study_cache)
    elif os.environ.get("CURVLAB_CACHE"):  # trusted notebooks: the grader's own cache
        env["CURVLAB_CACHE"] = os.environ["CURVLAB_CACHE"]
    return env


def _runner_command(
    workdir: Path, token: str, unsafe: bool, study_cache: Path | None = None, uid=None, disk=None
) -> list[str]:
    argv = [sys.executable, "-m", "curvgrade.runner"]
    if unsafe:
        return argv
    return sandbox_command(workdir, token, argv, study_cache, uid=uid, disk_bytes=disk)


def grade_notebook(
    bundle: Bundle,
    path: str | Path,
    *,
    student: str | None = None,
    timeout: float = 600,
    cell_timeout: float | None = None,
    unsafe: bool = False,
    limits: Limits | None = None,
    study_cache: str | Path | None = None,
    max_bytes: int = MAX_SUBMISSION_BYTES,
    max_cells: int = MAX_SUBMISSION_CELLS,
) -> SubmissionResult:
    """Grade the notebook at ``path`` with the checks of ``bundle`` (see the module docstring).

    ``timeout`` bounds the whole notebook (seconds), ``cell_timeout`` each cell (defaults to
    ``timeout``). ``study_cache``, a folder of study results (``.curvlab-cache/``, see
    :mod:`curvgrade.studycache`), is what the student's notebook (read-only, in the sandbox)
    and the checks read as ``CURVLAB_CACHE``. Without a working sandbox this raises
    :class:`SandboxUnavailable` unless ``unsafe`` is true. A file that is not a notebook (or
    not a regular file, or over ``max_bytes`` bytes or ``max_cells`` cells: see
    :func:`read_submission`) is reported, and scores nothing:

    >>> import tempfile
    >>> from curvgrade.chapter import read_chapter
    >>> from curvgrade.editions import autograder_bundle
    >>> folder = Path(tempfile.mkdtemp())
    >>> bundle = autograder_bundle(read_chapter(example_chapter(folder)))
    >>> _ = (folder / "alice.ipynb").write_text("{not json")
    >>> result = grade_notebook(bundle, folder / "alice.ipynb", unsafe=True)
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
    result.checks = [
        CheckResult(check.exercise, check.number, check.points, check.what, check.hidden)
        for check in bundle.checks
    ]
    started = time.monotonic()
    notebook = read_submission(path, result, max_bytes=max_bytes, max_cells=max_cells)
    if notebook is None:
        for check in result.checks:
            check.reason = "not run: the notebook could not be read"
        result.seconds = time.monotonic() - started
        return result
    if not unsafe and (problem := sandbox_problem()) is not None:
        raise SandboxUnavailable(f"cannot sandbox submissions: {problem} (or grade with --unsafe)")
    meta = notebook.metadata.get("curvlab", {})
    chapter = meta.get("chapter") if isinstance(meta, dict) else None
    if chapter != bundle.chapter:
        result.flag(
            "tampered",
            f"notebook metadata names chapter {str(chapter)[:40]!r}, not {bundle.chapter!r}",
        )
    result.written = written_answers(bundle, notebook)
    plan = build_plan(bundle, notebook, result)
    flag_copies(bundle, notebook, plan, result)
    cache = Path(study_cache).resolve() if study_cache is not None else None
    outcome = _run(bundle, plan, result, timeout, cell_timeout or timeout, unsafe, limits, cache)
    _record(bundle, outcome, result)
    result.seconds = time.monotonic() - started
    return result


def _run(bundle, plan, result, timeout, cell_timeout, unsafe, limits, study_cache) -> dict | None:
    import secrets

    token = secrets.token_hex(12)
    limits = limits or Limits(cpu_seconds=int(timeout) + 30)
    grader_dir = Path(tempfile.mkdtemp(prefix="curvlab-grader-"))
    workdir = Path(tempfile.mkdtemp(prefix="curvlab-submission-"))
    sandbox = checker = user = group = None
    try:
        bundle_path = grader_dir / "bundle.json"
        bundle_path.write_text(bundle.to_json(), encoding="utf-8")
        notebook = nbformat.v4.new_notebook()
        notebook.cells = [
            nbformat.v4.new_code_cell(step["source"]) for step in plan.steps if "source" in step
        ]
        (workdir / "submission.ipynb").write_text(nbformat.writes(notebook), encoding="utf-8")
        if not unsafe:  # mounted read-only in the sandbox's own storage, run as its own uid
            os.chmod(workdir / "submission.ipynb", 0o444)
            user = claim_uid()
            # one memory and process budget for the whole sandbox, where the machine allows
            group = sandbox_group(f"sandbox-{token}", limits.memory_bytes, limits.processes)
        env = {"CURVLAB_SANDBOX": token, "PATH": os.environ.get("PATH", "/usr/bin")}
        if unsafe:
            from .sandbox import environment

            env = {**environment(token, str(study_cache) if study_cache else None)}
            env["HOME"] = str(workdir)
            if study_cache is None:  # trusted notebooks: the grader's own cache
                env.pop("CURVLAB_CACHE")
                if os.environ.get("CURVLAB_CACHE"):
                    env["CURVLAB_CACHE"] = os.environ["CURVLAB_CACHE"]
        sandbox = subprocess.Popen(
            _runner_command(
                workdir, token, unsafe, study_cache, user.uid if user else None, limits.disk_bytes
            ),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=workdir,
            env=env,
            preexec_fn=limits.apply if group is None else _joining(group, limits),
        )
        message = json.dumps({"steps": plan.steps, "cell_timeout": cell_timeout}) + "\n"
        sandbox.stdin.write(message.encode())
        sandbox.stdin.flush()
        read_fd, write_fd = sandbox.stdout.fileno(), sandbox.stdin.fileno()
        checker_env = checker_environment(grader_dir, study_cache)
        check_seconds = check_budget(timeout)
        checker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "curvgrade.checker",
                str(bundle_path),
                str(read_fd),
                str(write_fd),
                str(timeout),
            ],
            pass_fds=(read_fd, write_fd),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=grader_dir,
            env=checker_env,
            preexec_fn=Limits(
                memory_bytes=limits.memory_bytes,
                cpu_seconds=int(timeout + check_seconds) + 1,
                file_bytes=limits.file_bytes,
            ).apply_to_checker,
        )
        try:
            out, _ = checker.communicate(timeout=timeout + check_seconds)
        except subprocess.TimeoutExpired:
            kill_group(checker)
            checker.communicate()
            result.flag(
                "timeout",
                f"the checks ran over their time limit ({check_seconds:g} s after the "
                f"notebook's {timeout:g} s) and were stopped",
            )
            return None
        try:
            outcome = json.loads(out.decode() or "null")
        except ValueError:
            outcome = None
        if outcome is None:
            result.flag("crashed", "the checks could not be run for this notebook")
        return outcome
    finally:
        if sandbox is not None:
            leftovers = kill_everything(sandbox, token, user.uid if user else None)
            if leftovers:
                result.flag(
                    "tampered", f"{len(leftovers)} process(es) outlived the notebook (killed)"
                )
        if checker is not None and checker.poll() is None:  # its session goes with it
            kill_group(checker)
        if group is not None:
            group.remove()
        if user is not None:
            user.release()
        shutil.rmtree(workdir, ignore_errors=True)
        shutil.rmtree(grader_dir, ignore_errors=True)


def _joining(group: SandboxGroup, limits: Limits):
    """A ``preexec_fn``: join ``group``, then set ``limits``."""

    def prepare() -> None:
        group.join()
        limits.apply()

    return prepare


def _record(bundle: Bundle, outcome: dict | None, result: SubmissionResult) -> None:
    if outcome is None:
        return
    by_key = {check.key: check for check in bundle.checks}
    results = {(check.exercise, check.number): check for check in result.checks}
    for item in outcome.get("checks", []):
        spec = by_key.get(item.get("key"))
        if spec is None:
            continue
        check = results[(spec.exercise, spec.number)]
        check.passed = item.get("passed") is True
        check.reason = str(item.get("reason", ""))[:80]
    for label, problems in outcome.get("answer_problems", {}).items():
        text = "; ".join(f"{name}: {reason}" for name, reason in problems.items())
        result.answer_errors[label] = text[:300]
    cells = outcome.get("cells", {})
    if any(cell.get("timeout") for cell in cells.values()):
        result.flag("timeout", "a cell ran over its time limit and was interrupted")
    if outcome.get("ended") == "closed":
        result.flag("crashed", "the student's kernel died before the notebook's end")
    elif outcome.get("ended") != "done":
        result.flag("timeout", "the notebook did not run to its end within the time limit")
    for exercise in bundle.exercises:
        if exercise.label not in outcome.get("exported", []):
            result.answer_errors.setdefault(exercise.label, "the notebook stopped before it")
