"""The README is a front door with no dead instruction: its two commands and the read, run and
teach paths on its first screen, every `make` target it or BUILDING.md names a target of the
Makefile, every `python -m` command a module (and subcommand) that exists, every relative
link a file (and heading) of the repository, and every tracked path it names a file."""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]
DOCUMENTS = ("README.md", "BUILDING.md")
# Paths under these are written by the build, not tracked: naming them is no dead instruction.
GENERATED = ("_build/", ".venv/", "editions/", "artifacts/", "book/_static/vendor/", "results/")
FIRST_SCREEN = 50  # lines
PATH = r"(?<![\w./-])((?:\.?[\w-]+/)+[\w.-]+\.(?:md|py|json|yml|txt|toml))"


def _text(name: str) -> str:
    return (REPOSITORY / name).read_text(encoding="utf-8")


def _code(text: str) -> list[str]:
    """The code of a Markdown text: fenced blocks, indented blocks and inline code spans."""
    fenced = re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.M | re.S)
    rest = re.sub(r"^```[^\n]*\n.*?^```", "", text, flags=re.M | re.S)
    indented = re.findall(r"^(?: {4}|\t)(.*)$", rest, flags=re.M)
    spans = re.findall(r"`([^`\n]+)`", re.sub(r"^(?: {4}|\t).*$", "", rest, flags=re.M))
    return [*fenced, *indented, *spans]


def make_targets(makefile: str) -> set[str]:
    """The explicit targets of a Makefile's rules (not variables, not pattern rules)."""
    targets = set()
    for line in makefile.splitlines():
        match = re.match(r"^([^\s#:=$%][^:=]*?):(?![:=])", line)
        if match and not match.group(1).startswith("."):
            targets.update(match.group(1).split())
    return targets


def make_commands(text: str) -> set[str]:
    """The targets of every `make TARGET` in the code of a Markdown text."""
    return {t for code in _code(text) for t in re.findall(r"\bmake ([a-z][\w-]*)", code)}


def python_commands(text: str) -> set[tuple[str, str | None]]:
    """Every ``python -m MODULE [SUBCOMMAND]`` in the code of a Markdown text."""
    found = set()
    for code in _code(text):
        for module, sub in re.findall(r"python -m ([\w.]+)(?:[ \t]+([a-z][\w-]*))?", code):
            found.add((module, sub or None))
    return found


def _slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def dead_links(name: str, text: str) -> list[str]:
    """The relative links of a Markdown file whose file, or heading, does not exist."""
    dead = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        file = (REPOSITORY / name).parent / path if path else REPOSITORY / name
        if not file.exists():
            dead.append(target)
        elif anchor and file.suffix == ".md":
            headings = re.findall(r"^#+ (.*)$", file.read_text(encoding="utf-8"), flags=re.M)
            if anchor not in {_slug(h) for h in headings}:
                dead.append(target)
    return dead


def named_paths(text: str) -> set[str]:
    """The repository files a Markdown text names in code (a path with a file suffix)."""
    paths = set()
    for code in _code(text):
        for path in re.findall(PATH, code):
            if not path.startswith(GENERATED) and "<" not in path:
                paths.add(path)
    return paths


def test_make_targets_reads_the_makefile_rules():
    text = "all: a b\n\tcmd\nVAR := x\n$(STAMP): y\n.PHONY: all\nb c: ; x\n%.o: %.c\n"
    assert make_targets(text) == {"all", "b", "c"}
    assert {"book", "test", "lab", "editions", "grade-demo"} <= make_targets(_text("Makefile"))


def test_the_first_screen_holds_the_two_commands_and_the_three_paths():
    readme = _text("README.md")
    screen = "\n".join(readme.splitlines()[:FIRST_SCREEN])
    two = re.search(r"## The two commands\n+```bash\n(.*?)```", screen, flags=re.S)
    assert two, "README: the two commands are not a code block on the first screen"
    commands = [line.split("#")[0].strip() for line in two.group(1).splitlines()]
    assert commands == ["make book", "make test"], commands
    paths = {
        "Read": ("_build/html/index.html",),
        "Run": ("make lab",),
        "Teach": ("make editions", "make grade-demo", "python -m curvgrade grade -h"),
    }
    for path, needed in paths.items():
        paragraph = re.search(rf"^\*\*{path}\*\*(.*?)(?=^\*\*|^## )", screen, flags=re.M | re.S)
        assert paragraph, f"README: no {path} path on the first screen"
        for command in needed:
            assert command in paragraph.group(1), f"README, {path}: {command} is missing"
        assert re.search(r"\]\((?!https?:)[^)]+\)", paragraph.group(1)), f"{path}: no link"
    assert readme.count("](BUILDING.md") == 1, "README links BUILDING.md once"


@pytest.mark.parametrize("name", DOCUMENTS)
def test_every_make_command_is_a_target_of_the_makefile(name):
    targets = make_targets(_text("Makefile"))
    named = make_commands(_text(name))
    assert named, f"{name} names no make target"
    assert named <= targets, f"{name}: not targets of the Makefile: {sorted(named - targets)}"


def test_the_book_target_writes_the_page_the_readme_opens():
    assert "_build/html/index.html" in make_targets(_text("Makefile"))


@pytest.mark.parametrize("name", DOCUMENTS)
def test_every_python_command_names_a_module_and_a_subcommand_that_exist(name):
    commands = python_commands(_text(name))
    missing = sorted(m for m, _ in commands if importlib.util.find_spec(m) is None)
    assert not missing, f"{name}: no such module: {missing}"
    dead = []
    for module in ("curvlab", "curvgrade"):
        subs = {sub for m, sub in commands if m == module and sub}
        if not subs:
            continue
        result = subprocess.run(
            [sys.executable, "-m", module, "--help"], capture_output=True, text=True, check=True
        )
        listed = set(re.findall(r"^\s+([a-z][\w-]*)\b", result.stdout, flags=re.M))
        dead += [f"{module} {sub}" for sub in sorted(subs - listed)]
    assert not dead, f"{name}: no such subcommand: {dead}"


@pytest.mark.parametrize("name", DOCUMENTS)
def test_every_relative_link_resolves(name):
    assert not dead_links(name, _text(name)), f"{name}: dead links {dead_links(name, _text(name))}"


@pytest.mark.parametrize("name", DOCUMENTS)
def test_every_tracked_path_named_exists(name):
    missing = sorted(p for p in named_paths(_text(name)) if not (REPOSITORY / p).exists())
    assert not missing, f"{name} names files that do not exist: {missing}"


def test_the_checks_catch_a_dead_target_a_dead_link_and_a_dead_path():
    text = "Run `make bokk`, see [x](NOPE.md) and [y](README.md#no-such-heading), `tools/nope.py`."
    assert make_commands(text) - make_targets(_text("Makefile")) == {"bokk"}
    assert dead_links("README.md", text) == ["NOPE.md", "README.md#no-such-heading"]
    assert dead_links("README.md", "[z](BUILDING.md#build-times), [w](#read-run-teach)") == []
    assert named_paths(text) == {"tools/nope.py"}
    assert python_commands("    python -m curvgrade grade -h") == {("curvgrade", "grade")}
