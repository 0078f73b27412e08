"""The Part II study in words: Markdown tables and sentences built from its results.

The chapters of Part II display what the study computed; this module writes it.  Every
function is pure (records in, one Markdown string out, no I/O) and reads only the fields of
the records it is given:

- claims (``claims.json``, :func:`curvlab.analysis.empirical.claims`): :func:`claims_table`
  (geometric and empirical claims, one row each), :func:`claim_sentence` /
  :func:`claim_sentences`, :func:`converged_only_summary`, :func:`measures_agreement`,
  :func:`verdict_summary` (E3's sentence is written by its chapter, beside its numbers);
- the protocol and its runs (``meta.json``, ``runs.csv``): :func:`executed_protocol`,
  :func:`converged_by_budget`, :func:`unconverged_summary`, :func:`study_summary`;
- the pilot (:func:`curvlab.studies.pilot.pilot`): :func:`pilot_table`,
  :func:`pilot_choice`;
- the sweep (:func:`curvlab.studies.sweep.sweep`): :func:`sweep_table`,
  :func:`sweep_summary`;
- the measures' own checks (:mod:`curvlab.studies.measure_checks`):
  :func:`measure_checks_table`, :func:`step_table`.

Numbers are printed as the chapters state them: effects and intervals with three decimals and
a sign, Holm p with two significant digits.  A statement put in
a table cell has its pipes escaped (``\\|``), so that it cannot split the row.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from curvlab.analysis.claims import EMPIRICAL_VERDICTS, GEOMETRIC_VERDICTS
from curvlab.models.attention import VARIANTS
from curvlab.models.tasks import TASKS
from curvlab.studies.sweep import sign_class, stable_factors

__all__ = [
    "claim_sentence",
    "claim_sentences",
    "claims_table",
    "converged_by_budget",
    "converged_only_summary",
    "empirical_row",
    "executed_protocol",
    "geometric_row",
    "measure_checks_table",
    "measures_agreement",
    "pilot_choice",
    "pilot_table",
    "step_table",
    "study_summary",
    "sweep_table",
    "sweep_summary",
    "unconverged_summary",
    "verdict_summary",
]

CURVATURE_MEASURES: tuple[tuple[str, str], ...] = (
    ("E1-sheet", "∫|K| dA"),
    ("E1-proxy", "ρ"),
    ("E1-extrinsic", "ρ⊥"),
)
"""The three E1 claims and the symbol of the curvature measure each compares."""


def _cell(text: str) -> str:
    """``text`` made safe for one Markdown table cell (a pipe would split the row)."""
    return str(text).replace("|", "\\|")


def _interval(effect: float, low: float, high: float, digits: int = 3) -> str:
    return f"{effect:+.{digits}f} [{low:+.{digits}f}, {high:+.{digits}f}]"


def _names(records: Iterable[Mapping], prefixes: tuple[str, ...]) -> list[str]:
    return [r["claim"] for r in records if r["claim"].startswith(prefixes)]


def _listed(names: Iterable[str], empty: str = "none") -> str:
    return ", ".join(names) or empty


# --- the claims table -------------------------------------------------------------------------

CLAIMS_HEAD = (
    "| claim | statement | evidence | Holm $p$ | verdict | converged runs only |\n"
    "|---|---|---|---|---|---|"
)


def geometric_row(record: Mapping) -> str:
    """One table row of a geometric claim (:func:`curvlab.analysis.claims.claim_record`).

    >>> geometric_row({"claim": "T1", "statement": "flat", "passed": 1, "n_checks": 1,
    ...                "verdict": "reproduced"})
    '| **T1** | flat | 1 of 1 checks | | **reproduced** | |'
    """
    return (
        f"| **{record['claim']}** | {_cell(record['statement'])} | {record['passed']} of "
        f"{record['n_checks']} checks | | **{record['verdict']}** | |"
    )


def empirical_row(record: Mapping) -> str:
    """One table row of an empirical claim of ``claims.json``.

    Evidence: effect and interval (for an equivalence claim, its margin and "TOST, 90% CI"),
    then mde₈₀ where the record has one; the last column is the verdict on converged runs
    alone, "–" where it could not be recomputed.
    """
    extra = f"; margin ±{record['margin']} (TOST, 90% CI)" if record["margin"] is not None else ""
    mde = f"; mde₈₀ {record['mde_80']:.3f}" if record["mde_80"] is not None else ""
    alone = record["converged_verdict"] or "–"
    evidence = _interval(record["effect"], record["ci_low"], record["ci_high"])
    return (
        f"| **{record['claim']}** | {_cell(record['statement'])} | {evidence}{extra}{mde} "
        f"| {record['p']:.2g} | **{record['verdict']}** | {alone} |"
    )


def claims_table(records: Iterable[Mapping]) -> str:
    """The reproduction's table (``claims.json``), one row per claim in its order: a geometric
    claim (its verdict one of :data:`~curvlab.analysis.claims.GEOMETRIC_VERDICTS`) by
    :func:`geometric_row`, an empirical one by :func:`empirical_row`."""
    rows = [
        geometric_row(r) if r["verdict"] in GEOMETRIC_VERDICTS else empirical_row(r)
        for r in records
    ]
    return "\n".join([CLAIMS_HEAD, *rows])


# --- one claim in words -----------------------------------------------------------------------


def claim_sentence(record: Mapping) -> str:
    """A claim of ``claims.json`` in one sentence: evidence, verdict, and the sensitivity analysis.

    An inconclusive claim names the effect detectable at 80% power (its mde₈₀); an equivalence
    claim names its margin; the sentence ends with the verdict on converged runs alone, or says
    why it could not be recomputed.
    """
    text = (
        f"**{record['claim']}** ({record['statement']}): "
        f"{_interval(record['effect'], record['ci_low'], record['ci_high'])}, "
        f"Holm $p$ = {record['p']:.2g}"
    )
    if record["margin"] is not None:
        text += f" (90% TOST interval, margin ±{record['margin']})"
    if record["verdict"] == "inconclusive":
        text += f", detectable at 80% power: {record['mde_80']:.3f}"
    text += f" → **{record['verdict']}**"
    if record["converged_verdict"] is None:
        return text + "; too few seeds with every run converged to recompute it."
    alone = _interval(
        record["converged_effect"], record["converged_ci_low"], record["converged_ci_high"]
    )
    return text + (
        f"; on converged runs only ({record['converged_n_seeds']} seeds): "
        f"{alone} → {record['converged_verdict']}."
    )


def claim_sentences(records: Iterable[Mapping], prefixes: tuple[str, ...] = ("E1", "E2")) -> str:
    """A Markdown list of :func:`claim_sentence`, one item per claim whose name has a prefix."""
    return "\n".join(f"- {claim_sentence(r)}" for r in records if r["claim"].startswith(prefixes))


def converged_only_summary(records: Iterable[Mapping]) -> str:
    """Which claims keep their verdict on converged runs alone, and which change (and to what).

    Claims that could not be recomputed (``converged_verdict`` None) are in neither list.
    """
    recomputed = [r for r in records if r["converged_verdict"] is not None]
    kept = [r["claim"] for r in recomputed if r["converged_verdict"] == r["verdict"]]
    changed = [
        f"{r['claim']} ({r['converged_verdict']})"
        for r in recomputed
        if r["converged_verdict"] != r["verdict"]
    ]
    return (
        f"On converged runs alone the verdict is unchanged for {_listed(kept, 'no claim')}; "
        f"it changes for {_listed(changed)}."
    )


def measures_agreement(records: Iterable[Mapping]) -> str:
    """Whether the three E1 curvature measures reach one verdict, and each E1/E2 claim's count
    of unconverged runs."""
    records = list(records)
    by_name = {r["claim"]: r for r in records}
    verdicts = [by_name[name]["verdict"] for name, _ in CURVATURE_MEASURES]
    agree = "agree" if len(set(verdicts)) == 1 else "do **not** agree"
    each = ", ".join(
        f"{symbol} {v}" for (_, symbol), v in zip(CURVATURE_MEASURES, verdicts, strict=True)
    )
    counts = ", ".join(
        f"{r['claim']} {r['unconverged_runs']}"
        for r in records
        if r["claim"].startswith(("E1", "E2"))
    )
    return (
        f"The three curvature measures {agree} in this run: {each}. "
        f"Unconverged runs inside each claim: {counts}."
    )


def _by_verdict(records: Sequence[Mapping]) -> dict[str, list[str]]:
    return {v: [r["claim"] for r in records if r["verdict"] == v] for v in EMPIRICAL_VERDICTS}


def verdict_summary(records: Iterable[Mapping], config: Mapping) -> str:
    """The E1 and E2 claims grouped by verdict, under the executed protocol ``config``."""
    shown = [r for r in records if r["claim"].startswith(("E1", "E2"))]
    groups = "; ".join(f"{v}: {_listed(n)}" for v, n in _by_verdict(shown).items())
    return (
        f"Of the {len(shown)} curvature and accuracy claims, under the executed `small` protocol "
        f"({len(config['seeds'])} seeds, d_model {config['d_model']}, from {config['epochs']} "
        f"epochs): {groups}. An inconclusive verdict is not evidence of no effect: true effects "
        "smaller than its mde₈₀ (listed above) could have been missed by this study."
    )


# --- the protocol and its runs ----------------------------------------------------------------


def executed_protocol(meta: Mapping, n_runs: int, seconds: float) -> str:
    """The executed protocol of ``meta.json`` in one paragraph, with the build's ``seconds``."""
    c = meta["config"]
    return (
        f"**Executed:** scale `{meta['scale']}`, d_model {c['d_model']}, {c['n_heads']} head, "
        f"{c['n_tokens']} tokens, depth {c['depths']}, {c['n_train']} training and "
        f"{c['n_test']} test points, full-batch Adam from {c['epochs']} epochs (retrained up to "
        f"{c['epochs'] * 2 ** c['retrain_doublings']}) at learning rate "
        f"{c['learning_rate']}, {len(c['seeds'])} seeds, {len(c['tasks'])} tasks × "
        f"{len(c['models'])} models = **{n_runs} runs**, device `{meta['device']}`. "
        f"This build spent {seconds:.0f} s on it (the cells are trained only when the run "
        "cache does not hold them yet)."
    )


def converged_by_budget(runs: Iterable[Mapping], ladder: Sequence[int]) -> str:
    """How many runs converged at each budget of the retraining ``ladder``, and how many at
    none of them (unconverged at the last).

    >>> runs = [{"epochs": 400, "converged": True}, {"epochs": 800, "converged": False}]
    >>> converged_by_budget(runs, [400, 800])
    'Runs converged at each budget: 400 epochs: 1, 800 epochs: 0; unconverged at 800: 1.'
    """
    runs = list(runs)
    kept = ", ".join(
        f"{b} epochs: {sum(r['epochs'] == b and r['converged'] for r in runs)}" for b in ladder
    )
    missed = sum(not r["converged"] for r in runs)
    return f"Runs converged at each budget: {kept}; unconverged at {ladder[-1]}: {missed}."


def unconverged_summary(runs: Iterable[Mapping]) -> str:
    """The runs that missed the convergence criterion, counted by task and by model.

    Tasks and models are listed in the order of :data:`curvlab.models.tasks.TASKS` and
    :data:`curvlab.models.attention.VARIANTS`, those present in ``runs`` only.
    """
    runs = list(runs)
    tasks = [t for t in TASKS if any(r["task"] == t for r in runs)]
    models = [m for m in VARIANTS if any(r["model"] == m for r in runs)]

    def missed(field, value):
        return sum(not r["converged"] for r in runs if r[field] == value)

    return (
        f"**{sum(not r['converged'] for r in runs)} of {len(runs)} runs** miss the criterion "
        "(by task: "
        + ", ".join(f"`{t}` {missed('task', t)}" for t in tasks)
        + f", each out of {len(runs) // len(tasks)}; by model: "
        + ", ".join(f"`{m}` {missed('model', m)}" for m in models)
        + ")."
    )


def study_summary(records: Iterable[Mapping], meta: Mapping) -> str:
    """Every empirical claim grouped by verdict under the protocol of ``meta.json``, the count
    of unconverged runs, and the claims whose verdict changes on converged runs alone."""
    records = list(records)
    c = meta["config"]
    groups = "; ".join(f"**{v}**: {_listed(n)}" for v, n in _by_verdict(records).items())
    changed = [r["claim"] for r in records if r["converged_verdict"] != r["verdict"]]
    return (
        "Empirically, under the executed protocol (scale `small`: d_model "
        f"{c['d_model']}, {c['n_heads']} head, depth {c['depths']}, {c['n_train']} training "
        f"points, from {c['epochs']} epochs, {len(c['seeds'])} seeds, {meta['runs']} runs): "
        f"{groups}. {meta['unconverged_runs']} of {meta['runs']} runs did not meet the "
        "convergence criterion even after retraining and are kept and counted (each claim's "
        "count is in `claims.json`). On the converged runs alone the verdict changes for: "
        f"{_listed(changed, 'no claim')}."
    )


# --- the pilot --------------------------------------------------------------------------------

PILOT_HEAD = (
    "| epochs | runs | converged | baseline test acc. | gain to next | qualifies "
    "| converged with retraining |\n|---|---|---|---|---|---|---|"
)


def pilot_table(summary: Iterable[Mapping]) -> str:
    """The pilot's ``summary``, one row per budget ("–" where no next budget gives a gain).

    >>> print(pilot_table([{"budget": 100, "runs": 8, "converged_share": 0.5,
    ...     "baseline_accuracy": 0.9, "baseline_gain": None, "qualifies": False,
    ...     "ladder_share": 0.5}]).splitlines()[-1])
    | 100 | 8 | 0.500 | 0.9000 | – | no | 0.500 |
    """
    rows = [
        f"| {r['budget']} | {r['runs']} | {r['converged_share']:.3f} | "
        f"{r['baseline_accuracy']:.4f} | "
        + ("–" if r["baseline_gain"] is None else f"{r['baseline_gain']:+.4f}")
        + f" | {'yes' if r['qualifies'] else 'no'} | {r['ladder_share']:.3f} |"
        for r in summary
    ]
    return "\n".join([PILOT_HEAD, *rows])


def pilot_choice(chosen: Mapping) -> str:
    """The pilot's choice of epochs and the rule that made it, with the shortfall when no
    budget reached the converged share."""
    text = f"The pilot sets **{chosen['epochs']} epochs** by the rule on *{chosen['rule']}*. "
    if chosen["chosen"] is not None:
        return text + "That budget meets both conditions."
    best = max(r["converged_share"] for r in chosen["summary"])
    return text + (
        f"No budget reached the 95% converged share (at best {best:.0%}): a fixed budget "
        "leaves runs unconverged, so the study starts every run at this budget and retrains "
        "the runs that miss the criterion (next)."
    )


# --- the sweep --------------------------------------------------------------------------------

SWEEP_HEAD = (
    "| point | converged | baseline acc. | baseline acc., nonlinear | E1 Δ log ∫\\|K\\| dA "
    "| E2 Δ accuracy |\n|---|---|---|---|---|---|"
)


def _sweep_row(r: Mapping) -> str:
    point = "small" if r["factor"] == "default" else f"{r['factor']} = {r[r['factor']]}"
    e1, e2 = (
        _interval(r[f"{k}_effect"], r[f"{k}_ci_low"], r[f"{k}_ci_high"]) for k in ("e1", "e2")
    )
    return (
        f"| {point} | {r['converged_share']:.2f} | {r['baseline_accuracy']:.3f} "
        f"| {r['baseline_accuracy_nonlinear']:.3f} | {e1} | {e2} |"
    )


def sweep_table(rows: Iterable[Mapping]) -> str:
    """The sweep, one row per point: convergence, the baseline's accuracy (all tasks and
    nonlinear ones), and the E1 and E2 differences with their 95% intervals."""
    return "\n".join([SWEEP_HEAD, *(_sweep_row(r) for r in rows)])


def sweep_summary(rows: Sequence[Mapping]) -> str:
    """Where the default point's intervals lie, the factors along which the comparison is
    stable by the direction rule and by the strict sign-class rule
    (:func:`curvlab.studies.sweep.stable_factors`), and the range of convergence."""
    default = rows[0]
    direction = stable_factors(list(rows))
    strict = stable_factors(list(rows), rule="sign class")

    def listed(rule, held):
        return _listed(f for f, ok in rule.items() if ok == held)

    shares = [r["converged_share"] for r in rows]
    return (
        f"At `small` ({default['n_seeds']} seeds), E1's interval lies "
        f"{sign_class(default, 'e1')} 0 and E2's {sign_class(default, 'e2')} 0. "
        f"No reversal along: {listed(direction, True)}; "
        f"a reversal along: {listed(direction, False)}. The strict sign classes hold along: "
        f"{listed(strict, True)}; they change along: {listed(strict, False)}. Convergence ranges "
        f"from {min(shares):.2f} to {max(shares):.2f} over the points (the starting epochs are "
        "those of `small` everywhere, chosen by its pilot, not re-chosen per point)."
    )


# --- the measures' own checks -----------------------------------------------------------------


def measure_checks_table(rows: Iterable[Mapping]) -> str:
    """:func:`curvlab.studies.measure_checks.closed_form_checks` as a table: one row per
    surface, the computed and exact value of each measure in its columns.

    >>> print(measure_checks_table([{"surface": "cylinder(r=2)", "measure": "ρ₀",
    ...     "computed": 0.5, "exact": 0.5, "error": 0.0}]).splitlines()[-1])
    | cylinder(r=2) | 0.5000 (exact 0.5000) |
    """
    rows = list(rows)
    measures = list(dict.fromkeys(r["measure"] for r in rows))
    surfaces = list(dict.fromkeys(r["surface"] for r in rows))
    value = {(r["surface"], r["measure"]): r for r in rows}
    head = "| surface | " + " | ".join(_cell(m) for m in measures) + " |"
    rule = "|---|" + "---|" * len(measures)
    lines = [head, rule]
    for surface in surfaces:
        cells = [
            f"{value[surface, m]['computed']:.4f} (exact {value[surface, m]['exact']:.4f})"
            if (surface, m) in value
            else "–"
            for m in measures
        ]
        lines.append(f"| {_cell(surface)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def step_table(gaps: Mapping[str, Sequence[Mapping]]) -> str:
    """:func:`curvlab.studies.measure_checks.rho_step_stability` for several models: one
    row per step h, the median and largest relative gap |ρ_h/h − ρ₀|/ρ₀ of each model.

    >>> print(step_table({"gated": [{"h": 0.001, "median_gap": 1e-5, "max_gap": 2e-3}]}))
    | h | gated: median gap | gated: largest gap |
    |---|---|---|
    | 1e-03 | 1.0e-05 | 2.0e-03 |
    """
    names = list(gaps)
    head = "| h | " + " | ".join(f"{_cell(n)}: median gap | {_cell(n)}: largest gap" for n in names)
    lines = [head + " |", "|---|" + "---|---|" * len(names)]
    for i, row in enumerate(gaps[names[0]]):
        cells = []
        for name in names:
            r = gaps[name][i]
            if r["h"] != row["h"]:
                raise ValueError("gaps: expected the same steps for every model")
            cells.append(f"{r['median_gap']:.1e} | {r['max_gap']:.1e}")
        lines.append(f"| {row['h']:.0e} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
