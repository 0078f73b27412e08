"""6. Scripts written twice, written once.

With Sphinx 7.4, the inline ``<script>`` bodies that sphinx-thebe and sphinx-togglebutton
register after the builder starts are written twice into every page (once held with filename
None, once with filename "", so Sphinx's own de-duplication misses them). The second
``const THEBE_JS_URL = ...`` then throws "Identifier 'THEBE_JS_URL' has already been declared" in
the browser console of every page. Each page keeps the first copy of each script.
"""

from __future__ import annotations


def _script_key(script) -> tuple:
    attributes = getattr(script, "attributes", {}) or {}
    # The two copies differ only in their filename: None for one, "" for the other.
    return (getattr(script, "filename", script) or "", tuple(sorted(attributes.items())))


def drop_duplicate_scripts(app, pagename, templatename, context, doctree) -> None:
    """Remove repeated entries of the page's script list, keeping the first of each."""
    scripts = context.get("script_files")
    if not scripts:
        return
    seen: set[tuple] = set()
    unique = []
    for script in scripts:
        key = _script_key(script)
        if key not in seen:
            seen.add(key)
            unique.append(script)
    scripts[:] = unique
