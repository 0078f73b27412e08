"""The study cache a class is graded with: prepared once, then read-only for every submission.

Some chapters train the studies they discuss (Part II: ``run_study(REPRODUCE, "small")``, the
pilot); ``curvlab`` caches each result on disk (``.curvlab-cache/`` or ``$CURVLAB_CACHE``,
keyed by the configuration and the source of the code). Grading such a chapter without that
cache would train everything again for every student, twice (the student's notebook, then the
checks).

- :func:`prepare` runs the chapter's given code once, outside any sandbox (it is the
  chapter's own code), with ``CURVLAB_CACHE`` set to the folder, and writes a stamp naming the
  chapter's source digest (``python -m curvgrade prepare-cache``). A cache filled by
  ``make book`` serves as well; the stamp only records that this chapter was run;
- :func:`readable_snapshot` gives the folder the sandbox mounts: the cache itself when the
  sandbox user can read all of it, else a world-readable copy made for this grading run
  (``curvlab`` writes its files with mode 0600, readable by their owner only);
- grading (``grade --study-cache DIR``) mounts it read-only in each sandbox and points the
  checks at it: a student cannot add, change or delete a study result there.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
import time
from pathlib import Path

STAMP_PREFIX = "curvgrade-prepared-"


def stamp_path(folder: str | Path, chapter: str) -> Path:
    """Where :func:`prepare` records that ``chapter`` was run into ``folder``."""
    return Path(folder) / f"{STAMP_PREFIX}{chapter}.json"


def prepare(bundle, folder: str | Path, *, echo=print) -> list[int]:
    """Run ``bundle``'s given code with ``CURVLAB_CACHE=folder``; returns the failing cells.

    Runs in this process (the chapter's own code, trusted). Writes the stamp when no cell
    failed.
    """
    from .shell import new_shell

    folder = Path(folder).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    saved = {key: os.environ.get(key) for key in ("CURVLAB_CACHE", "MPLBACKEND")}
    os.environ["CURVLAB_CACHE"] = str(folder)
    os.environ["MPLBACKEND"] = "Agg"
    failed: list[int] = []
    started = time.monotonic()
    try:
        shell = new_shell()
        for index, source in enumerate(bundle.given):
            result = shell.run_cell(source, store_history=False, silent=True)
            error = result.error_before_exec or result.error_in_exec
            if error is not None:
                failed.append(index)
                echo(f"given cell {index + 1}: {type(error).__name__}: {error}")
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    seconds = time.monotonic() - started
    if not failed:
        stamp = {"chapter": bundle.chapter, "source_sha256": bundle.source_sha256}
        stamp_path(folder, bundle.chapter).write_text(json.dumps(stamp) + "\n", encoding="utf-8")
    echo(f"{bundle.chapter}: given code run in {seconds:.0f} s, {len(failed)} cell(s) failed")
    return failed


def prepared_for(folder: str | Path, bundle) -> bool:
    """Whether :func:`prepare` ran ``bundle``'s chapter (this version of it) into ``folder``."""
    try:
        stamp = json.loads(stamp_path(folder, bundle.chapter).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(stamp, dict) and stamp.get("source_sha256") == bundle.source_sha256


def _world_readable(folder: Path) -> bool:
    for root, folders, files in os.walk(folder):
        for name in folders:
            mode = os.stat(os.path.join(root, name)).st_mode
            if mode & (stat.S_IROTH | stat.S_IXOTH) != (stat.S_IROTH | stat.S_IXOTH):
                return False
        for name in files:
            if not os.stat(os.path.join(root, name)).st_mode & stat.S_IROTH:
                return False
    mode = folder.stat().st_mode
    return mode & (stat.S_IROTH | stat.S_IXOTH) == (stat.S_IROTH | stat.S_IXOTH)


def readable_snapshot(folder: str | Path) -> tuple[Path, bool]:
    """The folder to mount for the sandbox user, and whether it is a copy (delete it after).

    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "study-1.json").write_text("{}")
    >>> os.chmod(folder / "study-1.json", 0o600)
    >>> copy, copied = readable_snapshot(folder)
    >>> copied, oct((copy / "study-1.json").stat().st_mode & 0o777)
    (True, '0o444')
    >>> shutil.rmtree(copy)
    """
    folder = Path(folder).resolve()
    if not folder.is_dir():
        raise ValueError(f"--study-cache: no folder {folder}")
    if _world_readable(folder) and all(
        os.stat(parent).st_mode & stat.S_IXOTH for parent in folder.parents
    ):
        return folder, False
    copy = Path(tempfile.mkdtemp(prefix="curvgrade-study-cache-"))
    shutil.copytree(folder, copy, dirs_exist_ok=True, symlinks=False)
    for root, folders, files in os.walk(copy):
        for name in files:
            os.chmod(os.path.join(root, name), 0o444)
        for name in folders:
            os.chmod(os.path.join(root, name), 0o555)
    os.chmod(copy, 0o555)
    return copy, True


def remove_snapshot(copy: Path) -> None:
    """Delete a copy made by :func:`readable_snapshot` (its folders are read-only)."""
    for root, folders, _ in os.walk(copy):
        for name in folders:
            os.chmod(os.path.join(root, name), 0o755)
    os.chmod(copy, 0o755)
    shutil.rmtree(copy, ignore_errors=True)
