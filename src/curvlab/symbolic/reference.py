"""A timed cross-check with ``sympy.diffgeom``, run in a child process under a wall-clock limit.

``sympy.diffgeom`` computes the Riemann tensor of a metric written as a sum of tensor products
of base one-forms, without simplifying.  On large symbolic metrics it can run for a very long
time, so :func:`diffgeom_riemann_timed` runs it in a separate process and stops it after
``timeout`` seconds: a claim such as "diffgeom did not finish" then rests on a measurement.

The metric must be written in ``coord_functions()`` of the chart, not in plain Symbols: with
plain Symbols ``diffgeom`` treats the coefficients as constants and returns zeros without a
warning.  This module does that substitution.
"""

from __future__ import annotations

import multiprocessing as mp
import queue as queue_module
import time
from dataclasses import dataclass

import sympy as sp

from curvlab import arguments

__all__ = ["DiffgeomTiming", "diffgeom_riemann_timed"]

_STARTUP_SECONDS = 120.0  # a spawned child re-imports SymPy; on a loaded machine that is slow


@dataclass(frozen=True)
class DiffgeomTiming:
    """Outcome of one timed ``diffgeom`` run.

    ``finished``: whether it returned within the limit; ``seconds``: the wall time used (the
    limit when it did not finish); ``components``: the raw Riemann components Rᵃ_bcd as a
    nested list of SymPy expressions in the original coordinates (None if not finished).
    """

    finished: bool
    seconds: float
    timeout: float
    components: list | None


def _diffgeom_riemann(metric_text: str, coords_text: str, started=None):
    from sympy.diffgeom import (
        CoordSystem,
        Manifold,
        Patch,
        TensorProduct,
        metric_to_Riemann_components,
    )

    if started is not None:
        started()
    metric = sp.sympify(metric_text)
    coords = list(sp.sympify(coords_text))
    k = len(coords)
    chart = CoordSystem("C", Patch("P", Manifold("M", k)), coords)
    functions, forms = chart.coord_functions(), chart.base_oneforms()
    on_chart = dict(zip(coords, functions, strict=True))
    form = sum(
        metric[i, j].subs(on_chart, simultaneous=True) * TensorProduct(forms[i], forms[j])
        for i in range(k)
        for j in range(k)
    )
    back = dict(zip(functions, coords, strict=True))
    components = metric_to_Riemann_components(form)
    return sp.Array(components).subs(back).tolist()


def _child(queue, metric_text, coords_text):
    clock = {}

    def started():
        clock["start"] = time.perf_counter()
        queue.put("started")

    components = _diffgeom_riemann(metric_text, coords_text, started)
    queue.put((time.perf_counter() - clock["start"], sp.srepr(components)))


def diffgeom_riemann_timed(metric, coords, timeout: float = 10.0) -> DiffgeomTiming:
    """Riemann components of ``metric`` in ``coords`` by ``sympy.diffgeom``, at most ``timeout`` s.

    ``metric``: a k×k SymPy Matrix in the Symbols ``coords``.  Runs in a child process (spawned,
    so it does not inherit the caller's state) and terminates it ``timeout`` seconds after it
    has imported ``sympy.diffgeom``: ``seconds`` excludes the process start-up.

    >>> t = sp.Symbol("t", positive=True)
    >>> run = diffgeom_riemann_timed(sp.diag(1, t**2), [sp.Symbol("s", real=True), t], 60)
    >>> run.finished, sp.simplify(run.components[0][1][0][1])
    (True, 0)
    """
    matrix = sp.Matrix(metric)
    symbols = list(coords)
    if not symbols or not all(isinstance(c, sp.Symbol) for c in symbols):
        raise TypeError(f"coords: expected a nonempty sequence of SymPy Symbols, got {coords!r}")
    if matrix.shape != (len(symbols), len(symbols)):
        raise ValueError(
            f"metric: expected shape ({len(symbols)}, {len(symbols)}) for coords {symbols}, "
            f"got {matrix.shape}"
        )
    what = "a positive number of seconds"
    arguments.number("timeout", timeout, low=0, low_open=True, finite=False, expected=what)
    context = mp.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=_child, args=(queue, sp.srepr(matrix), sp.srepr(symbols)))
    process.start()
    seconds, text = None, None
    try:
        if queue.get(timeout=_STARTUP_SECONDS) == "started":
            seconds, text = queue.get(timeout=timeout)
    except queue_module.Empty:  # no answer within the limit
        pass
    finally:
        if process.is_alive():
            process.terminate()
        process.join()
    if text is None or seconds > timeout:
        return DiffgeomTiming(False, float(timeout), float(timeout), None)
    return DiffgeomTiming(True, float(seconds), float(timeout), sp.sympify(text))
