"""The repository's build tools, each run from the repository root as ``python -m tools.<name>``.

- ``bench_build``: times a clean, a no-change and a one-chapter ``make book`` (``make bench-book``)
- ``check_kit``: refuses a course kit (``make kit``) whose wheel holds more than the libraries
- ``lint_chapters``: ruff on the chapters' code cells (``make lint``, ``make format``)
- ``raw_outputs``: finds the executed chapters' outputs a reader would see as a raw Python repr

They are not part of the library (the wheel packages ``src/`` only): they may import the public
names of ``curvlab`` and ``curvgrade``, and neither imports them (tests/test_layering.py).
"""
