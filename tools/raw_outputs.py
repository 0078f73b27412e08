"""Find the outputs of the executed chapters that a reader would see as a raw Python repr.

A chapter shows a figure, a table, typeset mathematics or a sentence; a cell that only computes
ends without a displayed value. An output whose only representation is ``text/plain`` and whose
text is a bare tuple, list, dict, set or number (``(0.54, -0.04)``, ``{'ungated': 85}``,
``np.float64(0.5)``) is a debugging print on the page: this finds them in the executed notebooks
the site is built from (``_build/jupyter_execute/``), skipping what the page does not show
(outputs of ``remove-output``/``remove-cell`` cells, glued values).

    python -m tools.raw_outputs                      # _build/jupyter_execute; exit 1 on a find
    python -m tools.raw_outputs _build/student-src   # any folder of executed notebooks
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

# A raw repr shown on purpose: (page, the repr's first characters) -> why it is shown as is.
ALLOWED: dict[tuple[str, str], str] = {}

HIDDEN_TAGS = {"remove-output", "remove-cell"}
NUMBER_CALLS = {"float64", "float32", "int64", "int32", "float", "int"}  # np.float64(0.5)


def _text(value: str | list[str]) -> str:
    return "".join(value) if isinstance(value, list) else value


def _is_bare(node: ast.expr) -> bool:
    """Whether ``node`` is a tuple, list, dict, set or number, written out as a literal."""
    if isinstance(node, ast.Tuple | ast.List | ast.Dict | ast.Set):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        node = node.operand
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int | float | complex) and not isinstance(node.value, bool)
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        name = node.func.attr if isinstance(node.func, ast.Attribute) else None
        name = node.func.id if isinstance(node.func, ast.Name) else name
        return name in NUMBER_CALLS and _is_bare(node.args[0])
    return False


def raw_repr(output: dict) -> str | None:
    """The text of ``output`` if a reader sees it as a raw repr, else None.

    >>> raw_repr({"output_type": "execute_result", "data": {"text/plain": "(1, 2.5)"}})
    '(1, 2.5)'
    >>> raw_repr({"output_type": "execute_result", "data": {"text/plain": "'a sentence'"}})
    """
    if output.get("output_type") not in {"execute_result", "display_data"}:
        return None
    if "scrapbook" in output.get("metadata", {}):  # a glued value: shown where it is pasted
        return None
    data = output.get("data", {})
    if set(data) != {"text/plain"}:
        return None
    text = _text(data["text/plain"]).strip()
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    return text if _is_bare(node) else None


def raw_outputs(notebook: dict) -> list[str]:
    """The raw reprs a page built from ``notebook`` (nbformat 4, as JSON) would show."""
    found = []
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        if HIDDEN_TAGS & set(cell.get("metadata", {}).get("tags", [])):
            continue
        for output in cell.get("outputs", []):
            text = raw_repr(output)
            if text is not None:
                found.append(text)
    return found


def findings(folder: Path, allowed: dict[tuple[str, str], str] = ALLOWED) -> list[str]:
    """``page: repr`` for each raw repr of the notebooks under ``folder``, less ``allowed``."""
    found = []
    for path in sorted(folder.rglob("*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        page = path.relative_to(folder).with_suffix("").as_posix()
        for text in raw_outputs(json.loads(path.read_text(encoding="utf-8"))):
            if not any(page == p and text.startswith(start) for p, start in allowed):
                found.append(f"{page}: {text[:100]}")
    return found


def main(arguments: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.raw_outputs", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("folder", nargs="?", type=Path, default=Path("_build/jupyter_execute"))
    options = parser.parse_args(arguments)
    if not options.folder.is_dir():
        raise SystemExit(f"no executed notebooks in {options.folder}: build the book first")
    found = findings(options.folder)
    for finding in found:
        print(finding)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
