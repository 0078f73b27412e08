"""What every figure accepts: arrays (NumPy, nested lists, PyTorch tensors) and tidy records.

- :func:`as_float_array`  any array-like as a float64 NumPy array (tensors detached, on the CPU).
- :func:`finite_grid`  a finite 2-D grid, of a given shape when asked.
- :func:`check_records`  a nonempty sequence of dicts, each with the keys a figure reads.

Each refusal is a ``TypeError`` or ``ValueError`` naming the argument and what was expected.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

__all__ = [
    "as_float_array",
    "check_records",
    "finite_grid",
]


def as_float_array(name: str, value: object) -> np.ndarray:
    """``value`` as a float64 NumPy array (tensors are detached and moved to the CPU)."""
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{name} must be an array of real numbers, got {type(value)}") from error
    return array


def finite_grid(name: str, value: object, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """``value`` as a finite 2-D float64 array, of ``shape`` when given."""
    array = as_float_array(name, value)
    if array.ndim != 2:
        raise ValueError(f"{name} must be a 2-D grid, got an array of shape {array.shape}")
    if shape is not None and array.shape != shape:
        raise ValueError(f"{name} must have the grid's shape {shape}, got {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must contain only finite numbers (found NaN or inf)")
    return array


def check_records(name: str, records: object, keys: tuple[str, ...]) -> list[Mapping]:
    """``records`` as a list of dicts, each holding ``keys``; errors name ``name``."""
    if isinstance(records, Mapping) or not hasattr(records, "__iter__"):
        raise TypeError(f"{name} must be a sequence of records (dicts), got {type(records)}")
    rows = list(records)
    if not rows:
        raise ValueError(f"{name} must contain at least one record")
    for row in rows:
        if not isinstance(row, Mapping):
            raise TypeError(f"{name} must contain dicts, got {type(row)}")
        missing = [k for k in keys if k not in row]
        if missing:
            raise ValueError(f"{name}: a record lacks {missing} (has {sorted(row)})")
    return rows
