"""The book's experiments, as functions that run a whole study and return tidy records.

- :mod:`curvlab.studies.cache`  the on-disk JSON cache keyed by configuration and by the
  code of every module the study imports (:func:`~curvlab.studies.cache.cached`).
- :mod:`curvlab.studies.result`  :class:`~curvlab.studies.result.StudyResult`, what a study
  returns: its tables and meta, frozen, written to a folder and read back by its methods.
- :mod:`curvlab.studies.reproduce`  the Part II reproduction (``python -m curvlab
  reproduce``): gated against ungated attention on linear and nonlinear tasks, over seeds,
  with the geometric claims T1 to T5 of :mod:`~curvlab.studies.geometric_claims`.
- :mod:`curvlab.studies.depth`  curvature against depth of attention stacks, with
  :mod:`~curvlab.analysis.growth` (growth-law fits), :mod:`~curvlab.studies.graph_law`
  (the structured regime in closed form) and :mod:`~curvlab.studies.poole` (Poole et al.'s
  random tanh anchor).
- :mod:`curvlab.measurement.sheets`  the curvature measures of a representation sheet,
  checked on closed-form surfaces and against their step limit by
  :mod:`~curvlab.studies.measure_checks`.
- the reproduction's parts: :mod:`~curvlab.studies.cells` (one model's ensemble, trained
  and measured), :mod:`~curvlab.models.ensemble` (the vectorised ensemble) and its
  benchmark :mod:`~curvlab.studies.ensemble_benchmark`, the adaptive integrals' benchmark
  :mod:`~curvlab.studies.adaptive_benchmark`, :mod:`~curvlab.models.convergence`,
  :mod:`~curvlab.studies.pilot`, :mod:`~curvlab.studies.sweep`,
  :mod:`~curvlab.analysis.empirical` (claims and their verdicts),
  :mod:`~curvlab.plotting.tables` (the results in words, for the chapters),
  :mod:`~curvlab.studies.boundaries` (one run retrained) and
  :mod:`~curvlab.plotting.experiments`.

A record is a flat dict of plain values (str, int, float, None), one per run, so a list of
records is a table: :func:`write_csv` writes it.  Submodules are imported on demand.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from pathlib import Path

__all__ = ["write_csv"]


def write_csv(records: Iterable[dict], path) -> Path:
    """Write tidy records as a CSV table (columns: the union of keys, first-seen order).

    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d:
    ...     out = write_csv([{"a": 1, "b": 2.5}, {"a": 2, "c": None}], pathlib.Path(d) / "t.csv")
    ...     print(out.read_text().strip())
    a,b,c
    1,2.5,
    2,,
    """
    records = list(records)
    columns: dict[str, None] = {}
    for record in records:
        if not isinstance(record, dict):
            raise TypeError(f"records: expected dicts, got {type(record)!r}")
        columns.update(dict.fromkeys(record))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(columns), lineterminator="\n")
        writer.writeheader()
        writer.writerows(records)
    return path
