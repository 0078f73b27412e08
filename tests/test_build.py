"""The build's own machinery, checked without building the book.

The Makefile (one rule per target, `make help`, the system checks), the site extension's
library digest and button settings, and the chapter linter. The execution cache itself is
checked on a scratch book in tests/test_build_cache.py.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]
MAKE = shutil.which("make")
needs_make = pytest.mark.skipif(MAKE is None, reason="GNU make is not installed")


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


site = _load("curvlab_site", REPOSITORY / "book" / "_ext" / "curvlab_site.py")
lint_chapters = _load("lint_chapters", REPOSITORY / "tools" / "lint_chapters.py")


def _make(*arguments: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [MAKE, "--no-print-directory", "-C", str(REPOSITORY), *arguments],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", **env},
    )


# ---------------------------------------------------------------------------------------------
# The Makefile

RULE = re.compile(r"^(?P<targets>[^\s#=:][^#=:]*?)\s*::?(?!=)", re.MULTILINE)


def _rules() -> list[str]:
    text = (REPOSITORY / "Makefile").read_text(encoding="utf-8")
    targets = []
    for match in RULE.finditer(text):
        targets += [t for t in match["targets"].split() if not t.startswith((".", "$(STAMP"))]
    return targets


def _phony() -> set[str]:
    text = (REPOSITORY / "Makefile").read_text(encoding="utf-8").replace("\\\n", " ")
    return {t for line in re.findall(r"^\.PHONY:(.*)$", text, re.MULTILINE) for t in line.split()}


def test_every_target_has_one_rule():
    targets = _rules()
    repeated = sorted({target for target in targets if targets.count(target) > 1})
    assert "book" in targets and "_build/html/index.html" in targets
    assert not repeated, f"targets with more than one rule: {repeated}"


@needs_make
def test_make_help_lists_every_target():
    result = _make("help")
    assert result.returncode == 0, result.stderr
    listed = set(re.findall(r"^make ([\w-]+)", result.stdout, re.MULTILINE))
    public = {target for target in _phony() if not target.startswith("require-")}
    assert public - listed == set(), f"not in `make help`: {sorted(public - listed)}"


def test_make_test_and_ci_run_the_browser_tests():
    text = (REPOSITORY / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^test:.*\n((?:\t.*\n)+)", text, re.MULTILINE)
    assert recipe and "test-browser" in recipe.group(1)
    assert re.search(r"^test-browser:.*\n\t.*-m browser", text, re.MULTILINE)
    assert re.search(r"^make test$", (REPOSITORY / ".ci" / "run").read_text(), re.MULTILINE)


@needs_make
@pytest.mark.parametrize(
    ("target", "variables", "names"),
    [
        ("require-python", {"BIN": "/nonexistent", "PYTHON": "/bin/false"}, "python3.11"),
        ("require-npm", {}, "npm"),
        ("require-chromium", {"CURVLAB_CHROMIUM": "/nonexistent/chromium"}, "chromium"),
    ],
)
def test_a_missing_system_requirement_stops_with_one_line(tmp_path, target, variables, names):
    assignments = [f"{key}={value}" for key, value in variables.items()]
    # An empty PATH (make's shell is /bin/bash by its full name): no npm, no node.
    result = _make(target, *assignments, PATH=str(tmp_path))
    assert result.returncode != 0
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    assert len(lines) == 1 and f"apt-get install {names}" in lines[0], result.stdout


@needs_make
def test_system_checks_pass_where_the_requirements_are_present():
    if not (REPOSITORY / ".venv" / "bin" / "python").is_file():
        pytest.skip("no .venv")
    result = _make("require-python")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_readme_lists_the_system_requirements_and_the_repository_setting():
    readme = (REPOSITORY / "README.md").read_text(encoding="utf-8")
    for requirement in ("Python 3.11", "npm", "chromium", "repository.url"):
        assert requirement in readme, f"README.md does not mention {requirement}"


def test_no_generated_notebook_is_tracked():
    if shutil.which("git") is None or not (REPOSITORY / ".git").exists():
        pytest.skip("not a git checkout")
    result = subprocess.run(
        ["git", "ls-files", "book"], cwd=REPOSITORY, capture_output=True, text=True, check=True
    )
    tracked = [path for path in result.stdout.splitlines() if path.endswith(".ipynb")]
    assert not tracked, f"generated notebooks are tracked (the site serves them): {tracked}"


# ---------------------------------------------------------------------------------------------
# The site extension: library digest, which chapters depend on it, buttons


def _library(root: Path) -> Path:
    package = root / "src" / "lib"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("X = 1\n", encoding="utf-8")
    (root / "pyproject.toml").write_text("[project]\nname = 'lib'\n", encoding="utf-8")
    return package


def test_library_digest_follows_sources_and_pins_but_not_byte_code(tmp_path):
    package = _library(tmp_path)
    paths = ["src/lib", "pyproject.toml", "requirements.txt"]
    first = site.library_digest(tmp_path, paths)
    assert site.library_digest(tmp_path, paths) == first
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    assert site.library_digest(tmp_path, paths) == first
    (package / "__init__.py").write_text("X = 2\n", encoding="utf-8")
    second = site.library_digest(tmp_path, paths)
    assert second != first
    (package / "sub.py").write_text("", encoding="utf-8")
    third = site.library_digest(tmp_path, paths)
    assert third != second
    (tmp_path / "requirements.txt").write_text("numpy==2\n", encoding="utf-8")
    assert site.library_digest(tmp_path, paths) != third


def test_the_grader_beside_the_library_is_outside_its_digest(tmp_path):
    assert (REPOSITORY / "src" / "curvgrade").is_dir()
    paths = site.DEFAULT_LIBRARY_PATHS
    assert not any("src/curvgrade/cli.py".startswith(path) for path in paths)
    for name in ("src/curvlab/__init__.py", "src/curvgrade/__init__.py", "pyproject.toml"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("X = 1\n", encoding="utf-8")
    first = site.library_digest(tmp_path, paths)
    (tmp_path / "src" / "curvgrade" / "__init__.py").write_text("X = 2\n", encoding="utf-8")
    (tmp_path / "src" / "curvgrade" / "cli.py").write_text("", encoding="utf-8")
    assert site.library_digest(tmp_path, paths) == first, "a grader edit re-executes no chapter"
    (tmp_path / "src" / "curvlab" / "__init__.py").write_text("X = 2\n", encoding="utf-8")
    assert site.library_digest(tmp_path, paths) != first


@pytest.mark.parametrize(
    ("source", "imports"),
    [
        ("import curvlab\n", True),
        ("from curvlab.symbolic import x\n", True),
        ("    import curvlab.measures as m\n", True),
        ("!python -m curvlab decision\n", True),
        ("import curvlabx\n", False),
        ("The curvlab library is imported later.\n", False),
    ],
)
def test_which_chapters_depend_on_the_library(tmp_path, source, imports):
    chapter = tmp_path / "chapter.md"
    chapter.write_text(source, encoding="utf-8")
    assert site._imports_library(chapter, ["curvlab"]) is imports


def test_a_chapter_running_the_grader_depends_on_the_library(tmp_path):
    chapter = tmp_path / "chapter.md"
    chapter.write_text("from curvgrade import read_chapter\n", encoding="utf-8")
    assert site._imports_library(chapter, site.DEFAULT_LIBRARY_MODULES)


def _theme_options(url: str) -> dict:
    config = SimpleNamespace(
        html_theme_options={
            "repository_url": url,
            "launch_buttons": {
                "binderhub_url": "https://mybinder.org",
                "colab_url": "https://colab.research.google.com",
            },
        }
    )
    site.configure_repository_buttons(None, config)
    return config.html_theme_options


@pytest.mark.parametrize(
    "url",
    ["", "https://github.com/OWNER/curvlab", "https://github.com/executablebooks/jupyter-book"],
)
def test_no_button_without_a_real_repository(url):
    options = _theme_options(url)
    assert options["launch_buttons"] == {}
    assert "repository_url" not in options
    assert not any(options[key] for key in ("use_repository_button", "use_issues_button"))


def test_a_configured_repository_gets_binder_and_repository_buttons():
    options = _theme_options("https://github.com/someone/curvlab")
    assert options["repository_url"] == "https://github.com/someone/curvlab"
    assert options["use_repository_button"] is True
    assert options["launch_buttons"] == {"binderhub_url": "https://mybinder.org"}


def test_the_failing_cell_is_named_by_its_exception():
    traceback = "Cell In[1], line 1\n----> 1 import lib\n\x1b[0;31mImportError\x1b[0m: broken\n"
    assert site._error_line(traceback) == "ImportError: broken"
    assert site._error_line(None) == "see the traceback above"


# ---------------------------------------------------------------------------------------------
# The chapter linter

CHAPTER = """---
kernelspec:
  name: python3
---

# Title

```{code-cell} ipython3
:tags: [hide-input]

import os
x=1
```

````markdown
```{code-cell} ipython3
not python at all (
```
````

Text between.

```{code-cell} ipython3
---
tags: [remove-output]
---
y = [1,2]
```
"""


def test_code_cells_are_found_with_their_lines():
    cells = lint_chapters.code_cells(CHAPTER.split("\n"))
    assert [cell.lines for cell in cells] == [["import os", "x=1"], ["y = [1,2]"]]
    assert [CHAPTER.split("\n")[cell.start] for cell in cells] == ["import os", "y = [1,2]"]


def test_findings_point_at_chapter_lines_and_fix_touches_only_code(tmp_path):
    chapter = tmp_path / "chapter.md"
    chapter.write_text(CHAPTER, encoding="utf-8")
    config = REPOSITORY / "pyproject.toml"
    findings = lint_chapters.lint([chapter], config, fix=False)
    assert f"{chapter}:11:8: F401 `os` imported but unused" in findings
    assert any("not formatted" in finding for finding in findings)
    lint_chapters.lint([chapter], config, fix=True)
    fixed = chapter.read_text(encoding="utf-8")
    assert "x = 1" in fixed and "y = [1, 2]" in fixed and "import os" not in fixed
    prose = [line for line in CHAPTER.split("\n") if not re.match(r"(import os|x=1|y = )", line)]
    assert [line for line in fixed.split("\n") if not re.match(r"(x = 1|y = )", line)] == prose
    assert lint_chapters.lint([chapter], config, fix=False) == []


def test_chapters_are_the_notebooks_under_book(tmp_path):
    (tmp_path / "a.md").write_text(CHAPTER, encoding="utf-8")
    (tmp_path / "b.md").write_text("# Not a notebook\n", encoding="utf-8")
    (tmp_path / "_hidden").mkdir()
    (tmp_path / "_hidden" / "c.md").write_text(CHAPTER, encoding="utf-8")
    assert lint_chapters.chapters_under(tmp_path) == [tmp_path / "a.md"]
