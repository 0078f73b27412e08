"""Answers as data: what leaves the student's kernel, and how the grader reads it back.

The sandboxed kernel turns each answer into plain JSON data with :func:`encode`; the grader
rebuilds it with :func:`decode`, which never evaluates anything:

- ``{"int": "12"}``, ``{"float": "0.5"}`` (``repr``, so ``nan`` and ``inf`` survive),
  ``{"complex": ["1.0", "2.0"]}``, ``{"bool": true}``, ``{"str": "..."}``, ``{"none": null}``;
- ``{"list": [...]}``, ``{"tuple": [...]}``;
- ``{"ndarray" | "tensor": {"dtype": "float64", "shape": [2, 2], "data": ["1.0", ...]}}``:
  NumPy arrays and torch tensors as numbers only;
- ``{"sympy": "<srepr>"}``: a SymPy object as its ``srepr`` string, re-parsed by
  :func:`parse_srepr` with a whitelist of SymPy classes (no ``eval``);
- ``{"error": "..."}``: the value was not data (a function, a custom class, an object whose
  ``__eq__`` says yes to everything): the answer counts as missing.

Decoding is bounded in size (:data:`MAX_ITEMS`, :data:`MAX_SREPR`, :data:`MAX_DEPTH`), in
precision and in the work SymPy does while building an answer (:data:`MAX_FLOAT_BITS`,
:data:`MAX_EXPONENT_BITS`, :data:`MAX_EXACT`: a ``Float`` of a billion bits, ``10**10**9`` or
``factorial(10**9)`` is refused before SymPy evaluates it); the grader also ends the process
that decodes at the submission's deadline.

Text a student gives is never code on the grader's side: the grader decodes it
(``decode(data, text=StudentText)``) as a :class:`StudentText`, which is not a ``str``, so
SymPy's ``sympify``, ``simplify``, ``Matrix`` and ``lambdify`` refuse it instead of parsing
it, and its ``str()`` is a quoted literal. A symbol's or a function's name in an srepr must be
a Python identifier, so that printing an answer into code (``lambdify``) cannot inject any.

>>> import sympy as sp
>>> x = sp.Symbol("x", positive=True)
>>> decode(encode([sp.sin(x) / 2, 3, 0.25])) == [sp.sin(x) / 2, 3, 0.25]
True
>>> decode(encode(type("Yes", (), {"__eq__": lambda self, other: True})()))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
curvgrade.answers.AnswerError: answer must be ...; got Yes
"""

from __future__ import annotations

import ast
import math
import re

MAX_DEPTH = 60
MAX_ITEMS = 1_000_000
MAX_SREPR = 2_000_000
MAX_FLOAT_BITS = 4096  # a Float's precision in bits (``precision=``; ``dps=`` in digits)
MAX_EXPONENT_BITS = 65_536  # |binary exponent| of a Float, and bits of an exact power's result
MAX_EXACT = 10_000  # largest integer argument of factorial, gamma, binomial; derivative order
_DTYPES = ("float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint8", "bool")
EXPECTED = "a SymPy object, a number, a string, a list or tuple of these, or a numeric array"


class AnswerError(TypeError):
    """A value that is not answer data, or data that does not decode."""


class StudentText:
    """A student's text as the grader holds it: comparable with ``str``, never parsed as code.

    SymPy turns a ``str`` into an expression by evaluating it (``sympify``, and through it
    ``simplify``, ``Matrix``, ``nsimplify`` and ``lambdify``); a student's text given where an
    expression was expected would run on the grader's side. This class is not a ``str``:
    SymPy refuses it, and its ``str()`` and ``repr()`` are the text as a quoted Python literal,
    inert wherever it is printed into code. A check may still compare it, look into it and
    normalise it.

    >>> import sympy as sp
    >>> answer = StudentText("__import__('os').getpid() or -1/2")
    >>> sp.sympify(answer)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    sympy.core.sympify.SympifyError: ...cannot sympify object of type...StudentText...
    >>> StudentText(" Positive ").strip().lower() == "positive", "os" in answer, len(answer)
    (True, True, 33)
    >>> print(StudentText('a"b'))
    'a"b'
    """

    __slots__ = ("_text",)

    def __init__(self, text: str):
        if type(text) is not str:
            raise TypeError(f"text: expected a str, got {type(text).__name__}")
        object.__setattr__(self, "_text", text)

    def __setattr__(self, name, value):
        raise AttributeError("StudentText is immutable")

    def __repr__(self) -> str:
        return repr(self._text)

    __str__ = __repr__

    def __eq__(self, other) -> bool:
        if isinstance(other, StudentText):
            return self._text == other._text
        if type(other) is str:
            return self._text == other
        return NotImplemented

    def __ne__(self, other) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(self._text)

    def __len__(self) -> int:
        return len(self._text)

    def __contains__(self, part) -> bool:
        if isinstance(part, StudentText):
            part = part._text
        if type(part) is not str:
            raise TypeError("'in StudentText' needs a str on the left")
        return part in self._text

    def strip(self) -> StudentText:
        """The text without leading and trailing white space."""
        return StudentText(self._text.strip())

    def lower(self) -> StudentText:
        """The text in lower case."""
        return StudentText(self._text.lower())

    def casefold(self) -> StudentText:
        """The text case-folded (for comparisons that ignore case)."""
        return StudentText(self._text.casefold())

    def startswith(self, prefix) -> bool:
        """Whether the text starts with ``prefix`` (a ``str`` or a tuple of them)."""
        return self._text.startswith(prefix)

    def endswith(self, suffix) -> bool:
        """Whether the text ends with ``suffix`` (a ``str`` or a tuple of them)."""
        return self._text.endswith(suffix)


def _type_name(value) -> str:
    name = type(value).__name__
    return "".join(ch for ch in name if ch.isalnum() or ch == "_")[:60] or "object"


def encode(value, depth: int = 0):
    """``value`` as JSON-able answer data; :class:`AnswerError` when it is not data.

    Exact built-in types only (``type(x) is int``): a subclass could carry its own ``__eq__``.

    >>> encode(3), encode(0.5), encode((1, "a"))
    ({'int': '3'}, {'float': '0.5'}, {'tuple': [{'int': '1'}, {'str': 'a'}]})
    """
    if depth > MAX_DEPTH:
        raise AnswerError(f"answer nested deeper than {MAX_DEPTH} levels")
    kind = type(value)
    if kind is bool:
        return {"bool": value}
    if kind is int:
        return {"int": str(value)}
    if kind is float:
        return {"float": repr(value)}
    if kind is complex:
        return {"complex": [repr(value.real), repr(value.imag)]}
    if kind is str:
        return {"str": value}
    if kind is StudentText:  # a student's text the grader passes back to a student function
        return {"str": value._text}
    if value is None:
        return {"none": None}
    if kind in (list, tuple):
        return {kind.__name__: [encode(item, depth + 1) for item in value]}
    module = getattr(kind, "__module__", "") or ""
    if module.startswith("numpy"):
        return _encode_numpy(value)
    if module.startswith("torch") and kind.__name__ in ("Tensor", "Parameter"):
        return _encode_torch(value)
    if module.startswith("sympy"):
        import sympy

        if isinstance(value, sympy.Basic | sympy.MatrixBase):
            return {"sympy": sympy.srepr(value)}
    raise AnswerError(f"answer must be {EXPECTED}; got {_type_name(value)}")


def _encode_numpy(value):
    import numpy

    if isinstance(value, numpy.generic):
        return encode(value.item())
    if type(value) is not numpy.ndarray or str(value.dtype) not in _DTYPES:
        raise AnswerError(f"answer must be {EXPECTED}; got {_type_name(value)}")
    data = [repr(item) for item in value.reshape(-1).tolist()]
    return {"ndarray": {"dtype": str(value.dtype), "shape": list(value.shape), "data": data}}


def _encode_torch(value):
    dtype = str(value.dtype).removeprefix("torch.")
    if dtype not in _DTYPES:
        raise AnswerError(f"answer must be {EXPECTED}; got a tensor of {dtype}")
    flat = value.detach().cpu().reshape(-1).tolist()
    data = [repr(item) for item in flat]
    return {"tensor": {"dtype": dtype, "shape": list(value.shape), "data": data}}


def _number(text, kind):
    if type(text) is not str or len(text) > 400:
        raise AnswerError(f"malformed {kind} in answer data")
    try:
        if kind == "int":
            return int(text)
        return float(text)
    except ValueError as error:
        raise AnswerError(f"malformed {kind} in answer data") from error


def decode(data, depth: int = 0, *, text: type = str):
    """Rebuild an answer from :func:`encode`'s data; :class:`AnswerError` on anything else.

    ``text`` is the type a ``{"str": ...}`` becomes: the grader passes :class:`StudentText`.

    >>> decode({"list": [{"int": "1"}, {"float": "nan"}]})
    [1, nan]
    >>> decode({"pickle": "..."})
    Traceback (most recent call last):
    ...
    curvgrade.answers.AnswerError: unknown answer data kind
    """
    if depth > MAX_DEPTH:
        raise AnswerError(f"answer nested deeper than {MAX_DEPTH} levels")
    if not isinstance(data, dict) or len(data) != 1:
        raise AnswerError("answer data must be a one-key object")
    ((kind, value),) = data.items()
    if kind == "error":
        raise AnswerError(str(value)[:300])
    if kind == "bool" and type(value) is bool:
        return value
    if kind == "none":
        return None
    if kind == "int":
        return _number(value, "int")
    if kind == "float":
        return _number(value, "float")
    if kind == "complex" and isinstance(value, list) and len(value) == 2:
        return complex(_number(value[0], "float"), _number(value[1], "float"))
    if kind == "str" and type(value) is str:
        return text(value)
    if kind in ("list", "tuple") and isinstance(value, list):
        if len(value) > MAX_ITEMS:
            raise AnswerError("answer list too long")
        items = [decode(item, depth + 1, text=text) for item in value]
        return items if kind == "list" else tuple(items)
    if kind in ("ndarray", "tensor") and isinstance(value, dict):
        return _decode_array(kind, value)
    if kind == "sympy" and type(value) is str:
        return parse_srepr(value)
    raise AnswerError("unknown answer data kind")


def _decode_array(kind: str, value: dict):
    import numpy

    dtype, shape, data = value.get("dtype"), value.get("shape"), value.get("data")
    if dtype not in _DTYPES or not isinstance(shape, list) or not isinstance(data, list):
        raise AnswerError("malformed array in answer data")
    if not all(type(n) is int and 0 <= n for n in shape) or math.prod(shape) != len(data):
        raise AnswerError("malformed array shape in answer data")
    if len(data) > MAX_ITEMS:
        raise AnswerError("answer array too large")
    if dtype == "bool":
        numbers = [item == "True" for item in data]
    elif dtype.startswith(("int", "uint")):
        numbers = [_number(item, "int") for item in data]
    else:
        numbers = [_number(item, "float") for item in data]
    array = numpy.array(numbers, dtype=dtype).reshape(shape)
    if kind == "ndarray":
        return array
    import torch

    return torch.from_numpy(array.copy())


# --- srepr, read with a whitelist -----------------------------------------------------------

_SYMPY_NAMES = (
    "Symbol Dummy Integer Rational Float Add Mul Pow Tuple Eq Ne Lt Le Gt Ge And Or Not "
    "ImmutableDenseMatrix MutableDenseMatrix ImmutableSparseMatrix MutableSparseMatrix "
    "ImmutableDenseNDimArray "
    "sin cos tan cot sec csc asin acos atan atan2 acot sinh cosh tanh coth asinh acosh atanh "
    "exp log sqrt Abs sign re im arg conjugate floor ceiling Max Min Piecewise ExprCondPair "
    "Derivative Integral Function Lambda Heaviside DiracDelta erf gamma factorial binomial "
    "Sum Product Interval FiniteSet"
).split()


def _sympy_tables():
    import sympy
    from sympy.functions.elementary.piecewise import ExprCondPair

    calls = {name: getattr(sympy, name) for name in _SYMPY_NAMES if name != "ExprCondPair"}
    calls["ExprCondPair"] = ExprCondPair
    calls["ImmutableDenseNDimArray"] = _ndim_array
    constants = {
        "pi": sympy.pi,
        "E": sympy.E,
        "I": sympy.I,
        "oo": sympy.oo,
        "zoo": sympy.zoo,
        "nan": sympy.nan,
        "true": sympy.true,
        "false": sympy.false,
        "EulerGamma": sympy.EulerGamma,
    }
    return calls, constants


def _ndim_array(data, shape):
    """A SymPy N-dim array (``riemann`` returns one) whose data has exactly its shape's size.

    >>> import sympy as sp
    >>> _ndim_array(sp.Tuple(1, 2), sp.Tuple(2))
    [1, 2]
    >>> _ndim_array(sp.Integer(0), sp.Tuple(10**5, 10**5))
    Traceback (most recent call last):
    ...
    curvgrade.answers.AnswerError: srepr: an array's data must match its shape
    """
    import math

    import sympy

    if not isinstance(data, sympy.Tuple | tuple | list) or not isinstance(
        shape, sympy.Tuple | tuple | list
    ):
        raise AnswerError("srepr: an array's data must match its shape")
    sizes = [int(size) if isinstance(size, int | sympy.Integer) else -1 for size in shape]
    if any(size < 0 for size in sizes) or math.prod(sizes) != len(data):
        raise AnswerError("srepr: an array's data must match its shape")
    return sympy.ImmutableDenseNDimArray(list(data), tuple(sizes))


def parse_srepr(text: str):
    """Build the SymPy object a ``srepr`` string describes, allowing only whitelisted classes.

    Names outside the whitelist, attribute access, subscripts, lambdas and every other Python
    construct are refused: the text is data, never code.

    >>> import sympy as sp
    >>> parse_srepr(sp.srepr(sp.Matrix([[1, sp.Symbol("v", positive=True)]])))
    Matrix([[1, v]])
    >>> parse_srepr("__import__('os')")
    Traceback (most recent call last):
    ...
    curvgrade.answers.AnswerError: srepr: '__import__' is not an allowed SymPy class
    """
    if len(text) > MAX_SREPR:
        raise AnswerError("srepr: answer too large")
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        raise AnswerError(f"srepr: not a SymPy srepr ({type(error).__name__})") from None
    calls, constants = _sympy_tables()

    def build(node, depth):
        if depth > 400:
            raise AnswerError("srepr: expression nested too deeply")
        if isinstance(node, ast.Constant) and type(node.value) in (int, float, str, bool):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            operand = build(node.operand, depth + 1)
            if type(operand) in (int, float):
                return -operand
            raise AnswerError("srepr: '-' only before a number")
        if isinstance(node, ast.Name):
            if node.id in constants:
                return constants[node.id]
            raise AnswerError(f"srepr: {node.id[:40]!r} is not an allowed SymPy name")
        if isinstance(node, ast.List | ast.Tuple):
            items = [build(item, depth + 1) for item in node.elts]
            return items if isinstance(node, ast.List) else tuple(items)
        if isinstance(node, ast.Call):
            function = node.func
            if isinstance(function, ast.Call):  # Function('f')(x): an undefined function
                inner = function.func
                if not (isinstance(inner, ast.Name) and inner.id == "Function"):
                    raise AnswerError("srepr: only Function('name')(...) may be called twice")
                function_object = build(function, depth + 1)
            elif isinstance(function, ast.Name):
                if function.id not in calls:
                    raise AnswerError(f"srepr: {function.id[:40]!r} is not an allowed SymPy class")
                function_object = calls[function.id]
            else:
                raise AnswerError("srepr: only SymPy classes may be called")
            args = [build(arg, depth + 1) for arg in node.args]
            kwargs = {}
            for keyword in node.keywords:
                value = build(keyword.value, depth + 1)
                if keyword.arg is None or type(value) not in (bool, int, str):
                    raise AnswerError("srepr: keyword arguments must be plain constants")
                kwargs[keyword.arg] = value
            if function_object is calls.get("Function") and not (
                len(args) == 1 and type(args[0]) is str
            ):
                raise AnswerError("srepr: Function takes one name")
            name = function.id if isinstance(function, ast.Name) else "Function(...)"
            _refuse_costly(name, args, kwargs)
            try:
                built = function_object(*args, **kwargs)
            except (TypeError, ValueError, AttributeError, RecursionError) as error:
                raise AnswerError(f"srepr: {type(error).__name__} building the answer") from None
            if name == "Float":
                _refuse_far_float(built)
            return built
        raise AnswerError(f"srepr: {type(node).__name__} is not allowed in an answer")

    try:
        return build(tree.body, 0)
    except RecursionError:
        raise AnswerError("srepr: expression nested too deeply") from None


_DECIMAL = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d{1,7})?|[-+]?(inf|nan)")
_NAMED = ("Symbol", "Dummy", "Function")


def _refuse_costly(name: str, args: list, kwargs: dict) -> None:
    """Refuse, before SymPy builds it, an answer whose building or simplifying would not end.

    Names of symbols and functions are Python identifiers; a Float's text is a decimal
    number with a bounded exponent and its precision is at most :data:`MAX_FLOAT_BITS`;
    ``Integer`` and ``Rational`` take integers (a string such as ``'1e1000000000'`` would be
    expanded); an exact power ``a**b`` of numbers has at most :data:`MAX_EXPONENT_BITS` bits;
    ``factorial``, ``gamma`` and ``binomial`` of an integer, and a derivative's order, are at
    most :data:`MAX_EXACT`.

    >>> _refuse_costly("Float", ["1.5"], {"precision": 10**9})
    Traceback (most recent call last):
    ...
    curvgrade.answers.AnswerError: srepr: a Float's precision is at most 4096 bits
    >>> import sympy as sp
    >>> _refuse_costly("Pow", [sp.Integer(10), sp.Integer(10**9)], {})
    Traceback (most recent call last):
    ...
    curvgrade.answers.AnswerError: srepr: an exact power larger than 65536 bits
    >>> _refuse_costly("Symbol", ["__import__('os')"], {})
    Traceback (most recent call last):
    ...
    curvgrade.answers.AnswerError: srepr: a Symbol's name must be a Python identifier
    """
    import sympy

    if name in _NAMED and args and type(args[0]) is str:
        if not args[0].isidentifier() or len(args[0]) > 100:
            raise AnswerError(f"srepr: a {name}'s name must be a Python identifier")
    if name == "Float":
        if not args or len(args) > 2:
            raise AnswerError("srepr: Float takes a number and at most a precision")
        value = args[0]
        if type(value) is str and (len(value) > 1000 or not _DECIMAL.fullmatch(value)):
            raise AnswerError("srepr: a Float's text must be a decimal number")
        digits = [args[1]] if len(args) == 2 else []
        if kwargs.get("dps") is not None:
            digits.append(kwargs["dps"])
        bits = [kwargs.get("precision")] if kwargs.get("precision") is not None else []
        if any(type(n) is not int or n > MAX_FLOAT_BITS for n in bits) or any(
            type(n) is not int or n * 3.33 > MAX_FLOAT_BITS for n in digits
        ):
            raise AnswerError(f"srepr: a Float's precision is at most {MAX_FLOAT_BITS} bits")
    if name in ("Integer", "Rational") and any(type(arg) is not int for arg in args):
        raise AnswerError(f"srepr: {name} takes integers")
    if name == "Pow" and len(args) == 2:
        base, exponent = (sympy.sympify(arg, strict=True) for arg in args)
        if base.is_Number and exponent.is_Rational and not exponent.is_Integer:
            if exponent.q > MAX_EXACT:
                raise AnswerError(f"srepr: a root of order above {MAX_EXACT}")
        if base.is_Number and exponent.is_Rational and base not in (0, 1, -1):
            size = 64
            if base.is_Rational:
                size = max(int(base.p).bit_length(), int(base.q).bit_length(), 1)
            if abs(int(exponent.p)) * size > MAX_EXPONENT_BITS:
                raise AnswerError(f"srepr: an exact power larger than {MAX_EXPONENT_BITS} bits")
    if name in ("factorial", "gamma", "binomial"):
        for arg in args:
            number = sympy.sympify(arg, strict=True) if type(arg) is not str else None
            if number is not None and number.is_Number and abs(number) > MAX_EXACT:
                raise AnswerError(f"srepr: {name} of a number above {MAX_EXACT}")
    if name == "Derivative":
        for arg in args[1:]:
            order = arg[1] if isinstance(arg, tuple | list | sympy.Tuple) and len(arg) == 2 else 1
            if not isinstance(order, int | sympy.Integer) or abs(int(order)) > MAX_EXACT:
                raise AnswerError(f"srepr: a derivative's order is at most {MAX_EXACT}")


def _refuse_far_float(value) -> None:
    """Refuse a Float whose binary exponent is beyond :data:`MAX_EXPONENT_BITS`: evaluating a
    function at it would need that many bits of pi."""
    mpf = getattr(value, "_mpf_", None)
    if mpf is not None and mpf[1] and abs(mpf[2] + mpf[3]) > MAX_EXPONENT_BITS:
        raise AnswerError(f"srepr: a Float beyond 2**{MAX_EXPONENT_BITS}")
