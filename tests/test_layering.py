"""The import rules of ARCHITECTURE.md, enforced on every module of src/curvlab and of tools/.

A module's layer is its folder: ``curvlab/<folder>/...`` belongs to the layer named by
``<folder>``, in the order

    symbolic < geometry < data < models < measurement < analysis < studies < plotting < cli

``curvlab`` and the grader beside it, ``src/curvgrade``, import nothing of each other.
(Top-level modules: ``curvlab.curvature`` re-exports the geometry layer's public API,
``curvlab.cli`` and ``curvlab.__main__`` are the command line, the package ``__init__`` imports
nothing, and ``curvlab.arguments``, the argument checks every layer shares, is in layer 0: it
imports nothing of curvlab, so every layer may import it).  Three rules:

1. No module imports a private name (``_name``, not a dunder) from another module: a shared
   piece is a public function of a named module, or it is not shared.
2. A layer imports only its own layer and those below it.
3. No import cycle anywhere, counting imports inside functions (a lazy import hides a cycle
   from Python, not from a reader).

No module is longer than 500 lines.

The build tools, the package ``tools`` at the repository's root (``python -m tools.<name>``),
are in no layer: they may import the public names of ``curvlab``, ``curvgrade`` and one
another, and neither library imports them (the wheel packages src/ only). Rules 1 and 3 and the
500 lines hold for every tool.

No module of the grader, ``src/curvgrade``, is longer than 500 lines either.

Imports are read with ``ast`` (module-level and function-level alike); relative imports are
resolved against the importing module's package.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]
SOURCE = REPOSITORY / "src"
PACKAGE = SOURCE / "curvlab"
TOOLS = REPOSITORY / "tools"
# The packages whose imports the rules read: a library module's, and a tool's.
LIBRARY_REACH = ("curvlab",)
TOOL_REACH = ("curvlab", "curvgrade", "tools")

LAYER_ORDER = (
    "symbolic",
    "geometry",
    "data",
    "models",
    "measurement",
    "analysis",
    "studies",
    "plotting",
    "cli",
)
TOP_LEVEL = {
    "curvlab": "symbolic",
    "curvlab.arguments": "symbolic",  # imports nothing of curvlab: every layer's checks
    "curvlab.curvature": "geometry",
    "curvlab.__main__": "cli",
}


def home(path: Path) -> Path:
    """The folder ``path``'s module is named from: src/ for the libraries, the root for tools."""
    return SOURCE if path.is_relative_to(SOURCE) else REPOSITORY


def module_name(path: Path) -> str:
    parts = list(path.relative_to(home(path)).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def layer_of(module: str) -> int | None:
    """The rank of ``module``'s layer, read from its folder; None outside the layers."""
    if module in TOP_LEVEL:
        return LAYER_ORDER.index(TOP_LEVEL[module])
    parts = module.split(".")
    if parts[0] != "curvlab" or len(parts) < 2:
        return None
    return LAYER_ORDER.index(parts[1]) if parts[1] in LAYER_ORDER else None


def is_module(name: str) -> bool:
    """True when ``name`` is a module or package under src or a tool (``from tools import x``)."""
    for base in (SOURCE, REPOSITORY):
        path = base.joinpath(*name.split("."))
        if path.with_suffix(".py").is_file() or path.joinpath("__init__.py").is_file():
            return True
    return False


def import_target(node: ast.ImportFrom, package: str) -> str:
    """The module a ``from ... import`` names, a relative one resolved against ``package``."""
    if not node.level:
        return node.module or ""
    base = package.split(".")
    base = base[: len(base) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def imports_of(
    source: str, module: str, is_package: bool, reach: tuple[str, ...] = LIBRARY_REACH
) -> list[tuple[str, str | None]]:
    """(imported module, imported name or None) for every import of ``source`` from a package
    of ``reach``."""
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend((alias.name, None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = import_target(node, package)
            for alias in node.names:
                found.append((target, alias.name))
    return [(target, name) for target, name in found if target.split(".")[0] in reach]


def imported_module(target: str, name: str | None) -> str:
    """The module an import reaches: ``from package import module`` reaches the module."""
    return f"{target}.{name}" if name and is_module(f"{target}.{name}") else target


def violations(
    source: str, module: str, is_package: bool = False, reach: tuple[str, ...] = LIBRARY_REACH
) -> list[str]:
    """Every breach of rules 1 and 2 by one module's source (a tool has no layer: rule 1 only)."""
    problems = []
    own = layer_of(module)
    for target, name in imports_of(source, module, is_package, reach):
        is_private = name is not None and name.startswith("_") and not name.startswith("__")
        if is_private and target != module:
            problems.append(f"{module} imports the private name {name} from {target}")
        imported = imported_module(target, name)
        theirs = layer_of(imported)
        if own is not None and theirs is not None and theirs > own:
            problems.append(
                f"{module} ({LAYER_ORDER[own]}) imports {imported} ({LAYER_ORDER[theirs]}), "
                "a higher layer"
            )
    return problems


def imported_modules(
    source: str, module: str, is_package: bool = False, reach: tuple[str, ...] = LIBRARY_REACH
) -> set[str]:
    """The other modules of ``reach`` that one module's source imports (anywhere in it)."""
    edges = imports_of(source, module, is_package, reach)
    return {imported_module(target, name) for target, name in edges} - {module}


def import_graph(paths, reach: tuple[str, ...] = LIBRARY_REACH) -> dict[str, set[str]]:
    """module -> the modules of ``reach`` it imports (anywhere in its source)."""
    return {
        module_name(path): imported_modules(
            path.read_text(), module_name(path), path.name == "__init__.py", reach
        )
        for path in paths
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in graph.get(node, ()):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


MODULES = sorted(PACKAGE.rglob("*.py"))
TOOL_MODULES = sorted(TOOLS.rglob("*.py"))


def _id(path: Path) -> str:
    return str(path.relative_to(home(path)))


@pytest.mark.parametrize("path", MODULES, ids=_id)
def test_every_module_has_a_layer_and_keeps_the_import_rules(path):
    module = module_name(path)
    assert layer_of(module) is not None, f"{module}: put it in a layer's folder (ARCHITECTURE.md)"
    assert violations(path.read_text(), module, path.name == "__init__.py") == []


@pytest.mark.parametrize("path", TOOL_MODULES, ids=_id)
def test_every_tool_imports_no_private_name(path):
    source, module = path.read_text(), module_name(path)
    assert violations(source, module, path.name == "__init__.py", TOOL_REACH) == []


def test_the_import_graph_has_no_cycle():
    assert TOOL_MODULES, "the build tools are the package tools/"
    graph = import_graph(MODULES) | import_graph(TOOL_MODULES, TOOL_REACH)
    assert cycles(graph) == []


def test_the_checker_catches_each_kind_of_breach():
    models_reaching_up = "from curvlab.studies.cells import run_cell\n"
    assert "a higher layer" in violations(models_reaching_up, "curvlab.models.attention")[0]
    private = "def f():\n    from curvlab.curvature import _helper\n"
    assert "private name _helper" in violations(private, "curvlab.geometry.measures")[0]
    relative = "from .connection import _chain\n"
    assert "from curvlab.symbolic.connection" in violations(relative, "curvlab.symbolic.fisher")[0]
    symbolic_reaching_up = "from curvlab.curvature import metric\n"
    assert violations(symbolic_reaching_up, "curvlab.symbolic.curvature")
    ok = "from curvlab.geometry.gauss_equation import jets\n"
    assert violations(ok, "curvlab.geometry.measures") == []
    dunder = "from .gates import __all__ as names\n"
    assert violations(dunder, "curvlab.symbolic", is_package=True) == []
    assert "a higher layer" in violations("from curvlab import cli\n", "curvlab.data.tasks")[0]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_checker_catches_a_tool_breaching_them():
    private = "from tools.lint_chapters import _ruff\n"
    assert "private name _ruff" in violations(private, "tools.check_kit", reach=TOOL_REACH)[0]
    relative = "def f():\n    from .raw_outputs import _is_bare\n"
    found = violations(relative, "tools.check_kit", reach=TOOL_REACH)
    assert "_is_bare from tools.raw_outputs" in found[0]
    library_private = "from curvgrade.sandbox import _mounts\n"
    assert violations(library_private, "tools.check_kit", reach=TOOL_REACH)
    public = "from curvlab.cli import main\nfrom curvgrade import read_chapter\n"
    assert violations(public, "tools.check_kit", reach=TOOL_REACH) == []
    one_way = imported_modules(
        "from tools import raw_outputs\n", "tools.check_kit", False, TOOL_REACH
    )
    back = imported_modules("import tools.check_kit\n", "tools.raw_outputs", False, TOOL_REACH)
    assert one_way == {"tools.raw_outputs"} and back == {"tools.check_kit"}
    graph = {"tools.check_kit": one_way, "tools.raw_outputs": back}
    assert cycles(graph) == [["tools.check_kit", "tools.raw_outputs"]]
    assert "tools" in imported_packages("def f():\n    from tools import check_kit\n")


def test_a_module_outside_the_layer_folders_has_no_layer():
    assert layer_of("curvlab.experiments.cells") is None
    assert layer_of("curvlab.geometry.curvature") == LAYER_ORDER.index("geometry")
    assert layer_of("curvlab.curvature") == LAYER_ORDER.index("geometry")


@pytest.mark.parametrize("path", MODULES + TOOL_MODULES, ids=_id)
def test_no_module_exceeds_500_lines(path):
    assert len(path.read_text().splitlines()) <= 500


def imported_packages(source: str) -> set[str]:
    """The top-level packages ``source`` imports by absolute name (relative imports stay home)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return found


GRADER_MODULES = sorted(SOURCE.joinpath("curvgrade").rglob("*.py"))


def test_the_library_and_the_grader_import_nothing_of_each_other():
    assert GRADER_MODULES, "the grader is the package src/curvgrade"
    library_to_grader = [p for p in MODULES if "curvgrade" in imported_packages(p.read_text())]
    grader_to_library = [p for p in GRADER_MODULES if "curvlab" in imported_packages(p.read_text())]
    assert library_to_grader == [], "curvlab must not import the grader"
    assert grader_to_library == [], "curvgrade locates curvlab (sandbox.LIBRARIES), not imports it"


@pytest.mark.parametrize("path", GRADER_MODULES, ids=_id)
def test_no_grader_module_exceeds_500_lines(path):
    assert len(path.read_text().splitlines()) <= 500


def test_neither_library_imports_the_tools():
    reaching = [
        _id(path)
        for path in MODULES + GRADER_MODULES
        if "tools" in imported_packages(path.read_text())
    ]
    assert reaching == [], (
        "the tools import the libraries, never the reverse (the wheel has no tools)"
    )


# ---------------------------------------------------------------------------------------------
# The site extension (book/_ext/curvlab_site): a Sphinx extension beside the library, not part
# of it. Its modules are small, import no private name of curvlab or of each other, and
# nothing of curvlab or the grader imports it.

EXTENSION = SOURCE.parent / "book" / "_ext" / "curvlab_site"
EXTENSION_MODULES = sorted(EXTENSION.rglob("*.py"))
OWN_PACKAGES = {"curvlab", EXTENSION.name}


def extension_module_name(path: Path) -> str:
    parts = [EXTENSION.name, *path.relative_to(EXTENSION).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _dotted(node: ast.expr) -> str | None:
    """``a.b.c`` for a chain of attributes on a name; None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def private_imports(source: str, module: str, is_package: bool = False) -> list[str]:
    """Every private name ``module`` takes from curvlab or from the extension's other modules:
    by ``from ... import _name``, or as ``alias._name`` of a module it imported."""
    package = module if is_package else module.rpartition(".")[0]
    tree = ast.parse(source)
    problems, bound = [], {}  # bound: local name -> the curvlab or extension module it names
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in OWN_PACKAGES:
                    local = alias.asname or alias.name.split(".")[0]
                    bound[local] = alias.name if alias.asname else local
        elif isinstance(node, ast.ImportFrom):
            target = import_target(node, package)
            if target.split(".")[0] not in OWN_PACKAGES:
                continue
            for alias in node.names:
                if _is_private(alias.name) and target != module:
                    problems.append(f"{module} imports the private name {alias.name} from {target}")
                else:
                    bound[alias.asname or alias.name] = f"{target}.{alias.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_private(node.attr):
            chain = _dotted(node.value)
            if chain and chain.split(".")[0] in bound:
                owner = bound[chain.split(".")[0]] + chain[len(chain.split(".")[0]) :]
                problems.append(f"{module} uses the private name {node.attr} of {owner}")
    return problems


def test_the_site_extension_is_a_package():
    assert (EXTENSION / "__init__.py").is_file(), "book/_ext/curvlab_site/ is a package"
    assert not EXTENSION.with_suffix(".py").exists(), "one home: the package, not a module too"
    assert len(EXTENSION_MODULES) > 1


@pytest.mark.parametrize("path", EXTENSION_MODULES, ids=lambda p: p.name)
def test_every_module_of_the_site_extension_is_small_and_imports_no_private_name(path):
    assert len(path.read_text().splitlines()) <= 500, f"{path.name}: split it by concern"
    module = extension_module_name(path)
    assert private_imports(path.read_text(), module, path.name == "__init__.py") == []


def test_the_private_import_checker_catches_each_kind_of_breach():
    sibling = "from .patience import _patient_waits\n"
    assert (
        "private name _patient_waits from curvlab_site.patience"
        in (private_imports(sibling, "curvlab_site.side_by_side")[0])
    )
    absolute = "def f():\n    from curvlab_site.cache import _failed_docs\n"
    assert "_failed_docs" in private_imports(absolute, "curvlab_site.download")[0]
    library = "from curvlab.studies.pool import _cores\n"
    assert "from curvlab.studies.pool" in private_imports(library, "curvlab_site.side_by_side")[0]
    attribute = "from . import cache\n\ncache._failed_docs(env)\n"
    assert "_failed_docs of curvlab_site.cache" in private_imports(attribute, "curvlab_site.x")[0]
    dotted = "import curvlab.studies.pool\n\ncurvlab.studies.pool._cores()\n"
    assert "of curvlab.studies.pool" in private_imports(dotted, "curvlab_site.x")[0]
    package = "from . import _helpers\n"
    assert "_helpers from curvlab_site" in private_imports(package, "curvlab_site.cache")[0]
    parent = "from .. import _helpers\n"
    assert private_imports(parent, "curvlab_site.sub", is_package=True)
    fine = (
        "from . import cache\nfrom .patience import patient_waits\n"
        "from curvlab.studies.pool import available_cores\nimport os\n"
        "os._exit\ncache.__doc__\nself._notebook\n"
    )
    assert private_imports(fine, "curvlab_site.side_by_side") == []
    own = "from .side_by_side import _execute\n"
    assert private_imports(own, "curvlab_site.side_by_side") == []


def test_neither_the_library_nor_the_grader_imports_the_site_extension():
    importers = [
        p for p in MODULES + GRADER_MODULES if EXTENSION.name in imported_packages(p.read_text())
    ]
    assert importers == [], "the site extension is the book's, never the library's"
