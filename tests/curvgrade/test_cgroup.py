"""A sandbox's control group bounds all its processes together: memory and process count.

Three processes that each hold 120 MiB fit in the machine and in each one's own limits, but
not in a group of 200 MiB: the kernel kills one of them, and only one of them. A group of 8
processes lets no ninth start. Skipped where control groups cannot be written (no root, no
v1 or v2 hierarchy with memory and pids); never in CI.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import pytest

from curvgrade.cgroup import group_problem, sandbox_group

HOLD = 120 * 1024**2

# Start three children that each hold HOLD bytes for two seconds; print how many finished.
THREE_HOLDERS = f"""
import subprocess, sys
code = (
    "import time; block = bytearray({HOLD}); "
    "block[::4096] = b'x' * len(block[::4096]); time.sleep(2)"
)
children = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(3)]
print(sum(child.wait() == 0 for child in children))
"""

NINE_SLEEPERS = """
import subprocess
started = 0
children = []
for _ in range(9):
    try:
        children.append(subprocess.Popen(["sleep", "5"]))
        started += 1
    except OSError:
        break
for child in children:
    child.kill()
print(started)
"""


def _group_or_skip(memory_bytes: int, processes: int):
    group = sandbox_group(f"test-{uuid.uuid4().hex[:12]}", memory_bytes, processes)
    if group is None:
        if os.environ.get("CI") and os.geteuid() == 0:
            pytest.fail(f"no control group in CI: {group_problem()}")
        pytest.skip(f"no control group here: {group_problem()}")
    return group


def _run(code: str, group=None) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=group.join if group is not None else None,
    )
    return done.stdout.strip()


def test_processes_of_a_group_share_its_memory():
    assert _run(THREE_HOLDERS) == "3"  # the machine and each process's limits hold all three
    group = _group_or_skip(200 * 1024**2, 64)
    try:
        finished = _run(THREE_HOLDERS, group)
    finally:
        group.remove()
    assert finished in ("1", "2", ""), finished  # the kernel killed the ones that did not fit


def test_a_group_caps_its_processes():
    group = _group_or_skip(1024**3, 8)
    try:
        started = int(_run(NINE_SLEEPERS, group))
    finally:
        group.remove()
    assert started < 9  # the python process counts too: at most 7 sleepers


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (("a/b", 1, 1), "name"),
        (("ok", 0, 1), "memory_bytes"),
        (("ok", 1, True), "processes"),
        (("..", 1, 1), "name"),
    ],
)
def test_bad_arguments_are_named(arguments, message):
    with pytest.raises(ValueError, match=message):
        sandbox_group(*arguments)
