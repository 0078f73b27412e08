"""Sphinx hooks for the curvlab site (loaded from _config.yml: sphinx.local_extensions).

1. An honest execution cache. jupyter-cache keys a notebook on its own code only, so a change to
   the library a chapter imports would leave the site showing outputs of code that no longer
   exists. Here the cache is keyed by a digest of the library sources and the pins
   (``curvlab_library_paths``: ``src/curvlab/**``, ``pyproject.toml``, ``requirements.txt``):
   myst-nb's cache lives in ``_build/.jupyter_cache/<digest>/``, and when the digest changes every
   chapter that imports the library (``curvlab_library_modules``; also the grader ``curvgrade``,
   whose page grades chapters that import the library) is read again, so it misses the new cache
   and executes. The grader's own sources (``src/curvgrade``) are not in the digest. An edit to
   one chapter re-executes that chapter only (jupyter-cache matches the others). A chapter
   whose execution failed is read again on the next build, so a failure cannot be hidden by a
   second run. The last few digests' caches are kept (reverting a library change finds its
   outputs again); older ones are deleted. The page of a chapter whose
   execution failed is deleted at the end of the build (with its notebook download), so that no
   reader takes a traceback for the chapter; `make book` also removes its target and Sphinx's
   saved environment after a failed build (Makefile), so the next build runs again.
2. The chapters executed side by side. Before Sphinx reads the chapters, those whose outputs
   the execution cache lacks are executed ``CURVLAB_BOOK_JOBS`` at a time (default: one per
   core; 1 leaves every execution to myst-nb, one at a time), each in its own kernel, by
   jupyter-cache's own ``single_nb_execution`` on the notebook myst-nb reads (same working
   folder, timeout and waits), and cached; myst-nb then finds them in the cache. A chapter
   that fails there is not cached and not executed again in the same build (a second run
   could hide the failure of a flaky cell): myst-nb reports that execution's failure, with
   its outputs and traceback, as it reports its own.
3. Patience under load. The per-cell timeout (``execute.timeout``) guards against hangs, not
   against a busy machine: ``CURVLAB_CELL_TIMEOUT=<seconds>`` overrides it for one build. The
   kernel's start-up wait (nbclient: 60 s) and the wait for a cell's last outputs after its reply
   (nbclient: 4 s, after which the outputs still to come are dropped with only a log line) are
   lengthened, and an output that is still missing then fails the chapter instead of leaving a
   page without its figure.
4. Repository and launch buttons only for a real repository: ``repository.url`` in _config.yml
   (empty by default). While it is empty no launch, repository or issue button is shown; once
   set, the Binder button opens the chapter's MyST source (jupytext opens it as a notebook) and
   the repository button links to it.
5. The download button always offers the executed notebook (``.ipynb``, with its outputs),
   written into the site's ``_sources/`` at build time: it is a local file of the site and works
   offline. (The theme only does this when a launch button is configured, and copies the
   notebook myst-nb wrote, which has no outputs when they came from the cache.)
6. With Sphinx 7.4, the inline ``<script>`` bodies that sphinx-thebe and sphinx-togglebutton
   register after the builder starts are written twice into every page (once held with filename
   None, once with filename "", so Sphinx's own de-duplication misses them). The second
   ``const THEBE_JS_URL = ...`` then throws "Identifier 'THEBE_JS_URL' has already been declared"
   in the browser console of every page. Each page keeps the first copy of each script.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import os
import re
import shutil
from pathlib import Path, PurePosixPath

import nbformat
from sphinx.util import logging

LOGGER = logging.getLogger(__name__)
DEFAULT_LIBRARY_PATHS = ["src/curvlab", "pyproject.toml", "requirements.txt"]
DEFAULT_LIBRARY_MODULES = ["curvlab", "curvgrade"]
CACHES_KEPT = 3
TIMEOUT_VARIABLE = "CURVLAB_CELL_TIMEOUT"
JOBS_VARIABLE = "CURVLAB_BOOK_JOBS"
# nbclient's waits that a busy machine can outlast (its defaults: 60 s and 4 s).
KERNEL_STARTUP_SECONDS = 600
LAST_OUTPUT_SECONDS = 120
# Not a repository of this book: jupyter-book's default (the key left out) and the old placeholder.
NOT_A_REPOSITORY = re.compile(r"github\.com/(executablebooks/jupyter-book|OWNER/)")
SKIPPED_PARTS = {"__pycache__", ".ipynb_checkpoints", ".pytest_cache", ".ruff_cache"}


# ---------------------------------------------------------------------------------------------
# 1. The execution cache, keyed by the library


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


def _imports_library(path: Path, modules: list[str]) -> bool:
    names = "|".join(re.escape(module) for module in modules)
    pattern = rf"^\s*(?:from|import)\s+(?:{names})\b|-m\s+(?:{names})\b"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return True
    return re.search(pattern, text, re.MULTILINE) is not None


def compute_digest(app, config) -> None:
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
            if _imports_library(Path(env.doc2path(docname)), modules)
        }
        if previous is not None:
            LOGGER.info(f"curvlab: the library changed; {len(stale)} chapters are read again")
    env.curvlab_library_digest = digest
    return sorted(stale - set(added) - set(removed))


def _error_line(traceback: str | None) -> str:
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
            f" ({_error_line(data[doc]['exec_data'].get('traceback'))})"
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


# ---------------------------------------------------------------------------------------------
# 2. The chapters executed side by side


def book_jobs(environ=os.environ) -> int:
    """Kernels at a time: ``$CURVLAB_BOOK_JOBS``, else one per core this process may use."""
    from curvlab.studies.pool import available_cores, resolve_jobs

    return resolve_jobs(None, environ, variable=JOBS_VARIABLE, default=available_cores())


def _notebook_to_execute(env, docname: str, cache):
    """(path, notebook, its execution settings, read format) of a chapter whose outputs the
    cache lacks, read as myst-nb reads it (myst_nb.sphinx_.Parser.parse); None otherwise."""
    from myst_nb.core.nb_to_tokens import nb_node_to_dict
    from myst_nb.core.read import create_nb_reader

    path = Path(env.doc2path(docname))
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8")
    nb_config = env.mystnb_config
    reader = create_nb_reader(str(path), env.myst_config, nb_config, text)
    if reader is None:
        return None
    notebook = reader.read(text)
    kernel = notebook.metadata.get("kernelspec", {}).get("name")
    if kernel is not None:
        for pattern, alias in (nb_config.kernel_rgx_aliases or {}).items():
            if re.fullmatch(pattern, kernel):
                notebook.metadata["kernelspec"]["name"] = alias
                break
    if nb_config.metadata_key in notebook.metadata:
        overrides = nb_node_to_dict(notebook.metadata[nb_config.metadata_key])
        overrides.pop("output_folder", None)
        try:
            nb_config = nb_config.copy(**overrides)
        except Exception:  # myst-nb warns about it when it reads the chapter
            return None
    posix = PurePosixPath(path.as_posix())
    if any(posix.match(pattern) for pattern in nb_config.execution_excludepatterns or ()):
        return None
    if nb_config.execution_in_temp:
        return None  # a temporary folder each: left to myst-nb
    try:
        cache.match_cache_notebook(notebook)
        return None  # cached already
    except KeyError:
        pass
    settings = {
        "cwd": str(path.parent),
        "allow_errors": nb_config.execution_allow_errors,
        "timeout": nb_config.execution_timeout,
    }
    return path, notebook, settings, reader.read_fmt


def _execute(text: str, settings: dict, threads: int) -> tuple[str, str | None, float]:
    """In a worker process: execute the notebook ``text`` as myst-nb's cache client does, its
    kernel computing on ``threads`` threads (unless the caller set OMP_NUM_THREADS).

    Returns (the executed notebook, None or the error's name and traceback, seconds)."""
    from jupyter_cache.executors.utils import single_nb_execution

    _patient_waits()
    for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # the kernel's share of the cores
        os.environ.setdefault(variable, str(threads))
    notebook = nbformat.reads(text, as_version=4)
    result = single_nb_execution(notebook, meta_override=True, **settings)
    error = None
    if result.err is not None:
        error = {"name": type(result.err).__name__, "traceback": result.exc_string}
    return nbformat.writes(notebook), error, result.time


FAILED_SIDE_BY_SIDE: dict[str, dict] = {}
"""The chapters whose side-by-side execution failed in this build, by path: the error's name
and traceback, the executed notebook (outputs up to the failure) and the seconds."""


def _report_failures_side_by_side() -> None:
    """Make myst-nb's cache client report a side-by-side failure instead of executing again.

    The failure is reported as myst-nb reports its own (myst_nb.core.execute.cache): the
    outputs up to the failing cell, the warning "Executing notebook failed: <error>" (with the
    traceback when ``nb_execution_show_tb``), and execution data with ``succeeded`` False.
    """
    from myst_nb.core.execute.base import ExecutionError
    from myst_nb.core.execute.cache import NotebookClientCache

    original = NotebookClientCache.start_client
    if getattr(original, "curvlab_side_by_side", False):
        return

    def start_client(self):
        failure = FAILED_SIDE_BY_SIDE.pop(str(self.path), None) if self.path else None
        if failure is None:
            return original(self)
        for cell, executed in zip(self.notebook.cells, failure["notebook"].cells, strict=True):
            if cell.cell_type == "code":
                cell.outputs = executed.get("outputs", [])
                cell.execution_count = executed.get("execution_count")
        message = f"Executing notebook failed: {failure['name']}"
        if self.nb_config.execution_show_tb:
            message += f"\n{failure['traceback']}"
        self.logger.warning(message, subtype="exec")
        if self.nb_config.execution_raise_on_error:
            raise ExecutionError(str(self.path))
        self.exec_metadata = {
            "mtime": datetime.datetime.now().timestamp(),
            "runtime": failure["seconds"],
            "method": self.nb_config.execution_mode,
            "succeeded": False,
            "error": failure["name"],
            "traceback": failure["traceback"],
        }

    start_client.curvlab_side_by_side = True
    NotebookClientCache.start_client = start_client


def execute_side_by_side(app, env, docnames) -> None:
    """Execute the chapters about to be read whose outputs the cache lacks, ``book_jobs()`` at a
    time, and cache them (module docstring, 2)."""
    FAILED_SIDE_BY_SIDE.clear()  # nothing of an earlier build in this process is reported
    nb_config = getattr(env, "mystnb_config", None)
    jobs = book_jobs()
    if nb_config is None or nb_config.execution_mode != "cache" or jobs < 2:
        return
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from multiprocessing import get_context

    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn
    from jupyter_cache.cache.db import NbProjectRecord

    from curvlab.studies.pool import available_cores

    _report_failures_side_by_side()
    cache = get_cache(nb_config.execution_cache_path)
    todo = [t for t in (_notebook_to_execute(env, d, cache) for d in sorted(docnames)) if t]
    if len(todo) < 2:
        return  # nothing to share out: myst-nb executes it
    workers = min(jobs, len(todo))
    threads = max(1, available_cores() // workers)  # two kernels on two cores: one each
    LOGGER.info(f"curvlab: executing {len(todo)} chapters, {workers} at a time")
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
        futures = {
            pool.submit(_execute, nbformat.writes(notebook), settings, threads): (path, read_fmt)
            for path, notebook, settings, read_fmt in todo
        }
        for future in as_completed(futures):
            path, read_fmt = futures[future]
            name = path.relative_to(app.srcdir)
            text, error, seconds = future.result()
            if error is not None:
                executed = nbformat.reads(text, as_version=4)
                FAILED_SIDE_BY_SIDE[str(path)] = {**error, "notebook": executed, "seconds": seconds}
                LOGGER.info(f"curvlab: {name} failed ({seconds:.1f} s, side by side)")
                continue
            staged = cache.add_nb_to_project(str(path), read_data=read_fmt)
            NbProjectRecord.remove_tracebacks([staged.pk], cache.db)
            cache.cache_notebook_bundle(
                CacheBundleIn(
                    nbformat.reads(text, as_version=4),
                    staged.uri,
                    data={"execution_seconds": seconds},
                ),
                check_validity=False,
                overwrite=True,
            )
            LOGGER.info(f"curvlab: executed {name} in {seconds:.1f} s (side by side)")


# ---------------------------------------------------------------------------------------------
# 3. Patience under load


def cell_timeout(configured: int | None, environ=os.environ) -> int | None:
    """The per-cell timeout: ``$CURVLAB_CELL_TIMEOUT`` if set, else ``configured``.

    ``-1`` or ``0`` mean no limit (as in myst-nb); anything but an integer is refused.
    """
    value = environ.get(TIMEOUT_VARIABLE, "").strip()
    if not value:
        return configured
    try:
        seconds = int(value)
    except ValueError:
        raise ValueError(f"{TIMEOUT_VARIABLE}: expected whole seconds, got {value!r}") from None
    return seconds if seconds > 0 else -1


def patient_execution(app) -> None:
    """Apply ``$CURVLAB_CELL_TIMEOUT`` and lengthen nbclient's start-up and output waits."""
    mystnb_config = getattr(app.env, "mystnb_config", None)
    if mystnb_config is not None:
        timeout = cell_timeout(mystnb_config.execution_timeout)
        if timeout != mystnb_config.execution_timeout:
            app.env.mystnb_config = mystnb_config.copy(execution_timeout=timeout)
            LOGGER.info(f"curvlab: per-cell timeout {timeout} s (${TIMEOUT_VARIABLE})")
    _patient_waits()


def _patient_waits() -> None:
    """Lengthen nbclient's start-up and output waits (jupyter-cache's ``executenb``)."""
    from jupyter_cache.executors import utils

    if not getattr(utils.executenb, "curvlab_patient", False):
        patient = functools.partial(
            utils.executenb,
            startup_timeout=KERNEL_STARTUP_SECONDS,
            iopub_timeout=LAST_OUTPUT_SECONDS,
            raise_on_iopub_timeout=True,
        )
        patient.curvlab_patient = True
        utils.executenb = patient


# ---------------------------------------------------------------------------------------------
# 4. Buttons: only for a configured repository


def configure_repository_buttons(app, config) -> None:
    options = dict(config.html_theme_options or {})
    repository = (options.get("repository_url") or "").strip()
    if repository and not NOT_A_REPOSITORY.search(repository):
        options["repository_url"] = repository
        options.setdefault("use_repository_button", True)
        launch = dict(options.get("launch_buttons") or {})
        launch.pop("colab_url", None)  # Colab opens .ipynb files only; the sources are .md
        options["launch_buttons"] = launch
    else:
        options.pop("repository_url", None)
        options["launch_buttons"] = {}
        for button in ("use_repository_button", "use_issues_button", "use_edit_page_button"):
            options[button] = False
    config.html_theme_options = options


# ---------------------------------------------------------------------------------------------
# 5. The executed notebook as a download of the site


def offer_notebook_download(app, pagename, templatename, context, doctree) -> None:
    if "kernelspec" not in app.env.metadata.get(pagename, {}):
        return
    executed = Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.ipynb"
    if not executed.is_file():
        return
    target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(nbformat.writes(_with_outputs(app, executed)), encoding="utf-8")
    context["ipynb_source"] = f"{pagename}.ipynb"


def _with_outputs(app, path: Path):
    """The notebook myst-nb wrote for a page, with the outputs of its execution.

    myst-nb writes ``jupyter_execute/<page>.ipynb`` from the notebook it read, so when the
    outputs came from the cache the file has none: they are merged back from the cache here.
    """
    notebook = nbformat.read(path, as_version=4)
    mystnb_config = getattr(app.env, "mystnb_config", None)
    if mystnb_config is None or mystnb_config.execution_mode != "cache":
        return notebook
    from jupyter_cache import get_cache

    try:
        _, notebook = get_cache(mystnb_config.execution_cache_path).merge_match_into_notebook(
            notebook
        )
    except KeyError:  # not in the cache (its execution failed): the notebook as it is
        pass
    return notebook


# ---------------------------------------------------------------------------------------------
# 6. Scripts written twice


def _script_key(script) -> tuple:
    attributes = getattr(script, "attributes", {}) or {}
    # The two copies differ only in their filename: None for one, "" for the other.
    return (getattr(script, "filename", script) or "", tuple(sorted(attributes.items())))


def drop_duplicate_scripts(app, pagename, templatename, context, doctree) -> None:
    """Remove repeated entries of the page's script list, keeping the first of each."""
    scripts = context.get("script_files")
    if not scripts:
        return
    seen: set[tuple] = set()
    unique = []
    for script in scripts:
        key = _script_key(script)
        if key not in seen:
            seen.add(key)
            unique.append(script)
    scripts[:] = unique


def setup(app):
    app.add_config_value("curvlab_library_paths", DEFAULT_LIBRARY_PATHS, "", list)
    app.add_config_value("curvlab_library_modules", DEFAULT_LIBRARY_MODULES, "", list)
    app.connect("config-inited", compute_digest)
    app.connect("config-inited", configure_repository_buttons)
    app.connect("builder-inited", use_library_keyed_cache, priority=900)  # after myst-nb's
    app.connect("builder-inited", patient_execution, priority=910)
    app.connect("env-get-outdated", outdated_docs)
    app.connect("env-before-read-docs", execute_side_by_side)
    app.connect("build-finished", report_failed_chapters)
    app.connect("html-page-context", offer_notebook_download, priority=400)  # before the theme
    app.connect("html-page-context", drop_duplicate_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
