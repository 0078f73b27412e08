"""Growth laws of a measure against depth L, and the summaries of tidy records that use them.

- :func:`fit_power_law`  value ≈ C · L^p: least squares of log value on log L (slope = p).
- :func:`fit_exponential`  value ≈ C · a^L: least squares of log value on L (a = growth factor
  per layer).
- :func:`growth_laws`  the power law of one metric per group of records (regime, model, phase).
- :func:`median_of`  the median of one field over the records matching some keys (over seeds).

Every fit uses every (depth, value) pair it is given (all seeds, not their means) and reports
the coefficient of determination r² on the log scale; values must be finite and > 0.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence

import numpy as np

__all__ = ["fit_exponential", "fit_power_law", "growth_laws", "median_of"]


def _least_squares(x: Sequence[float], y: Sequence[float]) -> tuple[float, float, float]:
    """Slope, intercept and r² of the least-squares line y ≈ slope·x + intercept."""
    xs, ys = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    slope, intercept = np.polyfit(xs, ys, 1)
    residual = float(((ys - (slope * xs + intercept)) ** 2).sum())
    total = float(((ys - ys.mean()) ** 2).sum())
    r_squared = 1.0 - residual / total if total > 0 else 1.0
    return float(slope), float(intercept), r_squared


def _check_fit_data(depths, values, *, positive_depths: bool) -> tuple[list[float], list[float]]:
    depths, values = [float(d) for d in depths], [float(v) for v in values]
    if len(depths) != len(values) or len(set(depths)) < 2:
        raise ValueError(
            f"depths, values: expected equal lengths and at least 2 distinct depths, got "
            f"{len(depths)} depths ({len(set(depths))} distinct) and {len(values)} values"
        )
    if any(not (math.isfinite(v) and v > 0) for v in values):
        raise ValueError("values: a growth law needs finite values > 0 (a flat map has none)")
    if positive_depths and any(not d > 0 for d in depths):
        raise ValueError("depths: a power law needs depths > 0")
    return depths, values


def fit_power_law(depths: Sequence[float], values: Sequence[float]) -> dict:
    """Fit value ≈ C · L^p by least squares of log value on log L: p, C and r² (log scale).

    Every (depth, value) pair counts (pass all seeds).  ValueError for values ≤ 0.

    >>> law = fit_power_law([1, 2, 4, 8], [3.0, 12.0, 48.0, 192.0])
    >>> round(law["exponent"], 12), round(law["prefactor"], 12), round(law["r_squared"], 12)
    (2.0, 3.0, 1.0)
    """
    depths, values = _check_fit_data(depths, values, positive_depths=True)
    slope, intercept, r_squared = _least_squares(
        [math.log(d) for d in depths], [math.log(v) for v in values]
    )
    return {"exponent": slope, "prefactor": math.exp(intercept), "r_squared": r_squared}


def fit_exponential(depths: Sequence[float], values: Sequence[float]) -> dict:
    """Fit value ≈ C · a^L by least squares of log value on L: growth factor a per layer, r².

    >>> law = fit_exponential([1, 2, 3], [2.0, 4.0, 8.0])
    >>> round(law["growth_factor"], 12), round(law["prefactor"], 12), round(law["r_squared"], 12)
    (2.0, 1.0, 1.0)
    """
    depths, values = _check_fit_data(depths, values, positive_depths=False)
    slope, intercept, r_squared = _least_squares(depths, [math.log(v) for v in values])
    return {
        "growth_factor": math.exp(slope),
        "prefactor": math.exp(intercept),
        "r_squared": r_squared,
    }


def growth_laws(
    records: Iterable[dict],
    metric: str = "curvature_total_abs",
    by: Sequence[str] = ("regime", "model", "phase"),
    *,
    flat_tolerance: float = 1e-9,
) -> list[dict]:
    """The power law of ``metric`` against depth per group of ``by``, one tidy row per group.

    Row: the group keys, ``metric``, ``n`` (runs), ``depths``, ``means`` (mean over seeds per
    depth), ``increasing`` (the means strictly increase with depth), ``flat`` (every value below
    ``flat_tolerance``) and the :func:`fit_power_law` of all (depth, value) pairs; when the
    group is flat, or has a value ≤ 0 (a signed metric), ``exponent``, ``prefactor`` and
    ``r_squared`` are None.

    >>> rows = growth_laws([{"g": "a", "depth": d, "m": 5.0 * d} for d in (1, 2, 4)], "m", ["g"])
    >>> rows[0]["increasing"], round(rows[0]["exponent"], 12)
    (True, 1.0)
    """
    groups: dict[tuple, list[dict]] = {}
    for record in records:
        if record.get(metric) is not None:
            groups.setdefault(tuple(record[key] for key in by), []).append(record)
    rows = []
    for key, members in groups.items():
        depths = sorted({r["depth"] for r in members})
        means = [statistics.fmean(r[metric] for r in members if r["depth"] == d) for d in depths]
        flat = all(abs(r[metric]) < flat_tolerance for r in members)
        row = {
            **dict(zip(by, key, strict=True)),
            "metric": metric,
            "n": len(members),
            "depths": depths,
            "means": means,
            "increasing": all(b > a for a, b in zip(means, means[1:], strict=False)),
            "flat": flat,
        }
        positive = all(r[metric] > 0 for r in members)
        if flat or not positive or len(depths) < 2:
            row.update(exponent=None, prefactor=None, r_squared=None)
        else:
            row.update(fit_power_law([r["depth"] for r in members], [r[metric] for r in members]))
        rows.append(row)
    return rows


def median_of(records: Iterable[dict], name: str, **where) -> float:
    """The median of ``name`` over the records whose fields equal ``where`` (e.g. over seeds).

    >>> rows = [{"depth": 1, "seed": s, "v": float(s)} for s in range(3)]
    >>> median_of(rows, "v", depth=1)
    1.0
    """
    values = [r[name] for r in records if all(r.get(key) == value for key, value in where.items())]
    if not values:
        raise ValueError(f"where: no record has {where!r}")
    if any(v is None for v in values):
        raise ValueError(f"{name}: missing in some records with {where!r}")
    return float(statistics.median(values))
