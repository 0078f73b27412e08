"""Reading a returned file: only a regular file, within a size and a cell limit, into a notebook.

A submission is whatever a student put in the folder: a symbolic link to the grader's files, a
named pipe that never ends, a folder named ``*.ipynb``, a file of gigabytes, JSON nested a
million deep, a flood of empty cells. :func:`read_submission` reads it without following a link
or waiting on a pipe, refuses it before reading more than the limit allows, and marks the
result ``unreadable`` with the reason; nothing in the file is run here.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path

import nbformat

from .results import SubmissionResult

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


def submission_files(root: Path, ignored=(".ipynb_checkpoints",)) -> list[Path]:
    """Every entry under ``root`` that gets a row: each file, notebook or not, and each entry
    that is no file a student wrote (a symbolic link, to a file or to a folder, a pipe, a
    device, a folder named ``*.ipynb``), which grading refuses. Folders are looked into, never
    through a symbolic link; an entry named in ``ignored`` is left out (a Jupyter checkpoint
    folder by default).

    >>> import os, tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> (root / "carol").mkdir(); (root / "x.ipynb").mkdir()
    >>> for name in ("alice.ipynb", "carol/tiny.ipynb", "x.ipynb/y.ipynb"):
    ...     _ = (root / name).write_text("{}")
    >>> os.symlink(root / "alice.ipynb", root / "bob.ipynb")
    >>> os.symlink(root / "carol", root / "dave")
    >>> [path.relative_to(root).as_posix() for path in submission_files(root)]
    ['alice.ipynb', 'bob.ipynb', 'carol/tiny.ipynb', 'dave', 'x.ipynb']
    """
    found, folders = [], [Path(root)]
    while folders:
        with os.scandir(folders.pop()) as entries:
            for entry in entries:
                if entry.name in ignored:
                    continue
                path = Path(entry.path)
                if entry.is_dir(follow_symlinks=False) and path.suffix.lower() != ".ipynb":
                    folders.append(path)
                else:
                    found.append(path)
    return sorted(found)
