"""curvgrade: classroom editions of the book's chapters, and grading of returned notebooks a
student cannot fool. A package of its own beside ``curvlab``; it does not import it.

A chapter is the single source: its exercises (``{exercise}`` blocks), their gated solutions
and their checks, every code cell of an exercise marked by one ``:exercise:`` metadata line
(``<label> answer``, ``<label> check (<n> points)``, ``<label> hidden check (<n> points)``).

- :mod:`~curvgrade.markup`    the markup, read line by line (pure string functions)
- :mod:`~curvgrade.chapter`   :func:`read_chapter`: a chapter into validated exercises
- :mod:`~curvgrade.editions`  student and instructor notebooks, the autograder bundle
- :mod:`~curvgrade.bundle`    the bundle as dataclasses (exercises, checks), as JSON
- :mod:`~curvgrade.answers`   answers as data out of the kernel, read with a whitelist
- :mod:`~curvgrade.sandbox`   bubblewrap namespaces, user ``nobody``, rlimits
- :mod:`~curvgrade.runner`    the student side: runs the notebook inside the sandbox
- :mod:`~curvgrade.checker`   the grader side: a fresh process runs every check
- :mod:`~curvgrade.submission` a returned file read safely into a notebook, within limits
- :mod:`~curvgrade.plan`      what runs in the sandbox, rebuilt from the bundle; copies flagged
- :mod:`~curvgrade.grading`   :func:`grade_notebook`: one submission, end to end
- :mod:`~curvgrade.results`   :class:`SubmissionResult`: a submission's grade as data
- :mod:`~curvgrade.reports`   gradebook, per-check table, summary, feedback
- :mod:`~curvgrade.classgrades` the class options applied to a batch of results, its files
- :mod:`~curvgrade.batch`     ``grade``: a folder of submissions graded in parallel
- :mod:`~curvgrade.gradescope` Gradescope's ``autograder.zip``: the same grading, one
  container per submission, and its rehearsal here
- :mod:`~curvgrade.toc`       the chapters a command takes: named, or all of ``_toc.yml``
- :mod:`~curvgrade.cli`       ``python -m curvgrade validate|student|grade|gradescope``

The doctests read a one-exercise chapter through ``example_chapter(folder)``, which copies
tests/curvgrade/fixtures/tiny.md into ``folder`` (the repository's conftest.py).
"""

from .bundle import Bundle, CheckSpec, ExerciseSpec
from .chapter import Chapter, ChapterFormatError, Check, Exercise, read_chapter
from .editions import autograder_bundle, instructor_notebook, student_notebook, write_editions
from .grading import SandboxUnavailable, grade_notebook
from .results import CheckResult, SubmissionResult

__all__ = [
    "Bundle",
    "Chapter",
    "ChapterFormatError",
    "Check",
    "CheckResult",
    "CheckSpec",
    "Exercise",
    "ExerciseSpec",
    "SandboxUnavailable",
    "SubmissionResult",
    "autograder_bundle",
    "grade_notebook",
    "instructor_notebook",
    "read_chapter",
    "student_notebook",
    "write_editions",
]
