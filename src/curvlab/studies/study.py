"""The one shape of every study, and the one driver that runs any of them.

A study is a value, :class:`Study`, that says

- its ``scales`` (the sizes it runs at; their settings live in :mod:`curvlab.studies.protocol`
  or beside the study) and how a scale and the caller's overrides become one checked
  configuration (``configure``);
- the **cells** that configuration asks for (``cells``): batches (:class:`Cells`), each a
  module-level function that measures one cell and the cells' configurations, every one a
  JSON value, so that a cell is cached under its configuration and its code;
- how the cells' results are **analysed** into a :class:`~curvlab.studies.result.StudyResult`
  (``analyse``);
- what the command line adds: its options (:class:`Argument`, each one override), what it
  prints of a result (``report``) and, where a run is long, an estimate of its time printed
  before it starts (``estimate``).

:func:`run_study` is the driver::

    config  = study.configure(scale, **overrides)         # once, checked
    batches = study.cells(config, context)                 # context: scale, device, options
    results = [cached_map(b.measure, b.configs, ...) for b in batches]
    result  = study.analyse(config, results, context)      # a StudyResult
    + meta: scale, device, jobs, cores, the study's code version, seconds

The cells missing from the run cache are computed by worker processes
(:func:`curvlab.studies.pool.cached_map`, each cell's key computed once); a batch that is not
``cached`` is measured in this process, unkeyed (a benchmark; a measure that caches what it
makes itself).  How a study runs (device, cache folder, refresh, progress bar, workers) is one
value, :class:`Options`; what it computes is its configuration.  A chapter runs a study as
the command line does, so that both read the same cached cells::

    result = run_study(REPRODUCE, "small", BOOK_OPTIONS)
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import torch
from tqdm.auto import tqdm

from curvlab.models.training import resolve_device
from curvlab.studies.cache import code_version
from curvlab.studies.pool import cached_map, resolve_jobs
from curvlab.studies.result import StudyResult

__all__ = [
    "BOOK_OPTIONS",
    "Argument",
    "Cells",
    "Context",
    "Options",
    "Study",
    "interval_text",
    "name_list",
    "number_or_na",
    "positive_int",
    "run_study",
    "seed_range",
]


@dataclass(frozen=True)
class Options:
    """How a study runs, not what it computes: ``device`` ("auto": CUDA when present, else
    the CPU; "cpu"; "cuda"; "cuda:N"), ``directory`` (the run cache: None for $CURVLAB_CACHE
    or the repository's ``.curvlab-cache/``), ``refresh`` (recompute cached cells),
    ``progress`` (progress bars) and ``jobs`` (worker processes for the missing cells; None:
    $CURVLAB_JOBS, else 1).  Only the device enters the cells' configurations.

    >>> Options(device="cpu", progress=False).jobs is None
    True
    >>> Options(refresh="yes")
    Traceback (most recent call last):
    ...
    ValueError: refresh: expected True or False, got 'yes'
    """

    device: str = "auto"
    directory: str | os.PathLike | None = None
    refresh: bool = False
    progress: bool = True
    jobs: int | None = None

    def __post_init__(self):
        resolve_device(self.device)  # a bad device is refused here, naming it
        if self.directory is not None and not isinstance(self.directory, str | os.PathLike):
            raise ValueError(f"directory: expected a path or None, got {self.directory!r}")
        for name in ("refresh", "progress"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name}: expected True or False, got {getattr(self, name)!r}")
        if self.jobs is not None:
            resolve_jobs(self.jobs)


BOOK_OPTIONS = Options(device="cpu", progress=False)
"""The options the chapters run their studies with: on the CPU (so that their cells' keys are
those `make studies` computed, ``--device cpu``), without a progress bar on the page."""


@dataclass(frozen=True)
class Context:
    """What the driver passes to a study's ``cells`` and ``analyse``: the ``scale``, the
    resolved ``device`` name and the run's :class:`Options`."""

    scale: str
    device: str
    options: Options


@dataclass(frozen=True)
class Cells:
    """One batch of a study's cells: ``measure`` (a module-level function of one cell's
    configuration, returning a JSON value) and the ``configs`` it is applied to, under the
    cache ``name`` (also the progress bar's label, counting ``unit`` with ``label(config)``
    of the last one done).  ``cached=False``: measured here, not through the run cache;
    ``parallel=False``: in this process, whatever the options' ``jobs``; ``entry``: the
    curvlab module whose code the results depend on (default: the module of ``measure``)."""

    name: str
    measure: Callable
    configs: Sequence
    unit: str = "cell"
    label: Callable | None = None
    cached: bool = True
    parallel: bool = True
    entry: str | None = None

    def __post_init__(self):
        if not callable(self.measure):
            raise ValueError(f"measure: expected a function of one cell, got {self.measure!r}")
        object.__setattr__(self, "configs", tuple(self.configs))


@dataclass(frozen=True)
class Argument:
    """A study's own command-line option: ``flag`` ("--seeds") sets the override
    ``override`` to ``convert(value)``, the value parsed by ``parse`` (argparse's ``type``;
    ``nargs`` as argparse's)."""

    flag: str
    override: str
    help: str
    parse: Callable = int
    convert: Callable = None
    nargs: str | None = None

    def __post_init__(self):
        if self.convert is None:
            object.__setattr__(self, "convert", _unchanged)


def _unchanged(value):
    return value


def positive_int(text: str) -> int:
    """A command-line value that must be a positive integer (argparse's ``type``).

    >>> positive_int("3")
    3
    >>> positive_int("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a positive integer, got 0
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def number_or_na(value, spec: str) -> str:
    """``value`` formatted by ``spec``, or "n/a" where a claim has none (an interval not given
    at few seeds, an mde of a spread that is zero): for a study's report.

    >>> number_or_na(0.25, "+.4g"), number_or_na(None, "+.4g")
    ('+0.25', 'n/a')
    """
    return "n/a" if value is None else format(value, spec)


def interval_text(claim: dict, spec: str) -> str:
    """A claim's effect and interval, as ``+e [+lo, +hi]`` (:func:`number_or_na` each).

    >>> interval_text({"effect": 0.5, "ci_low": None, "ci_high": None}, "+.2f")
    '+0.50 [n/a, n/a]'
    """
    low, high = number_or_na(claim["ci_low"], spec), number_or_na(claim["ci_high"], spec)
    return f"{number_or_na(claim['effect'], spec)} [{low}, {high}]"


def seed_range(count: int) -> list[int]:
    """``--seeds N``: the seeds 0, 1, ..., N − 1.

    >>> seed_range(3)
    [0, 1, 2]
    """
    return list(range(count))


def name_list(choices) -> Callable[[str], list[str]]:
    """A command-line value that is a comma-separated list of names from ``choices``
    (argparse's ``type``).

    >>> name_list(("a", "b"))("b, a")
    ['b', 'a']
    """

    def parse(text: str) -> list[str]:
        names = [name.strip() for name in text.split(",") if name.strip()]
        if not names or any(name not in choices for name in names):
            raise argparse.ArgumentTypeError(
                f"expected names from {', '.join(choices)}, got {text!r}"
            )
        return names

    return parse


@dataclass(frozen=True)
class Study:
    """A study (module docstring): its name and help line, its scales, ``configure(scale,
    **overrides) -> config``, ``cells(config, context) -> [Cells, ...]`` and
    ``analyse(config, results, context) -> StudyResult`` (``results``: one list per batch,
    in the order of its configs); the command line's ``arguments``, ``report(result) ->
    lines`` and ``estimate(config) -> seconds`` (on one core, from an empty cache).
    ``single_thread``: the cells computed here run on one torch thread on the CPU (matrices
    too small to gain from intra-op threads; a worker process has one thread anyway);
    ``caches``: whether it keeps anything in the run cache, ``parallel``: whether its cells
    go to worker processes (the command line offers ``--cache-dir``/``--refresh`` and
    ``--jobs`` accordingly); ``entry``: the module whose code version the meta names (default:
    the module of ``analyse``)."""

    name: str
    help: str
    scales: Sequence[str]
    configure: Callable[..., dict]
    cells: Callable[[dict, Context], list]
    analyse: Callable[[dict, list, Context], StudyResult]
    arguments: tuple[Argument, ...] = ()
    report: Callable[[StudyResult], list[str]] | None = None
    estimate: Callable[[dict], float] | None = None
    single_thread: bool = False
    caches: bool = True
    parallel: bool = True
    entry: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "scales", tuple(self.scales))
        object.__setattr__(self, "arguments", tuple(self.arguments))

    @property
    def module(self) -> str:
        """The curvlab module whose code version the result's meta names: ``entry``, else the
        module defining the study's ``analyse``."""
        return self.entry or self.analyse.__module__


def _measure_batch(batch: Cells, context: Context, parallel: bool) -> list:
    options = context.options
    if not batch.cached:
        bar = tqdm(batch.configs, desc=batch.name, unit=batch.unit, disable=not options.progress)
        return [batch.measure(config) for config in bar]
    return cached_map(
        batch.measure,
        batch.configs,
        name=batch.name,
        entry=batch.entry,
        directory=options.directory,
        refresh=options.refresh,
        jobs=options.jobs if batch.parallel and parallel else 1,
        progress=options.progress,
        unit=batch.unit,
        label=batch.label,
    )


def run_study(
    study: Study, scale: str = "small", options: Options | None = None, **overrides
) -> StudyResult:
    """Run ``study`` at ``scale`` with ``overrides`` of its settings (module docstring): its
    :class:`~curvlab.studies.result.StudyResult`, whose ``meta`` also holds ``scale``,
    ``device``, ``jobs``, ``cpu_count``, ``code_version`` (of the study's module),
    ``cells_seconds`` (computing or reading the cells) and ``seconds`` (the whole run).

    A bad scale or setting is refused before any cell runs (ValueError naming it).
    """
    if not isinstance(study, Study):
        raise ValueError(f"study: expected a Study, got {type(study).__name__}")
    options = Options() if options is None else options
    if not isinstance(options, Options):
        raise ValueError(f"options: expected an Options, got {type(options).__name__}")
    if scale not in study.scales:
        raise ValueError(f"scale: expected one of {study.scales}, got {scale!r}")
    start = time.perf_counter()
    config = study.configure(scale, **overrides)
    context = Context(scale=scale, device=resolve_device(options.device), options=options)
    if options.progress and study.estimate is not None:
        minutes = study.estimate(config) / 60
        tqdm.write(
            f"{study.name} ({scale}): about {minutes:.0f} min on one core from an empty cache",
            file=sys.stderr,
        )
    threads = torch.get_num_threads()
    if study.single_thread and context.device == "cpu":
        torch.set_num_threads(1)
    try:
        batches = study.cells(config, context)
        results = [_measure_batch(batch, context, study.parallel) for batch in batches]
    finally:
        torch.set_num_threads(threads)
    cells_seconds = time.perf_counter() - start
    result = study.analyse(config, results, context)
    meta = {
        **result.meta,
        "scale": scale,
        "device": context.device,
        "jobs": resolve_jobs(options.jobs),
        "cpu_count": os.cpu_count(),
        "code_version": code_version(study.module),
        "cells_seconds": cells_seconds,
        "seconds": time.perf_counter() - start,
    }
    return replace(result, meta=meta)
