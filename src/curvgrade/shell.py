"""The IPython shell that runs a notebook's cells outside Jupyter (runner, checker, cache).

A plain :class:`~IPython.core.interactiveshell.InteractiveShell` has no GUI event loop:
``%matplotlib inline``, the first line of a chapter that draws figures, raises
``NotImplementedError`` there, and every later cell of that chapter then fails on the names
the failed cell should have defined. Grading reads answers, not figures, so in this shell
``%matplotlib`` does nothing and figures stay on matplotlib's non-interactive ``Agg``
backend (``plt.show()`` draws nothing).
"""

from __future__ import annotations


def new_shell():
    """An IPython shell where ``%matplotlib <anything>`` is accepted and does nothing.

    >>> shell = new_shell()
    >>> result = shell.run_cell("%matplotlib inline\\nvalue = 2", store_history=False)
    >>> result.success, shell.user_ns["value"]
    (True, 2)
    """
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.enable_gui = lambda gui=None: None
    shell.register_magic_function(_no_figures, magic_kind="line", magic_name="matplotlib")
    return shell


def _no_figures(line: str = "") -> None:
    """``%matplotlib``: figures are not drawn while grading."""
    return None
