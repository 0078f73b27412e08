"""No page of the built sites shows a raw Python repr (``make book``, ``make book-student``).

The executed notebooks the pages are built from are read with ``tools.raw_outputs``: an output
whose only form is ``text/plain`` and which is a bare tuple, list, dict or number fails, unless
``raw_outputs.ALLOWED`` names it with the reason it is shown as is. Marked slow: it runs after
the build (``make test-slow``).
"""

from pathlib import Path

import pytest

from tools import raw_outputs

REPOSITORY = Path(__file__).resolve().parents[1]

EXECUTED = {
    "book": REPOSITORY / "_build" / "jupyter_execute",  # myst-nb: each page's executed notebook
    "student site": REPOSITORY / "_build" / "student-src",  # curvgrade.site: what it shows
}


@pytest.mark.slow
@pytest.mark.parametrize("site", sorted(EXECUTED))
def test_no_page_shows_a_raw_repr(site):
    folder = EXECUTED[site]
    if not any(folder.rglob("*.ipynb")):
        pytest.fail(f"no executed notebooks in {folder}: run `make book book-student` first")
    found = raw_outputs.findings(folder)
    assert found == [], f"raw Python reprs on the {site}'s pages:\n" + "\n".join(found)
