"""Laws of the Part II chapters' source: code that fits the page, one table of checks, and no
assertion of which empirical verdict comes out."""

import re
from pathlib import Path

import pytest

CHAPTERS = Path(__file__).resolve().parents[1] / "book" / "experiments"
SLIM = ("autodiff-curvature", "depth-amplification")  # chapters whose cells show, not compute


def _code_cells(name: str) -> list[str]:
    text = (CHAPTERS / f"{name}.md").read_text(encoding="utf-8")
    return re.findall(r"```\{code-cell\} ipython3\n(.*?)\n```", text, flags=re.DOTALL)


@pytest.mark.parametrize("name", SLIM)
def test_no_code_line_overflows_the_page(name):
    long = [line for cell in _code_cells(name) for line in cell.splitlines() if len(line) > 100]
    assert long == []


@pytest.mark.parametrize("name", SLIM)
def test_a_chapter_reports_its_checks_in_one_table(name):
    cells = _code_cells(name)
    assert sum("CheckTable(" in cell for cell in cells) == 1
    assert any(cell.strip().splitlines()[-1] == "checks" for cell in cells)


@pytest.mark.parametrize("name", SLIM)
def test_cells_are_short(name):
    lengths = [len(cell.splitlines()) for cell in _code_cells(name)]
    assert sum(lengths) / len(lengths) < 16
    assert max(lengths[1:]) <= 40  # the first cell holds the imports


def test_the_reproduction_never_asserts_which_empirical_verdict_comes_out():
    text = (CHAPTERS / "reproduction.md").read_text(encoding="utf-8")
    asserted = re.findall(r"assert[^\n]*verdicts\[\"(?:E\d|r)\"\][^\n]*", text)
    assert asserted == []
