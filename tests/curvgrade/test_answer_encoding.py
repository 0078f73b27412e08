"""Answers as data: what may leave the student's kernel, and what the grader refuses."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from curvgrade.answers import AnswerError, decode, encode, parse_srepr

x, y = sp.symbols("x y", positive=True)
ATOMS = [x, y, sp.Integer(3), sp.Rational(1, 2), sp.pi, sp.Float(0.25)]


@st.composite
def expressions(draw, depth=3):
    if depth == 0 or draw(st.booleans()):
        return draw(st.sampled_from(ATOMS))
    left, right = draw(expressions(depth=depth - 1)), draw(expressions(depth=depth - 1))
    combine = draw(
        st.sampled_from(
            [
                lambda a, b: a + b,
                lambda a, b: a * b,
                lambda a, b: a / b,
                lambda a, b: sp.sin(a) - sp.exp(b),
                lambda a, b: sp.sqrt(a) + sp.log(b),
            ]
        )
    )
    return combine(left, right)


@settings(max_examples=60, deadline=None)
@given(expressions())
def test_sympy_expressions_survive_the_round_trip(expression):
    # The rebuilt tree is SymPy's canonical form: equal as a value, and as a tree unless SymPy
    # had left the original in a non-canonical grouping (an I inside a nested Mul).
    decoded = decode(encode(expression))
    assert decoded == expression or sp.simplify(decoded - expression) == 0


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.one_of(st.integers(), st.floats(allow_nan=False), st.text(max_size=5), st.booleans()),
        max_size=6,
    )
)
def test_plain_data_survives_the_round_trip(items):
    assert decode(encode(items)) == items
    assert decode(encode(tuple(items))) == tuple(items)


def test_matrices_arrays_and_tensors_survive_as_numbers():
    matrix = sp.Matrix([[1 / x, 0], [0, 1 / (2 * x**2)]])
    assert decode(encode(matrix)) == matrix
    array = np.arange(6, dtype=np.float64).reshape(2, 3) / 7
    back = decode(encode(array))
    assert back.dtype == array.dtype and np.array_equal(back, array)
    tensor = torch.linspace(0, 1, 5, dtype=torch.float64)
    assert torch.equal(decode(encode(tensor)), tensor)
    assert np.isnan(decode(encode(float("nan"))))


class Yes:
    def __eq__(self, other):
        return True


class Close(float):
    def __eq__(self, other):
        return True


class Sneaky(sp.Symbol):
    def __eq__(self, other):
        return True


@pytest.mark.parametrize(
    "value",
    [Yes(), Close(0.3), Sneaky("k"), lambda t: t, {"a": 1}, object(), np.array([Yes()])],
    ids=[
        "always-equal",
        "float-subclass",
        "sympy-subclass",
        "function",
        "dict",
        "object",
        "obj-array",
    ],
)
def test_anything_but_data_is_refused(value):
    with pytest.raises(AnswerError, match="answer must be|not an allowed"):
        decode(encode(value))


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('true')",
        "Symbol('x').__class__",
        "Integer(1)[0]",
        "(lambda: 1)()",
        "eval('1')",
        "Symbol('x', real=__import__('os'))",
        "Add(" * 5000 + ")" * 5000,
    ],
)
def test_srepr_is_data_never_code(text):
    with pytest.raises(AnswerError):
        parse_srepr(text)


def test_malformed_answer_data_is_refused():
    for data in [
        {"int": "1e999999"},
        {"ndarray": {"dtype": "object", "shape": [1], "data": []}},
        {"ndarray": {"dtype": "float64", "shape": [2], "data": ["1.0"]}},
        {"int": 3},
        {"pickle": "x"},
        {"list": [{"int": "1"}], "x": 1},
        "text",
        {"error": "anything the student wrote"},
    ]:
        with pytest.raises(AnswerError):
            decode(data)


def test_sympy_arrays_are_data_and_cannot_claim_a_huge_shape():
    """A Riemann tensor (a SymPy N-dim array) is an answer; a forged array whose shape does
    not match its data (a memory bomb for the grader) is refused."""
    x = sp.Symbol("x", real=True)
    tensor = sp.ImmutableDenseNDimArray([[[[x, 0], [0, 1]]] * 2] * 2)
    assert decode(encode(tensor)) == tensor
    for text in (
        "ImmutableDenseNDimArray(Integer(0), Tuple(Integer(100000), Integer(100000)))",
        "ImmutableDenseNDimArray(Tuple(Integer(1)), Tuple(Integer(10**9)))",
        "ImmutableDenseNDimArray(Tuple(Integer(1)), Tuple(Integer(2)))",
    ):
        with pytest.raises(AnswerError):
            parse_srepr(text)
