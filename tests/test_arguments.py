"""curvlab.arguments: the library's argument checks, their laws and their one home."""

import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curvlab import arguments

LAWS = settings(max_examples=200, deadline=None)
PACKAGE = Path(__file__).resolve().parents[1] / "src" / "curvlab"

minimums = st.integers(-1000, 1000)
not_integers = st.one_of(
    st.booleans(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=3),
    st.none(),
    st.lists(st.integers(), max_size=2),
)
not_numbers = st.one_of(
    st.booleans(), st.text(max_size=3), st.none(), st.lists(st.floats(), max_size=2)
)
levels = st.floats(min_value=0, max_value=1, exclude_min=True, exclude_max=True)


# --- integer ---------------------------------------------------------------------------------


@LAWS
@given(value=st.booleans(), minimum=st.one_of(st.none(), minimums))
def test_every_bool_is_refused_where_an_integer_is_expected(value, minimum):
    with pytest.raises(ValueError, match=r"^count: expected an integer"):
        arguments.integer("count", value, minimum)


@LAWS
@given(minimum=minimums, step=st.integers(0, 10**6))
def test_every_integer_at_least_the_minimum_passes_unchanged(minimum, step):
    value = minimum + step
    checked = arguments.integer("count", value, minimum)
    assert checked == value and type(checked) is int


@LAWS
@given(minimum=minimums, short=st.integers(1, 10**6))
def test_every_integer_below_the_minimum_is_refused_by_name(minimum, short):
    value = minimum - short
    message = f"count: expected an integer >= {minimum}, got {value!r}"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        arguments.integer("count", value, minimum)


@LAWS
@given(value=st.integers(-50, 50), low=st.integers(-20, 0), high=st.integers(0, 20))
def test_an_integer_passes_exactly_when_it_lies_between_both_bounds(value, low, high):
    if low <= value <= high:
        assert arguments.integer("seed", value, low, high) == value
    else:
        with pytest.raises(ValueError, match=rf"^seed: expected an integer in {low}\.\.{high},"):
            arguments.integer("seed", value, low, high)


@LAWS
@given(value=not_integers)
def test_a_non_integer_is_a_value_error_or_on_request_a_type_error(value):
    with pytest.raises(ValueError, match="^depth: expected an integer >= 1, got"):
        arguments.integer("depth", value, 1)
    with pytest.raises(TypeError, match="^depth: expected an integer, got"):
        arguments.integer("depth", value, 1, type_error=True)


def test_integer_words_the_message_as_its_caller_asks():
    with pytest.raises(ValueError, match=r"^jobs: expected a positive integer, got 0$"):
        arguments.integer("jobs", 0, 1, expected="a positive integer")
    with pytest.raises(ValueError, match=r"^layer: expected an integer, got 'a'$"):
        arguments.integer("layer", "a", -3, 2, expected="-3..2", type_expected="an integer")
    with pytest.raises(ValueError, match=r"^layer: expected -3\.\.2, got 5$"):
        arguments.integer("layer", 5, -3, 2, expected="-3..2", type_expected="an integer")
    with pytest.raises(TypeError, match=r"^n: expected an integer, got 2\.5$"):
        arguments.integer("n", 2.5, 2, type_error=True)
    with pytest.raises(ValueError, match=r"^n: expected an integer >= 2, got 1$"):
        arguments.integer("n", 1, 2, type_error=True)


def test_integer_accepts_the_kinds_it_is_told_and_returns_an_int():
    assert arguments.integer("n", np.int64(3), 1, kinds=(int, np.integer)) == 3
    assert type(arguments.integer("n", np.int64(3), 1, kinds=(int, np.integer))) is int
    with pytest.raises(ValueError, match="^n: "):
        arguments.integer("n", np.int64(3), 1)
    with pytest.raises(ValueError, match="^n: "):
        arguments.integer("n", np.bool_(True), 1, kinds=(int, np.integer))


# --- number ----------------------------------------------------------------------------------


@LAWS
@given(value=not_numbers)
def test_every_bool_and_non_number_is_refused_where_a_number_is_expected(value):
    with pytest.raises(ValueError, match=r"^rate: expected a finite number > 0, got"):
        arguments.number("rate", value, low=0, low_open=True)
    with pytest.raises(TypeError, match=r"^rate: expected a number, got"):
        arguments.number("rate", value, low=0, low_open=True, type_error=True)


@LAWS
@given(value=st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(10**9), 10**9))
def test_every_finite_number_passes_as_its_float(value):
    checked = arguments.number("x", value)
    assert checked == float(value) and type(checked) is float


@LAWS
@given(
    value=st.floats(allow_nan=False, allow_infinity=False, min_value=-10, max_value=10),
    low=st.floats(-5, 0),
    high=st.floats(0, 5),
    low_open=st.booleans(),
    high_open=st.booleans(),
)
def test_a_number_passes_exactly_when_it_lies_within_the_bounds(
    value, low, high, low_open, high_open
):
    above = value > low if low_open else value >= low
    below = value < high if high_open else value <= high
    kwargs = dict(low=low, high=high, low_open=low_open, high_open=high_open)
    if above and below:
        assert arguments.number("x", value, **kwargs) == value
    else:
        left, right = "(" if low_open else "[", ")" if high_open else "]"
        message = f"x: expected a number in {left}{low:g}, {high:g}{right}, got {value!r}"
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            arguments.number("x", value, **kwargs)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_a_non_finite_number_is_refused_unless_allowed_and_nan_by_any_bound(value):
    with pytest.raises(ValueError, match="^x: expected a finite number, got"):
        arguments.number("x", value)
    assert math.isnan(arguments.number("x", value, finite=False)) == math.isnan(value)
    with pytest.raises(ValueError, match="^x: expected a number in"):
        arguments.number("x", value, low=0, high=1, finite=False)
    if math.isnan(value):
        with pytest.raises(ValueError, match="^x: expected a number >= 0, got nan"):
            arguments.number("x", value, low=0, finite=False)


@pytest.mark.parametrize(
    "bounds, value, what",
    [
        (dict(low=0), -5, "a finite number >= 0"),
        (dict(low=0, low_open=True), 0, "a finite number > 0"),
        (dict(low=0, low_open=True, finite=False), -5, "a number > 0"),
        (dict(high=1, high_open=True), 1, "a finite number < 1"),
        (dict(low=0, high=1, high_open=True), 1, "a number in [0, 1)"),
        (dict(low=0, high=1 + 1e-12, low_open=True, high_open=True), 2, "a number in (0, 1)"),
        (dict(), math.inf, "a finite number"),
    ],
)
def test_number_words_its_bounds(bounds, value, what):
    message = f"x: expected {what}, got {value!r}"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        arguments.number("x", value, **bounds)


@LAWS
@given(value=st.floats(min_value=1e-300, max_value=1e300) | st.integers(1, 10**9))
def test_every_positive_finite_number_is_positive(value):
    assert arguments.positive("r", value) == float(value)


@LAWS
@given(value=st.floats(max_value=0) | st.sampled_from([math.inf, math.nan]))
def test_positive_refuses_the_rest_saying_what_it_wanted(value):
    with pytest.raises(ValueError, match="^r: expected a positive finite number, got"):
        arguments.positive("r", value)


def test_positive_words_a_wrong_type_apart():
    with pytest.raises(ValueError, match="^r: expected a positive number, got '1'$"):
        arguments.positive("r", "1")
    with pytest.raises(ValueError, match="^r: expected a positive number of units, got None$"):
        arguments.positive("r", None, type_expected="a positive number of units")
    with pytest.raises(TypeError, match="^r: expected a positive number, got True$"):
        arguments.positive("r", True, type_error=True)
    with pytest.raises(ValueError, match="^grid: expected a positive number, got 2.0$"):
        arguments.positive("grid", 2.0, kinds=int)


@LAWS
@given(value=levels)
def test_every_level_strictly_between_0_and_1_is_an_alpha_and_a_fraction(value):
    assert arguments.alpha(value) == value == arguments.fraction("share", value)


@LAWS
@given(value=st.floats(allow_nan=True).filter(lambda v: not 0 < v < 1) | st.booleans())
def test_alpha_and_fraction_refuse_the_rest(value):
    with pytest.raises(ValueError, match=r"^alpha: expected a level in \(0, 1\), got"):
        arguments.alpha(value)
    with pytest.raises(ValueError, match=r"^share: expected a number in \(0, 1\), got"):
        arguments.fraction("share", value)


# --- names and text --------------------------------------------------------------------------


@LAWS
@given(choices=st.lists(st.text(max_size=4), min_size=1, max_size=5, unique=True), data=st.data())
def test_one_of_passes_every_choice_and_refuses_every_other_value(choices, data):
    choice = data.draw(st.sampled_from(choices))
    assert arguments.one_of("name", choice, tuple(choices)) is choice
    other = data.draw(st.text(max_size=5).filter(lambda t: t not in choices))
    message = f"name: expected one of {tuple(choices)}, got {other!r}"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        arguments.one_of("name", other, choices)


def test_one_of_lists_a_dict_by_its_keys_and_refuses_an_unhashable_value():
    table = {"tanh": None, "identity": None}
    assert arguments.one_of("f", "tanh", table) == "tanh"
    with pytest.raises(ValueError, match=r"^f: expected one of \('tanh', 'identity'\), got \[1\]$"):
        arguments.one_of("f", [1], table)
    with pytest.raises(ValueError, match=r"^tasks: expected names from \('xor',\), got 'a'$"):
        arguments.one_of("tasks", "a", ("xor",), expected="names from ('xor',)")


@LAWS
@given(value=st.text(min_size=1))
def test_every_nonempty_string_is_text(value):
    assert arguments.text("claim", value) is value


@pytest.mark.parametrize("value", ["", None, 3, b"E1", ["E1"]])
def test_text_refuses_the_rest(value):
    with pytest.raises(ValueError, match="^claim: expected a nonempty string, got"):
        arguments.text("claim", value)


@LAWS
@given(value=st.one_of(st.integers(), not_integers, st.floats()))
def test_the_predicates_agree_with_the_checks(value):
    assert arguments.is_integer(value) == (isinstance(value, int) and not isinstance(value, bool))
    assert arguments.is_number(value) == (
        isinstance(value, int | float) and not isinstance(value, bool)
    )


# --- one home --------------------------------------------------------------------------------

COPY = re.compile(r"isinstance\((?P<name>[\w.\[\]\"']+), bool\) or not isinstance\((?P=name),")


@pytest.mark.parametrize(
    "path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE))
)
def test_no_module_writes_its_own_copy_of_the_integer_or_number_test(path):
    if path.name == "arguments.py" and path.parent == PACKAGE:
        return
    copies = [m.group(0) for m in COPY.finditer(path.read_text())]
    assert copies == [], f"{path.name}: use curvlab.arguments (is_integer, integer, number, ...)"
