"""The library's argument checks: one home for each test a public function applies to what it
is given, so that the same argument is refused the same way everywhere.

Each check is a small pure function that returns the value it checked (converted where it says
so) or raises an error whose message names the argument and says what was expected::

    {name}: expected {what}, got {value!r}

A ValueError by default; a TypeError only where a caller asks for one for a value of the wrong
type.  ``what`` is worded from the bounds (``an integer >= 2``, ``a finite number > 0``,
``a number in (0, 1)``) unless the caller words it (``expected=``), so that a function keeps
the message its users and its tests know.  A bool is never an integer or a number here,
although Python counts it as one: ``True`` given for a seed or a radius is a mistake, not a 1.

This module imports nothing of curvlab and nothing beyond the standard library, which puts it
at the bottom of the layer order (``tests/test_layering.py`` maps it to layer 0, beside
``symbolic/``): every layer may import it, and none is made to depend on another to check an
integer.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import NoReturn

__all__ = [
    "alpha",
    "fraction",
    "integer",
    "is_integer",
    "is_number",
    "number",
    "one_of",
    "positive",
    "text",
]

_INTEGERS = int
_NUMBERS = (int, float)


def is_integer(value, kinds=_INTEGERS) -> bool:
    """True when ``value`` is an instance of ``kinds`` (default ``int``) and not a bool.

    >>> is_integer(3), is_integer(True), is_integer(3.0)
    (True, False, False)
    """
    return isinstance(value, kinds) and not isinstance(value, bool)


def is_number(value, kinds=_NUMBERS) -> bool:
    """True when ``value`` is an instance of ``kinds`` (default ``int`` or ``float``) and not a
    bool; NaN and the infinities are numbers here (:func:`number` refuses them).

    >>> is_number(0.5), is_number(2), is_number(False), is_number("1")
    (True, True, False, False)
    """
    return isinstance(value, kinds) and not isinstance(value, bool)


def _refuse(name: str, what: str, value, error: type[Exception] = ValueError) -> NoReturn:
    raise error(f"{name}: expected {what}, got {value!r}")


def _integer_wording(minimum, maximum) -> str:
    if minimum is not None and maximum is not None:
        return f"an integer in {minimum}..{maximum}"
    if minimum is not None:
        return f"an integer >= {minimum}"
    if maximum is not None:
        return f"an integer <= {maximum}"
    return "an integer"


def integer(
    name: str,
    value,
    minimum: int | None = None,
    maximum: int | None = None,
    *,
    expected: str | None = None,
    type_expected: str | None = None,
    type_error: bool = False,
    kinds=_INTEGERS,
) -> int:
    """``value`` as an int, checked to be an integer (an instance of ``kinds``, never a bool)
    in ``minimum``..``maximum`` (either bound may be None: unbounded).

    The message says ``expected`` (default: worded from the bounds).  A value of the wrong type
    is refused as a TypeError saying ``type_expected`` (default: "an integer") when
    ``type_error``, else as a ValueError saying ``type_expected`` (default: ``expected``).

    >>> integer("depth", 3, 1)
    3
    >>> integer("depth", True, 1)
    Traceback (most recent call last):
    ...
    ValueError: depth: expected an integer >= 1, got True
    >>> integer("seed", 2**32, 0, 2**32 - 1, expected="an integer in 0..2**32 - 1")
    Traceback (most recent call last):
    ...
    ValueError: seed: expected an integer in 0..2**32 - 1, got 4294967296
    >>> integer("depth", 2.5, 1, type_error=True)
    Traceback (most recent call last):
    ...
    TypeError: depth: expected an integer, got 2.5
    """
    what = _integer_wording(minimum, maximum) if expected is None else expected
    if not is_integer(value, kinds):
        if type_error:
            _refuse(name, type_expected or "an integer", value, TypeError)
        _refuse(name, type_expected or what, value)
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        _refuse(name, what, value)
    return int(value)


def _number_wording(low, high, low_open: bool, high_open: bool, finite: bool) -> str:
    if low is not None and high is not None:
        left, right = "(" if low_open else "[", ")" if high_open else "]"
        return f"a number in {left}{low:g}, {high:g}{right}"
    kind = "a finite number" if finite else "a number"
    if low is not None:
        return f"{kind} {'>' if low_open else '>='} {low:g}"
    if high is not None:
        return f"{kind} {'<' if high_open else '<='} {high:g}"
    return kind


def number(
    name: str,
    value,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    finite: bool = True,
    expected: str | None = None,
    type_expected: str | None = None,
    type_error: bool = False,
    kinds=_NUMBERS,
) -> float:
    """``value`` as a float, checked to be a real number (an instance of ``kinds``, default
    ``int`` or ``float``, never a bool), finite unless ``finite`` is False, and within
    ``low``..``high`` (either bound may be None; ``low_open``/``high_open``: the bound itself is
    refused).  NaN is refused by any bound.

    The message says ``expected`` (default: worded from the bounds).  A value of the wrong type
    is refused as a TypeError saying ``type_expected`` (default: "a number") when
    ``type_error``, else as a ValueError saying ``type_expected`` (default: ``expected``).

    >>> number("learning_rate", 1e-3, low=0, low_open=True)
    0.001
    >>> number("noise", float("inf"), low=0)
    Traceback (most recent call last):
    ...
    ValueError: noise: expected a finite number >= 0, got inf
    >>> number("factor", float("inf"), low=0, low_open=True, finite=False)
    inf
    >>> number("step", "1", low=0, low_open=True, type_error=True)
    Traceback (most recent call last):
    ...
    TypeError: step: expected a number, got '1'
    """
    what = _number_wording(low, high, low_open, high_open, finite) if expected is None else expected
    if not is_number(value, kinds):
        if type_error:
            _refuse(name, type_expected or "a number", value, TypeError)
        _refuse(name, type_expected or what, value)
    inside = (
        (not finite or math.isfinite(value))
        and (low is None or (value > low if low_open else value >= low))
        and (high is None or (value < high if high_open else value <= high))
    )
    if not inside:
        _refuse(name, what, value)
    return float(value)


def positive(
    name: str,
    value,
    *,
    type_expected: str = "a positive number",
    type_error: bool = False,
    kinds=_NUMBERS,
) -> float:
    """``value`` as a float, checked to be a positive finite number (a radius, a scale, a
    margin); a value of the wrong type is refused saying ``type_expected`` (a TypeError when
    ``type_error``), any other refused value saying "a positive finite number".

    >>> positive("radius", 2)
    2.0
    >>> positive("radius", float("inf"))
    Traceback (most recent call last):
    ...
    ValueError: radius: expected a positive finite number, got inf
    >>> positive("radius", None)
    Traceback (most recent call last):
    ...
    ValueError: radius: expected a positive number, got None
    """
    return number(
        name,
        value,
        low=0,
        low_open=True,
        expected="a positive finite number",
        type_expected=type_expected,
        type_error=type_error,
        kinds=kinds,
    )


def fraction(name: str, value) -> float:
    """``value`` as a float strictly between 0 and 1 (a share of rows, an opacity).

    >>> fraction("test_fraction", 0.25)
    0.25
    >>> fraction("test_fraction", 1)
    Traceback (most recent call last):
    ...
    ValueError: test_fraction: expected a number in (0, 1), got 1
    """
    return number(name, value, low=0, high=1, low_open=True, high_open=True)


def alpha(value, name: str = "alpha") -> float:
    """``value`` as a float, checked to be a significance level: a number strictly between 0
    and 1.

    >>> alpha(0.05)
    0.05
    >>> alpha(0)
    Traceback (most recent call last):
    ...
    ValueError: alpha: expected a level in (0, 1), got 0
    """
    return number(
        name, value, low=0, high=1, low_open=True, high_open=True, expected="a level in (0, 1)"
    )


def text(name: str, value) -> str:
    """``value``, checked to be a nonempty string (a name, a statement).

    >>> text("claim", "E1")
    'E1'
    >>> text("claim", "")
    Traceback (most recent call last):
    ...
    ValueError: claim: expected a nonempty string, got ''
    """
    if not isinstance(value, str) or not value:
        _refuse(name, "a nonempty string", value)
    return value


def one_of(name: str, value, choices: Collection, *, expected: str | None = None):
    """``value``, checked to be one of ``choices`` (a value that cannot be looked up in them,
    a list among the keys of a dict, is not one of them); the message lists them as a tuple.

    >>> one_of("schedule", "cosine", ("constant", "cosine"))
    'cosine'
    >>> one_of("schedule", "linear", ("constant", "cosine"))
    Traceback (most recent call last):
    ...
    ValueError: schedule: expected one of ('constant', 'cosine'), got 'linear'
    """
    try:
        found = value in choices
    except TypeError:  # unhashable, looked up in a dict or a set
        found = False
    if not found:
        _refuse(name, f"one of {tuple(choices)}" if expected is None else expected, value)
    return value
