"""The claims vocabulary: the verdicts a claim of the reproduction table can get, and the rule
of a geometric claim.

Two kinds of claim, two sets of verdicts, both defined here and nowhere else:

- a **geometric** claim (T1 to T5) is tested by named boolean checks, each computed from
  results (a symbolic identity, a closed-form stack, a fitted growth law); its verdict is a
  function of the checks alone (:func:`verdict`, :data:`GEOMETRIC_VERDICTS`)::

      all checks pass        "reproduced"
      some pass              "partly"
      none pass              "not reproduced"
      (no test possible)     "unverified"        only by passing ``testable=False``

- an **empirical** claim (E1 to E3) is decided by an interval over seeds
  (:data:`EMPIRICAL_VERDICTS`: supported, contradicted, inconclusive; undecidable where its
  seeds cannot decide), by the rules of :mod:`curvlab.analysis.stats`; a prediction about a
  phenomenon that does not exist at the study's scale (a sink for a gate to remove) is
  :data:`NOT_TESTABLE` there, with the reason, whatever its interval.

So a change in the numbers changes the verdict.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "EMPIRICAL_VERDICTS",
    "GEOMETRIC_VERDICTS",
    "NOT_TESTABLE",
    "claim_record",
    "verdict",
]

GEOMETRIC_VERDICTS: tuple[str, ...] = ("reproduced", "partly", "not reproduced", "unverified")
"""The verdicts of a geometric claim (T1 to T5), strongest first."""

NOT_TESTABLE = "not testable here"
"""The verdict of an empirical claim whose phenomenon does not exist at the study's scale (a
prediction that a gate removes the attention sink, where no run has a sink): the interval
cannot decide it either way.  Its record says so with ``testable`` False and a ``reason``."""

EMPIRICAL_VERDICTS: tuple[str, ...] = (
    "supported",
    "contradicted",
    "inconclusive",
    "undecidable",
    NOT_TESTABLE,
)
"""The verdicts of an empirical claim (E1 to E3), by the interval rules of
:mod:`curvlab.analysis.stats`: "inconclusive" when the data could have decided and did not,
"undecidable" when the seeds could not decide whatever the data (the smallest p the claim's
test can reach at its seeds, Holm-adjusted over its family, is not below α, or the seeds give
no valid interval: :mod:`curvlab.analysis.decidability`), :data:`NOT_TESTABLE` when the
phenomenon the claim is about is absent, so that no data of this study could test it."""


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
