"""2. The chapters executed side by side.

Before Sphinx reads the chapters, those whose outputs the execution cache lacks are executed
``CURVLAB_BOOK_JOBS`` at a time (default: one per core; 1 leaves every execution to myst-nb, one
at a time), each in its own kernel, by jupyter-cache's own ``single_nb_execution`` on the
notebook myst-nb reads (same working folder, timeout and waits), and cached; myst-nb then finds
them in the cache. A chapter that fails there is not cached and not executed again in the same
build (a second run could hide the failure of a flaky cell): myst-nb reports that execution's
failure, with its outputs and traceback, as it reports its own.

jupyter-cache's own parallel executor (``local-parallel``, ``JupyterExecutorLocalMproc``) cannot
replace this: it opens ``multiprocessing.Pool()`` with one process per CPU of the machine and
no way to ask for fewer (so no ``CURVLAB_BOOK_JOBS``), and for a failed notebook it keeps only
the traceback, in its project table, which myst-nb never reads: myst-nb would miss the cache and
execute the chapter a second time, the failure's outputs lost.
"""

from __future__ import annotations

import datetime
import os
import re
from pathlib import Path, PurePosixPath

import nbformat
from sphinx.util import logging

from .patience import patient_waits

LOGGER = logging.getLogger(__name__)
JOBS_VARIABLE = "CURVLAB_BOOK_JOBS"


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

    patient_waits()
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
    time, and cache them (module docstring)."""
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
