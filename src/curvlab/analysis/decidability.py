"""Can a family of claims decide?  The smallest p its tests can reach at the seeds they have.

Every test of a claim has a floor, the smallest p it can return whatever the data
(:mod:`curvlab.analysis.randomization`): the two-sided sign-flip test of a paired claim
2 · 2⁻ⁿ at n seeds, each one-sided test of a TOST 2⁻ⁿ, a Monte Carlo permutation test
1 / (1 + B) with B permutations.  Holm's adjustment is nondecreasing in every p, so the
smallest adjusted p a claim of a family can reach is Holm's adjustment of the family's floors,
at the claim's place (m · f for a family of m claims that share the floor f)::

    p_floor_holm(i) = holm(p_floor(1), ..., p_floor(m))[i]      (p_floor(i) for a claim
                                                                 outside every family)

A claim is **decidable** when that floor is below α and, where its interval is a seed-cluster
bootstrap, its seeds have enough distinct resamples for one
(:func:`curvlab.analysis.randomization.cluster_interval_allowed`).  An undecidable claim gets
the verdict "undecidable" (:data:`curvlab.analysis.claims.EMPIRICAL_VERDICTS`), never
"inconclusive": the data did not speak, the design could not let them.  ``seeds_needed`` is the
fewest seeds n at which the claim would be decidable with every member of its family tested by
its test at n seeds: m · floor(n) < α (and the interval rule).

- :func:`test_floor`  the floor of a test at n seeds;
- :func:`family_decidability`  for each claim: family, family_size, p_floor, p_floor_holm,
  decidable, seeds_needed and decision_limit (why not, in words; None when decidable);
- :func:`verdict_label`  a verdict as a chapter prints it: "undecidable at 4 seeds (needs 8)",
  "not testable here (its reason)".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from curvlab import arguments
from curvlab.analysis import randomization, stats
from curvlab.analysis.claims import NOT_TESTABLE

__all__ = ["MAX_SEEDS", "TESTS", "family_decidability", "test_floor", "verdict_label"]

TESTS: dict[str, str] = {
    "sign_flip": "paired sign-flip test, two-sided (floor 2 · 2⁻ⁿ)",
    "sign_flip_tost": "TOST of two one-sided sign-flip tests (floor 2⁻ⁿ)",
    "permutation": "Monte Carlo permutation test of B permutations (floor 1 / (1 + B))",
}
"""The tests a claim can be decided by, and their floors."""

MAX_SEEDS: int = 10_000
"""The search for ``seeds_needed`` stops here (None beyond)."""


def test_floor(test: str, n_seeds: int, *, permutations: int | None = None) -> float:
    """The smallest p ``test`` (one of :data:`TESTS`) can return at ``n_seeds`` seeds.

    >>> test_floor("sign_flip", 4), test_floor("sign_flip_tost", 4)
    (0.125, 0.0625)
    >>> test_floor("permutation", 4, permutations=1999)
    0.0005
    """
    arguments.one_of("test", test, TESTS)
    if test == "permutation":
        if permutations is None:
            raise ValueError("permutations: required for a permutation test")
        return randomization.permutation_floor(permutations)
    alternative = "two-sided" if test == "sign_flip" else "greater"
    return randomization.sign_flip_floor(n_seeds, alternative=alternative)


def _seeds_needed(claim: Mapping, family_size: int, alpha: float) -> int | None:
    n = claim["n_seeds"]
    while n <= MAX_SEEDS:
        floor = test_floor(claim["test"], n, permutations=claim.get("permutations"))
        interval = not claim.get("cluster_interval") or randomization.cluster_interval_allowed(
            n, alpha
        )
        if family_size * floor < alpha and interval:
            return n
        if claim["test"] == "permutation" and family_size * floor >= alpha:
            return None  # more seeds do not lower a permutation count's floor
        n += 1
    return None


def _limit(claim: Mapping, floor: float, holm_floor: float, size: int, alpha: float) -> str:
    n = claim["n_seeds"]
    if claim.get("cluster_interval") and not randomization.cluster_interval_allowed(n, alpha):
        return (
            f"{n} seeds give {randomization.distinct_seed_resamples(n)} distinct seed-cluster "
            f"resamples, fewer than the {randomization.min_distinct_resamples(alpha)} a "
            f"{1 - alpha:.0%} percentile interval needs"
        )
    text = f"its test cannot give p below {floor:.3g} at {n} seeds ({TESTS[claim['test']]})"
    if size > 1:
        text += f"; under Holm over {size} claims, not below {holm_floor:.3g}"
    return f"{text}: not below α = {alpha:g}"


def family_decidability(claims: Sequence[Mapping], *, alpha: float = 0.05) -> list[dict]:
    """Each claim's decidability (module docstring), in the order given.

    A claim is a mapping with ``test`` (one of :data:`TESTS`), ``n_seeds``, ``family`` (the
    name of its Holm family, or None for a claim outside every family), ``permutations`` (a
    permutation test's B) and ``cluster_interval`` (True when its interval is a seed-cluster
    bootstrap; default False).

    >>> paired = {"test": "sign_flip", "n_seeds": 4, "family": "primary"}
    >>> [d["p_floor_holm"] for d in family_decidability([paired] * 9)][:2]
    [1.0, 1.0]
    >>> d = family_decidability([{**paired, "n_seeds": 12}] * 9)[0]
    >>> d["p_floor_holm"] < 0.05, d["decidable"], d["seeds_needed"]
    (True, True, None)
    >>> d = family_decidability([paired] * 9)[0]
    >>> d["decidable"], d["seeds_needed"], d["family_size"]
    (False, 9, 9)
    """
    alpha = arguments.alpha(alpha)
    if isinstance(claims, Mapping) or not isinstance(claims, Sequence):
        raise ValueError("claims: expected a sequence of claim mappings")
    floors = []
    for index, claim in enumerate(claims):
        if not isinstance(claim, Mapping) or "test" not in claim or "n_seeds" not in claim:
            raise ValueError(f"claims[{index}]: expected a mapping with test and n_seeds")
        floors.append(
            test_floor(claim["test"], claim["n_seeds"], permutations=claim.get("permutations"))
        )
    members: dict[str, list[int]] = {}
    for index, claim in enumerate(claims):
        if claim.get("family") is not None:
            members.setdefault(claim["family"], []).append(index)
    holm_floors: dict[int, float] = {}
    for indices in members.values():
        for index, value in zip(indices, stats.holm([floors[i] for i in indices]), strict=True):
            holm_floors[index] = value
    out = []
    for index, claim in enumerate(claims):
        family = claim.get("family")
        size = len(members[family]) if family is not None else 1
        judged = holm_floors.get(index, floors[index])
        interval = not claim.get("cluster_interval") or randomization.cluster_interval_allowed(
            claim["n_seeds"], alpha
        )
        decidable = judged < alpha and interval
        out.append(
            {
                "family": family,
                "family_size": size,
                "p_floor": floors[index],
                "p_floor_holm": holm_floors.get(index),
                "decidable": decidable,
                "seeds_needed": None if decidable else _seeds_needed(claim, size, alpha),
                "decision_limit": None
                if decidable
                else _limit(claim, floors[index], judged, size, alpha),
            }
        )
    return out


def verdict_label(record: Mapping) -> str:
    """A claim's verdict as a chapter prints it: the verdict, for an undecidable claim the
    seeds it had and those it would need, for a claim not testable here its reason.

    >>> verdict_label({"verdict": "undecidable", "n_seeds": 4, "seeds_needed": 9})
    'undecidable at 4 seeds (needs 9)'
    >>> verdict_label({"verdict": "supported", "n_seeds": 20})
    'supported'
    >>> verdict_label({"verdict": "not testable here", "reason": "no sink"})
    'not testable here (no sink)'
    """
    verdict = record.get("verdict")
    if verdict == NOT_TESTABLE and record.get("reason"):
        return f"{verdict} ({record['reason']})"
    if verdict != "undecidable":
        return str(verdict)
    label = f"undecidable at {record['n_seeds']} seeds"
    needed = record.get("seeds_needed")
    return f"{label} (needs {needed})" if needed is not None else label
