"""Sandboxes graded side by side stay apart: a hostile notebook cannot hurt its classmates.

Each test grades one hostile notebook of the fixture chapter and, while it holds what it took,
two honest right ones (``--jobs 2``, side by side). The hostile one strikes as its kernel
starts and holds until its cell's time limit; the honest ones are graded once it has struck
(or after :data:`STRIKE_WAIT` seconds), so that they always run beside what it holds. The
honest ones must keep full marks and the status ``ok``, the hostile one earns at most what
honest wrong work earns, no process of a sandbox uid outlives grading and no file outside the
output folder changes.

- A disk filler writes in its home and its ``/tmp`` until the kernel says ``ENOSPC``, then
  holds it. The grader's temporary folder is a small tmpfs here, so that a sandbox writing
  on the grader's disk fills it (and nothing else on the machine).
- A process holder starts processes until the kernel refuses, then holds them; the honest
  work needs a thread (threads count against the process limit).
"""

from __future__ import annotations

import csv
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import nbformat
import pytest

from curvgrade.bundle import Bundle
from curvgrade.cgroup import group_problem
from curvgrade.cli import main
from curvgrade.grading import grade_notebook
from curvgrade.sandbox import SANDBOX_UIDS, sandbox_problem

pytestmark = [
    pytest.mark.slow,
    # Skipped on a machine without a sandbox, never in CI (CI installs bubblewrap).
    pytest.mark.skipif(
        sandbox_problem() is not None and not os.environ.get("CI"),
        reason=f"no sandbox here: {sandbox_problem()}",
    ),
]

FIXTURES = Path(__file__).parent / "fixtures"
CHAPTER = FIXTURES / "sphere-demo.md"
HOLD = 600  # the hostile cell sleeps this long: its cell's time limit (HOSTILE_CELL) ends it
HOSTILE_CELL = 75  # seconds: longer than grading the two honest notebooks side by side
STRIKE_WAIT = 20  # seconds to wait for the hostile notebook to strike before the honest ones
HOST_TMP = 64 * 1024**2  # the grader's temporary folder in the disk test


def _samples_module():
    spec = importlib.util.spec_from_file_location(
        "sample_submissions", FIXTURES / "sample_submissions.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


SAMPLES = _samples_module()

DISK_FILLER = f"""\
import os, time
stored = 0
for folder in (os.path.expanduser("~"), "/tmp"):
    try:
        for number in range(10_000):  # files of 64 MiB: the file size limit is per file
            with open(os.path.join(folder, f"fill-{{number}}"), "wb") as handle:
                for _ in range(64):
                    handle.write(bytes(1024**2))
                    stored += 1024**2
    except OSError:  # ENOSPC: this folder is full (or not writable)
        pass
time.sleep({HOLD})
"""

PROCESS_HOLDER = f"""\
import os, shutil, time
sleep, held = shutil.which("sleep"), 0
while held < 100_000:
    try:  # posix_spawn does not copy the kernel's memory: a thousand processes in a second
        os.posix_spawn(sleep, ["sleep", "600"], {{}})
    except OSError:  # EAGAIN: the process limit is reached
        break
    held += 1
time.sleep({HOLD})
"""


def _digests(*folders: Path) -> dict[str, str]:
    found = {}
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def _sandbox_processes() -> list[int]:
    """Live processes whose real uid is a sandbox uid (zombies, already dead, left out)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = dict(
                line.split(":", 1) for line in (entry / "status").read_text().splitlines()
            )
            uid = int(status["Uid"].split()[0])
            state = status["State"].split()[0]
        except (OSError, KeyError, ValueError, IndexError):
            continue
        if uid in SANDBOX_UIDS and state not in ("Z", "X"):
            pids.append(int(entry.name))
    return pids


def _still_running(grace: float = 3.0) -> list[int]:
    deadline = time.monotonic() + grace
    while (pids := _sandbox_processes()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return pids


@pytest.fixture(scope="module")
def editions(tmp_path_factory):
    """The fixture chapter's editions and an honest right and wrong notebook."""
    root = tmp_path_factory.mktemp("isolation")
    assert main(["student", str(CHAPTER), "--out", str(root / "editions")]) == 0
    student = nbformat.read(root / "editions" / "student" / "sphere-demo.ipynb", as_version=4)
    return {
        "root": root,
        "bundle": root / "editions" / "autograder" / "sphere-demo.json",
        "student": student,
        "points": sum(SAMPLES.FULL.values()),
        "honest_wrong": sum(SAMPLES.HONEST_WRONG.values()),
    }


def _held_processes() -> int:
    """Processes the holder started (``sleep 600``), whatever uid they run as."""
    count = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes() == b"sleep\x00600\x00":
                    count += 1
            except OSError:
                continue
    return count


def _held_groups() -> set[str]:
    """The memory control groups of the processes the holder started."""
    groups = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes() != b"sleep\x00600\x00":
                    continue
                lines = (entry / "cgroup").read_text().splitlines()
            except OSError:
                continue
            groups.update(line.split(":", 2)[2] for line in lines if ":memory:" in line)
            groups.update(line[3:] for line in lines if line.startswith("0::"))
    return groups


def _grade_beside_honest_work(
    editions, tmp_path, hostile: str, struck, honest=SAMPLES.RIGHT
) -> dict:
    """Grade ``hostile`` (wrong answers after the ``hostile`` cell), then, once ``struck()``
    says it has struck (or after :data:`STRIKE_WAIT` s), ``b-right`` and ``c-right`` (the
    ``honest`` answers) side by side while it holds; the scores by student, what changed
    outside the output, what outlived it."""
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    notebook = SAMPLES.filled(editions["student"], SAMPLES.WRONG)
    notebook.cells.insert(0, nbformat.v4.new_code_cell(hostile))  # strikes as the kernel starts
    hostile_path = tmp_path / "hostile.ipynb"
    nbformat.write(notebook, hostile_path)
    right = SAMPLES.filled(editions["student"], honest)
    for name in ("b-right", "c-right"):
        nbformat.write(right, submissions / f"{name}.ipynb")
    out = tmp_path / "grades" / "scores.csv"
    folders = (editions["root"] / "editions", submissions)
    before = _digests(*folders)
    bundle = Bundle.read(editions["bundle"])
    hostile_result = []
    thread = threading.Thread(
        target=lambda: hostile_result.append(
            grade_notebook(bundle, hostile_path, timeout=150, cell_timeout=HOSTILE_CELL)
        )
    )
    thread.start()
    deadline = time.monotonic() + STRIKE_WAIT
    while not struck() and time.monotonic() < deadline:
        time.sleep(0.2)
    held_groups = _held_groups()
    start = time.monotonic()
    status = main(
        [
            "grade",
            "--chapter",
            str(editions["bundle"]),
            "--submissions",
            str(submissions),
            "--out",
            str(out),
            "--timeout",
            "90",
            "--cell-timeout",
            "30",
            "--jobs",
            "2",
        ]
    )
    seconds = time.monotonic() - start
    still_holding = thread.is_alive()
    thread.join()
    assert status == 0
    left_running = _still_running()
    with out.open(encoding="utf-8") as handle:
        scores = {row["student"]: row for row in csv.DictReader(handle)}
    scores["a-hostile"] = {"total": hostile_result[0].total, "notes": hostile_result[0].notes}
    return {
        "scores": scores,
        "seconds": seconds,
        "still_holding": still_holding,
        "held_groups": held_groups,
        "changed": before != _digests(*folders),
        "left_running": left_running,
    }


def _assert_isolated(editions, graded) -> None:
    scores = graded["scores"]
    for name in ("b-right", "c-right"):
        row = scores[name]
        assert (row["status"], float(row["total"])) == ("ok", editions["points"]), row["notes"]
    assert float(scores["a-hostile"]["total"]) <= editions["honest_wrong"]
    assert graded["still_holding"], "the honest notebooks were not graded beside the hostile one"
    assert graded["left_running"] == []
    assert not graded["changed"]


@pytest.fixture
def small_grader_tmp(tmp_path, monkeypatch):
    """The grader's temporary folder on a tmpfs of HOST_TMP bytes (mounted for the test)."""
    folder = tmp_path / "grader-tmp"
    folder.mkdir()
    size = f"size={HOST_TMP}"
    subprocess.run(["mount", "-t", "tmpfs", "-o", size, "tmpfs", str(folder)], check=True)
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    try:
        yield folder
    finally:
        monkeypatch.undo()
        subprocess.run(["umount", "-l", str(folder)], check=False)


def test_a_disk_filler_fills_only_its_own_sandbox(editions, tmp_path, small_grader_tmp):
    def struck() -> bool:  # the grader's disk is full, or (in its own storage) not visible here
        return shutil.disk_usage(small_grader_tmp).free < HOST_TMP // 8

    graded = _grade_beside_honest_work(editions, tmp_path, DISK_FILLER, struck)
    _assert_isolated(editions, graded)
    assert list(small_grader_tmp.iterdir()) == []  # nothing left on the grader's side
    assert shutil.disk_usage(small_grader_tmp).used < HOST_TMP // 4


# Right work that needs a thread, as much honest work does (a progress bar, a pool of workers):
# threads count against the process limit.
THREADED_RIGHT = {
    **SAMPLES.RIGHT,
    SAMPLES.CAP: "from concurrent.futures import ThreadPoolExecutor\n"
    "with ThreadPoolExecutor(1) as pool:\n"
    "    cap_fraction = pool.submit(lambda: float((1 - np.cos(np.pi / 3)) / 2)).result()",
}


def test_a_process_holder_uses_up_only_its_own_process_limit(editions, tmp_path):
    graded = _grade_beside_honest_work(
        editions, tmp_path, PROCESS_HOLDER, lambda: _held_processes() > 900, THREADED_RIGHT
    )
    _assert_isolated(editions, graded)
    if group_problem() is None:  # the machine has control groups: the holder was in its own
        assert graded["held_groups"], "no held process was seen"
        assert all("/curvgrade/sandbox-" in group for group in graded["held_groups"]), graded[
            "held_groups"
        ]
