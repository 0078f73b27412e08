"""Write the paired ``.ipynb`` next to every chapter ``.md`` (MyST Markdown notebook).

The launch buttons (Binder, Colab) of the built site open ``book/<chapter>.ipynb`` from the
repository, because Colab cannot open a MyST ``.md`` file. The pair is written from the ``.md``
with jupytext, with no outputs, and with cell ids derived from each cell's source (not its place),
so that writing it twice gives the same bytes (a regenerated notebook shows no diff) and editing
one cell changes only that cell in the pair.

    python book/_vendor/pair_notebooks.py book/geometry/fisher-rao.md ...   # write the pairs
    python book/_vendor/pair_notebooks.py --check book/geometry/*.md        # exit 1 if stale
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import jupytext


def paired_notebook_text(markdown_path: Path) -> str:
    """The ``.ipynb`` text for ``markdown_path``: its cells, no outputs, ids from the sources."""
    notebook = jupytext.read(markdown_path)
    seen: dict[str, int] = {}
    for cell in notebook.cells:
        # The id depends on the cell's source (and how often that source came before), not on
        # its position: editing one cell changes only that cell's id.
        repeat = seen.get(cell.source, 0)
        seen[cell.source] = repeat + 1
        digest = hashlib.sha1(f"{cell.cell_type}\n{repeat}\n{cell.source}".encode()).hexdigest()
        cell["id"] = digest[:8]
    text = jupytext.writes(notebook, fmt="ipynb")
    return text if text.endswith("\n") else text + "\n"


def main(arguments: list[str]) -> int:
    check = "--check" in arguments
    paths = [Path(argument) for argument in arguments if argument != "--check"]
    stale = []
    for markdown_path in paths:
        if markdown_path.suffix != ".md":
            raise SystemExit(f"expected chapter .md files, got {markdown_path}")
        text = paired_notebook_text(markdown_path)
        target = markdown_path.with_suffix(".ipynb")
        current = target.read_text(encoding="utf-8") if target.exists() else None
        if current == text:
            continue
        if check:
            stale.append(str(target))
        else:
            target.write_text(text, encoding="utf-8")
            print(f"wrote {target}")
    if stale:
        print("stale paired notebooks (run `make notebooks`):", *stale, sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
