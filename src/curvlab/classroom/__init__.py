"""Classroom editions of the book's chapters, and autograding of returned notebooks.

A chapter is the single source: its exercises (``{exercise}`` blocks), their gated solutions
(code cells tagged ``solution``) and their checks (code cells whose first line is
``# check <label> (<n> points): ...``, tagged ``check``, hidden ones also ``hidden``).

- :mod:`~curvlab.classroom.markup`    the markup, read line by line (pure string functions)
- :mod:`~curvlab.classroom.chapter`   :func:`read_chapter`: a chapter into validated exercises
- :mod:`~curvlab.classroom.editions`  student and instructor notebooks, the autograder bundle
- :mod:`~curvlab.classroom.grading`   :func:`grade_notebook`: run a submission, score each check
- :mod:`~curvlab.classroom.reports`   the score CSVs and per-student feedback
- :mod:`~curvlab.classroom.cli`       ``python -m curvlab.classroom validate|student|grade``
"""

from .chapter import Chapter, ChapterFormatError, Check, Exercise, read_chapter
from .editions import autograder_bundle, instructor_notebook, student_notebook, write_editions
from .grading import CheckResult, SubmissionResult, grade_notebook

__all__ = [
    "Chapter",
    "ChapterFormatError",
    "Check",
    "CheckResult",
    "Exercise",
    "SubmissionResult",
    "autograder_bundle",
    "grade_notebook",
    "instructor_notebook",
    "read_chapter",
    "student_notebook",
    "write_editions",
]
