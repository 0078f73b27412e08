"""The schema of ``claims.json``: one record per claim and study, under the plan's hash.

The document is ``{"plan_sha256": <64 hex digits>, "claims": [record, ...], ...}``; a record
has exactly the fields of :data:`CLAIM_RECORD_FIELDS` (more may follow)::

    claim, statement, stratum, estimator    from the plan's ClaimSpec
    effect, ci_low, ci_high                 the estimate and its interval (an equivalence
                                            claim: the 1 − 2α TOST interval)
    p                                       the claim's own p (TOST p for equivalence)
    p_holm                                  Holm-adjusted over the plan's family within the
                                            study; None for a secondary claim
    n_seeds, seeds                          how many seeds, and which (distinct integers)
    mde_80                                  the effect detectable with 80% power (or None)
    margin                                  the equivalence margin; None otherwise
    p_floor                                 the smallest p the claim's test can reach at its
                                            seeds (:mod:`curvlab.analysis.decidability`)
    p_floor_holm                            Holm's adjustment of the family's floors; None
                                            for a secondary claim
    decidable                               p_floor_holm (else p_floor) < α, and an interval
                                            exists (ci_low, ci_high None only when not)
    seeds_needed                            the seeds that would make it decidable; None
                                            when it is (or none would)
    verdict                                 supported / contradicted / inconclusive /
                                            undecidable (exactly when not decidable)
    study                                   "exploratory" or "confirmatory"

The verdict must be the one the record's own numbers give by the rules of
:mod:`curvlab.analysis.stats` (:func:`~curvlab.analysis.stats.verdict_follows`), judged on
``p_holm`` where the claim is in the family and on ``p`` otherwise.  Every refusal is a
``ValueError`` naming the record and the field.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

from curvlab import arguments
from curvlab.analysis import stats
from curvlab.analysis.claims import EMPIRICAL_VERDICTS
from curvlab.analysis.plan import ESTIMATORS, AnalysisPlan, ClaimSpec, plan_sha256

__all__ = [
    "CLAIM_RECORD_FIELDS",
    "STUDIES",
    "claim_schema_record",
    "validate_claim_record",
    "validate_claims_document",
]

CLAIM_RECORD_FIELDS: tuple[str, ...] = (
    "claim",
    "statement",
    "stratum",
    "estimator",
    "effect",
    "ci_low",
    "ci_high",
    "p",
    "p_holm",
    "n_seeds",
    "seeds",
    "mde_80",
    "margin",
    "p_floor",
    "p_floor_holm",
    "decidable",
    "seeds_needed",
    "verdict",
    "study",
)
"""The fields of every record of ``claims.json``, in this order."""

STUDIES: tuple[str, ...] = ("exploratory", "confirmatory")
"""The two studies a record can belong to."""

_HASH = re.compile(r"[0-9a-f]{64}")


def _number(where: str, name: str, value, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not (arguments.is_number(value) and math.isfinite(value)):
        raise ValueError(f"{where}: {name} must be a finite number, got {value!r}")


def _probability(where: str, name: str, value, *, optional: bool = False) -> None:
    _number(where, name, value, optional=optional)
    if value is not None and not 0 <= value <= 1:
        raise ValueError(f"{where}: {name} must be a probability in [0, 1], got {value!r}")


def _check_floors(where: str, record: Mapping, alpha: float) -> None:
    _probability(where, "p_floor", record["p_floor"])
    _probability(where, "p_floor_holm", record["p_floor_holm"], optional=True)
    if (record["p_floor_holm"] is None) != (record["p_holm"] is None):
        raise ValueError(f"{where}: p_floor_holm must be None exactly where p_holm is")
    floor = record["p_floor_holm"] if record["p_floor_holm"] is not None else record["p_floor"]
    judged_p = record["p_holm"] if record["p_holm"] is not None else record["p"]
    if judged_p < floor - 1e-12:
        raise ValueError(f"{where}: p {judged_p} is below the floor {floor} its test can reach")
    if floor >= alpha and record["decidable"]:
        raise ValueError(f"{where}: decidable must be False: the floor {floor} is not below α")
    if record["ci_low"] is None and record["decidable"]:
        raise ValueError(f"{where}: decidable must be False: the claim has no interval")
    needed = record["seeds_needed"]
    if needed is not None and not arguments.is_integer(needed):
        raise ValueError(f"{where}: seeds_needed must be an integer or None, got {needed!r}")
    if record["decidable"] and needed is not None:
        raise ValueError(f"{where}: seeds_needed must be None for a decidable claim")
    if not record["decidable"] and record["verdict"] != "undecidable":
        raise ValueError(f"{where}: decidable is False, so the verdict must be 'undecidable'")


def validate_claim_record(record: Mapping, *, alpha: float = 0.05) -> None:
    """Refuse a record that breaks the schema (module docstring); return None when it holds.

    >>> record = {"claim": "E2", "statement": "gated is more accurate", "stratum": "hard",
    ...           "estimator": "paired_mean", "effect": 0.03, "ci_low": 0.01, "ci_high": 0.05,
    ...           "p": 0.25, "p_holm": 1.0, "n_seeds": 3, "seeds": [0, 1, 2],
    ...           "mde_80": 0.02, "margin": None, "p_floor": 0.25, "p_floor_holm": 1.0,
    ...           "decidable": False, "seeds_needed": 9, "verdict": "undecidable",
    ...           "study": "exploratory"}
    >>> validate_claim_record(record)
    >>> validate_claim_record({**record, "verdict": "inconclusive"})
    Traceback (most recent call last):
    ...
    ValueError: E2 (exploratory): decidable is False, so the verdict must be 'undecidable'
    >>> validate_claim_record({**record, "n_seeds": 20, "seeds": list(range(20)), "p": 0.004,
    ...     "p_holm": 0.2, "p_floor": 2e-6, "p_floor_holm": 1e-5, "decidable": True,
    ...     "seeds_needed": None, "verdict": "supported"})
    Traceback (most recent call last):
    ...
    ValueError: E2 (exploratory): verdict 'supported' does not follow from its interval and p = 0.2
    """
    if not isinstance(record, Mapping):
        raise ValueError(f"record: expected a dict, got {type(record).__name__}")
    where = f"{record.get('claim', 'record')} ({record.get('study', '?')})"
    for name in CLAIM_RECORD_FIELDS:
        if name not in record:
            raise ValueError(f"{where}: missing field {name!r}")
    for name in ("claim", "statement", "stratum"):
        if not isinstance(record[name], str) or not record[name]:
            raise ValueError(f"{where}: {name} must be a nonempty string, got {record[name]!r}")
    if record["estimator"] not in ESTIMATORS:
        raise ValueError(f"{where}: estimator must be one of {tuple(ESTIMATORS)}")
    if record["study"] not in STUDIES:
        raise ValueError(f"{where}: study must be one of {STUDIES}, got {record['study']!r}")
    if record["verdict"] not in EMPIRICAL_VERDICTS:
        raise ValueError(f"{where}: verdict must be one of {EMPIRICAL_VERDICTS}")
    _number(where, "effect", record["effect"])
    if not isinstance(record["decidable"], bool):
        raise ValueError(f"{where}: decidable must be a bool, got {record['decidable']!r}")
    interval = record["ci_low"] is not None or record["ci_high"] is not None
    if interval or record["decidable"]:
        for name in ("ci_low", "ci_high"):
            _number(where, name, record[name])
        if not record["ci_low"] <= record["ci_high"]:  # a percentile interval may miss the effect
            raise ValueError(f"{where}: ci_low <= ci_high must hold")
    _check_floors(where, record, alpha)
    _probability(where, "p", record["p"])
    _probability(where, "p_holm", record["p_holm"], optional=True)
    if record["p_holm"] is not None and record["p_holm"] < record["p"] - 1e-12:  # Holm rounds
        raise ValueError(f"{where}: p_holm must be >= p (Holm only raises p)")
    _number(where, "mde_80", record["mde_80"], optional=True)
    _number(where, "margin", record["margin"], optional=True)
    if record["margin"] is not None and record["margin"] <= 0:
        raise ValueError(f"{where}: margin must be positive, got {record['margin']!r}")
    seeds = record["seeds"]
    if not isinstance(seeds, list | tuple) or not all(arguments.is_integer(s) for s in seeds):
        raise ValueError(f"{where}: seeds must be a list of integers")
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"{where}: seeds must be distinct")
    if record["n_seeds"] != len(seeds) or len(seeds) < 2:
        raise ValueError(
            f"{where}: n_seeds must be the number of seeds (>= 2), got {record['n_seeds']!r}"
        )
    p = record["p_holm"] if record["p_holm"] is not None else record["p"]
    if not stats.verdict_follows({**record, "p": p}, alpha=alpha):
        raise ValueError(
            f"{where}: verdict {record['verdict']!r} does not follow from its interval and p = {p}"
        )


def claim_schema_record(
    spec: ClaimSpec,
    *,
    effect: float,
    ci_low: float,
    ci_high: float,
    p: float,
    p_holm: float | None,
    seeds: Sequence[int],
    mde_80: float | None,
    study: str,
    p_floor: float,
    p_floor_holm: float | None,
    seeds_needed: int | None = None,
    alpha: float = 0.05,
) -> dict:
    """The record of claim ``spec`` in ``study``, its verdict derived by the rule, validated.

    The verdict is :func:`curvlab.analysis.stats.equivalence_verdict` for a claim with a
    margin, else :func:`curvlab.analysis.stats.directional_verdict`, on ``p_holm`` (or ``p``
    for a secondary claim, ``p_holm`` None); "undecidable" where the claim is not decidable:
    ``p_floor_holm`` (else ``p_floor``) not below α, or no interval (``ci_low`` None).  The
    floors and ``seeds_needed`` are those of
    :func:`curvlab.analysis.decidability.family_decidability`.

    >>> from curvlab.analysis.plan import PLAN
    >>> spec = PLAN.claims[0]
    >>> row = claim_schema_record(spec, effect=0.4, ci_low=0.1, ci_high=0.7, p=0.01,
    ...                           p_holm=0.04, seeds=list(range(12)), mde_80=0.3,
    ...                           study="exploratory", p_floor=2**-11, p_floor_holm=0.01)
    >>> row["claim"], row["verdict"], row["n_seeds"], list(row) == list(CLAIM_RECORD_FIELDS)
    ('E1-sheet', 'supported', 12, True)
    """
    if not isinstance(spec, ClaimSpec):
        raise ValueError(f"spec: expected a ClaimSpec, got {type(spec).__name__}")
    if (p_holm is None) != (spec.holm_family is None):
        raise ValueError(f"p_holm: {spec.claim} is {'not ' if spec.holm_family else ''}in a family")
    judged = p_holm if p_holm is not None else p
    floor = p_floor_holm if p_floor_holm is not None else p_floor
    decidable = floor < alpha and ci_low is not None and ci_high is not None
    options = {"alpha": alpha, "decidable": decidable}
    if spec.margin is not None:
        verdict = stats.equivalence_verdict(judged, ci_low, ci_high, spec.margin, **options)
    else:
        verdict = stats.directional_verdict(ci_low, ci_high, judged, **options)
    record = {
        "claim": spec.claim,
        "statement": spec.statement,
        "stratum": spec.stratum,
        "estimator": spec.estimator,
        "effect": effect,
        "ci_low": ci_low,
        "ci_high": ci_high,
        "p": p,
        "p_holm": p_holm,
        "n_seeds": len(seeds),
        "seeds": list(seeds),
        "mde_80": mde_80,
        "margin": spec.margin,
        "p_floor": p_floor,
        "p_floor_holm": p_floor_holm,
        "decidable": decidable,
        "seeds_needed": None if decidable else seeds_needed,
        "verdict": verdict,
        "study": study,
    }
    validate_claim_record(record, alpha=alpha)
    return record


def validate_claims_document(document: Mapping, *, plan: AnalysisPlan | None = None) -> None:
    """Refuse a ``claims.json`` document that breaks the schema; return None when it holds.

    Checks ``plan_sha256`` (64 lowercase hex digits), ``claims`` (a nonempty list of records,
    each valid by :func:`validate_claim_record`, each (claim, study) once).  With ``plan``: the
    hash is the plan's, every record's claim is one of the plan's with its stratum, estimator
    and margin, α is the plan's, confirmatory seeds are none of the exploratory ones, and
    within each study ``p_holm`` is Holm's adjustment of ``p`` over the family's claims and
    ``p_floor_holm`` that of ``p_floor`` (the family's decidability).

    >>> from curvlab.analysis.plan import PLAN, plan_sha256
    >>> validate_claims_document({"plan_sha256": plan_sha256(PLAN)[:8], "claims": []})
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: plan_sha256: expected 64 lowercase hex digits, got '...'
    """
    if not isinstance(document, Mapping):
        raise ValueError(f"document: expected a dict, got {type(document).__name__}")
    if "plan_sha256" not in document:
        raise ValueError("plan_sha256: missing")
    digest = document["plan_sha256"]
    if not isinstance(digest, str) or not _HASH.fullmatch(digest):
        raise ValueError(f"plan_sha256: expected 64 lowercase hex digits, got {digest!r}")
    records = document.get("claims")
    if not isinstance(records, list) or not records:
        raise ValueError("claims: expected a nonempty list of claim records")
    alpha = plan.alpha if plan is not None else 0.05
    seen = set()
    for record in records:
        validate_claim_record(record, alpha=alpha)
        key = (record["claim"], record["study"])
        if key in seen:
            raise ValueError(f"claims: {key[0]} appears twice in the {key[1]} study")
        seen.add(key)
    if plan is not None:
        _check_against_plan(digest, records, plan)


def _check_against_plan(digest: str, records: list, plan: AnalysisPlan) -> None:
    if digest != plan_sha256(plan):
        raise ValueError("plan_sha256: not the hash of the plan given")
    specs = {spec.claim: spec for spec in plan.claims}
    for record in records:
        where = f"{record['claim']} ({record['study']})"
        spec = specs.get(record["claim"])
        if spec is None:
            raise ValueError(f"{where}: claim is not in the plan")
        for name in ("stratum", "estimator", "margin"):
            if record[name] != getattr(spec, name):
                raise ValueError(f"{where}: {name} differs from the plan's {getattr(spec, name)!r}")
        if (record["p_holm"] is None) != (spec.holm_family is None):
            raise ValueError(f"{where}: p_holm must be None exactly for a secondary claim")
        if record["study"] == "confirmatory" and set(record["seeds"]) & set(plan.exploratory_seeds):
            raise ValueError(f"{where}: seeds include exploratory seeds")
    for study in STUDIES:
        families: dict[str, list] = {}
        for record in records:
            family = specs[record["claim"]].holm_family
            if record["study"] == study and family is not None:
                families.setdefault(family, []).append(record)
        for family, members in families.items():
            for field in ("p", "p_floor"):
                adjusted = stats.holm([r[field] for r in members])
                for record, expected in zip(members, adjusted, strict=True):
                    got = record[f"{field}_holm" if field == "p" else "p_floor_holm"]
                    if not math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-12):
                        raise ValueError(
                            f"{record['claim']} ({study}): {field}'s Holm value {got} is not "
                            f"Holm's adjustment over the {family!r} family ({expected})"
                        )
