"""Check a course kit (``make kit``): one wheel holding only the libraries, and the pins.

    python -m tools.check_kit editions/kit

A student installs the kit; it must carry nothing that gives an exercise away: no chapter
(``book/``), no test (``tests/`` describes the hidden checks), no notebook, no autograder
bundle. The wheel may hold the packages ``curvlab`` and ``curvgrade`` and its own metadata
only. Exits 1 naming what does not belong.
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

ALLOWED_TOP = ("curvlab/", "curvgrade/")
FORBIDDEN_SUFFIXES = (".md", ".ipynb", ".json", ".bib")


def problems(kit: Path) -> list[str]:
    """What is wrong with the kit in ``kit`` (empty when it may be handed out)."""
    found = []
    wheels = sorted(kit.glob("*.whl"))
    if len(wheels) != 1:
        found.append(f"{kit}: expected one wheel, found {len(wheels)}")
    if not (kit / "requirements.txt").is_file():
        found.append(f"{kit}: requirements.txt is missing")
    extra = sorted(
        path.name
        for path in kit.iterdir()
        if path.suffix != ".whl" and path.name != "requirements.txt"
    )
    if extra:
        found.append(f"{kit}: files that do not belong: {', '.join(extra)}")
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as archive:
            for name in archive.namelist():
                top = name.split("/", 1)[0]
                if top.endswith(".dist-info"):
                    continue
                if not name.startswith(ALLOWED_TOP):
                    found.append(f"{wheel.name}: {name} is not part of the libraries")
                elif name.endswith(FORBIDDEN_SUFFIXES):
                    found.append(f"{wheel.name}: {name} may hold a chapter or its checks")
    return found


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m tools.check_kit KIT_FOLDER", file=sys.stderr)
        return 2
    kit = Path(argv[0])
    if not kit.is_dir():
        print(f"kit: no such folder {kit}", file=sys.stderr)
        return 2
    found = problems(kit)
    for problem in found:
        print(problem, file=sys.stderr)
    if not found:
        wheel = next(kit.glob("*.whl"))
        print(f"{kit}: {wheel.name} and requirements.txt: libraries only, ready to hand out")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
