"""A control group per sandbox: one memory and process budget for everything a submission runs.

A sandbox's resource limits (:class:`curvgrade.sandbox.Limits`) bound each of its processes
(address space) and its uid (processes); a student who starts many processes, each within its
own address-space limit, could still take the machine's memory together, and the kernel's
out-of-memory killer would then pick any process, a classmate's kernel or the grader
included. A control group bounds the sandbox as a whole: its processes share
``memory_bytes`` and ``processes``, and when they outgrow the memory the kernel kills one of
*them*.

:func:`sandbox_group` makes the group under the first hierarchy it can write:

- cgroup v2 (``/sys/fs/cgroup`` holding ``cgroup.controllers`` with ``memory`` and ``pids``
  enabled for its children): ``memory.max``, ``memory.swap.max`` and ``pids.max`` of one group;
- cgroup v1 (``/sys/fs/cgroup/memory`` and ``/sys/fs/cgroup/pids``): ``memory.limit_in_bytes``
  (and ``memory.memsw.limit_in_bytes`` where swap is accounted) and ``pids.max``.

Where neither can be written (no root, a container without them), it returns ``None`` and
the sandbox keeps its per-process and per-uid limits only; :func:`group_problem` says why.
The sandbox's first process joins the group before it starts the runner
(:meth:`SandboxGroup.join`, called in its ``preexec_fn``); every process it starts inherits it.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
PARENT = "curvgrade"  # the folder of the sandboxes' groups in each hierarchy


@dataclass
class SandboxGroup:
    """One sandbox's control group: the folders it was made in (one per hierarchy)."""

    folders: list[Path] = field(default_factory=list)

    def join(self) -> None:
        """Move the calling process into the group (a ``preexec_fn``: before ``exec``)."""
        for folder in self.folders:
            (folder / "cgroup.procs").write_text(str(os.getpid()))

    def processes(self) -> list[int]:
        """PIDs in the group now."""
        found: set[int] = set()
        for folder in self.folders:
            try:
                text = (folder / "cgroup.procs").read_text()
            except OSError:
                continue
            found.update(int(line) for line in text.split())
        return sorted(found)

    def remove(self, wait: float = 10.0) -> None:
        """Kill whatever is left in the group, then remove it."""
        deadline = time.monotonic() + wait
        while (pids := self.processes()) and time.monotonic() < deadline:
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(0.05)
        for folder in self.folders:
            try:
                folder.rmdir()
            except OSError:
                pass


def _write(path: Path, value: int | str) -> None:
    path.write_text(str(value))


def _v2_parent() -> Path | None:
    controllers = ROOT / "cgroup.controllers"
    if not controllers.is_file():
        return None
    if not {"memory", "pids"} <= set(controllers.read_text().split()):
        return None
    parent = ROOT / PARENT
    parent.mkdir(exist_ok=True)
    _write(ROOT / "cgroup.subtree_control", "+memory +pids")
    _write(parent / "cgroup.subtree_control", "+memory +pids")
    return parent


def _make_v2(name: str, memory_bytes: int, processes: int) -> SandboxGroup | None:
    parent = _v2_parent()
    if parent is None:
        return None
    folder = parent / name
    folder.mkdir()
    group = SandboxGroup([folder])
    try:
        _write(folder / "memory.max", memory_bytes)
        if (folder / "memory.swap.max").exists():
            _write(folder / "memory.swap.max", 0)
        _write(folder / "pids.max", processes)
    except OSError:
        group.remove()
        raise
    return group


def _make_v1(name: str, memory_bytes: int, processes: int) -> SandboxGroup | None:
    memory, pids = ROOT / "memory", ROOT / "pids"
    if not (memory / "cgroup.procs").is_file() or not (pids / "cgroup.procs").is_file():
        return None
    group = SandboxGroup()
    try:
        for hierarchy in (memory, pids):
            folder = hierarchy / PARENT / name
            folder.mkdir(parents=True)
            group.folders.append(folder)
        memory_folder, pids_folder = group.folders
        _write(memory_folder / "memory.limit_in_bytes", memory_bytes)
        swap = memory_folder / "memory.memsw.limit_in_bytes"
        if swap.exists():
            _write(swap, memory_bytes)
        _write(pids_folder / "pids.max", processes)
    except OSError:
        group.remove()
        raise
    return group


_PROBLEM: list[str | None] = []


def sandbox_group(name: str, memory_bytes: int, processes: int) -> SandboxGroup | None:
    """A new control group ``name`` whose processes share ``memory_bytes`` of memory and at
    most ``processes`` processes, or ``None`` where control groups cannot be written here
    (:func:`group_problem` says why).
    """
    if not name or "/" in name or name in (".", ".."):
        raise ValueError(f"name: expected a plain folder name, got {name!r}")
    for argument, value in (("memory_bytes", memory_bytes), ("processes", processes)):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{argument}: expected a positive whole number, got {value!r}")
    if _PROBLEM and _PROBLEM[0] is not None:
        return None
    errors = []
    for make in (_make_v2, _make_v1):
        try:
            group = make(name, memory_bytes, processes)
        except OSError as error:
            errors.append(f"{make.__name__[-2:]}: {error.strerror or error}")
            continue
        if group is not None:
            if not _PROBLEM:
                _PROBLEM.append(None)
            return group
    problem = "; ".join(errors) or "no writable cgroup v2 or v1 memory and pids hierarchy"
    if not _PROBLEM:
        _PROBLEM.append(problem)
    return None


def group_problem() -> str | None:
    """Why sandboxes get no control group here (after a first try), or ``None``."""
    return _PROBLEM[0] if _PROBLEM else None
