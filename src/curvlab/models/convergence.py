"""When is a trained run converged?  A criterion on what the analysis uses.

On separable data the cross-entropy of a classifier has no minimum: the logits grow without
bound and the loss keeps falling forever, so a plateau rule on the loss (the relative drop
over the last epochs, :func:`curvlab.models.ensemble.plateau`) fails on exactly the runs
that fit their data best.  The analysis never reads the loss: it reads accuracy and three
curvature measures of the representation (∫|K| dA, ρ, ρ⊥), all invariant under scaling the
representation.  A run is therefore called **converged** when those quantities have stopped
moving over the last :data:`WINDOW` share of its epochs, from epoch t₀ = E − ⌈WINDOW·E⌉ to
the last epoch E:

- training accuracy: max − min over epochs t₀..E at most :data:`ACCURACY_TOLERANCE`
  (one point, about one training point at n = 128);
- each curvature measure m: |log m(E) − log m(t₀)| at most :data:`LOG_TOLERANCE`
  (a change of at most about 10%); a measure that is undefined at both ends (no immersed node)
  counts as stable, one undefined at only one end as not.

The loss plateau is still recorded beside it (``plateau_change`` in ``runs.csv``).  The
pilot (:mod:`curvlab.studies.pilot`) reads only this criterion and the ungated baseline's
accuracy.  The criterion itself was introduced after a first 20-seed study's claims had been
seen (a change of the exploratory study, not a rule fixed in advance).

A run that fails the criterion is trained again from its initial weights with twice the
budget (the schedule spans the budget, so each rung is a run of its own), up the ladder
:func:`budgets` E, 2E, 4E, ... to a cap; the first budget at which it converges is the one
kept, and a run still unconverged at the cap is kept at the cap and reported as such
(:func:`curvlab.studies.cells.train_until_converged`).  The rule reads only the run's own
criterion: gated and ungated runs are treated alike, and no difference between them enters.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from curvlab import arguments

__all__ = [
    "ACCURACY_TOLERANCE",
    "LOG_TOLERANCE",
    "MEASURES",
    "WINDOW",
    "budgets",
    "converged",
    "window_start",
]

WINDOW = 0.2
"""The share of the epochs at the end over which stability is judged."""

ACCURACY_TOLERANCE = 0.01
"""Largest allowed spread (max − min) of the training accuracy over the window."""

LOG_TOLERANCE = 0.1
"""Largest allowed change of the log of each curvature measure over the window."""

MEASURES: tuple[str, ...] = ("curvature_total_abs", "rho", "rho_normal")
"""The measures whose stability the criterion checks (keys of the measure records)."""


def window_start(epochs: int) -> int:
    """t₀ = E − ⌈WINDOW·E⌉, the first epoch of the window (E >= 2).

    >>> window_start(400), window_start(5)
    (320, 4)
    """
    arguments.integer("epochs", epochs, 2)
    return epochs - max(1, math.ceil(WINDOW * epochs - 1e-9))


def budgets(epochs: int, doublings: int) -> list[int]:
    """The retraining ladder E, 2E, ..., 2ᵏE with k = ``doublings`` (E = ``epochs`` >= 2).

    >>> budgets(400, 3), budgets(400, 0)
    ([400, 800, 1600, 3200], [400])
    """
    arguments.integer("epochs", epochs, 2)
    arguments.integer("retrain_doublings", doublings, 0)
    return [epochs * 2**k for k in range(doublings + 1)]


def _log_change(start, end) -> float | None:
    """|log end − log start|; 0 when both undefined, inf when only one is."""
    defined = [v is not None and v > 0 for v in (start, end)]
    if not any(defined):
        return 0.0
    if not all(defined):
        return math.inf
    return abs(math.log(end) - math.log(start))


def converged(
    accuracy_window: Sequence[float], start: Mapping, end: Mapping
) -> tuple[bool, float, float]:
    """(converged, accuracy spread, largest log change) of one run.

    ``accuracy_window``: training accuracy at epochs t₀..E; ``start``, ``end``: the
    :data:`MEASURES` at t₀ and at E (floats, None where undefined).

    >>> converged([0.90, 0.91, 0.905], {"rho": 1.0}, {"rho": 1.05})[0]
    True
    >>> converged([0.80, 0.86], {"rho": 1.0}, {"rho": 1.0})[0]
    False
    >>> converged([1.0, 1.0], {"rho": 1.0}, {"rho": 2.0})[0]
    False
    """
    values = [float(a) for a in accuracy_window]
    if not values or not all(0.0 <= a <= 1.0 for a in values):
        raise ValueError("accuracy_window: expected a nonempty list of accuracies in [0, 1]")
    keys = [k for k in MEASURES if k in start or k in end]
    if not keys:
        raise ValueError(f"start, end: expected measures among {MEASURES}")
    spread = max(values) - min(values)
    change = max(_log_change(start.get(k), end.get(k)) for k in keys)
    ok = spread <= ACCURACY_TOLERANCE + 1e-12 and change <= LOG_TOLERANCE
    return bool(ok), spread, change
