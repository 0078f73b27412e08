"""The frozen analysis plan of Part II, and its hash.

One immutable object says, before a confirmatory run, everything a verdict depends on: the
claims (statement, stratum, estimator, direction, equivalence margin, Holm family), the strata
of tasks, the curvature estimator (grid and domain radius), the primary training rule, the
seeds (exploratory and confirmatory, disjoint), α and the margins.  :func:`plan_sha256` hashes
its canonical JSON (:func:`plan_json`: sorted keys, no whitespace, ASCII), so the hash written
into ``claims.json`` names exactly one plan, and any change to any field changes it.

Conventions:

- a paired claim compares ``model`` with ``baseline`` over the seeds, per seed the mean over
  the stratum's tasks of model − baseline (on ``measure``; curvature measures are logs); the
  association claim (``within_cell_r``) uses every model's task × model cells and names no
  pair (``model`` and ``baseline`` None), its effect the r of accuracy on ``measure``;
- ``direction`` "greater": the claim is model > baseline; "equivalent": |difference| < margin
  (TOST, the margin fixed here); an association claim (estimator ``within_cell_r``) is
  "greater" when the association is positive;
- ``holm_family`` names the family over which p is Holm-adjusted; None: a secondary claim,
  reported unadjusted and not counted in the family.

The decision rule belongs to the analysis layer, not to a plan, so it applies to every version
and both studies and a frozen plan's content and hash never change with it
(docs/decisions/0003-the-decision-rule-belongs-to-the-analysis.md).  Paired p are exact
sign-flip p (:mod:`curvlab.analysis.randomization`), TOST two one-sided sign-flip tests, ties
judged with a tolerance; a claim whose test's floor, Holm-adjusted, is not below α, or without
a valid seed-cluster interval, is "undecidable" (:mod:`curvlab.analysis.decidability`).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields

from curvlab import arguments
from curvlab.data.tasks import HARD_TASKS, LINEAR_TASKS, NONLINEAR_TASKS, TASKS
from curvlab.models.attention import VARIANTS

__all__ = [
    "DIRECTIONS",
    "ESTIMATORS",
    "PLAN",
    "PLANS",
    "PLAN_V2",
    "AdaptiveCurvatureEstimator",
    "AnalysisPlan",
    "ClaimSpec",
    "CurvatureEstimator",
    "Stratum",
    "TrainingRule",
    "plan_from_dict",
    "plan_json",
    "plan_sha256",
]

DIRECTIONS: tuple[str, ...] = ("greater", "less", "equivalent")
"""What a claim asserts of its effect: > 0, < 0, or inside (−margin, margin)."""

ESTIMATORS: dict[str, str] = {
    "paired_mean": "per-seed mean over the stratum of model − baseline, paired t interval, "
    "exact sign-flip p",
    "paired_tost": "the same differences, TOST against the plan's margin (90% interval), "
    "one-sided sign-flip tests",
    "within_cell_r": "r within every task × model cell, seed-cluster bootstrap, permutation p",
    "delta_delta_slope": "Δaccuracy on Δlog curvature, task fixed effects, seed bootstrap",
}
"""The estimators a claim may name (:mod:`curvlab.analysis.stats`,
:mod:`curvlab.analysis.association`)."""


@dataclass(frozen=True)
class Stratum:
    """A named set of tasks that a claim averages over (per seed)."""

    name: str
    tasks: tuple[str, ...]
    description: str

    def __post_init__(self):
        arguments.text("name", self.name)
        if not isinstance(self.tasks, tuple) or not self.tasks:
            raise ValueError(f"tasks: expected a nonempty tuple of task names, got {self.tasks!r}")
        for task in self.tasks:
            if task not in TASKS:
                raise ValueError(f"tasks: {task!r} is not one of {TASKS}")


@dataclass(frozen=True)
class ClaimSpec:
    """One declared claim: what is compared, on which tasks, by which estimator, which way."""

    claim: str
    statement: str
    stratum: str
    estimator: str
    measure: str
    model: str | None
    baseline: str | None
    direction: str
    margin: float | None = None
    holm_family: str | None = "primary"

    def __post_init__(self):
        for name in ("claim", "statement", "stratum", "measure"):
            arguments.text(name, getattr(self, name))
        arguments.one_of("estimator", self.estimator, ESTIMATORS)
        pooled = self.estimator == "within_cell_r"  # every model's cells: no pair compared
        for name in ("model", "baseline"):
            value = getattr(self, name)
            if (value is not None) if pooled else (value not in VARIANTS):
                what = "None (every model's cells enter)" if pooled else f"one of {VARIANTS}"
                raise ValueError(f"{name}: expected {what}, got {value!r}")
        arguments.one_of("direction", self.direction, DIRECTIONS)
        if (self.direction == "equivalent") != (self.margin is not None):
            raise ValueError("margin: required for an equivalence claim and only for one")
        if self.margin is not None:
            arguments.positive("margin", self.margin)
        if self.holm_family is not None:
            arguments.text("holm_family", self.holm_family)


@dataclass(frozen=True)
class CurvatureEstimator:
    """∫|K| dA on the fixed data domain (:func:`curvlab.measurement.domains.data_domain_grid`):
    ``grid`` points per axis, domain ``radius``; its convergence is the median over runs of
    |log(I_grid / I_2·grid)|, required below ``convergence_threshold``, measured on the runs
    of every ``convergence_seed_stride``-th confirmatory seed (all tasks and models); ρ and ρ⊥
    at ``rho_points`` test points."""

    grid: int
    radius: float
    convergence_threshold: float
    rho_points: int
    convergence_seed_stride: int = 1

    def __post_init__(self):
        arguments.positive("grid", self.grid, kinds=int)
        arguments.positive("radius", self.radius)
        arguments.positive("convergence_threshold", self.convergence_threshold)
        arguments.positive("rho_points", self.rho_points, kinds=int)
        arguments.positive("convergence_seed_stride", self.convergence_seed_stride, kinds=int)


@dataclass(frozen=True)
class AdaptiveCurvatureEstimator:
    """∫|K| dA on the fixed data domain of ``radius`` by the adaptive midpoint rule
    (:func:`curvlab.measurement.adaptive_sheets.adaptive_sheet`: a 2:1-balanced quadtree from a
    ``base``² grid, refined until its error estimate is at most ``tolerance`` × the integral),
    on the final sheets of the runs of ``models``.  Its convergence is |log(I_base /
    I_check_base)|, the same rule started from a ``check_base``² grid, on the runs of every
    ``convergence_seed_stride``-th confirmatory seed: its median and its 90th percentile are
    required below ``convergence_threshold``.  Beside it, the uniform ``grid``² midpoint rule
    of :class:`CurvatureEstimator` (checked at 2·grid on the same runs) gives the training
    rule's convergence judgement, the capped integrand ∫ min(|K|, 1/m) dA (secondary: the
    spread-out curvature, :func:`curvlab.measurement.sheets.sheet_from_jets`) and version 1's
    estimate for comparison; ρ and ρ⊥ at ``rho_points`` test points."""

    base: int
    check_base: int
    tolerance: float
    models: tuple[str, ...]
    grid: int
    radius: float
    convergence_threshold: float
    rho_points: int
    convergence_seed_stride: int

    def __post_init__(self):
        for name in ("base", "check_base", "grid", "rho_points", "convergence_seed_stride"):
            arguments.positive(name, getattr(self, name), kinds=int)
        if self.check_base == self.base:
            raise ValueError("check_base: expected a base grid other than base")
        for name in ("tolerance", "radius", "convergence_threshold"):
            arguments.positive(name, getattr(self, name))
        if not isinstance(self.models, tuple) or not self.models:
            raise ValueError(f"models: expected a nonempty tuple of models, got {self.models!r}")
        for model in self.models:
            if model not in VARIANTS:
                raise ValueError(f"models: {model!r} is not one of {VARIANTS}")


@dataclass(frozen=True)
class TrainingRule:
    """The primary training rule: one fixed budget for every model, and how it was chosen;
    the sensitivity analysis beside it retrains each run that did not converge afresh at
    twice the budget, ``sensitivity_doublings`` times (the retraining ladder)."""

    kind: str
    epochs: int
    chosen_from: str
    sensitivity: str
    sensitivity_doublings: int = 1

    def __post_init__(self):
        if self.kind != "fixed_budget":
            raise ValueError(f"kind: expected 'fixed_budget', got {self.kind!r}")
        arguments.positive("epochs", self.epochs, kinds=int)
        arguments.text("chosen_from", self.chosen_from)
        arguments.text("sensitivity", self.sensitivity)
        arguments.positive("sensitivity_doublings", self.sensitivity_doublings, kinds=int)


@dataclass(frozen=True)
class AnalysisPlan:
    """The whole plan (module docstring); frozen, its collections tuples."""

    name: str
    claims: tuple[ClaimSpec, ...]
    strata: tuple[Stratum, ...]
    curvature: CurvatureEstimator | AdaptiveCurvatureEstimator
    training: TrainingRule
    exploratory_seeds: tuple[int, ...]
    confirmatory_first_seed: int
    confirmatory_count: int
    alpha: float
    accuracy_margin: float
    log_curvature_margin: float

    def __post_init__(self):
        arguments.text("name", self.name)
        if not isinstance(self.claims, tuple) or not self.claims:
            raise ValueError("claims: expected a nonempty tuple of ClaimSpec")
        if not isinstance(self.strata, tuple) or not self.strata:
            raise ValueError("strata: expected a nonempty tuple of Stratum")
        names = [s.name for s in self.strata]
        if len(set(names)) != len(names):
            raise ValueError(f"strata: names must be unique, got {names}")
        ids = [c.claim for c in self.claims]
        if len(set(ids)) != len(ids):
            raise ValueError(f"claims: ids must be unique, got {ids}")
        for claim in self.claims:
            if claim.stratum not in names:
                raise ValueError(
                    f"claims: {claim.claim} names an unknown stratum {claim.stratum!r}"
                )
        seeds = self.exploratory_seeds
        if not isinstance(seeds, tuple) or not seeds or len(set(seeds)) != len(seeds):
            raise ValueError("exploratory_seeds: expected a nonempty tuple of distinct integers")
        arguments.positive("confirmatory_count", self.confirmatory_count, kinds=int)
        if not arguments.is_integer(self.confirmatory_first_seed):
            raise ValueError("confirmatory_first_seed: expected an integer")
        if set(self.exploratory_seeds) & set(self.confirmatory_seeds):
            raise ValueError(
                "confirmatory_first_seed: the confirmatory seeds overlap the exploratory"
            )
        arguments.alpha(self.alpha)
        arguments.positive("accuracy_margin", self.accuracy_margin)
        arguments.positive("log_curvature_margin", self.log_curvature_margin)

    @property
    def confirmatory_seeds(self) -> tuple[int, ...]:
        """The fresh seeds first, first + 1, ..., first + count − 1."""
        first = self.confirmatory_first_seed
        return tuple(range(first, first + self.confirmatory_count))

    def stratum(self, name: str) -> Stratum:
        """The stratum called ``name``."""
        for stratum in self.strata:
            if stratum.name == name:
                return stratum
        raise ValueError(f"name: no stratum {name!r} in the plan ({[s.name for s in self.strata]})")

    def family(self, name: str = "primary") -> tuple[str, ...]:
        """The ids of the claims Holm-adjusted together in family ``name``."""
        return tuple(c.claim for c in self.claims if c.holm_family == name)


def plan_json(plan: AnalysisPlan) -> str:
    """The canonical JSON of ``plan``: sorted keys, separators "," and ":", ASCII, no NaN.

    >>> plan_json(PLAN)[:40]
    '{"accuracy_margin":0.01,"alpha":0.05,"cl'
    """
    if not isinstance(plan, AnalysisPlan):
        raise ValueError(f"plan: expected an AnalysisPlan, got {type(plan).__name__}")
    return json.dumps(
        asdict(plan), sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    )


def plan_sha256(plan: AnalysisPlan) -> str:
    """The SHA-256 (hex) of :func:`plan_json` encoded as UTF-8: the plan's name in claims.json.

    >>> len(plan_sha256(PLAN)), plan_sha256(PLAN) == plan_sha256(plan_from_dict(asdict(PLAN)))
    (64, True)
    """
    return hashlib.sha256(plan_json(plan).encode("utf-8")).hexdigest()


def _estimator(data: Mapping) -> CurvatureEstimator | AdaptiveCurvatureEstimator:
    if not isinstance(data, Mapping):
        raise ValueError(f"curvature: expected a mapping, got {type(data).__name__}")
    if "tolerance" in data:  # version 2's adaptive rule; version 1's estimator has none
        return AdaptiveCurvatureEstimator(**{**data, "models": tuple(data.get("models", ()))})
    return CurvatureEstimator(**data)


def plan_from_dict(data: Mapping) -> AnalysisPlan:
    """The plan back from :func:`dataclasses.asdict` or from :func:`plan_json` parsed (lists
    become tuples); every field checked as on construction."""
    if not isinstance(data, Mapping):
        raise ValueError(f"data: expected a mapping, got {type(data).__name__}")
    expected = {f.name for f in fields(AnalysisPlan)}
    if set(data) != expected:
        raise ValueError(f"data: expected the fields {sorted(expected)}, got {sorted(data)}")
    return AnalysisPlan(
        **{
            **data,
            "claims": tuple(ClaimSpec(**c) for c in data["claims"]),
            "strata": tuple(Stratum(**{**s, "tasks": tuple(s["tasks"])}) for s in data["strata"]),
            "curvature": _estimator(data["curvature"]),
            "training": TrainingRule(**data["training"]),
            "exploratory_seeds": tuple(data["exploratory_seeds"]),
        }
    )


_EASY = tuple(t for t in NONLINEAR_TASKS if t not in HARD_TASKS)
_CURVATURE = "log_curvature_total_abs"
_ACCURACY = "test_accuracy"
_GATED, _UNGATED = "gated_elementwise", "ungated"


_ACCURACY_MARGIN, _LOG_CURVATURE_MARGIN = 0.01, math.log(1.25)


def _claims(curvature: str = _CURVATURE) -> tuple[ClaimSpec, ...]:
    """The claims of both versions; ``curvature`` the measure of ∫|K| dA (version 1: the
    uniform midpoint rule's, version 2: the adaptive rule's)."""
    paired, tost, easy = "paired_mean", "paired_tost", "easy_nonlinear"
    return (
        ClaimSpec("E1-sheet", "gated representations are more curved than ungated (∫|K| dA)",
            easy, paired, curvature, _GATED, _UNGATED, "greater"),
        ClaimSpec("E1-sheet-hard", "on the hard tasks too, gated representations are more curved",
            "hard", paired, curvature, _GATED, _UNGATED, "greater"),
        ClaimSpec("E1-extrinsic", "gated representations bend more than ungated (normal part ρ⊥)",
            easy, paired, "log_rho_normal", _GATED, _UNGATED, "greater"),
        ClaimSpec("E1-specific", "the multiplicative gate curves more than the additive one",
            easy, paired, curvature, _GATED, "ablation", "greater"),
        ClaimSpec("E1-linear", "on linear controls the gate leaves curvature within ±log 1.25",
            "linear", tost, curvature, _GATED, _UNGATED, "equivalent", _LOG_CURVATURE_MARGIN),
        ClaimSpec("E1-proxy", "gated representations are more curved than ungated (proxy ρ)",
            easy, paired, "log_rho", _GATED, _UNGATED, "greater", holm_family=None),
        ClaimSpec("E2", "gated attention is more accurate than ungated on nonlinear boundaries",
            easy, paired, _ACCURACY, _GATED, _UNGATED, "greater"),
        ClaimSpec("E2-hard", "gated attention is more accurate than ungated on the hard tasks",
            "hard", paired, _ACCURACY, _GATED, _UNGATED, "greater"),
        ClaimSpec("E2-linear", "gated attention has no accuracy advantage on linear boundaries",
            "linear", tost, _ACCURACY, _GATED, _UNGATED, "equivalent", _ACCURACY_MARGIN),
        ClaimSpec("E2-width", "the gate beats an ungated model of matched parameters",
            easy, paired, _ACCURACY, _GATED, "ungated_wide", "greater"),
        ClaimSpec("E2-additive", "the multiplicative gate beats the additive nonlinearity",
            easy, paired, _ACCURACY, _GATED, "ablation", "greater"),
        ClaimSpec("E2-headwise", "a headwise gate is also more accurate than ungated",
            easy, paired, _ACCURACY, "gated_headwise", _UNGATED, "greater"),
        ClaimSpec("E3", "within a task and a model, more curved runs are more accurate",
            "nonlinear", "within_cell_r", curvature, None, None, "greater"),
        ClaimSpec("E3-delta", "a seed's larger gain in curvature goes with a larger accuracy gain",
            "nonlinear", "delta_delta_slope", curvature, _GATED, _UNGATED, "greater",
            holm_family=None),
    )  # fmt: skip


PLAN = AnalysisPlan(
    name="Part II confirmatory plan",
    claims=_claims(),
    strata=(
        Stratum("easy_nonlinear", _EASY, "nonlinear tasks a small model fits"),
        Stratum("hard", HARD_TASKS, "capacity-limiting nonlinear tasks"),
        Stratum("nonlinear", NONLINEAR_TASKS, "all nonlinear tasks (E3's task × model cells)"),
        Stratum("linear", LINEAR_TASKS, "linear controls: the optimal boundary is a line"),
    ),
    curvature=CurvatureEstimator(
        grid=64,
        radius=0.2,
        convergence_threshold=0.05,
        rho_points=256,
        convergence_seed_stride=4,
    ),
    training=TrainingRule(
        kind="fixed_budget",
        epochs=400,
        chosen_from="the ungated baseline's convergence in the pilot (curvlab.studies.pilot)",
        sensitivity="runs not converged at 400 epochs retrained afresh at 800, reported beside",
        sensitivity_doublings=1,
    ),
    exploratory_seeds=tuple(range(20)),
    confirmatory_first_seed=1000,
    confirmatory_count=40,
    alpha=0.05,
    accuracy_margin=_ACCURACY_MARGIN,
    log_curvature_margin=_LOG_CURVATURE_MARGIN,
)
"""Version 1 of the confirmatory plan, frozen before any run of its seeds (1000–1039) was seen:
the coarsest grid that met the 0.05 convergence threshold on exploratory sheets, and enough
seeds for 80% power on the exploratory effects; the numbers behind each choice:
docs/decisions/0001-confirmatory-plan-version-1.md."""


_ADAPTIVE, _CAPPED = "log_curvature_adaptive", "log_curvature_capped"


def _claims_v2() -> tuple[ClaimSpec, ...]:
    """Version 1's claims on the adaptive ∫|K| dA, and the capped integrand's two secondary
    claims (reported unadjusted, outside the Holm family)."""
    paired, easy = "paired_mean", "easy_nonlinear"
    capped = (
        ClaimSpec("E1-capped", "gated representations carry more spread-out curvature",
            easy, paired, _CAPPED, _GATED, _UNGATED, "greater", holm_family=None),
        ClaimSpec("E1-capped-hard", "on the hard tasks too, more spread-out curvature",
            "hard", paired, _CAPPED, _GATED, _UNGATED, "greater", holm_family=None),
    )  # fmt: skip
    return (*_claims(_ADAPTIVE), *capped)


PLAN_V2 = AnalysisPlan(
    name="Part II confirmatory plan, version 2",
    claims=_claims_v2(),
    strata=PLAN.strata,
    curvature=AdaptiveCurvatureEstimator(
        base=32,
        check_base=64,
        tolerance=0.03,
        models=(_UNGATED, _GATED, "ablation"),
        grid=64,
        radius=0.2,
        convergence_threshold=0.05,
        rho_points=256,
        convergence_seed_stride=4,
    ),
    training=PLAN.training,
    exploratory_seeds=PLAN.exploratory_seeds,
    confirmatory_first_seed=2000,
    confirmatory_count=16,
    alpha=0.05,
    accuracy_margin=_ACCURACY_MARGIN,
    log_curvature_margin=_LOG_CURVATURE_MARGIN,
)
"""Version 2 of the confirmatory plan: version 1's questions, with ∫|K| dA by an adaptive rule
that converges on the study's own sheets where version 1's uniform grid missed the spikes of
|K|, on the three models the curvature claims compare and 16 fresh seeds from 2000 so that the
study fits its time budget; what changed, why, and the numbers:
docs/decisions/0002-confirmatory-plan-version-2.md.  Everything else (claims and strata, the
fixed budget and its ladder, ρ points, α and the margins) is version 1's."""

PLANS: dict[int, AnalysisPlan] = {1: PLAN, 2: PLAN_V2}
"""Every frozen plan by its version; the reproduction follows the latest."""
