"""Sandboxes graded side by side stay apart: a hostile notebook cannot hurt its classmates.

One grading run (the module fixture) grades two hostile notebooks of the fixture chapter and,
while they hold what they took, two honest right ones (``--jobs 2``, side by side). The
hostile ones strike as their kernels start and hold until their cell's time limit; the honest
ones are graded once both have struck (or after :data:`STRIKE_WAIT` seconds), so that they
always run beside what is held. The honest ones must keep full marks and the status ``ok``,
each hostile one earns at most what honest wrong work earns, no process of a sandbox uid
outlives grading and no file outside the output folder changes.

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
HOSTILE_CELL = 45  # seconds: longer than grading the two honest notebooks side by side
STRIKE_WAIT = 10  # seconds to wait for the hostile notebooks to strike before the honest ones
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
            memory = [line.split(":", 2)[2] for line in lines if ":memory:" in line]
            unified = [line[3:] for line in lines if line.startswith("0::")]
            groups.update(memory or unified)  # cgroup v1's memory group, else v2's
    return groups


@pytest.fixture(scope="module")
def graded(editions, tmp_path_factory):
    """One grading run: the disk filler and the process holder (wrong answers after their
    hostile cell), then, once both have struck (the holder's processes counted, the grader's
    small disk full or :data:`STRIKE_WAIT` s gone), ``b-right`` and ``c-right`` (right work
    that needs a thread) side by side while they hold; the scores by student, what changed
    outside the output, what outlived it."""
    root = tmp_path_factory.mktemp("isolation-run")
    grader_tmp = root / "grader-tmp"  # the grader's temporary folder: a tmpfs of HOST_TMP bytes
    grader_tmp.mkdir()
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={HOST_TMP}", "tmpfs", str(grader_tmp)], check=True
    )
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(tempfile, "tempdir", str(grader_tmp))
            found = _grade_beside_honest_work(editions, root, grader_tmp)
        found["grader_tmp_left"] = list(grader_tmp.iterdir())
        found["grader_tmp_used"] = shutil.disk_usage(grader_tmp).used
    finally:
        subprocess.run(["umount", "-l", str(grader_tmp)], check=False)
    return found


HOSTILE = {"a-disk-filler": DISK_FILLER, "a-process-holder": PROCESS_HOLDER}


def _grade_beside_honest_work(editions, root: Path, grader_tmp: Path) -> dict:
    submissions = root / "submissions"
    submissions.mkdir()
    bundle = Bundle.read(editions["bundle"])
    results: dict[str, object] = {}
    threads = []
    for name, hostile in HOSTILE.items():
        notebook = SAMPLES.filled(editions["student"], SAMPLES.WRONG)
        notebook.cells.insert(0, nbformat.v4.new_code_cell(hostile))  # strikes at kernel start
        path = root / f"{name}.ipynb"
        nbformat.write(notebook, path)

        def grade(path=path, name=name):
            results[name] = grade_notebook(bundle, path, timeout=150, cell_timeout=HOSTILE_CELL)

        threads.append(threading.Thread(target=grade))
    right = SAMPLES.filled(editions["student"], THREADED_RIGHT)
    for name in ("b-right", "c-right"):
        nbformat.write(right, submissions / f"{name}.ipynb")
    out = root / "grades" / "scores.csv"
    folders = (editions["root"] / "editions", submissions)
    before = _digests(*folders)
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + STRIKE_WAIT
    while time.monotonic() < deadline:
        disk_full = shutil.disk_usage(grader_tmp).free < HOST_TMP // 8
        if disk_full and _held_processes() > 900:
            break
        time.sleep(0.2)
    held_groups = _held_groups()
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
    still_holding = all(thread.is_alive() for thread in threads)
    for thread in threads:
        thread.join()
    assert status == 0
    left_running = _still_running()
    with out.open(encoding="utf-8") as handle:
        scores = {row["student"]: row for row in csv.DictReader(handle)}
    for name, result in results.items():
        scores[name] = {"total": result.total, "notes": result.notes}
    return {
        "scores": scores,
        "still_holding": still_holding,
        "held_groups": held_groups,
        "changed": before != _digests(*folders),
        "left_running": left_running,
    }


# Right work that needs a thread, as much honest work does (a progress bar, a pool of workers):
# threads count against the process limit.
THREADED_RIGHT = {
    **SAMPLES.RIGHT,
    SAMPLES.CAP: "from concurrent.futures import ThreadPoolExecutor\n"
    "with ThreadPoolExecutor(1) as pool:\n"
    "    cap_fraction = pool.submit(lambda: float((1 - np.cos(np.pi / 3)) / 2)).result()",
}


def test_honest_work_beside_the_hostile_notebooks_keeps_full_marks(editions, graded):
    assert graded["still_holding"], "the honest notebooks were not graded beside the hostile ones"
    for name in ("b-right", "c-right"):
        row = graded["scores"][name]
        assert (row["status"], float(row["total"])) == ("ok", editions["points"]), row["notes"]


@pytest.mark.parametrize("hostile", sorted(HOSTILE))
def test_a_hostile_notebook_earns_at_most_honest_wrong_work(editions, graded, hostile):
    row = graded["scores"][hostile]
    assert float(row["total"]) <= editions["honest_wrong"], row["notes"]


def test_nothing_outlives_grading_and_nothing_outside_changes(graded):
    assert graded["left_running"] == []
    assert not graded["changed"]


def test_the_disk_filler_filled_only_its_own_storage(graded):
    assert graded["grader_tmp_left"] == []  # nothing left on the grader's side
    assert graded["grader_tmp_used"] < HOST_TMP // 4


def test_the_process_holder_was_in_a_control_group_of_its_own(graded):
    if group_problem() is not None:
        pytest.skip(f"no control groups here: {group_problem()}")
    assert graded["held_groups"], "no held process was seen"
    assert all("/curvgrade/sandbox-" in group for group in graded["held_groups"]), graded[
        "held_groups"
    ]
