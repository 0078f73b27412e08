"""Sphinx hooks for the curvlab site (loaded from _config.yml: sphinx.local_extensions).

One module per concern, each documented in its own docstring:

1. ``cache``: an honest execution cache. myst-nb's cache is keyed by a digest of the library
   sources and the pins, so a library change re-executes the chapters that import it; a chapter
   whose execution failed is read again on the next build and its page is deleted.
2. ``side_by_side``: the chapters whose outputs the cache lacks are executed
   ``CURVLAB_BOOK_JOBS`` at a time before Sphinx reads them, and cached; a chapter that fails
   there is reported by myst-nb as it reports its own failures, never executed twice.
3. ``patience``: patience under load: ``CURVLAB_CELL_TIMEOUT`` overrides the per-cell timeout,
   and nbclient's kernel start-up and last-output waits are lengthened.
4. ``buttons``: repository and launch buttons only for a real repository (``repository.url``).
5. ``download``: the download button offers the executed notebook, outputs included, from the
   site itself.
6. ``scripts``: the inline scripts that Sphinx 7.4 writes twice into every page are written once.

The modules import no private name of each other or of curvlab, and curvlab imports none of
them (tests/test_layering.py).
"""

from __future__ import annotations

from . import buttons, cache, download, patience, scripts, side_by_side


def setup(app):
    app.add_config_value("curvlab_library_paths", cache.DEFAULT_LIBRARY_PATHS, "", list)
    app.add_config_value("curvlab_library_modules", cache.DEFAULT_LIBRARY_MODULES, "", list)
    app.connect("config-inited", cache.compute_digest)
    app.connect("config-inited", buttons.configure_repository_buttons)
    app.connect("builder-inited", cache.use_library_keyed_cache, priority=900)  # after myst-nb's
    app.connect("builder-inited", patience.patient_execution, priority=910)
    app.connect("env-get-outdated", cache.outdated_docs)
    app.connect("env-before-read-docs", side_by_side.execute_side_by_side)
    app.connect("build-finished", cache.report_failed_chapters)
    # before the theme's handler, which builds the download button from the page's context
    app.connect("html-page-context", download.offer_notebook_download, priority=400)
    app.connect("html-page-context", scripts.drop_duplicate_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
