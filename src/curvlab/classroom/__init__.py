"""Classroom editions of the book's chapters, and grading of returned notebooks a student
cannot fool.

A chapter is the single source: its exercises (``{exercise}`` blocks), their gated solutions
and their checks, every code cell of an exercise marked by one ``:exercise:`` metadata line
(``<label> answer``, ``<label> check (<n> points)``, ``<label> hidden check (<n> points)``).

- :mod:`~curvlab.classroom.markup`    the markup, read line by line (pure string functions)
- :mod:`~curvlab.classroom.chapter`   :func:`read_chapter`: a chapter into validated exercises
- :mod:`~curvlab.classroom.editions`  student and instructor notebooks, the autograder bundle
- :mod:`~curvlab.classroom.bundle`    the bundle as dataclasses (exercises, checks), as JSON
- :mod:`~curvlab.classroom.answers`   answers as data out of the kernel, read with a whitelist
- :mod:`~curvlab.classroom.sandbox`   bubblewrap namespaces, user ``nobody``, rlimits
- :mod:`~curvlab.classroom.runner`    the student side: runs the notebook inside the sandbox
- :mod:`~curvlab.classroom.checker`   the grader side: a fresh process runs every check
- :mod:`~curvlab.classroom.grading`   :func:`grade_notebook`: one submission, end to end
- :mod:`~curvlab.classroom.reports`   gradebook, per-check table, summary, feedback
- :mod:`~curvlab.classroom.cli`       ``python -m curvlab.classroom validate|student|grade``
"""

from .bundle import Bundle, CheckSpec, ExerciseSpec
from .chapter import Chapter, ChapterFormatError, Check, Exercise, read_chapter
from .editions import autograder_bundle, instructor_notebook, student_notebook, write_editions
from .grading import CheckResult, SandboxUnavailable, SubmissionResult, grade_notebook

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
