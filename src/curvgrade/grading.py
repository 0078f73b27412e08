"""Grade one returned notebook: student code in a sandbox, checks in a fresh grader process.

:func:`grade_notebook` never raises on a bad submission; it

1. reads the file (anything that is not a notebook is ``unreadable``, with the reason);
2. rebuilds what will run from the bundle: the given cells' original sources (an edited or
   deleted given cell is restored and flagged), the student's answer cells and any cells they
   added, and an export step where each exercise's checks were; the student's copies of the
   checks are dropped (an edited or deleted public check is flagged);
3. runs that in the sandbox (:mod:`curvgrade.sandbox`, :mod:`~.runner`): answers
   leave it as data only;
4. runs every check in a fresh process (:mod:`curvgrade.checker`) on the decoded
   answers: patched SymPy, rebound names, fake ``__eq__``, input transformers or a replaced
   ``showtraceback`` in the student's kernel cannot reach it;
5. kills the sandbox and everything it started, and only then returns the result.

Submissions that are an instructor edition or the book's own notebook (they contain hidden
checks), or whose answers are the solution line for line, are flagged.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from . import markup
from .bundle import Bundle, answer_digest, normalized
from .cgroup import SandboxGroup, sandbox_group
from .sandbox import (
    Limits,
    claim_uid,
    kill_everything,
    kill_group,
    sandbox_command,
    sandbox_problem,
)
from .scaffold import restore_answer

STATUS_ORDER = ("ok", "flagged", "tampered", "timeout", "crashed", "unreadable", "missing")


class SandboxUnavailable(RuntimeError):
    """The machine cannot sandbox submissions (and grading was not told ``unsafe``)."""


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
    """The grade of one returned notebook: per-check results, a status, flags and notes."""

    student: str
    path: Path
    checks: list[CheckResult] = field(default_factory=list)
    status: str = "ok"
    notes: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    answer_errors: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    withheld: bool = False  # a copy of the instructor edition or the book's notebook
    written: dict[str, str] = field(default_factory=dict)  # written answers, by exercise
    manual: dict[str, float] = field(default_factory=dict)  # the instructor's scores of them
    identity: dict[str, str] | None = None  # the roster entry (None: not in a roster)
    submitted: str | None = None  # ISO time the submission was made (roster or file)
    late_days: int = 0
    late_share: float = 0.0  # share of the points the late policy takes

    def to_dict(self) -> dict:
        """This result as JSON data (``results.json``, read back by :meth:`from_dict`)."""
        from dataclasses import asdict

        data = asdict(self)
        data["path"] = str(self.path)
        return data

    @classmethod
    def from_dict(cls, data: dict) -> SubmissionResult:
        """A result saved by :meth:`to_dict`."""
        data = dict(data)
        data["path"] = Path(data["path"])
        data["checks"] = [CheckResult(**check) for check in data.get("checks", [])]
        return cls(**data)

    def flag(self, status: str, note: str) -> None:
        """Record ``note`` and raise the status to ``status`` if that is more severe."""
        self.notes.append(note)
        if STATUS_ORDER.index(status) > STATUS_ORDER.index(self.status):
            self.status = status

    def score(self, exercise: str) -> int | float:
        """Points earned on ``exercise`` (none while withheld: see :attr:`withheld`)."""
        if self.withheld:
            return 0
        return sum(check.earned for check in self.checks if check.exercise == exercise)

    @property
    def auto(self) -> int | float:
        """Points the checks gave on the whole chapter (none while withheld)."""
        if self.withheld:
            return 0
        return sum(check.earned for check in self.checks)

    @property
    def penalty(self) -> int | float:
        """Points the late policy takes: its share of the checks' and the manual points."""
        if not self.late_share:
            return 0
        return round((self.auto + sum(self.manual.values())) * self.late_share, 6)

    @property
    def total(self) -> int | float:
        """The grade: the checks' points and the manual scores, less the late penalty."""
        if self.withheld:
            return 0
        earned = self.auto + sum(self.manual.values())
        return round(earned - self.penalty, 6) if self.penalty else earned


MAX_SUBMISSION_BYTES = 10 * 2**20
"""The largest notebook file read (10 MiB; ``grade --max-size``): a larger one is
``unreadable`` after reading at most this many bytes and one more. Parsing a file of this size
takes at most about 26 times its size in memory (about 260 MiB, for a file of nothing but empty
JSON objects; a real notebook far less), whatever JSON it holds."""

MAX_SUBMISSION_CELLS = 5000
"""The most cells a notebook may have (``grade --max-cells``): counted right after parsing,
before any cell is read, so that a flood of cells costs no more than its bytes."""


def _file_kind(mode: int) -> str:
    """What a non-regular file is, in words (``stat.S_IFMT`` of ``mode``)."""
    kinds = (
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a named pipe"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a device"),
        (stat.S_ISBLK, "a device"),
    )
    return next((name for test, name in kinds if test(mode)), "a special file")


def not_written(path: str | Path) -> str | None:
    """Why ``path`` is not a file the student wrote (a symbolic link, a folder, a pipe, a
    device), or ``None`` for a regular file. Never follows a link.

    >>> import os, tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "alice.ipynb").write_text("{}")
    >>> os.symlink(folder / "alice.ipynb", folder / "bob.ipynb")
    >>> not_written(folder / "alice.ipynb"), not_written(folder / "bob.ipynb")
    (None, 'a symbolic link, not a file the student wrote')
    """
    try:
        mode = os.lstat(path).st_mode
    except OSError as error:
        return f"cannot be read ({type(error).__name__})"
    if stat.S_ISREG(mode):
        return None
    return f"{_file_kind(mode)}, not a file the student wrote"


def read_bytes(path: str | Path, limit: int) -> bytes | str:
    """The bytes of the regular file ``path``, or why not (a ``str``): the file is opened
    without following a symbolic link (``O_NOFOLLOW``) or waiting on a pipe (``O_NONBLOCK``),
    and the open file itself must be a regular file (``fstat``), so that nothing can swap it
    between a check and the read. At most ``limit + 1`` bytes are read; a longer file is refused.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.ipynb").write_text("0123456789")
    >>> read_bytes(folder / "a.ipynb", 10), read_bytes(folder / "a.ipynb", 9)
    (b'0123456789', 'larger than the 9-byte limit')
    """
    if limit < 1:
        raise ValueError(f"limit: expected a positive number of bytes, got {limit}")
    problem = not_written(path)
    if problem is not None:
        return problem
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "a symbolic link, not a file the student wrote"
        return f"cannot be read ({type(error).__name__})"
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            return f"{_file_kind(mode)}, not a file the student wrote"
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(descriptor, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as error:
        return f"cannot be read ({type(error).__name__})"
    finally:
        os.close(descriptor)
    if size > limit:
        return f"larger than the {_size(limit)} limit"
    return b"".join(chunks)


def _size(count: int) -> str:
    """A byte count in words: ``10 MiB``, ``1.5 KiB``, ``9-byte``.

    >>> _size(10 * 2**20), _size(1536), _size(9)
    ('10 MiB', '1.5 KiB', '9-byte')
    """
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= scale:
            return f"{count / scale:.4g} {unit}"
    return f"{count}-byte"


def read_submission(
    path: Path,
    result: SubmissionResult,
    *,
    max_bytes: int = MAX_SUBMISSION_BYTES,
    max_cells: int = MAX_SUBMISSION_CELLS,
) -> nbformat.NotebookNode | None:
    """The notebook at ``path``, or ``None`` with ``result`` marked ``unreadable`` and why.

    Only a regular file is read (never a symbolic link, a folder, a pipe or a device: see
    :func:`read_bytes`), of at most ``max_bytes`` bytes and ``max_cells`` cells, both checked
    before any cell is read.
    """
    if max_cells < 1:
        raise ValueError(f"max_cells: expected a positive number of cells, got {max_cells}")
    problem = not_written(path)
    if problem is not None:
        result.flag("unreadable", f"not a notebook: {problem}")
        return None
    if path.suffix.lower() != ".ipynb":
        result.flag("unreadable", f"not a notebook: a {path.suffix or 'suffix-less'} file")
        return None
    raw = read_bytes(path, max_bytes)
    if isinstance(raw, str):
        result.flag("unreadable", f"not a notebook: {raw}")
        return None
    try:
        data = json.loads(raw.decode("utf-8"))
    except RecursionError:
        result.flag("unreadable", "not a readable notebook (JSON nested too deeply)")
        return None
    except (UnicodeDecodeError, ValueError) as error:
        result.flag("unreadable", f"not a readable notebook (not JSON: {type(error).__name__})")
        return None
    finally:
        del raw
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        result.flag("unreadable", "not a readable notebook (a JSON file with no list of cells)")
        return None
    if len(data["cells"]) > max_cells:
        result.flag(
            "unreadable",
            f"not a readable notebook ({len(data['cells'])} cells, more than the "
            f"{max_cells} allowed)",
        )
        return None
    cells = []
    for number, cell in enumerate(data["cells"], start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") not in ("code", "markdown", "raw"):
            result.flag("unreadable", f"not a readable notebook (cell {number} is not a cell)")
            return None
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(line, str) for line in source):
            source = "".join(source)
        if not isinstance(source, str):
            result.flag(
                "unreadable",
                f"not a readable notebook (cell {number}: source is a "
                f"{type(source).__name__}, not text)",
            )
            return None
        metadata = cell.get("metadata") if isinstance(cell.get("metadata"), dict) else {}
        node = nbformat.NotebookNode(
            cell_type=cell["cell_type"], source=source, metadata=nbformat.from_dict(metadata)
        )
        cells.append(node)
    metadata = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    return nbformat.NotebookNode(cells=cells, metadata=nbformat.from_dict(metadata))


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


def _flag_copies(bundle: Bundle, notebook, plan: Plan, result: SubmissionResult) -> None:
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
    _flag_copies(bundle, notebook, plan, result)
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
