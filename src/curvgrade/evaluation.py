"""Which checks would hand a student's answer to a function that evaluates text.

SymPy's ``sympify`` evaluates a ``str`` as Python (``sympify("__import__('os')...")`` runs it),
and so do ``S``, ``simplify``, ``nsimplify``, ``Matrix``, ``parse_expr`` and ``lambdify``, which
call it, and Python's ``eval``, ``exec`` and ``compile``. A check that passes an answer to one of
them would run a student's text if the answer were text. The grader decodes a student's text
as a :class:`~curvgrade.answers.StudentText`, which all of them refuse; this module is the
second wall, at the time a chapter is read: :func:`evaluating_uses` finds, statically, every
place in a check where an answer, or a value that may still be its text, reaches one of those
functions, and :func:`curvgrade.chapter.read_chapter` refuses the chapter.

The one way in is ``sp.sympify(answer, strict=True)`` (the same as SymPy's ``_sympify``): it
turns numbers, SymPy objects and matrices into SymPy objects and refuses text and lists.

What may still be the text (tainted): an answer's name; a subscript, attribute or slice of
something tainted; ``str``/``repr``/``format`` of it, an f-string or ``%`` with it; ``+`` or
``*`` with it (text concatenates and repeats); a list, tuple, set or dict display holding it;
the result of any other call one of whose arguments is tainted (``sp.flatten(answer)`` returns
its items), except the converters :data:`CLEAN_CALLS`; a name assigned from, or looping over,
something tainted, until an ``assert isinstance(name, T)`` with a type ``T`` other than
``str`` proves it is not text. ``-``, ``/``, ``**`` and ``@`` with an answer are not text (SymPy
and Python
refuse them on a ``str``), nor is a comparison.
"""

from __future__ import annotations

import ast

EVALUATING = frozenset(
    "sympify S simplify nsimplify Matrix ImmutableMatrix MutableMatrix Array parse_expr "
    "lambdify eval exec compile".split()
)
CLEAN_CALLS = frozenset("float int complex bool len isinstance type abs".split())
_TEXT_CALLS = frozenset("str repr format ascii".split())


def _call_name(node: ast.Call) -> str | None:
    function = node.func
    if isinstance(function, ast.Name):
        return function.id
    if isinstance(function, ast.Attribute):
        return function.attr
    return None


def _strict(node: ast.Call) -> bool:
    """``sympify(x, strict=True)`` (or ``_sympify(x)``): the one clean way into SymPy."""
    name = _call_name(node)
    if name == "_sympify":
        return True
    return name in ("sympify", "S") and any(
        keyword.arg == "strict"
        and isinstance(keyword.value, ast.Constant)
        and keyword.value.value is True
        for keyword in node.keywords
    )


class _Taint:
    def __init__(self, names: set[str]):
        self.tainted = set(names)

    def of(self, node: ast.AST | None) -> bool:
        """Whether ``node``'s value may still be (or hold) an answer's text."""
        if node is None:
            return False
        if isinstance(node, ast.Name):
            return node.id in self.tainted
        if isinstance(node, ast.Subscript | ast.Attribute | ast.Starred):
            return self.of(node.value)
        if isinstance(node, ast.JoinedStr | ast.FormattedValue):
            return any(self.of(child) for child in ast.iter_child_nodes(node))
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Add | ast.Mult | ast.Mod):
                return self.of(node.left) or self.of(node.right)
            return False
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            return any(self.of(item) for item in node.elts)
        if isinstance(node, ast.Dict):
            return any(self.of(item) for item in [*node.keys, *node.values])
        if isinstance(node, ast.IfExp):
            return self.of(node.body) or self.of(node.orelse)
        if isinstance(node, ast.BoolOp):
            return any(self.of(value) for value in node.values)
        if isinstance(node, ast.NamedExpr):
            return self.of(node.value)
        if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp):
            return self.of(node.elt) or any(self.of(gen.iter) for gen in node.generators)
        if isinstance(node, ast.DictComp):
            return (
                self.of(node.key)
                or self.of(node.value)
                or any(self.of(gen.iter) for gen in node.generators)
            )
        if isinstance(node, ast.Call):
            if _strict(node) or _call_name(node) in CLEAN_CALLS:
                return False
            arguments = [*node.args, *(keyword.value for keyword in node.keywords)]
            if isinstance(node.func, ast.Attribute):
                arguments.append(node.func.value)  # answer.method(...)
            return any(self.of(argument) for argument in arguments)
        return False

    def bind(self, target: ast.AST, tainted: bool) -> None:
        if isinstance(target, ast.Name):
            if tainted:
                self.tainted.add(target.id)
            else:
                self.tainted.discard(target.id)
        elif isinstance(target, ast.Tuple | ast.List):
            for item in target.elts:
                self.bind(item, tainted)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, tainted)


def _asserted_not_text(test: ast.AST) -> list[str]:
    """Names that ``assert test`` proves are no text: ``isinstance(name, T)`` with a type
    ``T`` that does not mention ``str``, alone or in an ``and`` chain."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    names = []
    for part in parts:
        if (
            isinstance(part, ast.Call)
            and _call_name(part) == "isinstance"
            and len(part.args) == 2
            and isinstance(part.args[0], ast.Name)
            and "str"
            not in {
                getattr(node, "id", getattr(node, "attr", None)) for node in ast.walk(part.args[1])
            }
        ):
            names.append(part.args[0].id)
    return names


def evaluating_uses(source: str, answers: set[str] | frozenset[str]) -> list[str]:
    """Where ``source`` (a check) hands a value that may be an answer's text to a function
    that evaluates text, as ``line N: f(...)`` descriptions; ``[]`` when it never does.

    >>> evaluating_uses("assert sp.simplify(sp.sympify(K) + 1) == 0", {"K"})
    ['line 1: sympify(K) evaluates text: use sp.sympify(K, strict=True)']
    >>> evaluating_uses("assert sp.simplify(sp.sympify(K, strict=True) + 1) == 0", {"K"})
    []
    >>> evaluating_uses("assert all(sp.simplify(e) == 0 for e in sp.flatten(R))", {"R"})
    ['line 1: simplify(e) evaluates text: use sp.sympify(e, strict=True)']
    >>> evaluating_uses("assert sp.simplify(K - 1) == 0", {"K"})
    []
    >>> evaluating_uses("assert isinstance(M, sp.MatrixBase)\\nassert not sp.simplify(M)", {"M"})
    []
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    taint = _Taint(set(answers))
    flagged: list[tuple[ast.Call, str]] = []

    def visit(node: ast.AST) -> None:
        # bindings first, in source order, so that a later use sees an earlier assignment
        if isinstance(node, ast.Assign):
            visit(node.value)
            for target in node.targets:
                taint.bind(target, taint.of(node.value))
            return
        if isinstance(node, ast.AnnAssign | ast.AugAssign) and node.value is not None:
            visit(node.value)
            tainted = taint.of(node.value) or (
                isinstance(node, ast.AugAssign) and taint.of(node.target)
            )
            taint.bind(node.target, tainted)
            return
        if isinstance(node, ast.For):
            visit(node.iter)
            taint.bind(node.target, taint.of(node.iter))
            for child in [*node.body, *node.orelse]:
                visit(child)
            return
        if isinstance(node, ast.comprehension):
            visit(node.iter)
            taint.bind(node.target, taint.of(node.iter))
            for condition in node.ifs:
                visit(condition)
            return
        if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
            for generator in node.generators:
                visit(generator)
            for part in ("elt", "key", "value"):
                if getattr(node, part, None) is not None:
                    visit(getattr(node, part))
            return
        if isinstance(node, ast.NamedExpr):
            visit(node.value)
            taint.bind(node.target, taint.of(node.value))
            return
        if isinstance(node, ast.Assert):
            visit(node.test)
            for name in _asserted_not_text(node.test):
                taint.tainted.discard(name)
            return
        if isinstance(node, ast.Call):
            name = _call_name(node)
            if name in EVALUATING and not _strict(node):
                for argument in [*node.args, *(keyword.value for keyword in node.keywords)]:
                    if taint.of(argument):
                        shown = ast.unparse(argument)[:40]
                        flagged.append(
                            (
                                node,
                                f"line {node.lineno}: {name}({shown}) evaluates text: "
                                f"use sp.sympify({shown}, strict=True)",
                            )
                        )
                        break
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    # a call flagged only because a flagged call inside it returns text: the inner one is named
    inner = {id(node) for node, _ in flagged}
    return [
        problem
        for node, problem in flagged
        if not any(id(child) in inner for child in ast.walk(node) if child is not node)
    ]
