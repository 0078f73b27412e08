"""5. The executed notebook as a download of the site.

The download button always offers the executed notebook (``.ipynb``, with its outputs), written
into the site's ``_sources/`` at build time: it is a local file of the site and works offline.
(The theme only does this when a launch button is configured, and copies the notebook myst-nb
wrote, which has no outputs when they came from the cache.)
"""

from __future__ import annotations

from pathlib import Path

import nbformat


def offer_notebook_download(app, pagename, templatename, context, doctree) -> None:
    """Write a notebook page's executed ``.ipynb`` into ``_sources/`` and offer it."""
    if "kernelspec" not in app.env.metadata.get(pagename, {}):
        return
    executed = Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.ipynb"
    if not executed.is_file():
        return
    target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(nbformat.writes(_with_outputs(app, executed)), encoding="utf-8")
    context["ipynb_source"] = f"{pagename}.ipynb"


def _with_outputs(app, path: Path):
    """The notebook myst-nb wrote for a page, with the outputs of its execution.

    myst-nb writes ``jupyter_execute/<page>.ipynb`` from the notebook it read, so when the
    outputs came from the cache the file has none: they are merged back from the cache here.
    """
    notebook = nbformat.read(path, as_version=4)
    mystnb_config = getattr(app.env, "mystnb_config", None)
    if mystnb_config is None or mystnb_config.execution_mode != "cache":
        return notebook
    from jupyter_cache import get_cache

    try:
        _, notebook = get_cache(mystnb_config.execution_cache_path).merge_match_into_notebook(
            notebook
        )
    except KeyError:  # not in the cache (its execution failed): the notebook as it is
        pass
    return notebook
