"""The one home of the test suite's shared configuration: the tiny studies.

``tiny_study(tmp_path, **overrides)`` is a Part II reproduction small enough for a test (4 seeds ×
4 tasks, 2 of them linear, 6 epochs, one retraining), and ``TINY_DEPTH`` the depth study's
counterpart; tests take them from here rather than writing their own.
"""

from __future__ import annotations

import pytest

TINY_DEPTH = {
    "depths": [1, 2],
    "seeds": [0],
    "epochs": 2,
    "grid": 3,
    "probe_points": 4,
    "n_train": 16,
    "n_test": 16,
    "device": "cpu",
}


def tiny_study_config(tmp_path, **overrides) -> dict:
    """Keyword arguments of ``reproduce("small", ...)`` for a tiny study cached under tmp_path."""
    return {
        "seeds": 4,
        "epochs": 6,
        "retrain_doublings": 1,
        "tasks": ["blobs", "half_plane", "xor", "circles"],
        "confirmatory": 3,  # the plan's first 3 fresh seeds
        "grid": 8,  # both studies: coarse quadrature, a few ρ points (the plan's are costly)
        "grid_check": 16,
        "rho_points": 16,
        "adaptive_base": 8,  # the confirmatory study's adaptive rule from coarse grids
        "adaptive_check_base": 16,
        "directory": tmp_path / "cache",
        "progress": False,
        **overrides,
    }


@pytest.fixture
def tiny_study(tmp_path):
    """A factory: ``tiny_study(**overrides)`` gives the tiny study's keyword arguments."""
    return lambda **overrides: tiny_study_config(tmp_path, **overrides)


@pytest.fixture
def tiny_depth():
    """The depth study's tiny configuration (a fresh copy)."""
    return dict(TINY_DEPTH)
