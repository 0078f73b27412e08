"""The student site (``make book-student``): the book without solutions or hidden checks.

Without a browser: every page of the main book is there, no page holds a line of any
solution or hidden check, and every page shows the figures and glued numbers of the same page
of the main site (``make book``), less those made by a solution cell: the student site is
built from the main build's executed notebooks, not executed again and not without outputs.
In headless Chromium (``-m browser``), like the main site: every page
loads with no console error, no request outside localhost, every local resource found and the
math typeset. The browser helpers are those of ``tests/test_site.py``, loaded a second time
with ``CURVLAB_SITE_DIR`` pointing at the student site.
"""

from __future__ import annotations

import base64
import hashlib
import html
import importlib.util
import os
import re
import sys
from collections import Counter
from pathlib import Path

import pytest

from curvgrade.chapter import read_chapter
from curvgrade.site import distinctive_answer_lines, executed_notebook, student_markdown
from curvgrade.toc import toc_chapters

REPOSITORY = Path(__file__).resolve().parents[1]
STUDENT_SITE = Path(
    os.environ.get(
        "CURVLAB_STUDENT_SITE_DIR", REPOSITORY / "_build" / "student" / "_build" / "html"
    )
).resolve()


def _site_helpers():
    saved = {key: os.environ.get(key) for key in ("CURVLAB_SITE_DIR", "CURVLAB_SCREENSHOT_DIR")}
    os.environ["CURVLAB_SITE_DIR"] = str(STUDENT_SITE)
    os.environ["CURVLAB_SCREENSHOT_DIR"] = str(REPOSITORY / "artifacts" / "screenshots-student")
    try:
        spec = importlib.util.spec_from_file_location(
            "site_helpers_student", Path(__file__).with_name("test_site.py")
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        return module
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


helpers = _site_helpers()


@pytest.fixture(scope="module")
def student_site() -> Path:
    if not (STUDENT_SITE / "index.html").is_file():
        pytest.fail(f"no student site at {STUDENT_SITE}: run `make book-student` first")
    return STUDENT_SITE


def _chapters_with_exercises() -> list[Path]:
    chapters = []
    for path in toc_chapters(REPOSITORY / "_toc.yml"):
        if path.is_file() and "{exercise}" in path.read_text(encoding="utf-8"):
            chapters.append(path)
    return chapters


def _page_text(path: Path) -> str:
    text = re.sub(r"<[^>]+>", "", path.read_text(encoding="utf-8", errors="replace"))
    return html.unescape(text)


def test_the_student_site_has_every_page_of_the_book(student_site):
    for path in toc_chapters(REPOSITORY / "_toc.yml"):
        if path.is_file():
            page = path.relative_to(REPOSITORY).with_suffix(".html")
            assert (student_site / page).is_file(), f"{page} missing from the student site"


def test_no_page_of_the_student_site_holds_a_solution_or_a_hidden_check(student_site):
    stripped: dict[Path, str] = {}
    for chapter in _chapters_with_exercises():
        try:
            stripped[chapter] = student_markdown(chapter)
        except ValueError:  # exercises shown as examples only (the instructors' page)
            continue
    public = "\n".join(stripped.values())  # a line a student text shows anywhere is public
    forbidden = {
        line: chapter
        for chapter in stripped
        for line in distinctive_answer_lines(chapter)
        if line not in public
    }
    assert forbidden, "no chapter has a solution line to look for"
    pages = {page: _page_text(page) for page in student_site.rglob("*.html")}
    pages |= {
        source: source.read_text(encoding="utf-8")
        for source in (student_site / "_sources").rglob("*")
        if source.is_file()
    }
    leaks = [
        f"{page.relative_to(student_site)}: {line!r} (from {chapter.name})"
        for page, text in pages.items()
        for line, chapter in forbidden.items()
        if line in text
    ]
    assert leaks == []


MAIN_BUILD = REPOSITORY / "_build"
STUB = "This page quotes solutions: it is left out of the student edition of the book."


def _figures(page: Path) -> Counter:
    """The images a page shows from ``_images/`` (their names are their SHA-256)."""
    names = re.findall(r'<img[^>]*\bsrc="[^"]*_images/([^"/]+)"', page.read_text(encoding="utf-8"))
    return Counter(Path(name).stem for name in names)


def _glued(page: Path) -> list[str]:
    """The glued values of a page, in order (myst-nb's ``pasted-*`` elements)."""
    text = page.read_text(encoding="utf-8")
    found = re.findall(r'class="[^"]*\bpasted-(?:text|inline)\b[^"]*"[^>]*>(.*?)</', text, re.S)
    return [html.unescape(re.sub(r"<[^>]+>", "", value)).strip() for value in found]


def _solution_figures(source: Path) -> set[str]:
    """SHA-256 of each image a solution cell of the chapter at ``source`` drew."""
    page = source.relative_to(REPOSITORY).with_suffix("").as_posix()
    notebook = executed_notebook(MAIN_BUILD, page)
    if notebook is None or "{exercise}" not in source.read_text(encoding="utf-8"):
        return set()
    try:
        roles = read_chapter(source).roles
    except ValueError:
        return set()
    digests = set()
    for cell, role in zip(notebook.cells, roles, strict=True):
        if role.role != "solution":
            continue
        for output in cell.get("outputs", []):
            for mime, data in output.get("data", {}).items():
                if mime.startswith("image/") and mime != "image/svg+xml":
                    digests.add(hashlib.sha256(base64.b64decode(data)).hexdigest())
    return digests


def test_student_pages_show_the_main_sites_figures_and_glued_values(student_site):
    main_site = MAIN_BUILD / "html"
    if not (main_site / "index.html").is_file():
        pytest.fail(f"no main site at {main_site}: run `make book` first")
    figures = glued = 0
    for source in toc_chapters(REPOSITORY / "_toc.yml"):
        if not source.is_file():
            continue
        name = source.relative_to(REPOSITORY).with_suffix(".html")
        main_page, student_page = main_site / name, student_site / name
        if STUB in _page_text(student_page):  # a page quoting solutions is left out
            continue
        expected = _figures(main_page)
        for digest in _solution_figures(source):
            expected.pop(digest, None)
        assert _figures(student_page) == expected, f"{name}: figures differ from the main site"
        assert _glued(student_page) == _glued(main_page), f"{name}: glued values differ"
        assert all(_glued(student_page)), f"{name}: a glued value is blank"
        figures += sum(expected.values())
        glued += len(_glued(student_page))
    assert figures > 0 and glued > 0, "the main site has no figure or no glued value to compare"


def test_the_main_site_still_shows_the_solutions(student_site):
    main_page = REPOSITORY / "_build" / "html" / "book" / "geometry" / "fisher-rao.html"
    if not main_page.is_file():
        pytest.skip("the main site is not built")
    lines = distinctive_answer_lines(REPOSITORY / "book" / "geometry" / "fisher-rao.md")
    text = _page_text(main_page)
    assert any(line in text for line in lines)  # the leak test above can see a leak


@pytest.fixture(scope="module")
def base_url(student_site):
    with helpers.serve(student_site) as url:
        yield url


@pytest.fixture(scope="module")
def visits(student_site, base_url):
    if not helpers.CHROMIUM.exists():
        pytest.fail(f"Chromium is not installed at {helpers.CHROMIUM} (see tests/test_site.py)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(helpers.CHROMIUM), args=helpers.CHROMIUM_FLAGS
        )
        context = helpers._new_context(browser, "light")
        try:
            yield {
                page: helpers._visit(context, base_url, page, "light")
                for page in helpers._site_pages(student_site)
            }
        finally:
            context.close()
            browser.close()


@pytest.mark.browser
def test_every_student_page_loads_cleanly_in_a_browser(visits):
    assert len(visits) >= 5
    failures = {
        page: (v.console_errors, v.blocked_requests, v.failed_responses)
        for page, v in visits.items()
        if v.console_errors or v.blocked_requests or v.failed_responses
    }
    assert not failures, helpers._report(failures)


@pytest.mark.browser
def test_student_pages_typeset_their_math(visits):
    failures = {
        page: f"{v.math_untypeset} untypeset, {v.math_errors} errors"
        for page, v in visits.items()
        if v.math_untypeset or v.math_errors
    }
    assert not failures, helpers._report(failures)
    assert sum(v.math_elements for v in visits.values()) > 0


@pytest.mark.browser
def test_no_student_code_cell_scrolls_sideways(visits):
    failures = helpers.scrolling_code(visits)
    assert not failures, helpers._report(failures)
