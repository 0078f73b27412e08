"""The build's own machinery, checked without building the book.

The Makefile (one rule per target, `make help`, the system checks, the order of `make test`),
the site extension's library digest, timeouts and button settings, the build benchmark and the
chapter linter. The execution cache itself is checked on a scratch book in
tests/test_build_cache.py; that a failed build leaves nothing up to date is checked here on a
scratch book built by this Makefile's own rule (marked slow).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from tools import bench_build, lint_chapters

REPOSITORY = Path(__file__).resolve().parents[1]
MAKE = shutil.which("make")
needs_make = pytest.mark.skipif(MAKE is None, reason="GNU make is not installed")


def _load(name: str, path: Path):
    """The module at ``path``, or the package when ``path`` is its folder, as ``name``."""
    if path.is_dir():
        spec = importlib.util.spec_from_file_location(
            name, path / "__init__.py", submodule_search_locations=[str(path)]
        )
    else:
        spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


EXTENSION = REPOSITORY / "book" / "_ext" / "curvlab_site"
site = _load("curvlab_site", EXTENSION)


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


def _makefile() -> str:
    return (REPOSITORY / "Makefile").read_text(encoding="utf-8")


def _rules() -> list[str]:
    text = _makefile()
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
def test_make_test_gives_the_fast_feedback_before_building_the_book():
    """lint, then the fast tests (once), then the book, then the slow and the browser tests."""
    result = _make("-n", "-B", "test")
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.replace("\\\n", " ").splitlines()  # one line per command
    steps = {
        "lint": r"ruff check ",
        "fast tests": r'pytest --doctest-modules src tests -m "not slow and not browser"',
        "book": r"jupyter-book build \. ",
        "slow tests": r'pytest tests -m "slow and not browser"',
        "browser tests": r"pytest tests/test_site\.py -m browser",
    }
    first = {}
    for step, pattern in steps.items():
        found = [number for number, line in enumerate(lines) if re.search(pattern, line)]
        assert found, f"`make test` does not run the {step}:\n{result.stdout}"
        first[step] = found[0]
    assert sorted(first, key=first.get) == list(steps), f"the order of `make test`: {first}"
    # Once each: the fast tests before the book, the tests of the built sites after it.
    site_tests = re.search(r"^SITE_TESTS := (.*)$", _makefile(), re.MULTILINE).group(1).split()
    assert site_tests and all((REPOSITORY / path).is_file() for path in site_tests), site_tests
    pytest_lines = [(n, line) for n, line in enumerate(lines) if " -m pytest" in line]
    fast = [line for _, line in pytest_lines if '"not slow and not browser"' in line]
    assert len(fast) == 2, f"the fast tests run more than once: {fast}"
    assert all(f"--ignore={path}" in fast[0] for path in site_tests), fast[0]
    assert fast[1].split(" -m pytest ")[1].split(" -m ")[0].split() == site_tests, fast[1]
    after_book = [line for n, line in pytest_lines if n > first["book"]]
    assert fast[0] not in after_book and fast[1] in after_book


@needs_make
def test_the_tests_run_in_workers_and_the_attack_suite_alone_after_them():
    """The fast and the slow tests in parallel workers, a file at a time; the attack suite (its
    check reads every process of the sandbox user) in a run of its own, after the other slow
    tests, with no workers; no slow test run twice or skipped by the split."""
    lines = _make("-n", "-B", "test").stdout.replace("\\\n", " ").splitlines()
    runs = [line for line in lines if " -m pytest " in line]
    fast = next(line for line in runs if '"not slow and not browser"' in line)
    slow = [n for n, line in enumerate(runs) if '-m "slow and not browser"' in line]
    assert len(slow) == 2, runs
    together, alone = runs[slow[0]], runs[slow[1]]
    attacks = "tests/curvgrade/test_grading_attacks.py"
    for line in (fast, together):
        assert re.search(r" -n \S+ .*--dist loadfile", line), line
    assert f"--ignore={attacks}" in together and " tests " in together + " ", together
    assert alone.split(" -m pytest ")[1].split()[0] == attacks and " -n " not in alone, alone


def test_a_test_worker_computes_on_the_threads_it_passes_on():
    """Under pytest-xdist (conftest.py) a worker computes on OMP_NUM_THREADS threads, which the
    processes it starts inherit: one, unless the caller set it."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        pytest.skip("not in a pytest-xdist worker (make test-fast runs the tests in workers)")
    import torch

    assert torch.get_num_threads() == int(os.environ["OMP_NUM_THREADS"])


def test_the_readme_names_the_inner_loop_and_what_ci_runs():
    readme = (REPOSITORY / "README.md").read_text(encoding="utf-8")
    commands = readme[readme.index("## The two commands") : readme.index("## System requirements")]
    assert "make test-fast" in commands, "README: `make test-fast` is the inner loop"
    assert re.search(r"`make test` is\s+what CI", commands)


def test_the_book_rule_removes_what_a_failed_build_leaves():
    text = (REPOSITORY / "Makefile").read_text(encoding="utf-8")
    rule = re.search(r"^_build/html/index\.html:(.*)\n((?:\t.*\n)+)", text, re.MULTILINE)
    assert rule, "no rule for _build/html/index.html"
    assert re.search(r"\|\s*\$\(STUDIES_STAMP\)", rule.group(1)), "the studies run before the book"
    recipe = rule.group(2)
    assert re.search(r"rm -f \$@", recipe.splitlines()[0]), "the target is removed first"
    assert "|| {" in recipe and "_build/.doctrees" in recipe and "exit 1" in recipe
    assert recipe.rstrip().splitlines()[-1].strip() == "touch $@"
    assert re.search(r"^\.DELETE_ON_ERROR:", text, re.MULTILINE)


def test_the_cell_timeout_guards_against_hangs_and_can_be_overridden():
    import yaml

    config = yaml.safe_load((REPOSITORY / "_config.yml").read_text(encoding="utf-8"))
    assert config["execute"]["timeout"] >= 1800, "a busy machine must not time a cell out"
    assert site.patience.cell_timeout(1800, {}) == 1800
    assert site.patience.cell_timeout(1800, {"CURVLAB_CELL_TIMEOUT": " 60 "}) == 60
    assert site.patience.cell_timeout(1800, {"CURVLAB_CELL_TIMEOUT": "0"}) == -1
    assert site.patience.cell_timeout(1800, {"CURVLAB_CELL_TIMEOUT": "-1"}) == -1
    with pytest.raises(ValueError, match="CURVLAB_CELL_TIMEOUT"):
        site.patience.cell_timeout(1800, {"CURVLAB_CELL_TIMEOUT": "10m"})


def test_the_kernel_waits_patiently_and_the_override_reaches_myst_nb(monkeypatch):
    import nbclient.client
    import nbformat
    from jupyter_cache.executors import utils
    from myst_nb.core.config import NbParserConfig

    monkeypatch.setattr(utils, "executenb", utils.executenb)  # restored after the test
    monkeypatch.setenv("CURVLAB_CELL_TIMEOUT", "3600")
    app = SimpleNamespace(env=SimpleNamespace(mystnb_config=NbParserConfig(execution_timeout=1800)))
    site.patience.patient_execution(app)
    site.patience.patient_execution(app)  # a second build in the same process wraps nothing twice
    assert app.env.mystnb_config.execution_timeout == 3600
    assert utils.executenb.func is nbclient.client.execute
    seen = {}

    def execute(client, **_):
        seen.update(
            startup=client.startup_timeout,
            outputs=client.iopub_timeout,
            missing_output_fails=client.raise_on_iopub_timeout,
            cell=client.timeout,
        )

    monkeypatch.setattr(nbclient.client.NotebookClient, "execute", execute)
    utils.executenb(nbformat.v4.new_notebook(), cwd=None, timeout=3600)
    assert seen == {"startup": 600, "outputs": 120, "missing_output_fails": True, "cell": 3600}


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


def test_the_readme_lists_the_system_requirements_and_building_the_repository_setting():
    readme = (REPOSITORY / "README.md").read_text(encoding="utf-8")
    for requirement in ("Python 3.11", "npm", "chromium"):
        assert requirement in readme, f"README.md does not mention {requirement}"
    building = (REPOSITORY / "BUILDING.md").read_text(encoding="utf-8")
    assert "repository.url" in building, "BUILDING.md does not name the repository setting"


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
    first = site.cache.library_digest(tmp_path, paths)
    assert site.cache.library_digest(tmp_path, paths) == first
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    assert site.cache.library_digest(tmp_path, paths) == first
    (package / "__init__.py").write_text("X = 2\n", encoding="utf-8")
    second = site.cache.library_digest(tmp_path, paths)
    assert second != first
    (package / "sub.py").write_text("", encoding="utf-8")
    third = site.cache.library_digest(tmp_path, paths)
    assert third != second
    (tmp_path / "requirements.txt").write_text("numpy==2\n", encoding="utf-8")
    assert site.cache.library_digest(tmp_path, paths) != third


def test_the_grader_beside_the_library_is_outside_its_digest(tmp_path):
    assert (REPOSITORY / "src" / "curvgrade").is_dir()
    paths = site.cache.DEFAULT_LIBRARY_PATHS
    assert not any("src/curvgrade/cli.py".startswith(path) for path in paths)
    for name in ("src/curvlab/__init__.py", "src/curvgrade/__init__.py", "pyproject.toml"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("X = 1\n", encoding="utf-8")
    first = site.cache.library_digest(tmp_path, paths)
    (tmp_path / "src" / "curvgrade" / "__init__.py").write_text("X = 2\n", encoding="utf-8")
    (tmp_path / "src" / "curvgrade" / "cli.py").write_text("", encoding="utf-8")
    unchanged = site.cache.library_digest(tmp_path, paths) == first
    assert unchanged, "a grader edit re-executes no chapter"
    (tmp_path / "src" / "curvlab" / "__init__.py").write_text("X = 2\n", encoding="utf-8")
    assert site.cache.library_digest(tmp_path, paths) != first


@pytest.mark.parametrize(
    ("source", "imports"),
    [
        ("import curvlab\n", True),
        ("from curvlab.symbolic import x\n", True),
        ("    import curvlab.geometry.measures as m\n", True),
        ("!python -m curvlab decision\n", True),
        ("import curvlabx\n", False),
        ("The curvlab library is imported later.\n", False),
    ],
)
def test_which_chapters_depend_on_the_library(tmp_path, source, imports):
    chapter = tmp_path / "chapter.md"
    chapter.write_text(source, encoding="utf-8")
    assert site.cache.imports_library(chapter, ["curvlab"]) is imports


def test_a_chapter_running_the_grader_depends_on_the_library(tmp_path):
    chapter = tmp_path / "chapter.md"
    chapter.write_text("from curvgrade import read_chapter\n", encoding="utf-8")
    assert site.cache.imports_library(chapter, site.cache.DEFAULT_LIBRARY_MODULES)


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
    site.buttons.configure_repository_buttons(None, config)
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
    assert site.cache.error_line(traceback) == "ImportError: broken"
    assert site.cache.error_line(None) == "see the traceback above"
    timed_out = (
        "    raise CellTimeoutError.error_from_timeout_and_cell(\n"
        "nbclient.exceptions.CellTimeoutError: A cell timed out while it was being executed, "
        "after 5 seconds.\nThe message was: Cell execution timed out.\n"
    )
    assert site.cache.error_line(timed_out).startswith("CellTimeoutError: A cell timed out")


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


SOLUTION_CHAPTER = """---
kernelspec:
  name: python3
---

```{code-cell} ipython3
name_one, name_two = 1, 2
total = sum([name_one, name_two, name_one, name_two, name_one, name_two, 3])
```

::::{solution-start} ex-one
:class: dropdown
::::

```{code-cell} ipython3
:exercise: ex-one answer
short = sum([name_one, name_two, name_one, name_two, name_one, total])
note = "a string of seventy-six characters: too long for a solution's cells"
```

::::{solution-end}
::::

```{code-cell} ipython3
after = "a string of seventy-six characters: fits the text's column, a line"
```
"""


def test_the_line_length_is_the_page_columns_narrower_in_a_solution(tmp_path):
    """A cell is formatted to the code column the page shows; a solution's dropdown is
    narrower: a 76-character line is a finding there, and fits the text's column."""
    assert lint_chapters.SOLUTION_COLUMNS < 76 - 4 and 76 <= lint_chapters.CODE_COLUMNS < 85
    chapter = tmp_path / "chapter.md"
    chapter.write_text(SOLUTION_CHAPTER, encoding="utf-8")
    cells = lint_chapters.code_cells(SOLUTION_CHAPTER.split("\n"))
    assert [cell.in_solution for cell in cells] == [False, True, False]
    config = REPOSITORY / "pyproject.toml"
    lint_chapters.lint([chapter], config, fix=True)
    fixed = chapter.read_text(encoding="utf-8").split("\n")
    code = [line for cell in lint_chapters.code_cells(fixed) for line in cell.lines]
    assert "total = sum([name_one, name_two, name_one, name_two, name_one, name_two, 3])" in code
    assert "short = sum([name_one, name_two, name_one, name_two, name_one, total])" not in code
    findings = lint_chapters.lint([chapter], config, fix=False)
    note = next(line for line in code if line.startswith("note = "))  # no way to shorten it
    long = [finding for finding in findings if "E501" in finding]
    assert long == [f"{chapter}:{fixed.index(note) + 1}:70: E501 Line too long (76 > 69)"]
    assert not [finding for finding in findings if "E501" not in finding], findings


def test_the_landing_page_has_its_own_narrower_column(tmp_path):
    """book/intro.md's cells are linted at the landing page's column: a 76-character line,
    which fits a chapter, is a finding there."""
    line = 'note = "' + "x" * 67 + '"'  # 76 characters, no way to shorten it
    source = f"{CHAPTER}\n```{{code-cell}} ipython3\n{line}\n```\n"
    (tmp_path / "book" / "geometry").mkdir(parents=True)
    landing, chapter = tmp_path / "book" / "intro.md", tmp_path / "book" / "geometry" / "a.md"
    for path in (landing, chapter):
        path.write_text(source, encoding="utf-8")
    assert lint_chapters.page_columns(landing) == 75 < lint_chapters.CODE_COLUMNS
    findings = lint_chapters.lint([landing, chapter], REPOSITORY / "pyproject.toml", fix=False)
    assert [f for f in findings if "E501" in f] == [
        f"{landing}:{source.split(chr(10)).index(line) + 1}:76: E501 Line too long (76 > 75)"
    ]


def test_chapters_are_the_notebooks_under_book(tmp_path):
    (tmp_path / "a.md").write_text(CHAPTER, encoding="utf-8")
    (tmp_path / "b.md").write_text("# Not a notebook\n", encoding="utf-8")
    (tmp_path / "_hidden").mkdir()
    (tmp_path / "_hidden" / "c.md").write_text(CHAPTER, encoding="utf-8")
    assert lint_chapters.chapters_under(tmp_path) == [tmp_path / "a.md"]


# ---------------------------------------------------------------------------------------------
# The build benchmark (tools.bench_build): the step under load, without building anything


def test_the_benchmark_plans_a_clean_build_under_load(capsys):
    assert bench_build.main(["--load", "2", "--dry-run"]) == 0
    printed = capsys.readouterr().out.splitlines()
    steps = [line.split("]")[0].strip("[") for line in printed]
    assert steps == [
        "clean",
        "clean-build",
        "no-change",
        "one-chapter",
        "restore",
        "clean-before-load",
        "under-load",
        "under-load",
    ]
    assert "2 busy processes" in printed[-2]
    assert printed[-1].endswith("make --no-print-directory book")
    assert bench_build.main(["--only-load", "--load", "2", "--dry-run"]) == 0
    only = [line.split("]")[0].strip("[") for line in capsys.readouterr().out.splitlines()]
    assert only == ["clean-before-load", "under-load", "under-load"]
    with pytest.raises(SystemExit):
        bench_build.main(["--only-load", "--dry-run"])


def test_busy_processes_run_during_the_block_and_stop_after():
    with bench_build.busy_processes(2) as processes:
        time.sleep(0.2)
        assert len(processes) == 2 and all(process.poll() is None for process in processes)
    assert all(process.poll() is not None for process in processes)


# ---------------------------------------------------------------------------------------------
# A failed build is never up to date: a scratch book built by this Makefile's own rule

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


def _scratch_book(root: Path, marker: Path) -> None:
    """Two chapters; the cell of ``flaky`` hangs on its first execution only (``marker``)."""
    shutil.copytree(
        EXTENSION,
        root / "book" / "_ext" / EXTENSION.name,
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    (root / "_config.yml").write_text(
        textwrap.dedent(
            """\
            title: Scratch
            only_build_toc_files: true
            exclude_patterns: [_build, book/_ext]
            execute:
              execute_notebooks: cache
              timeout: 1800
              allow_errors: false
              raise_on_error: false
            repository:
              url: ""
            sphinx:
              local_extensions:
                curvlab_site: book/_ext
            """
        ),
        encoding="utf-8",
    )
    (root / "_toc.yml").write_text(
        "format: jb-book\nroot: book/intro\nchapters:\n"
        "  - file: book/flaky\n  - file: book/plain\n",
        encoding="utf-8",
    )
    (root / "book" / "intro.md").write_text("# Scratch\n\nTwo chapters.\n", encoding="utf-8")
    flaky = textwrap.dedent(
        f"""\
        import pathlib
        import time

        marker = pathlib.Path({str(marker)!r})
        if not marker.exists():
            marker.touch()
            time.sleep(300)
        print("flaky passes")"""
    )
    for name, code in [("flaky", flaky), ("plain", "print('plain', 1 + 1)")]:
        chapter = f"{FRONT_MATTER}\n# {name.title()}\n\n```{{code-cell}} ipython3\n{code}\n```\n"
        (root / "book" / f"{name}.md").write_text(chapter, encoding="utf-8")


def _make_book(root: Path, *options: str) -> tuple[int, str, set[str]]:
    """`make` of the book's target with this repository's Makefile, in the scratch book.

    The environment is the one running the tests (VENV), already installed (STAMP); the scratch
    book vendors no JavaScript (VENDOR_STAMP) and its chapters read no study (STUDIES: the
    studies step runs none, instead of looking up, or with an empty run cache training, all of
    the book's). A cell may run 5 s (CURVLAB_CELL_TIMEOUT).
    """
    result = subprocess.run(
        [
            MAKE,
            "--no-print-directory",
            "-f",
            str(REPOSITORY / "Makefile"),
            *options,
            "_build/html/index.html",
            f"VENV={sys.prefix}",
            "STAMP=",
            "VENDOR_STAMP=",
            "STUDIES=",
        ],
        cwd=root,
        env={**os.environ, "CURVLAB_CELL_TIMEOUT": "5"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    log = result.stdout + result.stderr
    by_mystnb = set(re.findall(r"(\w+)\.md: Executing notebook using", log))
    # the chapters executed side by side before Sphinx reads them
    # (book/_ext/curvlab_site/side_by_side.py)
    side_by_side = set(re.findall(r"curvlab: executed \S*?(\w+)\.md in .* \(side by side\)", log))
    failed_side_by_side = set(re.findall(r"curvlab: \S*?(\w+)\.md failed \(.* side by side\)", log))
    return result.returncode, log, by_mystnb | side_by_side | failed_side_by_side


@needs_make
@pytest.mark.slow
def test_a_failed_build_is_never_up_to_date(tmp_path):
    """A cell times out on the first build and passes on the second, on a fresh _build/."""
    root = tmp_path / "book"
    _scratch_book(root, tmp_path / "ran-once")
    html = root / "_build" / "html"

    status, log, executed = _make_book(root)
    assert status != 0, f"a build with a timed-out cell passed:\n{log}"
    assert executed == {"flaky", "plain"}
    assert "1 chapter(s) failed to execute: book/flaky.md (CellTimeoutError" in log, log
    assert not (html / "index.html").exists(), "a failed build left its target behind"
    assert not (html / "book" / "flaky.html").exists(), "the failed chapter's page is served"
    assert not (html / "_sources" / "book" / "flaky.ipynb").exists()
    assert (html / "book" / "plain.html").is_file()
    status, log, _ = _make_book(root, "-n")
    assert status == 0 and "jupyter-book build" in log, "Make finds the failed build up to date"

    status, log, executed = _make_book(root)
    assert status == 0, log
    assert executed == {"flaky"}, "the failed chapter runs again, the other comes from the cache"
    page = (html / "book" / "flaky.html").read_text(encoding="utf-8")
    assert "flaky passes" in page and "KeyboardInterrupt" not in page
    assert (html / "index.html").is_file()

    status, log, executed = _make_book(root)
    assert status == 0 and "jupyter-book build" not in log, (
        f"a passed build is not up to date:\n{log}"
    )


def test_the_studies_step_runs_registered_studies_the_chapters_read():
    from curvlab.cli import STUDIES

    text = (REPOSITORY / "Makefile").read_text(encoding="utf-8")
    listed = re.search(r"^STUDIES := (.*)$", text, re.MULTILINE).group(1).split()
    assert listed and set(listed) <= set(STUDIES), listed
    chapters = "\n".join(
        path.read_text(encoding="utf-8") for path in (REPOSITORY / "book").rglob("*.md")
    )
    called = {
        "reproduce": "run_study(REPRODUCE,",
        "pilot": "run_study(PILOT,",
        "sweep": "run_study(SWEEP,",
        "depth": "run_study(DEPTH,",
        "poole": "run_study(POOLE,",
        "realdata": "run_study(REALDATA,",
        "lm": "run_study(LM,",
        "boundaries": "retrain(",
    }
    for study, call in called.items():
        if call in chapters:
            assert study in listed, f"a chapter calls {call}...) but `make studies` skips {study}"
    rule = re.search(r"^\$\(STUDIES_STAMP\):(.*)\n((?:\t.*\n)+)", text, re.MULTILINE)
    assert rule and "--device cpu" in rule.group(2) and "exit 1" in rule.group(2)
