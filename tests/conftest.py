"""The one home of the test suite's shared configuration: the tiny studies.

``tiny_study(**overrides)`` gives the overrides of a Part II reproduction small enough for a
test (4 seeds × 4 tasks, 2 of them linear, 6 epochs, one retraining), ``tiny_options(**changes)``
the options it runs with (CPU, a cache under the test's tmp_path, no progress bar), and
``TINY_DEPTH`` the depth study's counterpart; tests take them from here rather than writing
their own::

    run_study(REPRODUCE, "small", tiny_options(), **tiny_study())
"""

from __future__ import annotations

import pytest

from curvlab.studies.study import Options

TINY_DEPTH = {
    "depths": [1, 2],
    "seeds": [0],
    "epochs": 2,
    "resolution": 3,
    "probe_points": 4,
    "n_train": 16,
    "n_test": 16,
}


def tiny_study_config(tmp_path, **overrides) -> dict:
    """The overrides of a tiny reproduction (module docstring)."""
    return {
        "seeds": [0, 1, 2, 3],
        "epochs": 6,
        "retrain_doublings": 1,
        "tasks": ["blobs", "half_plane", "xor", "circles"],
        "confirmatory": 3,  # the plan's first 3 fresh seeds
        "resolution": 8,  # both studies: coarse quadrature, a few ρ points (the plan's are costly)
        "resolution_check": 16,
        "rho_points": 16,
        "adaptive_resolution": 8,  # the confirmatory study's adaptive rule from coarse grids
        "adaptive_resolution_check": 16,
        **overrides,
    }


def tiny_options_of(tmp_path, **changes) -> Options:
    """The tiny studies' options: the CPU, the cache ``tmp_path/cache``, no progress bar."""
    return Options(
        **{"device": "cpu", "directory": tmp_path / "cache", "progress": False, **changes}
    )


@pytest.fixture
def tiny_study(tmp_path):
    """A factory: ``tiny_study(**overrides)`` gives the tiny study's keyword arguments."""
    return lambda **overrides: tiny_study_config(tmp_path, **overrides)


@pytest.fixture
def tiny_options(tmp_path):
    """A factory: ``tiny_options(**changes)`` gives the tiny studies' :class:`Options`."""
    return lambda **changes: tiny_options_of(tmp_path, **changes)


@pytest.fixture
def tiny_depth():
    """The depth study's tiny configuration (a fresh copy)."""
    return dict(TINY_DEPTH)
