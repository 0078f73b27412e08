"""One table of checks per chapter: :class:`CheckTable` (claim, measured, rule, outcome)."""

from __future__ import annotations

import numpy as np

from curvlab import arguments

__all__ = [
    "CheckTable",
]


class CheckTable:
    """A chapter's checks as one table: what is claimed, what was measured, the rule, the outcome.

    Each method records one check and raises AssertionError at once when it fails (so the
    build stops at the cell whose claim is false); the rule column is written from the same
    comparison that decides the outcome, so the two cannot disagree. Displayed in a notebook
    the table renders as HTML, one row per check; ``str(table)`` gives plain text.

    >>> checks = CheckTable("Checks")
    >>> checks.below("round-off of K on the sphere", 3e-15, 1e-13)
    >>> checks.between("best step", 1.2e-4, 1e-5, 1e-3)
    >>> checks.holds("every ReLU value is exactly 0", True, "2000 of 2000")
    >>> len(checks), checks.rows[0]["rule"]
    (3, '< 1e-13')

    Exact results, from SymPy: :meth:`identity` decides that a difference simplifies to 0
    (a scalar, or every entry of a matrix or array), :meth:`equal` compares exactly.

    >>> import sympy as sp
    >>> x = sp.Symbol("x", positive=True)
    >>> checks.identity("sin² + cos² = 1", sp.sin(x) ** 2 + sp.cos(x) ** 2, 1)
    >>> checks.identity("a metric", sp.Matrix([[x, 0], [0, x**2]]), sp.diag(x, x * x))
    >>> checks.equal("curvature of the unit sphere", sp.Integer(1), 1)
    >>> [(row["measured"], row["rule"]) for row in checks.rows[3:]]
    [('0', 'simplify(lhs - rhs) = 0'), ('0 (2×2)', 'simplify(lhs - rhs) = 0'), ('1', '= 1')]
    >>> checks.above("speed-up", 3.0, 20)
    Traceback (most recent call last):
    ...
    AssertionError: check failed: speed-up: 3 is not > 20
    """

    def __init__(self, title: str | None = None):
        self.title = title
        self.rows: list[dict[str, str]] = []

    def __len__(self) -> int:
        return len(self.rows)

    @staticmethod
    def _number(value: object) -> float:
        if hasattr(value, "item"):
            value = value.item()
        if not arguments.is_number(value):
            raise TypeError(f"value must be a real number, got {type(value)}")
        return float(value)

    def _record(self, claim: str, measured: str, rule: str, passed: bool, failure: str) -> None:
        if not isinstance(claim, str) or not claim:
            raise TypeError(f"claim must be a nonempty string, got {claim!r}")
        self.rows.append(
            {"claim": claim, "measured": measured, "rule": rule, "outcome": "✓" if passed else "✗"}
        )
        if not passed:
            raise AssertionError(f"check failed: {claim}: {failure}")

    def below(self, claim: str, value: object, bound: float) -> None:
        """Check ``value < bound``."""
        value = self._number(value)
        self._record(
            claim,
            f"{value:.3g}",
            f"< {bound:.3g}",
            value < bound,
            f"{value:.3g} is not < {bound:.3g}",
        )

    def above(self, claim: str, value: object, bound: float) -> None:
        """Check ``value > bound``."""
        value = self._number(value)
        self._record(
            claim,
            f"{value:.3g}",
            f"> {bound:.3g}",
            value > bound,
            f"{value:.3g} is not > {bound:.3g}",
        )

    def between(self, claim: str, value: object, low: float, high: float) -> None:
        """Check ``low <= value <= high``."""
        value = self._number(value)
        inside = low <= value <= high
        self._record(
            claim,
            f"{value:.3g}",
            f"in [{low:.3g}, {high:.3g}]",
            inside,
            f"{value:.3g} is outside [{low:.3g}, {high:.3g}]",
        )

    def holds(self, claim: str, condition: object, measured: str = "") -> None:
        """Check that ``condition`` is true (a bool or a one-element tensor/array of bools)."""
        if hasattr(condition, "item"):
            condition = condition.item()
        if not isinstance(condition, bool | np.bool_):
            raise TypeError(f"condition must be a bool, got {type(condition)}")
        self._record(claim, measured, "holds", bool(condition), f"does not hold ({measured})")

    def identity(self, claim: str, lhs: object, rhs: object = 0, *, by=None) -> None:
        """Check that ``lhs - rhs`` simplifies to 0, exactly.

        ``lhs`` and ``rhs`` are SymPy expressions, matrices or arrays (nested lists too) of one
        shape, or ``rhs`` is a scalar that every entry of ``lhs`` must equal (0 by default:
        "every component vanishes"). ``by`` is the simplifier applied to each entry of the
        difference, ``sympy.simplify`` unless given (``sympy.cancel`` decides rational
        functions faster); its name is written in the rule column.

        >>> import sympy as sp
        >>> x = sp.Symbol("x")
        >>> checks = CheckTable()
        >>> checks.identity("a rational identity", (x**2 - 1) / (x - 1), x + 1, by=sp.cancel)
        >>> checks.rows[0]["rule"]
        'cancel(lhs - rhs) = 0'
        >>> checks.identity("(x + 1)² = x² + 1", (x + 1) ** 2, x**2 + 1)
        Traceback (most recent call last):
        ...
        AssertionError: check failed: (x + 1)² = x² + 1: simplify(lhs - rhs) = 2*x, not 0
        """
        import sympy

        reduce = sympy.simplify if by is None else by
        rule = f"{getattr(reduce, '__name__', 'simplify')}(lhs - rhs) = 0"
        left_shape, left = self._entries(lhs)
        right_shape, right = self._entries(rhs)
        if right_shape == () and left_shape != ():
            right_shape, right = left_shape, right * len(left)
        if left_shape != right_shape:
            measured = f"shapes {left_shape} and {right_shape}"
            self._record(claim, measured, rule, False, f"{rule[:-4]} cannot be formed: {measured}")
        differences = [reduce(a - b) for a, b in zip(left, right, strict=True)]
        nonzero = [d for d in differences if not d == 0]
        if nonzero:
            measured = self._short(nonzero[0])
        else:
            measured = "0" if left_shape == () else f"0 ({'×'.join(map(str, left_shape))})"
        self._record(claim, measured, rule, not nonzero, f"{rule[:-4]} = {measured}, not 0")

    def equal(self, claim: str, value: object, expected: object) -> None:
        """Check ``value == expected`` exactly (SymPy objects compare by structure: use
        :meth:`identity` where two forms of one expression must agree).

        >>> checks = CheckTable()
        >>> checks.equal("the signs at the two queries", [1, -1], [1, -1])
        >>> checks.equal("a count", 3, 4)
        Traceback (most recent call last):
        ...
        AssertionError: check failed: a count: 3 is not 4
        """
        result = value == expected
        if hasattr(result, "item") and getattr(result, "size", 1) == 1:
            result = result.item()
        if not isinstance(result, bool | np.bool_):
            raise TypeError(
                f"value == expected must give a bool, got {type(result)}: compare arrays "
                "with holds(...), expressions with identity(...)"
            )
        measured, rule = self._short(value), f"= {self._short(expected)}"
        self._record(claim, measured, rule, bool(result), f"{measured} is not {rule[2:]}")

    @staticmethod
    def _entries(value: object) -> tuple[tuple[int, ...], list]:
        """The shape of a SymPy scalar, matrix or array, or of a nested list of them (a list of
        matrices has shape (n, rows, columns)), and its scalar entries in order."""
        import sympy

        if isinstance(value, sympy.MatrixBase | sympy.NDimArray):
            value = value.tolist()
        if not isinstance(value, list | tuple):
            return (), [sympy.sympify(value)]
        parts = [CheckTable._entries(item) for item in value]
        shapes = {shape for shape, _ in parts}
        if len(shapes) > 1:
            raise ValueError(f"a ragged nesting of shapes {sorted(shapes)}")
        inner = shapes.pop() if parts else ()
        return (len(parts), *inner), [entry for _, entries in parts for entry in entries]

    @staticmethod
    def _short(value: object, width: int = 40) -> str:
        """``value`` on one line of at most ``width`` characters (a matrix as nested lists)."""
        text = " ".join(str(value.tolist() if hasattr(value, "tolist") else value).split())
        return text if len(text) <= width else text[: width - 1] + "…"

    def __str__(self) -> str:
        header = ("claim", "measured", "rule", "outcome")
        widths = [max([len(h)] + [len(r[h]) for r in self.rows]) for h in header]
        lines = [self.title] if self.title else []
        lines.append("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
        for row in self.rows:
            lines.append("  ".join(row[h].ljust(w) for h, w in zip(header, widths, strict=True)))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        import html

        cells = "".join(
            "<tr>"
            + "".join(f"<td>{html.escape(row[h])}</td>" for h in ("claim", "measured", "rule"))
            + f"<td style='text-align:center'>{row['outcome']}</td></tr>"
            for row in self.rows
        )
        caption = f"<caption>{html.escape(self.title)}</caption>" if self.title else ""
        head = "".join(f"<th>{h}</th>" for h in ("claim", "measured", "rule", "outcome"))
        return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{cells}</tbody></table>"
