"""The course kit students install holds the libraries and nothing that gives an exercise away.

``make kit`` builds the library's wheel and checks it with ``tools.check_kit``; these tests
build it the same way and check that the checker refuses a kit carrying a chapter, a test or a
build tool.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tools import check_kit

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def kit(tmp_path_factory):
    """The kit as ``make kit`` builds it (from a copy of the sources: no build/ left behind)."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md", "src"):
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy
        copy(ROOT / name, source / name)
    folder = tmp_path_factory.mktemp("kit")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation"]
        + [str(source), "-w", str(folder)],
        check=True,
        timeout=300,
    )
    shutil.copy(ROOT / "requirements.txt", folder)
    return folder


@pytest.mark.slow
def test_the_kit_holds_the_libraries_only(kit):
    assert check_kit.problems(kit) == []
    (wheel,) = kit.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        tops = {name.split("/", 1)[0] for name in archive.namelist()}
    assert {"curvlab", "curvgrade"} <= tops
    assert all(top in ("curvlab", "curvgrade") or top.endswith(".dist-info") for top in tops)


@pytest.mark.slow
@pytest.mark.parametrize(
    "planted",
    [
        "book/geometry/fisher-rao.md",
        "tests/curvgrade/test_x.py",
        "curvlab/a.ipynb",
        "tools/check_kit.py",  # the build tools are the repository's, not the wheel's
    ],
)
def test_a_kit_carrying_a_chapter_a_test_or_a_tool_is_refused(kit, tmp_path, planted):
    spoiled = tmp_path / "kit"
    shutil.copytree(kit, spoiled)
    (wheel,) = spoiled.glob("*.whl")
    with zipfile.ZipFile(wheel, "a") as archive:
        archive.writestr(planted, "# a chapter")
    found = check_kit.problems(spoiled)
    assert any(planted in problem for problem in found), found
    assert check_kit.main([str(spoiled)]) == 1
