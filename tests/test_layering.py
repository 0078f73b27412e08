"""The import rules of ARCHITECTURE.md, enforced on every module of src/curvlab.

1. No module imports a private name (``_name``, not a dunder) from another module: a shared
   piece is a public function of a named module, or it is not shared.
2. A layer imports only its own layer and those below it:

       symbolic < engine < models and tasks < experiments < site

3. ``curvlab`` and the grader beside it, ``src/curvgrade``, import nothing of each other.

Imports are read with ``ast`` (module-level and function-level alike), relative imports are
resolved against the importing module's package.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "src"

# module (or package) name -> layer; the longest matching prefix wins
LAYERS = {
    "curvlab": 0,  # the package's own __init__ re-exports nothing
    "curvlab.symbolic": 0,
    "curvlab.gauss_equation": 1,
    "curvlab.curvature": 1,
    "curvlab.finite_differences": 1,
    "curvlab.measures": 1,
    "curvlab.surfaces": 1,
    "curvlab.quadrature": 1,
    "curvlab.tasks": 2,
    "curvlab.attention": 2,
    "curvlab.point_map": 2,
    "curvlab.training": 2,
    "curvlab.stats": 2,
    "curvlab.experiments": 3,
    "curvlab.benchmark": 3,
    "curvlab.plotting": 4,
    "curvlab.widgets": 4,
    "curvlab.__main__": 4,
}
LAYER_NAMES = ("symbolic", "engine", "models and tasks", "experiments", "site")

# Known violations waiting for the Part II change (experiments/ and __main__ are reshaped
# there); each entry is (importing module, imported module, name or None).  Empty today: add
# an entry only with a reason, and delete it when the change lands.
PENDING: set[tuple[str, str, str | None]] = set()


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SOURCE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def layer_of(module: str) -> int | None:
    candidates = [
        prefix for prefix in LAYERS if module == prefix or module.startswith(prefix + ".")
    ]
    if not candidates:
        return None
    return LAYERS[max(candidates, key=len)]


def is_module(name: str) -> bool:
    """True when ``name`` is a module or package under src (``from package import module``)."""
    path = SOURCE.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or path.joinpath("__init__.py").is_file()


def imports_of(source: str, module: str, is_package: bool) -> list[tuple[str, str | None]]:
    """(imported module, imported name or None) for every import of ``source``."""
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend((alias.name, None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            for alias in node.names:
                found.append((target, alias.name))
    return [(target, name) for target, name in found if target.split(".")[0] == "curvlab"]


def violations(source: str, module: str, is_package: bool = False) -> list[str]:
    """Every breach of the two rules by one module's source."""
    problems = []
    own = layer_of(module)
    for target, name in imports_of(source, module, is_package):
        if (module, target, name) in PENDING:
            continue
        is_private = name is not None and name.startswith("_") and not name.startswith("__")
        if is_private and target != module:
            problems.append(f"{module} imports the private name {name} from {target}")
        imported = f"{target}.{name}" if is_module(f"{target}.{name}") else target
        theirs = layer_of(imported)
        if own is not None and theirs is not None and theirs > own:
            problems.append(
                f"{module} ({LAYER_NAMES[own]}) imports {imported} ({LAYER_NAMES[theirs]}), "
                "a higher layer"
            )
    return problems


MODULES = sorted(SOURCE.joinpath("curvlab").rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(SOURCE)))
def test_every_module_has_a_layer_and_keeps_the_import_rules(path):
    module = module_name(path)
    assert layer_of(module) is not None, f"{module}: give it a layer in ARCHITECTURE.md and here"
    assert violations(path.read_text(), module, path.name == "__init__.py") == []


def test_the_checker_catches_both_kinds_of_breach():
    engine_reaching_up = "from curvlab.attention import build_classifier\n"
    assert "a higher layer" in violations(engine_reaching_up, "curvlab.measures")[0]
    private = "def f():\n    from curvlab.curvature import _helper\n"
    assert "private name _helper" in violations(private, "curvlab.measures")[0]
    relative = "from .geometry import _chain\n"
    assert "from curvlab.symbolic.geometry" in violations(relative, "curvlab.symbolic.fisher")[0]
    symbolic_reaching_up = "from curvlab.curvature import metric\n"
    assert violations(symbolic_reaching_up, "curvlab.symbolic.geometry")
    assert violations("from curvlab.gauss_equation import jets\n", "curvlab.measures") == []
    dunder = "from .attention import __all__ as names\n"
    assert violations(dunder, "curvlab.symbolic", is_package=True) == []
    assert "a higher layer" in violations("from curvlab import widgets\n", "curvlab.tasks")[0]


def test_pending_exceptions_name_real_modules():
    for importer, target, _ in PENDING:
        assert layer_of(importer) is not None and layer_of(target) is not None


def imported_packages(path: Path) -> set[str]:
    """The top-level packages ``path`` imports by absolute name (relative imports stay home)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return found


GRADER_MODULES = sorted(SOURCE.joinpath("curvgrade").rglob("*.py"))


def test_the_library_and_the_grader_import_nothing_of_each_other():
    assert GRADER_MODULES, "the grader is the package src/curvgrade"
    library_to_grader = [p for p in MODULES if "curvgrade" in imported_packages(p)]
    grader_to_library = [p for p in GRADER_MODULES if "curvlab" in imported_packages(p)]
    assert library_to_grader == [], "curvlab must not import the grader"
    assert grader_to_library == [], "curvgrade locates curvlab (sandbox.LIBRARIES), not imports it"
