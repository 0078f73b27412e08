"""The sandbox a submission runs in: bubblewrap namespaces, a user of its own, rlimits.

:func:`sandbox_command` wraps the runner in ``bwrap`` (Debian package ``bubblewrap``, 0.6 or
newer for ``--size``):

- a new mount namespace whose root holds only ``/usr``, ``/etc``, the Python installation, the
  virtual environment, the grader and the packages the chapters import (:data:`LIBRARIES`,
  located without being imported), all read-only; a fresh ``/proc`` and a minimal ``/dev``:
  no chapter source, instructor edition, bundle, other submission or grade output;
- one writable place, private to the sandbox and sized: a ``tmpfs`` of
  :attr:`Limits.disk_bytes` at ``/tmp``, holding the home :data:`HOME` (a link to
  ``/tmp/student``, the working folder). The working folder's files (the submission) are
  mounted there read-only. A student who fills it gets ``ENOSPC`` in their own sandbox;
  nothing on the grader's disk is written, and the storage is gone with the sandbox;
- new PID, network, IPC and UTS namespaces: no network, no signal to any process outside, and
  when the runner ends (or is killed) the kernel kills every process it started, detached ones
  included;
- a user of its own (via ``setpriv``): each running sandbox claims a uid of
  :data:`SANDBOX_UIDS` no other sandbox on the machine holds (:func:`claim_uid`, a lock file
  under :data:`UID_LOCKS`, so graders in separate processes never share one), and gives it
  back only once no process of that uid is left; no capabilities, no new privileges;
- resource limits set before ``bwrap`` starts: address space and file size per process, CPU
  seconds, and processes (threads included) of the sandbox's uid, that is of this sandbox
  alone: a student who starts as many processes as allowed stops only their own notebook;
- where control groups can be written, a control group of its own
  (:func:`curvgrade.cgroup.sandbox_group`, made by the grader): its processes together share
  :attr:`Limits.memory_bytes` and :attr:`Limits.processes`;
- with a study cache (``grade --study-cache DIR``), that folder read-only at
  :data:`STUDY_CACHE` and ``CURVLAB_CACHE`` pointing at it: the chapter's given code reads the
  studies the instructor ran once instead of training them again, and nothing in the sandbox
  can write there. Without one, ``CURVLAB_CACHE`` is an empty folder in the private ``/tmp``.

When bubblewrap is missing or cannot create namespaces, :func:`sandbox_problem` says why, and
grading refuses to run unless told ``unsafe`` (then only the rlimits and a process group apply).
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, fields
from pathlib import Path

# The uids of sandboxes, one per running sandbox: far above the users of a Debian system (below
# 60000, and nobody at 65534) and the subordinate ranges of rootless containers (from 100000).
SANDBOX_UIDS = range(1_900_000_000, 1_900_000_000 + 1024)
UID_LOCKS = Path("/run/curvgrade-sandbox-uids")  # one lock file per uid claimed
HOME = "/home/student"
SCRATCH = "/tmp"  # the sandbox's sized tmpfs; the home is a folder in it
STUDY_CACHE = "/studies"  # where a study cache is mounted (read-only) in the sandbox
LIBRARIES = ("curvlab",)  # packages the chapters import, readable in the sandbox


@dataclass(frozen=True)
class Limits:
    """Resource limits of one submission's sandbox.

    ``memory_bytes`` (address space), ``cpu_seconds`` and ``file_bytes`` bound each of its
    processes; ``processes`` bounds the processes and threads of its uid, which no other
    sandbox shares; ``disk_bytes`` is the size of its writable storage (home and ``/tmp``
    together, a tmpfs: it takes the grader's memory, not its disk, while the sandbox runs).
    """

    memory_bytes: int = 8 * 1024**3
    cpu_seconds: int = 900
    processes: int = 1024
    file_bytes: int = 200 * 1024**2
    disk_bytes: int = 512 * 1024**2

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{item.name}: expected a positive whole number, got {value!r}")

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
    workdir: Path,
    token: str,
    argv: list[str],
    study_cache: Path | None = None,
    *,
    uid: int,
    disk_bytes: int | None = None,
) -> list[str]:
    """The ``bwrap`` command line running ``argv`` as ``uid`` in ``workdir`` (see module).

    ``uid``, one of :data:`SANDBOX_UIDS`, is the sandbox's own (see :func:`claim_uid`);
    ``disk_bytes`` (default :attr:`Limits.disk_bytes`) sizes its writable storage, in which the
    files of ``workdir`` appear read-only; ``study_cache``, a folder, is mounted read-only at
    :data:`STUDY_CACHE`.
    """
    if isinstance(uid, bool) or not isinstance(uid, int) or uid not in SANDBOX_UIDS:
        raise ValueError(
            f"uid: expected a uid of SANDBOX_UIDS ({SANDBOX_UIDS.start}..{SANDBOX_UIDS.stop - 1}),"
            f" got {uid!r}"
        )
    disk_bytes = Limits.disk_bytes if disk_bytes is None else disk_bytes
    if isinstance(disk_bytes, bool) or not isinstance(disk_bytes, int) or disk_bytes <= 0:
        raise ValueError(f"disk_bytes: expected a positive whole number, got {disk_bytes!r}")
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
    # It is the sandbox's only writable storage (sticky and open to all, as a /tmp is: only
    # the sandbox's uid lives in it), sized by the kernel.
    command += ["--proc", "/proc", "--dev", "/dev"]
    command += ["--perms", "1777", "--size", str(disk_bytes), "--tmpfs", SCRATCH]
    roots = _read_only_roots()
    parents = sorted({str(p) for root in [*roots, HOME] for p in Path(root).parents} - {"/"})
    for parent in parents:  # folders bwrap would otherwise create unreadable (mode 0700)
        command += ["--perms", "0755", "--dir", parent]
    for root in roots:
        command += ["--ro-bind", root, root]
    # The home, a folder of the sized /tmp (created by root: open to all, the uid is alone).
    home = f"{SCRATCH}/student"
    command += ["--perms", "0777", "--dir", home]
    for path in sorted(Path(workdir).iterdir()):
        if path.is_file() and not path.is_symlink():
            command += ["--ro-bind", str(path.resolve()), f"{home}/{path.name}"]
    command += ["--symlink", home, HOME, "--chdir", HOME]
    if study_cache is not None:
        command += ["--ro-bind", str(Path(study_cache).resolve()), STUDY_CACHE]
    cache = STUDY_CACHE if study_cache is not None else None
    for key, value in environment(token, cache).items():
        command += ["--setenv", key, value]
    command += [
        "setpriv",
        f"--reuid={uid}",
        f"--regid={uid}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
        *argv,
    ]
    return command


def _real_uid(pid: int | str, zombies: bool) -> int | None:
    """The real uid of a process from /proc (its owner there can be root: a process that made
    itself undumpable), or ``None`` when it is gone, or a zombie and ``zombies`` is false."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    uid = state = None
    for line in status.splitlines():
        if line.startswith("State:"):
            state = line.split()[1]
        elif line.startswith("Uid:"):
            uid = int(line.split()[1])
            break
    if not zombies and state in ("Z", "X"):
        return None
    return uid


def processes_of_uid(uid: int, zombies: bool = False) -> list[int]:
    """PIDs of processes whose real uid is ``uid``: with a sandbox uid, that sandbox's processes
    (no process can change its uid in there); zombies only when ``zombies`` is true."""
    return [
        int(entry.name)
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit() and _real_uid(entry.name, zombies) == uid
    ]


def _kill_uid(pid: int, uid: int) -> None:
    """SIGKILL ``pid`` if it still runs as ``uid`` (through a pidfd where the kernel has them,
    so that a PID reused in between is never hit)."""
    try:
        handle = os.pidfd_open(pid)
    except (AttributeError, OSError):
        handle = None
    try:
        if _real_uid(pid, zombies=False) != uid:
            return
        if handle is not None:
            signal.pidfd_send_signal(handle, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    finally:
        if handle is not None:
            os.close(handle)


class SandboxUser:
    """A uid of :data:`SANDBOX_UIDS` claimed by one sandbox (:func:`claim_uid`), held through
    a locked file under :data:`UID_LOCKS` until :meth:`release`."""

    def __init__(self, uid: int, lock: int):
        self.uid = uid
        self._lock = lock

    def release(self, wait: float = 10.0) -> list[int]:
        """Kill what is left of the uid's processes, then give the uid back once none is left
        (zombies included: they still count against the process limit until reaped).

        Returns the PIDs that had to be killed. A uid whose processes outlive ``wait`` seconds
        stays claimed as long as this grader runs, so that no later sandbox shares it.
        """
        if self._lock < 0:
            return []
        killed = processes_of_uid(self.uid)
        deadline = time.monotonic() + wait
        while pids := processes_of_uid(self.uid, zombies=True):
            if time.monotonic() > deadline:
                _STUCK.append(self)
                return killed
            for pid in pids:
                _kill_uid(pid, self.uid)
            time.sleep(0.05)
        lock, self._lock = self._lock, -1
        os.close(lock)  # the kernel drops the lock with the file's last descriptor
        return killed


_STUCK: list[SandboxUser] = []  # uids whose processes would not die: never given back


def claim_uid() -> SandboxUser:
    """Claim a uid of :data:`SANDBOX_UIDS` that no other sandbox on this machine holds and no
    process runs as.

    The claim is an exclusive ``flock`` on ``UID_LOCKS/<uid>``: the graders of one machine, in
    one process (``--jobs``) or several, never hold the same uid, and a grader that dies drops
    its claims with it. Raises :class:`RuntimeError` when every uid is taken.
    """
    UID_LOCKS.mkdir(mode=0o700, parents=True, exist_ok=True)
    for uid in SANDBOX_UIDS:
        lock = os.open(UID_LOCKS / str(uid), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(lock)
            continue
        if processes_of_uid(uid, zombies=True):  # left by a grader that was killed
            os.close(lock)
            continue
        return SandboxUser(uid, lock)
    raise RuntimeError(
        f"every sandbox uid ({len(SANDBOX_UIDS)}, see {UID_LOCKS}) is in use: grade with fewer "
        "--jobs"
    )


_PROBLEM: list[str | None] = []


def sandbox_problem() -> str | None:
    """Why submissions cannot be sandboxed here, or ``None`` when they can (tried once)."""
    if _PROBLEM:
        return _PROBLEM[0]
    problem = None
    if os.geteuid() != 0:
        problem = "the grader must run as root to switch the kernel to a sandbox user"
    elif shutil.which("bwrap") is None or shutil.which("setpriv") is None:
        problem = "bubblewrap is not installed (Debian: apt-get install -y bubblewrap)"
    else:
        # The probe writes in its home and reads it back: the sized tmpfs works.
        code = "open('probe', 'w').write('1'); print(open('probe').read())"
        try:
            user = claim_uid()
        except (OSError, RuntimeError) as error:
            problem = f"no sandbox uid could be claimed: {error}"
        else:
            try:
                with tempfile.TemporaryDirectory(prefix="curvlab-sandbox-probe-") as folder:
                    argv = [sys.executable, "-c", code]
                    command = sandbox_command(Path(folder), "probe", argv, uid=user.uid)
                    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
                    if done.returncode != 0 or done.stdout.strip() != "1":
                        problem = f"bwrap could not start a sandbox: {done.stderr.strip()[:300]}"
            except (OSError, subprocess.TimeoutExpired) as error:
                problem = f"bwrap could not start a sandbox: {error}"
            finally:
                user.release()
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


def kill_group(process: subprocess.Popen) -> None:
    """SIGKILL the process group (session) ``process`` leads and reap it; call it only before
    ``process`` is reaped, while its PID is still its own."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


def kill_everything(process: subprocess.Popen, token: str, uid: int | None = None) -> list[int]:
    """Kill the sandbox's process group, then every process carrying its token (and, given the
    sandbox's ``uid``, every process of that uid: a process can drop its token, not its uid).

    Returns the PIDs that were still alive after the sandbox's own process had ended (none when
    the namespaces did their job); they are killed too.
    """
    for _ in range(2):
        kill_group(process)

    def alive() -> list[int]:
        found = set(processes_with_token(token))
        if uid is not None:
            found.update(processes_of_uid(uid))
        return sorted(found)

    leftovers = alive()
    for _ in range(30):  # processes the namespace teardown is still killing
        if not leftovers:
            break
        time.sleep(0.1)
        leftovers = alive()
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
        survivors = alive()
    return leftovers
