"""The attack suite, the checker's side: nothing a student sends is ever evaluated there.

The grader's checks run outside the sandbox, on answers that leave it as data. These tests
grade, in the sandbox, notebooks of the fixture chapter against a bundle whose checks hand the
answer to SymPy's text parser (``sp.sympify(K_sphere)``, ``sp.lambdify``), the way a check
written without :mod:`curvgrade.evaluation`'s rule would (the chapter reader refuses such a
check; a hand-edited bundle could still carry one). A student's text must reach no parser: a
string whose evaluation writes a file earns nothing and writes nothing; a forged srepr whose
decoding would take hours (a Float of a billion bits) is refused at once; a check that never
ends is stopped at the submission's deadline.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import sys
import time
from pathlib import Path

import nbformat
import pytest

from curvgrade.bundle import Bundle
from curvgrade.cli import main
from curvgrade.grading import check_budget, grade_notebook
from curvgrade.sandbox import sandbox_problem

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        sandbox_problem() is not None and not os.environ.get("CI"),
        reason=f"no sandbox here: {sandbox_problem()}",
    ),
]

FIXTURES = Path(__file__).parent / "fixtures"
CHAPTER = FIXTURES / "sphere-demo.md"
TIMEOUT = 20


def _samples_module():
    spec = importlib.util.spec_from_file_location(
        "sample_submissions_checker", FIXTURES / "sample_submissions.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


SAMPLES = _samples_module()
CURVATURE = SAMPLES.CURVATURE

# The curvature exercise's hidden check, parsing the answer: what the rule forbids.
PARSING_CHECK = (
    "# equals the curvature of the sphere\n"
    "assert sp.simplify(sp.sympify(K_sphere) - 1 / r**2) == 0\n"
    "assert sp.lambdify(r, K_sphere)(2.0) == 0.25"
)


@pytest.fixture(scope="module")
def setting(tmp_path_factory):
    """The fixture chapter's student edition and a bundle whose checks parse the answer."""
    root = tmp_path_factory.mktemp("checker-attacks")
    editions = root / "editions"
    assert main(["student", str(CHAPTER), "--out", str(editions)]) == 0
    bundle = Bundle.read(editions / "autograder" / "sphere-demo.json")
    exercises = []
    for exercise in bundle.exercises:
        if exercise.label == CURVATURE:
            checks = tuple(
                dataclasses.replace(check, source=PARSING_CHECK) if check.hidden else check
                for check in exercise.checks
            )
            exercise = dataclasses.replace(exercise, checks=checks)
        exercises.append(exercise)
    parsing = dataclasses.replace(bundle, exercises=tuple(exercises))
    student = nbformat.read(editions / "student" / "sphere-demo.ipynb", as_version=4)
    return {"root": root, "bundle": parsing, "student": student}


def _grade(setting, name: str, curvature: str, added: str = ""):
    notebook = SAMPLES.filled(setting["student"], {**SAMPLES.WRONG, CURVATURE: curvature})
    if added:
        SAMPLES._add_after_first_given(notebook, added)
    path = setting["root"] / f"{name}.ipynb"
    nbformat.write(notebook, path)
    start = time.monotonic()
    result = grade_notebook(setting["bundle"], path, timeout=TIMEOUT, cell_timeout=10)
    return result, time.monotonic() - start


def test_the_parsing_bundle_still_grades_honest_work(setting):
    right, _ = _grade(setting, "right", SAMPLES.RIGHT[CURVATURE])
    wrong, _ = _grade(setting, "wrong", SAMPLES.WRONG[CURVATURE])
    assert right.score(CURVATURE) == 3 and right.status == "ok", right.notes
    assert wrong.score(CURVATURE) == 1, wrong.notes


def test_a_string_answer_is_never_evaluated_by_the_checks(setting, tmp_path):
    marker = tmp_path / "evaluated-as-grader"
    code = f"__import__('pathlib').Path({str(marker)!r}).write_text('x') or 1/r**2"
    result, _ = _grade(setting, "string", f"K_sphere = {code!r}")
    assert not marker.exists(), "a student's string was evaluated outside the sandbox"
    assert result.score(CURVATURE) <= 1, result.checks  # honest wrong work earns 1
    texts = [check.reason for check in result.checks if check.exercise == CURVATURE]
    assert all(reason != "passed" for reason in texts), texts


def test_a_symbol_named_with_code_is_refused_before_lambdify_prints_it(setting, tmp_path):
    marker = tmp_path / "printed-into-code"
    name = f"__import__('pathlib').Path({str(marker)!r}).write_text('x')"
    result, _ = _grade(setting, "symbol-name", f"K_sphere = sp.Symbol({name!r}) + 1 / r**2")
    assert not marker.exists(), "a symbol's name was printed into code and run"
    assert result.score(CURVATURE) == 0
    assert "identifier" in result.answer_errors.get(CURVATURE, ""), result.answer_errors


def test_a_decode_bomb_is_refused_at_once(setting):
    forged = "import sympy\nsympy.srepr = lambda expr, **k: \"Float('1.5', precision=10**9)\""
    forged = forged.replace("10**9", "1000000000")
    result, seconds = _grade(setting, "decode-bomb", SAMPLES.WRONG[CURVATURE], added=forged)
    assert result.score(CURVATURE) == 0
    assert "precision" in result.answer_errors.get(CURVATURE, ""), result.answer_errors
    assert seconds < TIMEOUT, f"grading took {seconds:.0f} s"


def test_a_check_that_never_ends_is_stopped_at_the_deadline(setting):
    endless = dataclasses.replace(
        setting["bundle"],
        exercises=tuple(
            dataclasses.replace(
                exercise,
                checks=tuple(
                    dataclasses.replace(check, source="# never ends\nwhile True:\n    pass")
                    if check.hidden
                    else check
                    for check in exercise.checks
                ),
            )
            if exercise.label == CURVATURE
            else exercise
            for exercise in setting["bundle"].exercises
        ),
    )
    notebook = SAMPLES.filled(setting["student"], SAMPLES.RIGHT)
    path = setting["root"] / "endless.ipynb"
    nbformat.write(notebook, path)
    start = time.monotonic()
    timeout = 12  # the notebook's own time limit: the checks get as long again
    result = grade_notebook(endless, path, timeout=timeout, cell_timeout=10)
    seconds = time.monotonic() - start
    assert result.status == "timeout", result.notes
    assert seconds < timeout + check_budget(timeout) + 10, f"grading took {seconds:.0f} s"
    assert result.total == 0


def test_the_bundle_of_this_suite_is_refused_by_the_chapter_reader(setting, tmp_path):
    from curvgrade.chapter import ChapterFormatError, read_chapter

    text = CHAPTER.read_text(encoding="utf-8")
    parsing = text.replace(
        "assert sp.simplify(K_sphere - 1 / r**2) == 0",
        "assert sp.simplify(sp.sympify(K_sphere) - 1 / r**2) == 0",
    )
    assert parsing != text
    copy = tmp_path / "sphere-demo.md"
    copy.write_text(parsing, encoding="utf-8")
    with pytest.raises(ChapterFormatError, match="strict=True"):
        read_chapter(copy)
