"""Loss spikes of a training curve: steps whose loss jumps above the recent minimum.

A step t >= 1 is a spike when its loss exceeds ``factor`` × the minimum of the previous
min(t, ``window``) finite losses, or is not finite (a non-finite loss, or None, is a spike).
"""

from __future__ import annotations

import math

from curvlab import arguments

__all__ = ["count_spikes", "spike_steps"]


def spike_steps(losses, factor: float = 1.5, window: int = 50) -> list[int]:
    """The steps t >= 1 whose loss exceeds ``factor`` × the minimum of the previous min(t,
    ``window``) losses (a non-finite loss, or None, is a spike), in order.

    >>> spike_steps([3.0, 2.0, 1.0, 1.6, 0.9, 1.0], factor=1.5, window=2)
    [3]
    """
    arguments.number("factor", factor, low=0, low_open=True, finite=False)
    arguments.integer("window", window, 1)
    losses = [float("nan") if v is None else float(v) for v in losses]
    steps = []
    for t in range(1, len(losses)):
        previous = [v for v in losses[max(0, t - window) : t] if math.isfinite(v)]
        if not math.isfinite(losses[t]) or (previous and losses[t] > factor * min(previous)):
            steps.append(t)
    return steps


def count_spikes(losses, factor: float = 1.5, window: int = 50) -> int:
    """How many steps :func:`spike_steps` finds.

    >>> count_spikes([3.0, 2.0, 1.0, 1.6, 0.9, 1.0], factor=1.5, window=2)
    1
    """
    return len(spike_steps(losses, factor, window))
