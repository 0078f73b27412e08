"""pytest set-up for the doctests under src/ and the tests under tests/.

The doctests of ``curvgrade`` call ``example_chapter(folder)``: it copies the smallest chapter
in the exercise format (tests/curvgrade/fixtures/tiny.md: one exercise, one public and one
hidden check) into ``folder`` and returns the copy's path.

A test that starts an in-process IPython shell (the grader's ``new_shell``) leaves IPython's
user module installed as ``sys.modules["__main__"]``; that module has no ``__spec__``, and
``multiprocessing``'s spawn start method, which a later test may use, fails on it. Every test
gets the ``__main__`` it started with back, and no shell instance outlives it.

Under pytest-xdist (``make test-fast`` and ``make test-slow`` run the tests in worker
processes), each worker computes on one thread, and so do the processes it starts (a notebook
kernel, a study's command line): the workers are the parallelism, and two workers each asking
for every core would only wait on one another.  A thread count set by the caller is kept.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

if os.environ.get("PYTEST_XDIST_WORKER"):
    for _variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_variable, "1")
    if "torch" in sys.modules:  # already imported: its thread pool is set, so set it again
        sys.modules["torch"].set_num_threads(int(os.environ["OMP_NUM_THREADS"]))

EXAMPLE_CHAPTER = Path(__file__).parent / "tests" / "curvgrade" / "fixtures" / "tiny.md"


def example_chapter(folder: str | Path) -> Path:
    """Copy the example chapter into ``folder`` (``folder/tiny.md``) and return that path."""
    return Path(shutil.copy(EXAMPLE_CHAPTER, Path(folder) / EXAMPLE_CHAPTER.name))


@pytest.fixture(autouse=True)
def _example_chapter_in_doctests(doctest_namespace):
    doctest_namespace["example_chapter"] = example_chapter


@pytest.fixture(autouse=True)
def _no_shell_outlives_its_test():
    main = sys.modules["__main__"]
    yield
    sys.modules["__main__"] = main
    interactiveshell = sys.modules.get("IPython.core.interactiveshell")
    if interactiveshell is not None and interactiveshell.InteractiveShell.initialized():
        interactiveshell.InteractiveShell.clear_instance()
