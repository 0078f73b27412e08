"""Statistics for claims over seeds: paired intervals, power, equivalence, Holm, correlations.

The independent unit is the seed: a comparison of model A with baseline B pairs the runs of
one seed, d_s = m_A(s) − m_B(s), s = 1..n.  Everything here rests on ``scipy.stats``.

- :func:`paired_difference`  mean d̄, sample sd s_d, the 95% t interval
  d̄ ± t_{0.975, n−1} s_d/√n, the exact sign-flip p (the verdict's p,
  :mod:`curvlab.analysis.randomization`) beside the paired t-test p, the Wilcoxon signed-rank
  p, Cohen's d_z = d̄ / s_d, and the minimum detectable effect at 80% power
  (:func:`minimum_detectable_effect`); ties judged with a tolerance relative to the data.
- :func:`required_seeds`  the fewest seeds for 80% power at a given effect and sd.
- :func:`equivalence_test`  two one-sided paired tests (TOST) against a margin Δ fixed in
  advance: p = max(p₋, p₊) for H₀: d̄ ≤ −Δ and H₀: d̄ ≥ +Δ, each a one-sided sign-flip test
  (the t-tests' p beside it); equivalent when p < α.
- :func:`holm`  Holm's step-down adjustment of a family of p-values.
- :func:`directional_verdict`, :func:`equivalence_verdict`  the verdict rules (the verdicts
  themselves are :data:`curvlab.analysis.claims.EMPIRICAL_VERDICTS`), and
  :func:`verdict_follows`, which re-derives a verdict from a claim record's own numbers.
- :func:`correlation`  Pearson r (Fisher-z 95% interval) and Spearman ρ (Fisher-z interval
  with the Bonett-Wright variance 1.06/(n−3)), optionally within groups (group means removed).
- :func:`bootstrap_interval`  a BCa bootstrap interval of a statistic (``scipy.stats.bootstrap``).

Verdict rule for a directional claim "A > B" at level α (default 0.05), with p Holm-adjusted
over the family of claims tested together::

    supported      ci_low > 0 and p < α
    contradicted   ci_high < 0 and p < α
    inconclusive   otherwise (reported with mde_80, the smallest effect the study could see)

A claim whose seeds cannot reach α (the floor of its test, Holm-adjusted over its family, at
least α: :mod:`curvlab.analysis.decidability`) is ``undecidable`` whatever its numbers; one
whose phenomenon is absent at the study's scale (``testable`` False, with a ``reason``) is
``not testable here`` (:data:`curvlab.analysis.claims.NOT_TESTABLE`) whatever its numbers.

For a "no advantage" claim (equivalence within ±Δ)::

    supported      TOST p < α (the 90% interval inside (−Δ, Δ))
    contradicted   ci_low > Δ or ci_high < −Δ (the 95% interval entirely outside the margin)
    inconclusive   otherwise
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from scipy import optimize, stats

from curvlab import arguments
from curvlab.analysis import randomization
from curvlab.analysis.claims import EMPIRICAL_VERDICTS, NOT_TESTABLE

__all__ = [
    "bootstrap_interval",
    "correlation",
    "directional_verdict",
    "equivalence_test",
    "equivalence_verdict",
    "holm",
    "minimum_detectable_effect",
    "paired_difference",
    "required_seeds",
    "verdict_follows",
]


def _sample(name: str, values, minimum: int = 2) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{name}: expected a sequence of numbers, got {values!r}") from error
    if array.ndim != 1 or array.size < minimum:
        raise ValueError(f"{name}: expected a 1-D sample of at least {minimum} numbers")
    if not np.isfinite(array).all():
        raise ValueError(f"{name}: expected finite numbers (found NaN or inf)")
    return array


def minimum_detectable_effect(
    n: int, sd: float, *, alpha: float = 0.05, power: float = 0.8
) -> float:
    """The smallest mean difference a two-sided paired t-test of n pairs detects with ``power``.

    Solves P(|T′| > t_{1−α/2, n−1}) = power for the noncentral t T′ with n − 1 degrees of
    freedom and noncentrality δ√n / s_d; returns δ (in the units of the differences).

    >>> round(minimum_detectable_effect(20, 1.0), 3)
    0.66
    """
    arguments.integer("n", n, 2)
    if not (isinstance(sd, int | float) and math.isfinite(sd) and sd >= 0):
        raise ValueError(f"sd: expected a finite number >= 0, got {sd!r}")
    alpha = arguments.alpha(alpha)
    if not 0 < power < 1:
        raise ValueError(f"power: expected a probability in (0, 1), got {power!r}")
    if sd == 0:
        return 0.0
    df = n - 1
    critical = stats.t.ppf(1 - alpha / 2, df)

    def shortfall(effect_size: float) -> float:
        nc = effect_size * math.sqrt(n)
        achieved = stats.nct.sf(critical, df, nc) + stats.nct.cdf(-critical, df, nc)
        if not math.isfinite(achieved):  # scipy's nct fails far in the tail, where power ≈ 1
            achieved = 1.0
        return achieved - power

    upper = 2 * (critical + 2) / math.sqrt(n)
    while shortfall(upper) < 0:  # widen until the power at the upper end exceeds the target
        upper *= 2
    effect_size = optimize.brentq(shortfall, 0.0, upper)
    return float(effect_size * sd)


def required_seeds(
    effect: float, sd: float, *, alpha: float = 0.05, power: float = 0.8, maximum: int = 10_000
) -> int:
    """The fewest seeds n for which a two-sided paired t-test detects ``effect`` with ``power``.

    The smallest n >= 2 with :func:`minimum_detectable_effect` (n, sd) <= |effect| (the
    detectable effect falls with n), e.g. from an exploratory study's mean difference and the
    sd of its per-seed differences.  Refuses an effect of 0 and an n beyond ``maximum``.

    >>> required_seeds(1.0, 1.0), required_seeds(0.5, 1.0), required_seeds(0.25, 1.0)
    (10, 34, 128)
    """
    if not (isinstance(effect, int | float) and math.isfinite(effect) and effect != 0):
        raise ValueError(f"effect: expected a finite nonzero effect, got {effect!r}")
    if not (isinstance(sd, int | float) and math.isfinite(sd) and sd >= 0):
        raise ValueError(f"sd: expected a finite number >= 0, got {sd!r}")

    def enough(n: int) -> bool:
        return minimum_detectable_effect(n, sd, alpha=alpha, power=power) <= abs(effect)

    low, high = 2, 2
    while not enough(high):  # double until n is enough, then bisect down to the smallest
        low, high = high, 2 * high
        if high > 2 * maximum:
            raise ValueError(f"effect: needs more than maximum = {maximum} seeds")
    if enough(low):
        return low
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if enough(middle) else (middle, high)
    if high > maximum:
        raise ValueError(f"effect: needs {high} seeds, more than maximum = {maximum}")
    return high


def _differences(a, b, alpha) -> tuple[np.ndarray, float, float]:
    a, b = _sample("a", a), _sample("b", b)
    if a.shape != b.shape:
        raise ValueError(f"a, b: expected paired samples of equal length, got {a.size}, {b.size}")
    return a - b, arguments.alpha(alpha), randomization.tie_tolerance(a, b)


def paired_difference(a, b, *, alpha: float = 0.05) -> dict:
    """Paired comparison of samples ``a`` and ``b`` (a[i] and b[i] from the same seed).

    Returns n, effect (mean of d = a − b), sd, ci_low/ci_high (the 1 − α t interval
    d̄ ± t_{1−α/2, n−1} s_d/√n), p (the sign-flip p, two-sided, of
    :func:`curvlab.analysis.randomization.sign_flip_test`: exact over all 2ⁿ sign patterns up
    to 40 seeds, Monte Carlo above), p_method, p_floor (the smallest p n seeds allow,
    2 · 2⁻ⁿ), p_t (the paired t-test p, beside it), p_wilcoxon (signed-rank; None when every
    d is 0 up to rounding), d_z, mde_80 and mde_80_reason.  The verdicts are taken from p, the
    test valid at any n; the t interval is the claim's interval.

    Ties are judged with τ = :func:`curvlab.analysis.randomization.tie_tolerance` (a, b), never
    by float equality.  Where every d is the same number c up to τ (the spread of d is 0 up to
    rounding), sd is 0, the interval is the point c, p_t, d_z and mde_80 are None (the t
    statistic is undefined), and p is 1 when c = 0 up to τ, else 2 · 2⁻ⁿ.

    >>> paired_difference([1, 1, 1, 1, 1], [0, 0, 0, 0, 0])["p"]
    0.0625
    >>> K = (30, 31, 33, 29)
    >>> r = paired_difference([(k + 1) / 45 for k in K], [k / 45 for k in K])
    >>> r["p"], r["sd"], r["mde_80"], r["p_t"]
    (0.125, 0.0, None, None)

    >>> r = paired_difference([1.2, 1.0, 1.5, 1.3], [1.0, 0.9, 1.1, 1.0])
    >>> round(r["effect"], 3), r["ci_low"] > 0, r["n"], r["p"]
    (0.25, True, 4, 0.125)
    """
    d, alpha, tolerance = _differences(a, b, alpha)
    n, mean = d.size, float(d.mean())
    flip = randomization.sign_flip_test(d, tolerance=tolerance)
    tied = float(np.ptp(d)) <= tolerance
    sd = 0.0 if tied else float(d.std(ddof=1))
    if tied:
        low = high = mean
        p_t = None
    else:
        half = stats.t.ppf(1 - alpha / 2, n - 1) * sd / math.sqrt(n)
        low, high = mean - half, mean + half
        p_t = float(stats.ttest_1samp(d, 0.0).pvalue)
    nonzero = np.where(np.abs(d) <= tolerance, 0.0, d)
    p_wilcoxon = float(stats.wilcoxon(nonzero).pvalue) if nonzero.any() else None
    return {
        "n": int(n),
        "effect": mean,
        "sd": sd,
        "ci_low": float(low),
        "ci_high": float(high),
        "p": flip["p"],
        "p_method": f"sign-flip, two-sided, {flip['method']} over {flip['patterns']} patterns",
        "p_floor": flip["floor"],
        "p_t": p_t,
        "p_wilcoxon": p_wilcoxon,
        "d_z": None if tied else mean / sd,
        "mde_80": None if tied else minimum_detectable_effect(int(n), sd, alpha=alpha),
        "mde_80_reason": "the differences do not vary (spread 0 up to rounding)" if tied else None,
    }


def equivalence_test(a, b, margin: float, *, alpha: float = 0.05) -> dict:
    """TOST of |mean(a − b)| < ``margin`` (paired), each one-sided test a sign-flip test.

    p_tost = max(p₋, p₊): p₋ the one-sided sign-flip p of d + Δ against "greater" (H₀: the
    differences centre at or below −Δ), p₊ that of d − Δ against "less"
    (:func:`curvlab.analysis.randomization.sign_flip_test`, exact up to 40 seeds); its floor
    is 2⁻ⁿ (``p_tost_floor``).  Returns the :func:`paired_difference` record plus ``margin``,
    ``p_tost``, ``p_tost_floor``, ``p_tost_t`` (the two one-sided t-tests' p, beside it; None
    where sd is 0 up to rounding), the 1 − 2α t interval (``tost_low``, ``tost_high``; the
    point d̄ where sd is 0) and ``equivalent`` (p_tost < α).

    >>> r = equivalence_test([0.90, 0.91, 0.90, 0.92, 0.91, 0.90], [0.90, 0.90, 0.91, 0.91,
    ...                      0.91, 0.905], 0.02)
    >>> r["equivalent"], r["p_tost"], r["p_tost_floor"]
    (True, 0.015625, 0.015625)
    """
    if not (isinstance(margin, int | float) and math.isfinite(margin) and margin > 0):
        raise ValueError(f"margin: expected a finite number > 0, got {margin!r}")
    record = paired_difference(a, b, alpha=alpha)
    d, alpha, _ = _differences(a, b, alpha)
    tolerance = randomization.tie_tolerance(_sample("a", a), _sample("b", b), [margin])
    n, sd = record["n"], record["sd"]
    lower = randomization.sign_flip_test(
        d, null=-margin, alternative="greater", tolerance=tolerance
    )
    upper = randomization.sign_flip_test(d, null=margin, alternative="less", tolerance=tolerance)
    p_tost = max(lower["p"], upper["p"])
    if sd == 0:
        p_tost_t = None
        low = high = record["effect"]
    else:
        p_lower = stats.ttest_1samp(d, -margin, alternative="greater").pvalue
        p_upper = stats.ttest_1samp(d, margin, alternative="less").pvalue
        p_tost_t = float(max(p_lower, p_upper))
        half = stats.t.ppf(1 - alpha, n - 1) * sd / math.sqrt(n)
        low, high = record["effect"] - half, record["effect"] + half
    return {
        **record,
        "margin": float(margin),
        "p_tost": p_tost,
        "p_tost_floor": lower["floor"],
        "p_tost_t": p_tost_t,
        "tost_low": float(low),
        "tost_high": float(high),
        "equivalent": bool(p_tost < alpha),
    }


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input order (monotone, capped at 1).

    p̃_(i) = max_{j ≤ i} min(1, (m − j + 1) p_(j)) for the sorted p_(1) ≤ … ≤ p_(m).

    >>> holm([0.01, 0.04, 0.03])
    [0.03, 0.06, 0.06]
    """
    p = _sample("p_values", p_values, minimum=1)
    if ((p < 0) | (p > 1)).any():
        raise ValueError("p_values: expected probabilities in [0, 1]")
    m = p.size
    order = np.argsort(p, kind="stable")
    adjusted = np.empty(m)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[index]))
        adjusted[index] = running
    return [round(float(v), 15) for v in adjusted]


def directional_verdict(
    ci_low, ci_high, p: float, *, alpha: float = 0.05, decidable: bool = True
) -> str:
    """The verdict of "effect > 0" from its interval and its (adjusted) p (module docstring);
    "undecidable" when ``decidable`` is False (the seeds cannot reach α, or give no interval:
    :mod:`curvlab.analysis.decidability`), whatever the numbers; the interval may then be None.

    >>> directional_verdict(0.1, 0.5, 0.001), directional_verdict(-0.1, 0.5, 0.3)
    ('supported', 'inconclusive')
    >>> directional_verdict(None, None, 0.5, decidable=False)
    'undecidable'
    """
    alpha = arguments.alpha(alpha)
    if not decidable:
        return "undecidable"
    if ci_low is None or ci_high is None or not ci_low <= ci_high:
        raise ValueError(f"ci_low, ci_high: expected ci_low <= ci_high, got {ci_low}, {ci_high}")
    if ci_low > 0 and p < alpha:
        return "supported"
    if ci_high < 0 and p < alpha:
        return "contradicted"
    return "inconclusive"


def equivalence_verdict(
    p_tost: float, ci_low, ci_high, margin: float, *, alpha: float = 0.05, decidable: bool = True
) -> str:
    """The verdict of "no difference beyond ±margin" (module docstring); "undecidable" when
    ``decidable`` is False, as in :func:`directional_verdict`.

    >>> equivalence_verdict(0.01, -0.004, 0.006, 0.01), equivalence_verdict(0.4, 0.02, 0.05, 0.01)
    ('supported', 'contradicted')
    """
    alpha = arguments.alpha(alpha)
    if not decidable:
        return "undecidable"
    if p_tost < alpha:
        return "supported"
    if ci_low > margin or ci_high < -margin:
        return "contradicted"
    return "inconclusive"


def verdict_follows(record: Mapping, *, alpha: float = 0.05) -> bool:
    """True when a claim record's ``verdict`` is the one its own numbers give by the rule.

    A record with a ``margin`` (not None) is an equivalence claim: ``p`` is its TOST p and
    ``ci_low``/``ci_high`` its 1 − 2α interval; otherwise a directional one.  Both are judged
    on ``ci_low``, ``ci_high`` and the record's adjusted ``p_holm`` where it has one (not
    None), else its ``p``.  A record that carries its floor (``p_floor_holm``, else
    ``p_floor``: the smallest p its test can reach at its seeds) is undecidable when that floor
    is not below α, when it has no interval, or when it says ``decidable`` False.  A record
    that says ``testable`` False is "not testable here" and must give its ``reason``; no other
    record is.

    >>> verdict_follows({"ci_low": 0.1, "ci_high": 0.3, "p": 0.01, "verdict": "supported"})
    True
    >>> verdict_follows({"ci_low": 0.1, "ci_high": 0.3, "p": 0.01, "testable": False,
    ...                  "reason": "no sink", "verdict": "not testable here"})
    True
    >>> verdict_follows({"ci_low": 0.1, "ci_high": 0.3, "p": 0.01, "p_holm": 0.09,
    ...                  "verdict": "supported"})
    False
    >>> verdict_follows({"ci_low": 0.1, "ci_high": 0.3, "p": 0.2, "p_floor": 0.125,
    ...                  "verdict": "inconclusive"})
    False
    """
    if record.get("verdict") not in EMPIRICAL_VERDICTS:
        raise ValueError(
            f"record: verdict must be one of {EMPIRICAL_VERDICTS}, got {record.get('verdict')!r}"
        )
    if record.get("testable", True) is False:
        return record["verdict"] == NOT_TESTABLE and bool(record.get("reason"))
    p = record["p_holm"] if record.get("p_holm") is not None else record["p"]
    floor = record.get("p_floor_holm")
    floor = record.get("p_floor") if floor is None else floor
    decidable = (
        record.get("decidable", True) is not False
        and (floor is None or floor < alpha)
        and record.get("ci_low") is not None
        and record.get("ci_high") is not None
    )
    options = {"alpha": alpha, "decidable": decidable}
    if record.get("margin") is not None:
        expected = equivalence_verdict(
            p, record["ci_low"], record["ci_high"], record["margin"], **options
        )
    else:
        expected = directional_verdict(record["ci_low"], record["ci_high"], p, **options)
    return expected == record["verdict"]


def _fisher_interval(r: float, se: float, alpha: float) -> tuple[float, float]:
    if abs(r) >= 1:
        return r, r
    z, half = math.atanh(r), stats.norm.ppf(1 - alpha / 2) * se
    return math.tanh(z - half), math.tanh(z + half)


def _demean(values: np.ndarray, groups) -> np.ndarray:
    labels = np.asarray(groups)
    out = values.copy()
    for label in np.unique(labels):
        mask = labels == label
        out[mask] -= values[mask].mean()
    return out


def correlation(x, y, *, groups=None, alpha: float = 0.05) -> dict:
    """Pearson and Spearman correlation of x and y with 1 − α intervals.

    With ``groups`` (one label per point) each group's mean is removed from x and y first
    (Spearman: from the within-group ranks), so only within-group variation counts, and the
    degrees of freedom drop by the number of groups g: n_eff = n − g + 1.

    Pearson: ``scipy.stats.pearsonr`` (p from t with n_eff − 2 df), interval tanh(atanh r ±
    z_{1−α/2}/√(n_eff − 3)).  Spearman: ``scipy.stats.spearmanr``, interval with the
    Bonett-Wright standard error √(1.06/(n_eff − 3)).

    >>> c = correlation([1, 2, 3, 4, 5, 6], [1.1, 1.9, 3.2, 3.9, 5.1, 6.2])
    >>> c["pearson_r"] > 0.99, c["pearson_ci_low"] > 0.9, c["n"]
    (True, True, 6)
    """
    x, y = _sample("x", x, minimum=4), _sample("y", y, minimum=4)
    if x.shape != y.shape:
        raise ValueError(f"x, y: expected equal lengths, got {x.size} and {y.size}")
    alpha = arguments.alpha(alpha)
    g = 1
    if groups is not None:
        groups = list(groups)
        if len(groups) != x.size:
            raise ValueError(f"groups: expected {x.size} labels, got {len(groups)}")
        g = len(set(groups))
        x_ranks = np.asarray(_within_ranks(x, groups))
        y_ranks = np.asarray(_within_ranks(y, groups))
        xs, ys = _demean(x_ranks, groups), _demean(y_ranks, groups)
        x, y = _demean(x, groups), _demean(y, groups)
    else:
        xs, ys = stats.rankdata(x), stats.rankdata(y)
    n_eff = x.size - g + 1
    if n_eff < 4:
        raise ValueError(f"x, y: need at least 4 points beyond the groups, got n_eff = {n_eff}")
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        raise ValueError("x, y: a constant sample has no correlation")
    r = float(np.corrcoef(x, y)[0, 1])
    rho = float(np.corrcoef(xs, ys)[0, 1])

    def p_value(value: float) -> float:
        if abs(value) >= 1:
            return 0.0
        t = value * math.sqrt((n_eff - 2) / (1 - value * value))
        return float(2 * stats.t.sf(abs(t), n_eff - 2))

    p_low, p_high = _fisher_interval(r, 1 / math.sqrt(n_eff - 3), alpha)
    s_low, s_high = _fisher_interval(rho, math.sqrt(1.06 / (n_eff - 3)), alpha)
    return {
        "n": int(x.size),
        "groups": g,
        "pearson_r": r,
        "pearson_ci_low": p_low,
        "pearson_ci_high": p_high,
        "pearson_p": p_value(r),
        "spearman_rho": rho,
        "spearman_ci_low": s_low,
        "spearman_ci_high": s_high,
        "spearman_p": p_value(rho),
    }


def _within_ranks(values: np.ndarray, groups: list) -> list[float]:
    labels = np.asarray(groups)
    ranks = np.empty(values.size)
    for label in np.unique(labels):
        mask = labels == label
        ranks[mask] = stats.rankdata(values[mask])
    return list(ranks)


def bootstrap_interval(
    data, statistic=np.mean, *, alpha: float = 0.05, resamples: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """BCa bootstrap interval (1 − α) of ``statistic`` over a 1-D sample, seeded.

    >>> low, high = bootstrap_interval([0.1, 0.3, 0.2, 0.4, 0.25, 0.35], resamples=500)
    >>> low < 0.27 < high
    True
    """
    sample = _sample("data", data, minimum=3)
    alpha = arguments.alpha(alpha)
    result = stats.bootstrap(
        (sample,),
        statistic,
        confidence_level=1 - alpha,
        n_resamples=resamples,
        method="BCa",
        rng=np.random.default_rng(seed),
    )
    interval = result.confidence_interval
    return float(interval.low), float(interval.high)
