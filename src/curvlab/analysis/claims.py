"""Verdicts for the reproduction table: a claim, the checks that test it, and what they say.

A claim is tested by named boolean checks, each computed from results (a symbolic identity, a
paired test over seeds, a fitted growth law).  The verdict is a function of the checks alone::

    all checks pass        "reproduced"
    some pass              "partly"
    none pass              "not reproduced"
    (no test possible)     "unverified"        only by passing ``testable=False``

so a change in the numbers changes the verdict.  :func:`higher_than_baseline` and
:func:`no_significant_difference` turn a paired comparison (``mean_difference``, ``p_t``)
result into a check (paired t-test, two-sided, level ``alpha``).
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "VERDICTS",
    "claim_record",
    "higher_than_baseline",
    "no_significant_difference",
    "verdict",
]

VERDICTS: tuple[str, ...] = ("reproduced", "partly", "not reproduced", "unverified")
"""The possible verdicts, strongest first."""


def _check_result(result: Mapping, alpha: float) -> None:
    if not isinstance(result, Mapping) or not {"mean_difference", "p_t"} <= set(result):
        raise TypeError("result: expected a paired_comparison dict (mean_difference, p_t)")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha: expected a level in (0, 1), got {alpha!r}")


def higher_than_baseline(result: Mapping, alpha: float = 0.05) -> bool:
    """True when the paired difference is positive and significant (t-test p < ``alpha``).

    >>> higher_than_baseline({"mean_difference": 0.02, "p_t": 0.01})
    True
    >>> higher_than_baseline({"mean_difference": 0.02, "p_t": 0.2})
    False
    """
    _check_result(result, alpha)
    return result["mean_difference"] > 0 and result["p_t"] < alpha


def no_significant_difference(result: Mapping, alpha: float = 0.05) -> bool:
    """True when the paired t-test finds no difference at level ``alpha`` (p ≥ ``alpha``).

    >>> no_significant_difference({"mean_difference": -0.01, "p_t": 0.4})
    True
    """
    _check_result(result, alpha)
    return result["p_t"] >= alpha


def verdict(checks: Mapping[str, bool], *, testable: bool = True) -> str:
    """ "reproduced" if every check passes, "partly" if some do, "not reproduced" if none do.

    ``testable=False`` (a claim no computation here can test) gives "unverified" whatever the
    checks.  The checks must be booleans; an empty mapping is an error.

    >>> verdict({"flat in the weight chart": True, "flat in the input chart": False})
    'partly'
    >>> verdict({"a": True, "b": True}), verdict({"a": False})
    ('reproduced', 'not reproduced')
    """
    if not isinstance(checks, Mapping) or not checks:
        raise ValueError("checks: expected a nonempty mapping of check name -> bool")
    for name, value in checks.items():
        if not isinstance(value, bool):
            raise TypeError(f"checks: {name!r} must be a bool, got {type(value).__name__}")
    if not testable:
        return "unverified"
    passed = sum(checks.values())
    if passed == len(checks):
        return "reproduced"
    return "partly" if passed else "not reproduced"


def claim_record(claim: str, statement: str, checks: Mapping[str, bool], **extra) -> dict:
    """One tidy row of the reproduction table: claim, statement, checks passed, verdict.

    ``extra`` keys (``testable``, and any evidence such as numbers) are added to the record;
    ``testable`` is passed to :func:`verdict`.

    >>> row = claim_record("T1", "ungated attention is flat", {"weight chart": True})
    >>> row["verdict"], row["passed"], row["n_checks"]
    ('reproduced', 1, 1)
    """
    testable = extra.pop("testable", True)
    return {
        "claim": claim,
        "statement": statement,
        "checks": dict(checks),
        "passed": sum(bool(v) for v in checks.values()),
        "n_checks": len(checks),
        "verdict": verdict(checks, testable=testable),
        **extra,
    }
