"""3. Patience under load.

The per-cell timeout (``execute.timeout``) guards against hangs, not against a busy machine:
``CURVLAB_CELL_TIMEOUT=<seconds>`` overrides it for one build. The kernel's start-up wait
(nbclient: 60 s) and the wait for a cell's last outputs after its reply (nbclient: 4 s, after
which the outputs still to come are dropped with only a log line) are lengthened, and an output
that is still missing then fails the chapter instead of leaving a page without its figure.
"""

from __future__ import annotations

import functools
import os

from sphinx.util import logging

LOGGER = logging.getLogger(__name__)
TIMEOUT_VARIABLE = "CURVLAB_CELL_TIMEOUT"
# nbclient's waits that a busy machine can outlast (its defaults: 60 s and 4 s).
KERNEL_STARTUP_SECONDS = 600
LAST_OUTPUT_SECONDS = 120


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
    patient_waits()


def patient_waits() -> None:
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
