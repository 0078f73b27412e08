"""A student's text never reaches a parser: the static rule on checks and the runtime type.

:func:`curvgrade.evaluation.evaluating_uses` refuses a check that hands an answer (or
something that may still be its text) to a function that evaluates text; a student's text
arrives on the grader's side as a :class:`curvgrade.answers.StudentText`, which every such
SymPy entry point refuses and which prints as an inert literal.
"""

from __future__ import annotations

import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from curvgrade.answers import AnswerError, StudentText, decode, encode, parse_srepr
from curvgrade.evaluation import evaluating_uses

ANSWERS = {"K", "M", "f"}


@pytest.mark.parametrize(
    "source",
    [
        "assert sp.sympify(K) == 1",
        "assert sp.S(K) == 1",
        "assert sp.simplify(K) == 0",
        "assert sp.nsimplify(K) == 0",
        "assert sp.Matrix(M) == sp.eye(2)",
        "assert sp.Matrix([K, 1]).det() == 0",
        "f = sp.lambdify(x, K)",
        "eval(K)",
        "exec('x = ' + K)",
        "compile(f'{K}', 'a', 'eval')",
        "value = K\nassert sp.simplify(value) == 0",
        "text = str(K)\nsp.sympify(text)",
        "sp.sympify(K * 2)",
        "for entry in sp.flatten(M):\n    assert sp.simplify(entry) == 0",
        "assert all(sp.simplify(e) == 0 for e in M)",
        "parts = [K]\nsp.sympify(parts[0])",
        "sp.sympify(K, strict=False)",
        "assert isinstance(K, str)\nsp.simplify(K)",
        "sp.sympify(M[0].strip())",
    ],
)
def test_a_check_handing_an_answer_to_a_parser_is_refused(source):
    problems = evaluating_uses(source, ANSWERS)
    assert problems and "strict=True" in problems[0], source


@pytest.mark.parametrize(
    "source",
    [
        "assert sp.simplify(sp.sympify(K, strict=True) - 1) == 0",
        "assert sp.simplify(K - 1) == 0",
        "assert sp.simplify(K / 2 - 1) == 0",
        "assert isinstance(M, sp.MatrixBase)\nassert sp.simplify(M - M.T) == sp.zeros(2)",
        "assert isinstance(M, sp.MatrixBase) and M.shape == (2, 2)\nassert not sp.simplify(M)",
        "value = sp.sympify(K, strict=True)\nassert sp.simplify(value.subs(x, 1)) == 1",
        "assert sp.sympify('x**2') == x**2",
        "assert math.isclose(float(K), 0.5)",
        "assert sp.simplify(f(1, 2) - 3) == 0",
        "K = 3\nassert sp.simplify(K) == 3",
    ],
)
def test_a_check_that_cannot_evaluate_text_is_accepted(source):
    assert evaluating_uses(source, ANSWERS) == []


@pytest.mark.parametrize(
    "parse",
    [
        sp.sympify,
        sp.S,
        sp.simplify,
        sp.nsimplify,
        lambda a: sp.Matrix([[a, 1]]),
        lambda a: sp.lambdify(sp.Symbol("x"), a)(1.0),
        lambda a: sp.Symbol("x") + a,
        lambda a: sp.sympify([a]),
    ],
)
def test_no_sympy_entry_point_parses_a_student_text(parse, tmp_path):
    marker = tmp_path / "ran"
    text = StudentText(f"__import__('pathlib').Path({str(marker)!r}).write_text('x') or 1")
    with pytest.raises((sp.SympifyError, TypeError, SyntaxError, NameError)):
        parse(text)
    assert not marker.exists()


@given(st.text(max_size=200))
def test_student_text_round_trips_and_prints_as_an_inert_literal(text):
    decoded = decode(encode(text), text=StudentText)
    assert type(decoded) is StudentText
    assert decoded == text and hash(decoded) == hash(text) and len(decoded) == len(text)
    assert eval(str(decoded), {"__builtins__": {}}) == text  # a literal, nothing else
    assert decode(encode(decoded)) == text  # back to a student function as plain text


@pytest.mark.parametrize(
    "srepr",
    [
        "Float('1.5', precision=1000000000)",
        "Float('1.5', 1000000000)",
        "Float('1e1000000000', precision=53)",
        "Float('1e99999', precision=53)",
        "Pow(Integer(10), Integer(1000000000))",
        "Pow(Rational(3, 7), Integer(-100000))",
        "factorial(Integer(100000000))",
        "binomial(Integer(100000000), Integer(50000000))",
        "gamma(Integer(100000000))",
        "Rational('1e1000000000')",
        "Integer('9' * 10)",
        "Derivative(Symbol('x'), Tuple(Symbol('x'), Integer(100000000)))",
        "Symbol('a b')",
        "Function('exec')(Symbol('x'))(Symbol('y'))",
        "Function('__import__(\"os\")')(Symbol('x'))",
    ],
)
def test_decoding_refuses_unbounded_work_and_code_in_names(srepr):
    with pytest.raises(AnswerError):
        parse_srepr(srepr)


@pytest.mark.parametrize(
    "value",
    [
        sp.Rational(-1, 2) / sp.Symbol("r") ** 2,
        sp.Float("0.1", 30),
        sp.Integer(2) ** 100,
        sp.factorial(20),
        sp.Derivative(sp.Function("f")(sp.Symbol("x")), (sp.Symbol("x"), 2)),
        sp.Matrix([[1, sp.Symbol("theta")], [0, sp.sqrt(2)]]),
        sp.Float("1e-300"),
    ],
)
def test_ordinary_answers_still_decode(value):
    assert parse_srepr(sp.srepr(value)) == value
