"""The book's execution cache follows the library: a scratch book built with the real extension.

The scratch book has two one-cell chapters: ``uses.md`` imports a scratch package ``scratchlib``
(standing in for curvlab), ``plain.md`` does not. Each build's log says which chapters were
executed. The laws: a library edit re-executes the chapter that imports it and only that one; a
chapter edit re-executes that chapter only; no change executes nothing; a broken library fails
the build and the message names the chapter, on every build until it is fixed; the fix passes
again from the cache.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]
EXTENSION = REPOSITORY / "book" / "_ext" / "curvlab_site"
JUPYTER_BOOK = Path(sys.executable).with_name("jupyter-book")
FRONT_MATTER = textwrap.dedent(
    """\
    ---
    jupytext:
      text_representation:
        extension: .md
        format_name: myst
    kernelspec:
      display_name: Python 3
      language: python
      name: python3
    ---
    """
)


def _chapter(title: str, code: str) -> str:
    return f"{FRONT_MATTER}\n# {title}\n\n```{{code-cell}} ipython3\n{code}\n```\n"


def _write_book(root: Path) -> None:
    shutil.copytree(
        EXTENSION, root / "_ext" / EXTENSION.name, ignore=shutil.ignore_patterns("__pycache__")
    )
    (root / "src" / "scratchlib").mkdir(parents=True)
    (root / "src" / "scratchlib" / "__init__.py").write_text("VALUE = 41\n", encoding="utf-8")
    (root / "_config.yml").write_text(
        textwrap.dedent(
            """\
            title: Scratch
            only_build_toc_files: true
            exclude_patterns: [_build, src]
            execute:
              execute_notebooks: cache
              allow_errors: false
              raise_on_error: false
            repository:
              url: ""
            sphinx:
              local_extensions:
                curvlab_site: _ext
              config:
                curvlab_library_paths: [src/scratchlib]
                curvlab_library_modules: [scratchlib]
            """
        ),
        encoding="utf-8",
    )
    (root / "_toc.yml").write_text(
        "format: jb-book\nroot: intro\nchapters:\n  - file: uses\n  - file: plain\n",
        encoding="utf-8",
    )
    (root / "intro.md").write_text("# Scratch\n\nTwo chapters.\n", encoding="utf-8")
    (root / "uses.md").write_text(
        _chapter("Uses", "import scratchlib\n\nprint('value', scratchlib.VALUE + 1)"),
        encoding="utf-8",
    )
    (root / "plain.md").write_text(_chapter("Plain", "print('plain', 1 + 1)"), encoding="utf-8")


def _build(root: Path, jobs: int | None = None) -> tuple[int, str, set[str]]:
    """(exit status, log, chapters executed) of ``jupyter-book build`` as `make book` runs it,
    ``jobs`` kernels at a time (default: the extension's, one per core); a chapter counts as
    executed whether myst-nb or the side-by-side execution ran it."""
    env = dict(os.environ)
    if jobs is not None:
        env["CURVLAB_BOOK_JOBS"] = str(jobs)
    env["JUPYTER_PATH"] = str(Path(sys.prefix) / "share" / "jupyter")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root / "src"), env.get("PYTHONPATH")]))
    result = subprocess.run(
        [str(JUPYTER_BOOK), "build", str(root), "-W", "-n", "--keep-going"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    log = result.stdout + result.stderr
    return result.returncode, log, _by_mystnb(log) | _side_by_side(log)


def _by_mystnb(log: str) -> set[str]:
    return set(re.findall(r"(\w+)\.md: Executing notebook using", log))


def _side_by_side(log: str) -> set[str]:
    """The chapters executed side by side, whether they passed or failed."""
    passed = re.findall(r"curvlab: executed (\w+)\.md in [0-9.]+ s \(side by side\)", log)
    failed = re.findall(r"curvlab: (\w+)\.md failed \([0-9.]+ s, side by side\)", log)
    return set(passed) | set(failed)


def _page(root: Path, name: str) -> str:
    return (root / "_build" / "html" / f"{name}.html").read_text(encoding="utf-8")


@pytest.mark.slow
def test_library_changes_re_execute_the_chapters_that_import_it(tmp_path):
    root = tmp_path / "book"
    _write_book(root)
    library = root / "src" / "scratchlib" / "__init__.py"

    status, log, executed = _build(root)
    assert status == 0, log
    assert executed == {"uses", "plain"}
    assert "value 42" in _page(root, "uses")

    status, log, executed = _build(root)
    assert status == 0, log
    assert executed == set(), "a build with nothing changed executed chapters"

    library.write_text("VALUE = 99\n", encoding="utf-8")
    status, log, executed = _build(root)
    assert status == 0, log
    assert executed == {"uses"}, "a library edit must re-execute exactly the chapter importing it"
    assert "value 100" in _page(root, "uses") and "value 42" not in _page(root, "uses")

    plain = root / "plain.md"
    plain.write_text(plain.read_text(encoding="utf-8").replace("1 + 1", "2 + 2"), "utf-8")
    status, log, executed = _build(root)
    assert status == 0, log
    assert executed == {"plain"}, "a chapter edit must re-execute that chapter only"

    library.write_text('VALUE = 99\nraise ImportError("broken")\n', encoding="utf-8")
    for attempt in ("first", "second"):
        status, log, executed = _build(root)
        assert status != 0, f"the {attempt} build with a broken library passed:\n{log}"
        assert "1 chapter(s) failed to execute: uses.md (ImportError: broken)" in log, log

    library.write_text("VALUE = 99\n", encoding="utf-8")
    status, log, executed = _build(root)
    assert status == 0, log
    assert "value 100" in _page(root, "uses")
    assert executed == set(), "reverting the library should find its outputs in the cache"
    download = json.loads((root / "_build" / "html" / "_sources" / "uses.ipynb").read_text())
    outputs = [output for cell in download["cells"] for output in cell.get("outputs", [])]
    assert any("value 100" in "".join(output.get("text", "")) for output in outputs), (
        "the downloadable notebook lacks the outputs that came from the cache"
    )
    caches = sorted(path.name for path in (root / "_build" / ".jupyter_cache").iterdir())
    assert len(caches) <= 3, f"stale execution caches are not pruned: {caches}"


@pytest.mark.slow
def test_chapters_execute_side_by_side_and_myst_nb_reads_them_from_the_cache(tmp_path):
    root = tmp_path / "book"
    _write_book(root)
    status, log, _ = _build(root, jobs=2)
    assert status == 0, log
    assert "curvlab: executing 2 chapters, 2 at a time" in log, log
    assert _side_by_side(log) == {"uses", "plain"}
    assert _by_mystnb(log) == set(), "myst-nb executed a chapter the side-by-side run had cached"
    assert "value 42" in _page(root, "uses") and "plain 2" in _page(root, "plain")

    serial = tmp_path / "serial"
    _write_book(serial)
    status, log, _ = _build(serial, jobs=1)
    assert status == 0, log
    assert _side_by_side(log) == set() and _by_mystnb(log) == {"uses", "plain"}
    for name in ("uses", "plain"):  # the same notebook outputs either way
        side, alone = (
            json.loads((book / "_build" / "html" / "_sources" / f"{name}.ipynb").read_text())
            for book in (root, serial)
        )
        assert [c.get("outputs") for c in side["cells"]] == [
            c.get("outputs") for c in alone["cells"]
        ]


@pytest.mark.slow
def test_a_chapter_failing_side_by_side_fails_the_build_without_a_second_run(tmp_path):
    root = tmp_path / "book"
    _write_book(root)
    plain = root / "plain.md"
    plain.write_text(_chapter("Plain", "raise ValueError('plain is broken')"), encoding="utf-8")
    status, log, _ = _build(root, jobs=2)
    assert status != 0, log
    assert _side_by_side(log) == {"uses", "plain"}
    assert _by_mystnb(log) == set(), "a failed chapter ran a second time in the same build"
    assert "plain.md: WARNING: Executing notebook failed: CellExecutionError" in log, log
    assert "1 chapter(s) failed to execute: plain.md (ValueError: plain is broken)" in log, log
    assert "value 42" in _page(root, "uses")
    assert not (root / "_build" / "html" / "plain.html").exists(), "a failed page is served"

    plain.write_text(_chapter("Plain", "print('plain', 2 + 2)"), encoding="utf-8")
    status, log, executed = _build(root, jobs=2)
    assert status == 0, log
    assert executed == {"plain"} and "plain 4" in _page(root, "plain")
