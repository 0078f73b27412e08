"""The sandbox a submission runs in: bubblewrap namespaces, an unprivileged user, rlimits.

:func:`sandbox_command` wraps the runner in ``bwrap`` (Debian package ``bubblewrap``):

- a new mount namespace whose root holds only ``/usr``, ``/etc``, the Python installation, the
  virtual environment, the grader and the packages the chapters import (:data:`LIBRARIES`,
  located without being imported), all read-only; a fresh ``/proc``, a minimal ``/dev``, an
  empty ``/tmp`` and the submission's own working folder (the only writable place): no
  chapter source, instructor edition, bundle, other submission or grade output;
- new PID, network, IPC and UTS namespaces: no network, no signal to any process outside, and
  when the runner ends (or is killed) the kernel kills every process it started, detached ones
  included;
- the user ``nobody`` (uid 65534, via ``setpriv``), no capabilities, no new privileges;
- resource limits set before ``bwrap`` starts: address space, CPU seconds, processes of the
  sandbox user, file size;
- with a study cache (``grade --study-cache DIR``), that folder read-only at
  :data:`STUDY_CACHE` and ``CURVLAB_CACHE`` pointing at it: the chapter's given code reads the
  studies the instructor ran once instead of training them again, and nothing in the sandbox
  can write there. Without one, ``CURVLAB_CACHE`` is an empty folder in the private ``/tmp``.

When bubblewrap is missing or cannot create namespaces, :func:`sandbox_problem` says why, and
grading refuses to run unless told ``unsafe`` (then only the rlimits and a process group apply).
"""

from __future__ import annotations

import importlib.util
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

SANDBOX_UID = 65534
HOME = "/home/student"
STUDY_CACHE = "/studies"  # where a study cache is mounted (read-only) in the sandbox
LIBRARIES = ("curvlab",)  # packages the chapters import, readable in the sandbox


@dataclass(frozen=True)
class Limits:
    """Resource limits of one submission's processes."""

    memory_bytes: int = 8 * 1024**3
    cpu_seconds: int = 900
    processes: int = 1024
    file_bytes: int = 200 * 1024**2

    def apply(self) -> None:
        """Set these limits on the calling process (a ``preexec_fn``)."""
        os.setsid()
        for limit, value in (
            (resource.RLIMIT_AS, self.memory_bytes),
            (resource.RLIMIT_CPU, self.cpu_seconds),
            (resource.RLIMIT_NPROC, self.processes),
            (resource.RLIMIT_FSIZE, self.file_bytes),
            (resource.RLIMIT_CORE, 0),
        ):
            resource.setrlimit(limit, (value, value))

    def apply_to_checker(self) -> None:
        """Set the memory, CPU and file-size limits on the checker (a ``preexec_fn``): the
        process that decodes answers and runs the checks cannot outgrow them."""
        os.setsid()
        for limit, value in (
            (resource.RLIMIT_AS, self.memory_bytes),
            (resource.RLIMIT_CPU, self.cpu_seconds),
            (resource.RLIMIT_FSIZE, self.file_bytes),
            (resource.RLIMIT_CORE, 0),
        ):
            resource.setrlimit(limit, (value, value))


def _read_only_roots() -> list[str]:
    """Folders the kernel needs to read: the Python installation, the venv, the grader (the
    runner is one of its modules) and the libraries."""
    roots = {
        os.path.realpath(sys.base_prefix),
        os.path.realpath(sys.prefix),
        str(Path(__file__).resolve().parent.parent),
    }
    for library in LIBRARIES:
        spec = importlib.util.find_spec(library)
        if spec is not None and spec.origin is not None:
            roots.add(str(Path(spec.origin).resolve().parent.parent))
    kept = []
    for root in sorted(roots):
        if root.startswith("/usr/") or root == "/usr":
            continue
        if not any(root.startswith(other + "/") for other in roots if other != root):
            kept.append(root)
    return kept


def environment(token: str, study_cache: str | None = None) -> dict[str, str]:
    """The environment of the sandboxed runner (nothing inherited from the grader).

    >>> environment("t")["CURVLAB_CACHE"], environment("t", STUDY_CACHE)["CURVLAB_CACHE"]
    ('/tmp/curvlab-cache', '/studies')
    """
    return {
        "CURVLAB_CACHE": study_cache or "/tmp/curvlab-cache",
        "PATH": f"{os.path.dirname(sys.executable)}:/usr/bin:/bin",
        "HOME": HOME,
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": "/tmp",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "CURVLAB_SANDBOX": token,
    }


def sandbox_command(
    workdir: Path, token: str, argv: list[str], study_cache: Path | None = None
) -> list[str]:
    """The ``bwrap`` command line running ``argv`` as ``nobody`` in ``workdir`` (see module);
    ``study_cache``, a folder, is mounted read-only at :data:`STUDY_CACHE`."""
    command = [
        "bwrap",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
        "--ro-bind",
        "/usr",
        "/usr",
        "--ro-bind",
        "/etc",
        "/etc",
    ]
    for name in ("bin", "lib", "lib64", "sbin"):
        target = Path("/") / name
        if target.is_symlink():
            command += ["--symlink", os.readlink(target), str(target)]
        elif target.is_dir():
            command += ["--ro-bind", str(target), str(target)]
    # The private /tmp comes before the read-only roots: a checkout under /tmp stays visible.
    command += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    roots = _read_only_roots()
    parents = sorted({str(p) for root in [*roots, HOME] for p in Path(root).parents} - {"/"})
    for parent in parents:  # folders bwrap would otherwise create unreadable (mode 0700)
        command += ["--perms", "0755", "--dir", parent]
    for root in roots:
        command += ["--ro-bind", root, root]
    command += ["--bind", str(workdir), HOME, "--chdir", HOME]
    if study_cache is not None:
        command += ["--ro-bind", str(Path(study_cache).resolve()), STUDY_CACHE]
    cache = STUDY_CACHE if study_cache is not None else None
    for key, value in environment(token, cache).items():
        command += ["--setenv", key, value]
    command += [
        "setpriv",
        f"--reuid={SANDBOX_UID}",
        f"--regid={SANDBOX_UID}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
        *argv,
    ]
    return command


_PROBLEM: list[str | None] = []


def sandbox_problem() -> str | None:
    """Why submissions cannot be sandboxed here, or ``None`` when they can (tried once)."""
    if _PROBLEM:
        return _PROBLEM[0]
    problem = None
    if os.geteuid() != 0:
        problem = "the grader must run as root to switch the kernel to the user nobody"
    elif shutil.which("bwrap") is None or shutil.which("setpriv") is None:
        problem = "bubblewrap is not installed (Debian: apt-get install -y bubblewrap)"
    else:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="curvlab-sandbox-probe-") as folder:
            os.chown(folder, SANDBOX_UID, SANDBOX_UID)
            command = sandbox_command(Path(folder), "probe", [sys.executable, "-c", "print(1)"])
            try:
                done = subprocess.run(command, capture_output=True, text=True, timeout=60)
                if done.returncode != 0 or done.stdout.strip() != "1":
                    problem = f"bwrap could not start a sandbox: {done.stderr.strip()[:300]}"
            except (OSError, subprocess.TimeoutExpired) as error:
                problem = f"bwrap could not start a sandbox: {error}"
    _PROBLEM.append(problem)
    return problem


def processes_with_token(token: str) -> list[int]:
    """PIDs of live processes whose environment carries ``CURVLAB_SANDBOX=token``."""
    marker = f"CURVLAB_SANDBOX={token}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def kill_everything(process: subprocess.Popen, token: str) -> list[int]:
    """Kill the sandbox's process group, then every process carrying its token.

    Returns the PIDs that were still alive after the sandbox's own process had ended (none when
    the namespaces did their job); they are killed too.
    """
    for _ in range(2):
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
    leftovers = processes_with_token(token)
    for _ in range(30):  # processes the namespace teardown is still killing
        if not leftovers:
            break
        time.sleep(0.1)
        leftovers = processes_with_token(token)
    survivors = leftovers
    for _ in range(50):
        if not survivors:
            break
        for pid in survivors:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.1)
        survivors = processes_with_token(token)
    return leftovers
