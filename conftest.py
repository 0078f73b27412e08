"""pytest set-up for the doctests under src/ and the tests under tests/.

The doctests of ``curvgrade`` call ``example_chapter(folder)``: it copies the smallest chapter
in the exercise format (tests/curvgrade/fixtures/tiny.md: one exercise, one public and one
hidden check) into ``folder`` and returns the copy's path.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

EXAMPLE_CHAPTER = Path(__file__).parent / "tests" / "curvgrade" / "fixtures" / "tiny.md"


def example_chapter(folder: str | Path) -> Path:
    """Copy the example chapter into ``folder`` (``folder/tiny.md``) and return that path."""
    return Path(shutil.copy(EXAMPLE_CHAPTER, Path(folder) / EXAMPLE_CHAPTER.name))


@pytest.fixture(autouse=True)
def _example_chapter_in_doctests(doctest_namespace):
    doctest_namespace["example_chapter"] = example_chapter
