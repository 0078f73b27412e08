"""1. An honest execution cache, keyed by the library.

jupyter-cache keys a notebook on its own code only, so a change to the library a chapter imports
would leave the site showing outputs of code that no longer exists. Here the cache is keyed by a
digest of the library sources and the pins (``curvlab_library_paths``: ``src/curvlab/**``,
``pyproject.toml``, ``requirements.txt``): myst-nb's cache lives in
``_build/.jupyter_cache/<digest>/``, and when the digest changes every chapter that imports the
library (``curvlab_library_modules``; also the grader ``curvgrade``, whose page grades chapters
that import the library) is read again, so it misses the new cache and executes. The grader's
own sources (``src/curvgrade``) are not in the digest. An edit to one chapter re-executes that
chapter only (jupyter-cache matches the others). A chapter whose execution failed is read again
on the next build, so a failure cannot be hidden by a second run. The last few digests' caches
are kept (reverting a library change finds its outputs again); older ones are deleted. The page
of a chapter whose execution failed is deleted at the end of the build (with its notebook
download), so that no reader takes a traceback for the chapter; `make book` also removes its
target and Sphinx's saved environment after a failed build (Makefile), so the next build runs
again.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

from sphinx.util import logging

LOGGER = logging.getLogger(__name__)
DEFAULT_LIBRARY_PATHS = ["src/curvlab", "pyproject.toml", "requirements.txt"]
DEFAULT_LIBRARY_MODULES = ["curvlab", "curvgrade"]
CACHES_KEPT = 3
SKIPPED_PARTS = {"__pycache__", ".ipynb_checkpoints", ".pytest_cache", ".ruff_cache"}


def library_digest(root: Path, paths: list[str]) -> str:
    """SHA-256 over the relative path and bytes of every file under ``paths`` (sorted).

    Byte-code and tool caches are skipped; a missing path counts as such, so creating it
    changes the digest too.
    """
    digest = hashlib.sha256()
    for entry in sorted(paths):
        base = root / entry
        if base.is_file():
            files = [base]
        elif base.is_dir():
            files = sorted(
                path
                for path in base.rglob("*")
                if path.is_file()
                and not SKIPPED_PARTS.intersection(path.relative_to(root).parts)
                and path.suffix != ".pyc"
                and not any(part.endswith(".egg-info") for part in path.parts)
            )
        else:
            digest.update(f"missing {entry}\0".encode())
            continue
        for path in files:
            digest.update(path.relative_to(root).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def imports_library(path: Path, modules: list[str]) -> bool:
    """True when the chapter at ``path`` imports (or runs ``-m``) one of ``modules``."""
    names = "|".join(re.escape(module) for module in modules)
    pattern = rf"^\s*(?:from|import)\s+(?:{names})\b|-m\s+(?:{names})\b"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return True
    return re.search(pattern, text, re.MULTILINE) is not None


def compute_digest(app, config) -> None:
    """Digest the library once per build, when the configuration is read."""
    app.curvlab_library_digest = library_digest(
        Path(app.srcdir), list(config.curvlab_library_paths)
    )


def use_library_keyed_cache(app) -> None:
    """Point myst-nb at ``_build/.jupyter_cache/<digest>`` (after myst-nb set its own path)."""
    mystnb_config = getattr(app.env, "mystnb_config", None)
    if mystnb_config is None or mystnb_config.execution_mode != "cache":
        return
    caches = Path(app.outdir).parent / ".jupyter_cache"
    key = app.curvlab_library_digest[:16]
    current = caches / key
    current.mkdir(parents=True, exist_ok=True)
    current.touch()  # its mtime says when it was last used
    others = [path for path in caches.iterdir() if path != current]
    keyed = sorted(
        (path for path in others if path.is_dir() and re.fullmatch(r"[0-9a-f]{16}", path.name)),
        key=lambda path: path.stat().st_mtime,
        reverse=True,
    )
    kept = set(keyed[: CACHES_KEPT - 1])
    for path in others:  # older digests, and a cache of the unkeyed layout
        if path not in kept:
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    app.env.mystnb_config = mystnb_config.copy(execution_cache_path=str(current))
    LOGGER.info(f"curvlab: library digest {key}; execution cache {current}")


def _failed_docs(env) -> set[str]:
    failed = set()
    for docname, data in getattr(env, "nb_metadata", {}).items():
        exec_data = data.get("exec_data") or {}
        if exec_data.get("succeeded") is False:
            failed.add(docname)
    return failed


def outdated_docs(app, env, added, changed, removed) -> list[str]:
    """Chapters to read again: those importing the library when it changed, and failed ones."""
    digest = app.curvlab_library_digest
    previous = getattr(env, "curvlab_library_digest", None)
    stale = set(_failed_docs(env))
    if previous != digest:
        modules = list(app.config.curvlab_library_modules)
        stale |= {
            docname
            for docname in env.found_docs
            if imports_library(Path(env.doc2path(docname)), modules)
        }
        if previous is not None:
            LOGGER.info(f"curvlab: the library changed; {len(stale)} chapters are read again")
    env.curvlab_library_digest = digest
    return sorted(stale - set(added) - set(removed))


def error_line(traceback: str | None) -> str:
    """The exception line of a cell's traceback, e.g. ``ImportError: broken``."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", traceback or "")
    lines = re.findall(
        r"^\s*(?:\w+\.)*(\w*(?:Error|Exception|Interrupt|Exit)\b.*)$", text, re.MULTILINE
    )
    return lines[-1].strip() if lines else "see the traceback above"


def report_failed_chapters(app, exception) -> None:
    """One warning naming every chapter whose execution failed (the build then fails, -W).

    The pages of those chapters are deleted: a page showing a failed cell's traceback (a timed
    out cell's KeyboardInterrupt, say) is never served as the chapter.
    """
    if not hasattr(app, "env"):
        return
    failed = sorted(_failed_docs(app.env))
    remove_failed_pages(app, failed)
    if failed and exception is None:
        data = app.env.nb_metadata
        chapters = ", ".join(
            f"{Path(app.env.doc2path(doc)).relative_to(app.srcdir)}"
            f" ({error_line(data[doc]['exec_data'].get('traceback'))})"
            for doc in failed
        )
        LOGGER.warning(f"curvlab: {len(failed)} chapter(s) failed to execute: {chapters}")


def remove_failed_pages(app, docnames: list[str]) -> list[Path]:
    """Delete the written page and the notebook download of each of ``docnames``."""
    builder = getattr(app, "builder", None)
    if builder is None or not hasattr(builder, "get_outfilename"):
        return []
    removed = []
    for docname in docnames:
        for path in (
            Path(builder.get_outfilename(docname)),
            Path(app.outdir) / "_sources" / f"{docname}.ipynb",
        ):
            if path.is_file():
                path.unlink()
                removed.append(path)
    if removed:
        LOGGER.info(f"curvlab: removed the pages of the failed chapters: {', '.join(docnames)}")
    return removed
