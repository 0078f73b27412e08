"""Exact simplification, entry by entry, without ever calling ``sympy.simplify``.

What is here::

    simplify(expr)              cancel to p/q; decide p = 0 modulo sin² + cos² = 1 and
                                cosh² − sinh² = 1; return the shortest equivalent form
    tidy(expr)                  a final scalar: simplify, then factor when that is shorter
    is_zero(expr)               simplify(expr) == 0
    vanishes_identically(expr)  a cheap numeric look at one rational point, then is_zero
    rewrite_squares, has_trig   the Pythagorean rewriting behind simplify

Used by :mod:`curvlab.symbolic.arithmetic` (leaving the field), :mod:`.validation` and
:mod:`.fisher`.
"""

from __future__ import annotations

import sympy as sp

__all__ = [
    "differs_from_zero_at_a_point",
    "has_trig",
    "is_zero",
    "rewrite_squares",
    "simplify",
    "tidy",
    "vanishes_identically",
]

# Rules (f, partner, a, b) meaning f(x)² = a + b·partner(x)², from sin² + cos² = 1 and
# cosh² − sinh² = 1.
# sin² = 1 − cos², sinh² = cosh² − 1
TOWARDS_COS_RULES = ((sp.sin, sp.cos, 1, -1), (sp.sinh, sp.cosh, -1, 1))
# cos² = 1 − sin², cosh² = 1 + sinh²
TOWARDS_SIN_RULES = ((sp.cos, sp.sin, 1, -1), (sp.cosh, sp.sinh, 1, 1))


def rewrite_squares(expr: sp.Expr, rules) -> sp.Expr:
    """Rewrite f(x)ⁿ (n ≥ 2) as f(x)^(n mod 2) (a + b·partner(x)²)^(n div 2), then expand.

    With ``TOWARDS_COS_RULES`` every sin and sinh is left with exponent at most 1, so a polynomial
    in sin, cos, sinh, cosh of the same arguments becomes a canonical representative modulo the
    Pythagorean identities: it is zero exactly when the original polynomial is.
    """
    for func, partner, constant, coefficient in rules:

        def is_square_power(node, func=func):
            return (
                node.is_Pow
                and isinstance(node.base, func)
                and node.exp.is_Integer
                and node.exp >= 2
            )

        def rewrite(node, partner=partner, constant=constant, coefficient=coefficient):
            arg = node.base.args[0]
            n = int(node.exp)
            square = constant + coefficient * partner(arg) ** 2
            return node.base ** (n % 2) * square ** (n // 2)

        expr = expr.replace(is_square_power, rewrite)
    return sp.expand(expr)


def has_trig(expr: sp.Expr) -> bool:
    """True when expr contains sin, cos, sinh or cosh."""
    return expr.has(sp.sin, sp.cos, sp.sinh, sp.cosh)


def simplify(expr) -> sp.Expr:
    """Cancel ``expr`` to p/q, decide p = 0 modulo sin² + cos² = 1, return the shortest form.

    The candidates are the canceled p/q and p/q with even powers of sin (or of cos) rewritten;
    the shortest by operation count wins, ties going to the plainer form.
    """
    expr = sp.sympify(expr)
    canceled = sp.cancel(sp.together(expr))
    if canceled == 0 or not has_trig(canceled):
        return canceled
    numerator, denominator = sp.fraction(canceled)
    towards_cos = rewrite_squares(numerator, TOWARDS_COS_RULES)
    if towards_cos == 0:
        return sp.S.Zero
    candidates = [
        canceled,
        sp.cancel(towards_cos / rewrite_squares(denominator, TOWARDS_COS_RULES)),
        sp.cancel(
            rewrite_squares(numerator, TOWARDS_SIN_RULES)
            / rewrite_squares(denominator, TOWARDS_SIN_RULES)
        ),
    ]
    return min(candidates, key=sp.count_ops)


def tidy(expr, canceled: bool = False) -> sp.Expr:
    """A final scalar: ``simplify`` (unless ``canceled``), then ``factor`` when short."""
    simplified = expr if canceled else simplify(expr)
    if simplified.is_number or sp.count_ops(simplified) > 400:
        return simplified
    factored = sp.factor(simplified)
    if sp.count_ops(factored) <= sp.count_ops(simplified):
        return factored
    return simplified


def is_zero(expr) -> bool:
    return simplify(expr) == 0


def differs_from_zero_at_a_point(expr: sp.Expr) -> bool:
    """True when ``expr`` is visibly nonzero at a fixed rational point of its free symbols."""
    symbols = sorted(expr.free_symbols, key=lambda s: s.name)
    point = {s: sp.Rational(2 * i + 3, 4 * i + 7) for i, s in enumerate(symbols)}
    try:
        value = complex(sp.N(expr.subs(point), 30))
    except (TypeError, ValueError, ZeroDivisionError):
        return False
    return value == value and abs(value) > 1e-12 and abs(value) != float("inf")


def vanishes_identically(expr: sp.Expr) -> bool:
    """True when ``expr`` is identically zero (a cheap numeric look first, then exact)."""
    if differs_from_zero_at_a_point(expr):
        return False
    return is_zero(expr)
