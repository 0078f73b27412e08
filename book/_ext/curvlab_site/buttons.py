"""4. Repository and launch buttons only for a real repository.

The one setting is ``repository.url`` in _config.yml (empty by default). While it is empty no
launch, repository or issue button is shown; once set, the Binder button opens the chapter's MyST
source (jupytext opens it as a notebook) and the repository button links to it.
"""

from __future__ import annotations

import re

# Not a repository of this book: jupyter-book's default (the key left out) and the old placeholder.
NOT_A_REPOSITORY = re.compile(r"github\.com/(executablebooks/jupyter-book|OWNER/)")


def configure_repository_buttons(app, config) -> None:
    """Keep the theme's buttons for a real ``repository_url``; drop every button otherwise."""
    options = dict(config.html_theme_options or {})
    repository = (options.get("repository_url") or "").strip()
    if repository and not NOT_A_REPOSITORY.search(repository):
        options["repository_url"] = repository
        options.setdefault("use_repository_button", True)
        launch = dict(options.get("launch_buttons") or {})
        launch.pop("colab_url", None)  # Colab opens .ipynb files only; the sources are .md
        options["launch_buttons"] = launch
    else:
        options.pop("repository_url", None)
        options["launch_buttons"] = {}
        for button in ("use_repository_button", "use_issues_button", "use_edit_page_button"):
            options[button] = False
    config.html_theme_options = options
