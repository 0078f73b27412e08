"""A study's cached cells computed side by side in worker processes.

Every study is a list of independent cells (a model and depth, a dataset and model, a variant
and seed), each computed by a pure function of its configuration and cached on disk
(:func:`curvlab.studies.cache.cached`).  :func:`cached_map` is that loop::

    cached_map(fn, configs, name=...)  ==  [cached(fn, c, name=...) for c in configs]

with the cells missing from the cache computed by ``jobs`` worker processes at once (a
process pool, ``spawn`` start method), and a progress bar that counts cells as they finish.

**Threads.**  The workers share the cores: each computes on ``cores // workers`` torch threads
(at least one), so two workers on two cores compute on one thread each, because the models are
small and workers use the cores better than intra-op threads do (the timings:
docs/decisions/0005-one-thread-study-workers.md).  ``tests/studies/test_pool.py`` checks that
the workers' results equal those computed here, and that a cell gives the same numbers on one
and on two threads.  A cell computed here (``jobs=1``) uses the caller's threads.

``jobs``: the number of worker processes; ``None`` reads ``$CURVLAB_JOBS`` and is 1 when that is
unset (a study called from a notebook computes in its kernel; the command line,
``python -m curvlab <study> --jobs N``, defaults to one worker per core).  A CUDA study
computes in this process whatever ``jobs`` says (one device, one process).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

from tqdm.auto import tqdm

from curvlab import arguments
from curvlab.studies.cache import cache_path, compute_and_store, load_result

__all__ = ["JOBS_VARIABLE", "available_cores", "cached_map", "resolve_jobs"]

JOBS_VARIABLE = "CURVLAB_JOBS"
"""The environment variable giving the default number of worker processes."""


def available_cores() -> int:
    """The CPU cores this process may run on (its affinity mask where the system has one).

    >>> available_cores() >= 1
    True
    """
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def resolve_jobs(jobs=None, environ=os.environ, *, variable=JOBS_VARIABLE, default=1) -> int:
    """The number of worker processes: ``jobs``, else the environment's ``variable``
    (``$CURVLAB_JOBS``), else ``default``.

    >>> resolve_jobs(3), resolve_jobs(None, {}), resolve_jobs(None, {"CURVLAB_JOBS": "2"})
    (3, 1, 2)
    >>> resolve_jobs(0)
    Traceback (most recent call last):
    ...
    ValueError: jobs: expected a positive integer, got 0
    """
    if jobs is None:
        text = environ.get(variable, "").strip()
        if not text:
            return default
        if not (text.isascii() and text.isdigit()) or int(text) < 1:
            raise ValueError(f"{variable}: expected a positive integer, got {text!r}")
        return int(text)
    return arguments.integer("jobs", jobs, 1, expected="a positive integer")


def _set_threads(threads: int) -> None:
    """A worker's initializer: compute on ``threads`` torch threads."""
    import torch

    torch.set_num_threads(threads)


def _finished(bar, label, config) -> None:
    if label is not None:
        bar.set_postfix_str(label(config), refresh=False)
    bar.update()


def _on_gpu(config) -> bool:
    return isinstance(config, dict) and str(config.get("device", "cpu")).startswith("cuda")


def cached_map(
    fn: Callable,
    configs: Iterable,
    *,
    name: str,
    entry: str | None = None,
    directory=None,
    refresh: bool = False,
    jobs: int | None = None,
    progress: bool = True,
    desc: str | None = None,
    unit: str = "cell",
    label: Callable | None = None,
) -> list:
    """``[cached(fn, c, name=name, ...) for c in configs]``, the missing cells computed by
    ``jobs`` worker processes at once (module docstring).

    ``fn`` must be a module-level function (a worker imports it by name).  Results come back
    in the order of ``configs``; a cell that raises stops the map (the cells not yet started
    are cancelled) and its exception is raised here.  The progress bar (``desc``, ``unit``)
    counts the cells as they finish and shows ``label(config)`` of the last one.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     cached_map(lambda c: {"double": 2 * c["x"]}, [{"x": 1}, {"x": 2}], name="demo",
    ...                entry="curvlab.data.tasks", directory=d, progress=False)
    [{'double': 2}, {'double': 4}]
    """
    configs = list(configs)
    jobs = resolve_jobs(jobs)
    # each cell's key (its code's digest and its config) is computed once, here
    paths = [cache_path(fn, c, name=name, entry=entry, directory=directory) for c in configs]
    results: list = [None] * len(configs)
    missing = []
    for index, path in enumerate(paths):
        if refresh or not path.is_file():
            missing.append(index)
        else:
            results[index] = load_result(path)
    bar = tqdm(
        total=len(configs),
        initial=len(configs) - len(missing),
        desc=desc or name,
        unit=unit,
        disable=not progress,
    )
    workers = min(jobs, len(missing))
    if any(_on_gpu(configs[i]) for i in missing):
        workers = 1
    try:
        if workers <= 1:
            for index in missing:
                results[index] = compute_and_store(fn, configs[index], paths[index])
                _finished(bar, label, configs[index])
            return results
        context = multiprocessing.get_context("spawn")
        threads = max(1, available_cores() // workers)
        with ProcessPoolExecutor(
            workers, mp_context=context, initializer=_set_threads, initargs=(threads,)
        ) as pool:
            pending = {pool.submit(compute_and_store, fn, configs[i], paths[i]): i for i in missing}
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    index = pending.pop(future)
                    if future.exception() is not None:
                        for other in pending:
                            other.cancel()
                        raise future.exception()
                    results[index] = future.result()
                    _finished(bar, label, configs[index])
        return results
    finally:
        bar.close()
