"""The built site works offline, checked in a real browser (headless Chromium via Playwright).

The site directory is ``_build/html`` (``make book``), or ``$CURVLAB_SITE_DIR``. It is served on
a localhost port by a thread of this process; every request that leaves localhost is aborted and
recorded. Each page is visited once (light mode, plus dark mode for the landing page and the
first page with widgets) and the tests read what the visits recorded: console errors, requests
that left localhost, typeset equations, loaded images, rendered widgets, a working search.
Further tests move each explorer's slider (its figure must change, with nothing requested off
the site), read the landing page, the instructors' page and the footer for promises the build
does not keep (an explorer, a widget, an animation or a launch button it lacks), check that
every figure has a caption (and a number), and start a JupyterLab on localhost to double-click a
chapter (it must open as a notebook) and run an explorer (its sliders must be live there).
Screenshots go to ``artifacts/screenshots/`` (or ``$CURVLAB_SCREENSHOT_DIR``).

Browser: Debian's Chromium at /usr/bin/chromium (``$CURVLAB_CHROMIUM``), driven by the PyPI
``playwright`` package; Playwright never downloads a browser here. Without Chromium the tests
fail and say how to install it.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import os
import re
import threading
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

REPOSITORY = Path(__file__).resolve().parents[1]
SITE_DIR = Path(os.environ.get("CURVLAB_SITE_DIR", REPOSITORY / "_build" / "html")).resolve()
SCREENSHOT_DIR = Path(
    os.environ.get("CURVLAB_SCREENSHOT_DIR", REPOSITORY / "artifacts" / "screenshots")
).resolve()
CHROMIUM = Path(os.environ.get("CURVLAB_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
LOCAL_SCHEMES = {"data", "blob", "about"}
NOT_PAGES = {"_static", "_sources", "_images", "jupyter_execute", "reports"}
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WAIT_MS = 20_000
SCREENSHOT_MAX_HEIGHT = 8_000
SETTLE_MS = 400

# ---------------------------------------------------------------------------------------------
# The built site: pages, serving, visiting


def _require_site() -> Path:
    if not (SITE_DIR / "index.html").is_file():
        pytest.fail(
            f"no built site at {SITE_DIR}: run `make book` first "
            "(or point CURVLAB_SITE_DIR at a built _build/html)"
        )
    return SITE_DIR


def _site_pages(site: Path) -> list[str]:
    """Every HTML page of the site, as paths relative to its root (assets excluded)."""
    pages = []
    for path in sorted(site.rglob("*.html")):
        relative = path.relative_to(site)
        if relative.parts[0] not in NOT_PAGES:
            pages.append(relative.as_posix())
    return pages


def _is_local(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in LOCAL_SCHEMES or (
        parts.scheme in {"http", "https", "ws", "wss"} and parts.hostname in LOCAL_HOSTS
    )


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        pass


@dataclass
class PageVisit:
    """What one visit of one page recorded."""

    page: str
    theme: str = ""
    console_errors: list[str] = field(default_factory=list)
    blocked_requests: list[str] = field(default_factory=list)
    failed_responses: list[str] = field(default_factory=list)
    math_elements: int = 0
    math_untypeset: int = 0
    math_errors: int = 0
    raw_dollars: bool = False
    images: int = 0
    broken_images: list[str] = field(default_factory=list)
    widget_views: int = 0
    widgets_rendered: int = 0
    widget_errors: int = 0
    code_cells: int = 0
    scrolling_code: list[str] = field(default_factory=list)
    screenshot: Path | None = None


_WAIT_FOR_MATHJAX = """async () => {
  if (!window.MathJax || !MathJax.startup || !MathJax.startup.promise) return false;
  await MathJax.startup.promise;
  return true;
}"""

_WAIT_FOR_IMAGES = """async () => {
  const pending = Array.from(document.images).filter(img => !img.complete);
  await Promise.all(pending.map(img => new Promise(done => {
    img.addEventListener('load', done); img.addEventListener('error', done);
  })));
  return Array.from(document.images).map(img => ({
    src: (img.currentSrc || img.src || '').slice(0, 120),
    width: img.naturalWidth,
    complete: img.complete,
  }));
}"""

_MATH_STATE = """() => {
  const math = Array.from(document.querySelectorAll('.math'));
  const body = document.body.cloneNode(true);
  body.querySelectorAll('pre, code, script, style, textarea, .highlight, mjx-container')
      .forEach(node => node.remove());
  return {
    elements: math.length,
    untypeset: math.filter(node => !node.querySelector('mjx-container')).length,
    errors: document.querySelectorAll('mjx-merror').length,
    rawDollars: body.textContent.includes('$$'),
  };
}"""

_WIDGETS_RENDERED = f"""() => {{
  const views = document.querySelectorAll('script[type="{WIDGET_VIEW}"]').length;
  const rendered = Array.from(document.querySelectorAll('.widget-subarea'))
      .filter(area => area.querySelector('.jupyter-widgets, .lm-Widget')).length;
  const errors = document.querySelectorAll('.jupyter-widgets-error-widget, .widget-error').length;
  return {{views, rendered, errors}};
}}"""


# Every code cell's source, dropdowns (solutions, hidden inputs) opened: the longest line of
# each whose <pre> needs a horizontal scrollbar at the window's width (1280 px; the chapters
# are formatted to fit it: tools/lint_chapters.py, CODE_COLUMNS).
_SCROLLING_CODE = """async () => {
  document.querySelectorAll('.toggle-hidden').forEach(n => n.classList.remove('toggle-hidden'));
  document.querySelectorAll('details').forEach(node => { node.open = true; });
  await new Promise(done => setTimeout(done, 300));
  const cells = Array.from(document.querySelectorAll('.cell_input pre'));
  return {
    cells: cells.length,
    scrolling: cells.filter(pre => pre.scrollWidth > pre.clientWidth).map(pre => {
      const longest = pre.textContent.split('\\n').reduce((a, b) => b.length > a.length ? b : a);
      return `${pre.scrollWidth - pre.clientWidth} px too wide: ${longest.trim().slice(0, 70)}`;
    }),
  };
}"""


def _screenshot_name(page: str, theme: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "__", page.removesuffix(".html")) + f"-{theme}.png"


def _visit(context, base_url: str, page: str, theme: str) -> PageVisit:
    visit = PageVisit(page=page)
    tab = context.new_page()
    tab.on(
        "console",
        lambda message: (
            visit.console_errors.append(message.text) if message.type == "error" else None
        ),
    )
    tab.on("pageerror", lambda error: visit.console_errors.append(f"uncaught: {error}"))
    tab.on(
        "response",
        lambda response: (
            visit.failed_responses.append(f"{response.status} {response.url}")
            if response.status >= 400
            else None
        ),
    )

    def route(route_request):
        url = route_request.request.url
        if _is_local(url):
            route_request.continue_()
        else:
            visit.blocked_requests.append(url)
            route_request.abort("blockedbyclient")

    tab.route("**/*", route)
    tab.goto(f"{base_url}/{page}", wait_until="load")
    redirect = _redirect_target(SITE_DIR, page)
    if redirect is not None:  # index.html: a meta-refresh to the landing page
        tab.wait_for_url(f"**/{redirect}", timeout=WAIT_MS)
        tab.wait_for_load_state("load")
    if tab.evaluate(_WAIT_FOR_MATHJAX):
        tab.wait_for_timeout(100)
    views = tab.evaluate(_WIDGETS_RENDERED)["views"]
    if views:
        try:
            tab.wait_for_function(
                f"() => ({_WIDGETS_RENDERED})().rendered >= {views}", timeout=WAIT_MS
            )
        except Exception:  # noqa: BLE001 - the widget test reports what did not render
            pass
    images = tab.evaluate(_WAIT_FOR_IMAGES)
    math = tab.evaluate(_MATH_STATE)
    widgets = tab.evaluate(_WIDGETS_RENDERED)
    visit.theme = tab.evaluate("() => document.documentElement.dataset.theme || ''")
    visit.math_elements = math["elements"]
    visit.math_untypeset = math["untypeset"]
    visit.math_errors = math["errors"]
    visit.raw_dollars = math["rawDollars"]
    visit.images = len(images)
    visit.broken_images = [
        image["src"] for image in images if not image["complete"] or image["width"] == 0
    ]
    visit.widget_views = widgets["views"]
    visit.widgets_rendered = widgets["rendered"]
    visit.widget_errors = widgets["errors"]
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    visit.screenshot = SCREENSHOT_DIR / _screenshot_name(page, theme)
    tab.wait_for_timeout(SETTLE_MS)  # the theme's sidebars finish their layout
    height = tab.evaluate("() => document.documentElement.scrollHeight")
    tab.screenshot(
        path=str(visit.screenshot),
        full_page=True,
        clip={"x": 0, "y": 0, "width": 1280, "height": min(height, SCREENSHOT_MAX_HEIGHT)},
    )
    if theme == "dark":  # what a reader sees first (a full-page capture clips sticky sidebars)
        tab.screenshot(path=str(visit.screenshot.with_name(visit.screenshot.stem + "-top.png")))
    code = tab.evaluate(_SCROLLING_CODE)
    visit.code_cells = code["cells"]
    visit.scrolling_code = code["scrolling"]
    tab.close()
    return visit


@pytest.fixture(scope="session")
def site() -> Path:
    return _require_site()


@contextlib.contextmanager
def serve(directory: Path):
    """Serve ``directory`` over HTTP on a free localhost port; yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def base_url(site):
    with serve(site) as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.exists():
        pytest.fail(
            f"Chromium is not installed at {CHROMIUM}; the browser tests need it. Install it with "
            "`apt-get update && apt-get install -y chromium chromium-driver` (Debian), or set "
            "CURVLAB_CHROMIUM to a Chromium binary. Playwright never downloads a browser here."
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()


def _new_context(browser, color_scheme: str):
    return browser.new_context(
        viewport={"width": 1280, "height": 900},
        color_scheme=color_scheme,
        service_workers="block",
    )


@pytest.fixture(scope="session")
def visits(site, base_url, browser) -> dict[str, PageVisit]:
    """Every page of the site, visited once in light mode."""
    context = _new_context(browser, "light")
    try:
        return {page: _visit(context, base_url, page, "light") for page in _site_pages(site)}
    finally:
        context.close()


def _redirect_target(site: Path, page: str) -> str | None:
    """Where a meta-refresh page sends the browser (relative to the site root), else None."""
    text = (site / page).read_text(encoding="utf-8", errors="replace")
    match = re.search(r'http-equiv="refresh"[^>]*url=([^"\']+\.html)', text, re.IGNORECASE)
    if match is None:
        return None
    return (Path(page).parent / match.group(1)).as_posix().removeprefix("./")


def _landing_page(site: Path) -> str:
    """The page the site opens on: index.html redirects to the book's root page."""
    return _redirect_target(site, "index.html") or "index.html"


@pytest.fixture(scope="session")
def dark_visits(site, base_url, browser, visits) -> dict[str, PageVisit]:
    """The landing page and the first page with widgets, visited in dark mode."""
    pages = [_landing_page(site)]
    pages += [page for page, visit in visits.items() if visit.widget_views][:1]
    context = _new_context(browser, "dark")
    try:
        return {page: _visit(context, base_url, page, "dark") for page in pages}
    finally:
        context.close()


def _report(failures: dict[str, object]) -> str:
    return "\n".join(f"  {page}: {what}" for page, what in failures.items())


# ---------------------------------------------------------------------------------------------
# Browser checks, one law each, over every page

browser_check = pytest.mark.browser


@browser_check
def test_the_site_has_the_landing_page_search_and_chapters(visits, site):
    landing = _landing_page(site)
    assert landing in visits, f"the landing page {landing} was not visited"
    assert "search.html" in visits, "the site has no search page"
    chapters = [page for page in visits if page.startswith("book/")]
    assert len(chapters) >= 2, f"expected the book's pages under book/, found {chapters}"


@browser_check
def test_no_page_logs_a_console_error(visits):
    failures = {page: v.console_errors for page, v in visits.items() if v.console_errors}
    assert not failures, "console errors:\n" + _report(failures)


@browser_check
def test_no_request_leaves_localhost(visits, dark_visits):
    blocked = {
        f"{page} ({v.theme or 'light'})": v.blocked_requests
        for group in (visits, dark_visits)
        for page, v in group.items()
        if v.blocked_requests
    }
    assert not blocked, "requests outside localhost (blocked):\n" + _report(blocked)


@browser_check
def test_every_local_resource_exists(visits):
    failures = {page: v.failed_responses for page, v in visits.items() if v.failed_responses}
    assert not failures, "HTTP errors from the site:\n" + _report(failures)


@browser_check
def test_mathjax_typesets_every_equation(visits):
    pages_with_math = [v for v in visits.values() if v.math_elements]
    assert pages_with_math, "no page has math: the check would be vacuous"
    failures = {
        v.page: (
            f"{v.math_untypeset}/{v.math_elements} untypeset, {v.math_errors} MathJax errors, "
            f"raw $$ left: {v.raw_dollars}"
        )
        for v in visits.values()
        if v.math_untypeset or v.math_errors or v.raw_dollars
    }
    assert not failures, "math not typeset:\n" + _report(failures)


@browser_check
def test_every_figure_image_loads(visits):
    assert any(v.images for v in visits.values()), "no page has an image"
    failures = {page: v.broken_images for page, v in visits.items() if v.broken_images}
    assert not failures, "images that did not load (naturalWidth 0):\n" + _report(failures)


@browser_check
def test_saved_widgets_render_their_views(visits):
    with_widgets = {page: v for page, v in visits.items() if v.widget_views}
    built_with_widgets = [
        page
        for page in visits
        if WIDGET_VIEW in (SITE_DIR / page).read_text(encoding="utf-8", errors="replace")
    ]
    assert sorted(with_widgets) == sorted(built_with_widgets)
    failures = {
        page: f"{v.widgets_rendered}/{v.widget_views} views rendered, {v.widget_errors} errors"
        for page, v in with_widgets.items()
        if v.widgets_rendered < v.widget_views or v.widget_errors
    }
    assert not failures, "widgets not rendered:\n" + _report(failures)


@browser_check
def test_search_finds_curvature(site, base_url, browser):
    context = _new_context(browser, "light")
    blocked = []

    def route(route_request):
        if _is_local(route_request.request.url):
            route_request.continue_()
        else:
            blocked.append(route_request.request.url)
            route_request.abort("blockedbyclient")

    try:
        tab = context.new_page()
        tab.route("**/*", route)
        tab.goto(f"{base_url}/search.html?q=curvature", wait_until="load")
        tab.wait_for_selector("#search-results ul.search li", timeout=WAIT_MS)
        results = tab.locator("#search-results ul.search li").count()
        SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
        tab.screenshot(path=str(SCREENSHOT_DIR / "search-curvature-light.png"))
    finally:
        context.close()
    assert results >= 1
    assert not blocked, f"the search page requested {blocked}"


@browser_check
def test_dark_mode_renders_the_landing_page(dark_visits, site):
    landing = dark_visits[_landing_page(site)]
    assert landing.theme == "dark", f"data-theme is {landing.theme!r} in a dark-mode browser"
    assert landing.screenshot is not None and landing.screenshot.stat().st_size > 0
    for visit in dark_visits.values():
        assert not visit.console_errors, f"{visit.page} (dark): {visit.console_errors}"
        assert not visit.broken_images, f"{visit.page} (dark): {visit.broken_images}"
        assert visit.widgets_rendered >= visit.widget_views


@browser_check
def test_the_site_works_opened_from_disk(site, browser, visits):
    """Opened as files (an unzipped copy, no server): math and widgets still render."""
    pages = [_landing_page(site)]
    pages += [page for page, visit in visits.items() if visit.widget_views][:1]
    pages += [page for page, visit in visits.items() if visit.math_elements][:1]
    context = _new_context(browser, "light")
    failures = {}
    try:
        for page in dict.fromkeys(pages):
            tab = context.new_page()
            errors, remote = [], []
            tab.on("console", lambda m, e=errors: e.append(m.text) if m.type == "error" else None)
            tab.on("pageerror", lambda error, e=errors: e.append(f"uncaught: {error}"))
            tab.route(
                "**/*",
                lambda route, r=remote: (
                    route.continue_()
                    if urlsplit(route.request.url).scheme in LOCAL_SCHEMES | {"file"}
                    else (r.append(route.request.url), route.abort("blockedbyclient"))
                ),
            )
            tab.goto((site / page).as_uri(), wait_until="load")
            tab.evaluate(_WAIT_FOR_MATHJAX)
            if visits[page].widget_views:
                tab.wait_for_function(
                    f"() => ({_WIDGETS_RENDERED})().rendered >= {visits[page].widget_views}",
                    timeout=WAIT_MS,
                )
            math = tab.evaluate(_MATH_STATE)
            if errors or remote or math["untypeset"] or math["errors"]:
                failures[page] = {"console": errors, "remote": remote, "math": math}
            tab.close()
    finally:
        context.close()
    assert not failures, "opened from disk:\n" + _report(failures)


def scrolling_code(visits: dict[str, PageVisit]) -> dict[str, list[str]]:
    """The code cells of each page that scroll sideways at the 1280-pixel window."""
    assert sum(v.code_cells for v in visits.values()) > 0, "no code cell on any page"
    return {page: v.scrolling_code for page, v in visits.items() if v.scrolling_code}


@browser_check
def test_no_code_cell_scrolls_sideways(visits):
    failures = scrolling_code(visits)
    assert not failures, "code cells wider than the page's column:\n" + _report(failures)


@browser_check
def test_every_page_has_a_screenshot(visits):
    missing = [page for page, v in visits.items() if not (v.screenshot and v.screenshot.exists())]
    assert not missing, f"no screenshot for {missing}"


# ---------------------------------------------------------------------------------------------
# The built HTML, read as text: nothing is loaded from a CDN, buttons work offline


class _ResourceCollector(HTMLParser):
    """Collects the URLs a page loads: scripts, stylesheets and icons, images, frames."""

    LOADING = {"script": "src", "img": "src", "iframe": "src", "source": "src", "embed": "src"}

    def __init__(self):
        super().__init__()
        self.loaded: list[str] = []
        self.links: list[str] = []
        self.button_links: list[str] = []
        self.launch_links: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag in self.LOADING and attributes.get(self.LOADING[tag]):
            self.loaded.append(attributes[self.LOADING[tag]])
        if tag == "link" and attributes.get("href"):
            rel = (attributes.get("rel") or "").lower()
            if rel not in {"canonical", "next", "prev", "index", "search", "author", "license"}:
                self.loaded.append(attributes["href"])
        href = attributes.get("href") or ""
        if tag == "a" and href:
            self.links.append(href)
            if "btn" in (attributes.get("class") or "").split():
                self.button_links.append(href)
        if tag == "a" and ("mybinder.org" in href or "colab.research.google.com" in href):
            self.launch_links.append(href)


def _collect(site: Path, page: str) -> _ResourceCollector:
    collector = _ResourceCollector()
    collector.feed((site / page).read_text(encoding="utf-8", errors="replace"))
    return collector


@browser_check
def test_built_html_loads_nothing_from_outside_the_site(site):
    remote = {}
    for page in _site_pages(site):
        urls = [
            url
            for url in _collect(site, page).loaded
            if re.match(r"^(https?:)?//", url) and not _is_local(url)
        ]
        if urls:
            remote[page] = urls
    assert not remote, "pages load resources from outside the site:\n" + _report(remote)


def _cells(html: str) -> list[tuple[str, str]]:
    """(input text, output HTML) of each executed code cell of a built page."""
    cells = []
    for chunk in html.split('<div class="cell docutils container"')[1:]:
        source, _, output = chunk.partition('class="cell_output')
        cells.append((re.sub(r"<[^>]+>", "", source), output))
    return cells


@browser_check
def test_cells_that_show_a_figure_have_one_on_the_page(site):
    missing = {}
    for page in _site_pages(site):
        html = (site / page).read_text(encoding="utf-8", errors="replace")
        for number, (source, output) in enumerate(_cells(html), start=1):
            if "plt.show()" in source and "<img" not in output:
                missing.setdefault(page, []).append(f"code cell {number}")
    assert not missing, "cells call plt.show() but show no figure:\n" + _report(missing)


@browser_check
def test_vendored_assets_are_in_the_site(site):
    config = yaml.safe_load((REPOSITORY / "_config.yml").read_text(encoding="utf-8"))
    sphinx_config = config["sphinx"]["config"]
    for asset in [sphinx_config["mathjax_path"], *sphinx_config["nb_ipywidgets_js"]]:
        built = site / "_static" / asset
        assert built.is_file() and built.stat().st_size > 0, f"{built} is missing"
    assert (site / "_static" / sphinx_config["mathjax_path"]).stat().st_size > 100_000


def _repository_url() -> str:
    config = yaml.safe_load((REPOSITORY / "_config.yml").read_text(encoding="utf-8"))
    return ((config.get("repository") or {}).get("url") or "").strip()


def _chapter_pages(site: Path) -> list[str]:
    """Built pages whose source (here, in the repository) is a notebook: a kernelspec."""
    pages = []
    for page in _site_pages(site):
        source = REPOSITORY / Path(page).with_suffix(".md")
        if source.is_file() and re.search(r"^kernelspec:", source.read_text("utf-8"), re.M):
            pages.append(page)
    return pages


@browser_check
def test_download_button_offers_the_executed_notebook_from_the_site(site):
    pages = _chapter_pages(site)
    assert pages, "no chapter page found: the check would be vacuous"
    problems = {}
    for page in pages:
        notebook = Path(page).with_suffix(".ipynb").as_posix()
        links = [
            link for link in _collect(site, page).links if link.endswith(f"_sources/{notebook}")
        ]
        if not links or any("//" in link for link in links):
            problems[page] = f"no local download link to _sources/{notebook}: {links}"
            continue
        target = (site / page).parent / links[0]
        if not target.resolve().is_file():
            problems[page] = f"{links[0]} is not in the site"
            continue
        cells = json.loads(target.read_text(encoding="utf-8"))["cells"]
        if not any(cell.get("outputs") for cell in cells if cell["cell_type"] == "code"):
            problems[page] = f"{links[0]} has no outputs: not the executed notebook"
    assert not problems, "download-notebook buttons:\n" + _report(problems)


@browser_check
def test_buttons_link_only_to_the_configured_repository(site):
    repository = _repository_url().rstrip("/")
    offending = {}
    for page in _site_pages(site):
        collector = _collect(site, page)
        bad = [link for link in collector.links if re.search(r"OWNER|executablebooks", link)]
        if repository:
            org_repo = "/".join(repository.split("/")[-2:])
            bad += [link for link in collector.launch_links if org_repo not in link]
        else:
            bad += collector.launch_links
            bad += [link for link in collector.button_links if "//" in link]
        if bad:
            offending[page] = bad
    assert not offending, f"links with repository.url = {repository!r} in _config.yml:\n" + _report(
        offending
    )


# ---------------------------------------------------------------------------------------------
# Configuration, read without a build: a CDN URL put back fails here too


def test_config_serves_math_and_widgets_from_the_site():
    config = yaml.safe_load((REPOSITORY / "_config.yml").read_text(encoding="utf-8"))
    sphinx_config = config["sphinx"]["config"]
    assets = [sphinx_config["mathjax_path"], *sphinx_config["nb_ipywidgets_js"]]
    remote = [asset for asset in assets if "//" in asset]
    assert not remote, f"_config.yml loads these from a CDN: {remote}"
    assert "book/_static" in sphinx_config["html_static_path"]
    static = REPOSITORY / "book" / "_static"
    for asset in assets:  # vendored (generated by `make vendor`) or the site's own script
        assert asset.startswith("vendor/") or (static / asset).is_file(), asset


def test_the_repository_is_one_setting_and_no_placeholder():
    text = (REPOSITORY / "_config.yml").read_text(encoding="utf-8")
    assert "OWNER" not in text, "_config.yml still names a placeholder repository"
    config = yaml.safe_load(text)
    assert "url" in (config.get("repository") or {}), '_config.yml: set repository.url (or "")'
    url = _repository_url()
    assert url == "" or re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+/?", url), url


def test_site_assets_are_pinned_to_exact_versions():
    vendor = REPOSITORY / "book" / "_vendor"
    manifest = json.loads((vendor / "package.json").read_text(encoding="utf-8"))
    lock = json.loads((vendor / "package-lock.json").read_text(encoding="utf-8"))
    for name, version in manifest["dependencies"].items():
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"{name} is not pinned: {version}"
        assert lock["packages"][f"node_modules/{name}"]["version"] == version
    assert manifest["dependencies"]["mathjax"].startswith("3.")
    assert manifest["dependencies"]["@jupyter-widgets/html-manager"].startswith("1.0.")


@browser_check
def test_markdown_tables_of_cells_render_as_tables(site):
    unrendered = {}
    for page in _site_pages(site):
        html = (site / page).read_text(encoding="utf-8", errors="replace")
        for number, (_, output) in enumerate(_cells(html), start=1):
            if re.search(r"\|\s*-{3,}\s*\|", re.sub(r"<[^>]+>", "", output)):
                unrendered.setdefault(page, []).append(f"code cell {number}")
    assert not unrendered, "a Markdown table shows as text:\n" + _report(unrendered)
    claims_page = (site / "book/experiments/reproduction.html").read_text(encoding="utf-8")
    tables = re.findall(r"<table.*?</table>", claims_page, flags=re.S)
    assert any("E1-sheet" in t and "E2-linear" in t and "T5" in t for t in tables)


# ---------------------------------------------------------------------------------------------
# What the pages promise: every sentence of the landing page, the instructors' page, the footer
# and the README and BUILDING.md about explorers, widgets, animations and buttons is true of this
# build

EXPLORER = "curvlab-explorer"
PROMISE_PAGES = ("book/instructors.html",)
LAUNCH_WORDS = re.compile(r"launch button|binder|colab", re.IGNORECASE)
EXPLORER_WORDS = re.compile(r"explorer|slider|widget", re.IGNORECASE)
ANIMATION_WORDS = re.compile(r"animation", re.IGNORECASE)


def _paragraphs(html: str) -> list[tuple[str, list[str]]]:
    """(text, links) of each paragraph of a built page, footer included; code excluded."""
    html = re.sub(r"<(script|style|pre)\b.*?</\1>", "", html, flags=re.S | re.I)
    paragraphs = []
    for body in re.findall(r"<p\b[^>]*>(.*?)</p>", html, flags=re.S | re.I):
        links = re.findall(r'href="([^"]+)"', body)
        text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", body)).strip()
        paragraphs.append((text, links))
    return paragraphs


def _has_launch_button(site: Path) -> bool:
    return any(_collect(site, page).launch_links for page in _site_pages(site))


def _pages_with(site: Path, marker: str) -> list[str]:
    return [
        page
        for page in _site_pages(site)
        if marker in (site / page).read_text(encoding="utf-8", errors="replace")
    ]


def _broken_promises(site: Path, page: str) -> list[str]:
    html = (site / page).read_text(encoding="utf-8", errors="replace")
    launch = _has_launch_button(site)
    explorers = set(_pages_with(site, f'class="{EXPLORER}"'))
    broken = []
    for text, links in _paragraphs(html):
        if LAUNCH_WORDS.search(text):
            if not launch and "repository.url" not in text:
                broken.append(f"promises a launch button the build hides: {text!r}")
            if launch and re.search(r"no (repository or )?launch button", text):
                broken.append(f"denies the launch button the site shows: {text!r}")
        if ANIMATION_WORDS.search(text) and not _pages_with(site, "anim-state"):
            broken.append(f"promises an animation, and no page has one: {text!r}")
        if EXPLORER_WORDS.search(text):
            if not explorers and not _pages_with(site, WIDGET_VIEW):
                broken.append(f"promises explorers or widgets, and no page has one: {text!r}")
            for link in links:
                target = (Path(page).parent / link.split("#")[0]).as_posix()
                target = os.path.normpath(target)
                if link.startswith(("http", "#")) or not target.endswith(".html"):
                    continue
                if "explore" in link and target not in explorers:
                    broken.append(f"links {link} as an explorer, which has none: {text!r}")
    return broken


@browser_check
def test_the_landing_page_footer_and_instructors_page_promise_only_what_the_site_has(site):
    pages = [_landing_page(site), *(p for p in PROMISE_PAGES if (site / p).is_file())]
    broken = {page: problems for page in pages if (problems := _broken_promises(site, page))}
    assert not broken, "promises the built site does not keep:\n" + _report(broken)
    landing = (site / _landing_page(site)).read_text(encoding="utf-8")
    linked = {
        os.path.normpath((Path(_landing_page(site)).parent / link.split("#")[0]).as_posix())
        for _, links in _paragraphs(landing)
        for link in links
        if "explore" in link
    }
    assert linked, "the landing page links no explorer: the check would be vacuous"
    assert linked <= set(_pages_with(site, f'class="{EXPLORER}"'))


_EXPLORER_STATE = f"""() => Array.from(document.querySelectorAll('.{EXPLORER}')).map(root => ({{
  src: root.querySelector('img.{EXPLORER}-frame').src.slice(-200),
  caption: root.querySelector('.{EXPLORER}-caption').textContent,
  values: Array.from(root.querySelectorAll('output')).map(o => o.textContent).join(','),
}}))"""


@browser_check
def test_explorers_swap_their_frames_without_a_kernel(site, base_url, browser):
    pages = _pages_with(site, f'class="{EXPLORER}"')
    assert pages, "no page has an explorer: the check would be vacuous"
    context = _new_context(browser, "light")
    problems = {}
    try:
        for page in pages:
            tab = context.new_page()
            remote, errors = [], []
            tab.on("console", lambda m, e=errors: e.append(m.text) if m.type == "error" else None)
            tab.on("pageerror", lambda error, e=errors: e.append(f"uncaught: {error}"))
            tab.route(
                "**/*",
                lambda route, r=remote: (
                    route.continue_()
                    if _is_local(route.request.url)
                    else (r.append(route.request.url), route.abort("blockedbyclient"))
                ),
            )
            tab.goto(f"{base_url}/{page}", wait_until="load")
            before = tab.evaluate(_EXPLORER_STATE)
            sliders = tab.locator(f".{EXPLORER} input.{EXPLORER}-slider")
            for index in range(tab.locator(f".{EXPLORER}").count()):
                slider = tab.locator(f".{EXPLORER}").nth(index).locator("input").first
                at_end = slider.evaluate("s => Number(s.value) === Number(s.max)")
                slider.focus()
                slider.press("ArrowLeft" if at_end else "ArrowRight")
            after = tab.evaluate(_EXPLORER_STATE)
            SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
            tab.locator(f".{EXPLORER}").first.screenshot(
                path=str(SCREENSHOT_DIR / _screenshot_name(page, "explorer-moved"))
            )
            unchanged = [
                i
                for i, (old, new) in enumerate(zip(before, after, strict=True))
                if old["src"] == new["src"]
                or old["caption"] == new["caption"]
                or old["values"] == new["values"]
            ]
            if unchanged or remote or errors or not sliders.count():
                problems[page] = {"unchanged": unchanged, "remote": remote, "console": errors}
            tab.close()
    finally:
        context.close()
    assert not problems, "explorers that did not respond:\n" + _report(problems)


def test_sources_promise_no_button_the_configuration_hides():
    """README.md, BUILDING.md and the pages' sources: launch buttons only where repository.url
    says so."""
    if _repository_url():
        pytest.skip("repository.url is set: the site shows its launch button")
    broken = {}
    for name in ("README.md", "BUILDING.md", "book/intro.md", "book/instructors.md"):
        text = (REPOSITORY / name).read_text(encoding="utf-8")
        text = re.sub(r"```.*?```", "", text, flags=re.S)  # code (and code cells) aside
        for paragraph in re.split(r"\n\s*\n", text):
            flat = " ".join(paragraph.split())
            if flat.startswith("#"):  # a heading names a topic, it promises nothing
                continue
            if LAUNCH_WORDS.search(flat) and "repository.url" not in flat:
                broken.setdefault(name, []).append(flat[:160])
    assert not broken, "launch buttons promised with repository.url empty:\n" + _report(broken)


# ---------------------------------------------------------------------------------------------
# The chapters open as notebooks in JupyterLab (make lab): a real Lab, a real double-click

LAB = REPOSITORY / ".venv" / "bin" / "jupyter-lab"


@contextlib.contextmanager
def _jupyterlab(root: Path):
    """A JupyterLab on a free localhost port serving ``root``, with the project's defaults only."""
    import shutil
    import socket
    import subprocess
    import time
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    private = root.parent / "jupyter-home"
    env = dict(
        os.environ,
        JUPYTER_CONFIG_PATH=str(REPOSITORY / ".jupyter"),  # what `make lab` uses
        JUPYTER_CONFIG_DIR=str(private / "config"),  # no user setting interferes
        JUPYTERLAB_SETTINGS_DIR=str(private / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(private / "workspaces"),
        JUPYTER_PATH=str(REPOSITORY / ".venv" / "share" / "jupyter"),
    )
    command = [str(LAB), "--no-browser", "--ip=127.0.0.1", f"--port={port}"]
    command += [
        "--IdentityProvider.token=",
        "--ServerApp.password=",
        f"--ServerApp.root_dir={root}",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    private.mkdir(parents=True, exist_ok=True)
    log = private / "lab.log"
    with log.open("w") as output:
        server = subprocess.Popen(command, env=env, stdout=output, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(240):
            try:
                urllib.request.urlopen(f"{url}/api/status", timeout=2)
                break
            except OSError:
                if server.poll() is not None:
                    pytest.fail(f"JupyterLab exited: {log.read_text()[-2000:]}")
                time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(private, ignore_errors=True)


@browser_check
def test_a_double_click_opens_a_chapter_as_a_notebook(tmp_path, browser):
    if not LAB.exists():
        pytest.skip("JupyterLab is not installed in .venv (make venv installs it)")
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    import shutil

    book = tmp_path / "book"  # a copy: opening a notebook may write checkpoints next to it
    shutil.copytree(REPOSITORY / "book" / "geometry", book / "geometry")
    # the session's browser: a second Playwright cannot start inside the one it runs in
    with _jupyterlab(book) as url:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        try:
            tab = context.new_page()
            tab.goto(f"{url}/lab", wait_until="load")
            tab.locator(".jp-DirListing-item", has_text="geometry").dblclick(timeout=90_000)
            chapter = tab.locator(".jp-DirListing-item", has_text="gating-bends.md")
            chapter.dblclick(timeout=30_000)
            tab.wait_for_selector(".jp-NotebookPanel .jp-CodeCell", timeout=90_000)
            with contextlib.suppress(Exception):  # the cells render progressively
                tab.wait_for_function(
                    "() => document.querySelectorAll('.jp-NotebookPanel .jp-CodeCell').length > 5"
                    " && document.querySelector('.jp-MarkdownCell mjx-container')",
                    timeout=60_000,
                )
            notebooks = tab.locator(".jp-NotebookPanel").count()
            editors = tab.locator(".jp-FileEditor").count()
            code_cells = tab.locator(".jp-NotebookPanel .jp-CodeCell").count()
            kernel = tab.locator(".jp-Toolbar-kernelName").first.inner_text(timeout=30_000)
            math = tab.locator(
                ".jp-NotebookPanel .jp-MarkdownCell mjx-container, .jp-MarkdownCell .katex"
            )
            math = math.count()
            SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
            tab.screenshot(path=str(SCREENSHOT_DIR / "jupyterlab-chapter.png"))
        finally:
            context.close()
    assert notebooks == 1 and editors == 0, "the chapter opened in the text editor"
    assert code_cells > 5, f"the notebook shows {code_cells} code cells"
    assert "curvlab" in kernel, f"the notebook's kernel is {kernel!r}, not the book's"
    assert math > 0, "the MyST prose was not rendered (jupyterlab-myst)"


@browser_check
def test_every_figure_of_a_cell_has_a_caption_and_a_named_one_a_number(site):
    """An image a cell draws sits in a <figure> with a caption; a named figure is numbered.

    (A cell that draws several figures captions each one but names none: a name is a single
    label, so those are captioned and unnumbered.) Explorers carry their own caption.
    """
    problems = {}
    for page in _site_pages(site):
        html = (site / page).read_text(encoding="utf-8", errors="replace")
        for number, (_, output) in enumerate(_cells(html), start=1):
            output = re.sub(rf'<div class="{EXPLORER}".*?</script></div>', "", output, flags=re.S)
            figures = re.findall(r"<figure\b[^>]*>.*?</figure>", output, flags=re.S)
            bare = re.sub(r"<figure\b[^>]*>.*?</figure>", "", output, flags=re.S)
            if "<img" in bare:
                problems.setdefault(page, []).append(
                    f"code cell {number}: an image outside a figure"
                )
            for figure in figures:
                caption = re.search(r"<figcaption>(.*?)</figcaption>", figure, flags=re.S)
                if caption is None or not re.sub(r"<[^>]+>|\s", "", caption.group(1)):
                    problems.setdefault(page, []).append(f"code cell {number}: no caption")
                elif re.match(r"<figure\b[^>]*\bid=", figure) and "caption-number" not in figure:
                    problems.setdefault(page, []).append(f"code cell {number}: not numbered")
    assert not problems, "figures without a number or a caption:\n" + _report(problems)


LIVE_CHAPTER = """---
jupytext:
  text_representation: {extension: .md, format_name: myst, format_version: 0.13}
kernelspec: {display_name: Python 3 (curvlab), language: python, name: python3}
---
# An explorer, live

```{code-cell} ipython3
from curvlab.plotting.sheet_explorers import gate_weight_explorer

gate_weight_explorer((0, 1, 2), (0, 1), resolution=5, dpi=30)
```
"""


@browser_check
def test_an_explorer_is_live_in_jupyterlab(tmp_path, browser):
    """The cell that is a static explorer on the site is live sliders in Lab: a value between
    the precomputed ones is drawn by the kernel."""
    if not LAB.exists():
        pytest.skip("JupyterLab is not installed in .venv (make venv installs it)")
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    root = tmp_path / "notebooks"
    root.mkdir()
    (root / "live.md").write_text(LIVE_CHAPTER, encoding="utf-8")
    with _jupyterlab(root) as url:  # the session's browser, as above
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        try:
            tab = context.new_page()
            tab.goto(f"{url}/lab", wait_until="load")
            tab.locator(".jp-DirListing-item", has_text="live.md").dblclick(timeout=90_000)
            tab.wait_for_selector(".jp-NotebookPanel .jp-CodeCell", timeout=90_000)
            tab.wait_for_function(  # the kernel has started: the status bar says Idle
                "() => document.querySelector('.jp-StatusBar-Widget')"
                " && document.body.innerText.includes('| Idle')",
                timeout=120_000,
            )
            for _ in range(3):  # a key press can arrive before the notebook takes focus
                tab.locator(".jp-NotebookPanel .jp-CodeCell .jp-InputArea").first.click()
                tab.keyboard.press("Shift+Enter")
                with contextlib.suppress(Exception):
                    tab.wait_for_selector(".widget-slider", timeout=90_000)
                    break
            SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
            tab.screenshot(path=str(SCREENSHOT_DIR / "jupyterlab-live-explorer.png"))
            tab.wait_for_selector(".widget-slider", timeout=1_000)
            live_notes = tab.locator("text=Live explorer").count()
            static_outputs = tab.locator(f".jp-OutputArea .{EXPLORER}").count()
            before = tab.locator(".jp-OutputArea img").first.get_attribute("src")
            handle = tab.locator(".widget-slider .noUi-handle").first
            handle.focus()
            handle.press("ArrowRight")  # w1 from 1 to 1.25: not a precomputed frame
            tab.wait_for_function(
                "() => Array.from(document.querySelectorAll('.jp-OutputArea .widget-html'))"
                ".some(node => node.textContent.includes('w = (1.25, 0)'))",
                timeout=120_000,
            )
            after = tab.locator(".jp-OutputArea img").first.get_attribute("src")
            SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
            tab.screenshot(path=str(SCREENSHOT_DIR / "jupyterlab-live-explorer.png"))
        finally:
            context.close()
    assert live_notes == 1 and static_outputs == 0, "Lab did not show the live widget"
    assert before != after, "moving the slider did not redraw the figure"
