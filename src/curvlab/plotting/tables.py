"""The Part II study in Markdown: its tables, one row per record.

The chapters of Part II display what the study computed; this module lays out its tables.
Every function is pure (records in, one Markdown string out, no I/O) and reads only the
fields of the records it is given; the sentences that report single numbers are written by
the chapters themselves, beside those numbers:

- claims (``claims.json``, :func:`curvlab.analysis.empirical.claims`): :func:`claims_table`
  (geometric and empirical claims, one row each, by :func:`geometric_row` and
  :func:`empirical_row`), and the empirical claims of both studies side by side,
  :func:`two_studies_table`; one study's verdicts on chosen claims, each beside the chapter
  that decides it, :func:`study_verdicts_table`;
- the language-model study's claims (:func:`curvlab.analysis.language_model_claims.lm_claims`):
  :func:`lm_claims_table`;
- the pilot (:func:`curvlab.studies.pilot.pilot`): :func:`pilot_table`;
- the sweep (:func:`curvlab.studies.sweep.sweep`): :func:`sweep_table`;
- the measures' own checks (:mod:`curvlab.studies.measure_checks`):
  :func:`measure_checks_table`, :func:`step_table`;
- any few numbers a chapter shows, with what they mean and their units:
  :func:`numbers_table`.

Numbers are printed as the chapters state them: effects and intervals with three decimals and
a sign, Holm p with two significant digits.  A statement put in
a table cell has its pipes escaped (``\\|``), so that it cannot split the row.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from curvlab import arguments
from curvlab.analysis.claims import GEOMETRIC_VERDICTS
from curvlab.analysis.decidability import verdict_label
from curvlab.analysis.schema import STUDIES

__all__ = [
    "claims_table",
    "empirical_row",
    "geometric_row",
    "lm_claims_table",
    "measure_checks_table",
    "numbers_table",
    "pilot_table",
    "step_table",
    "study_verdicts_table",
    "sweep_table",
    "two_studies_table",
]


def _cell(text: str) -> str:
    """``text`` made safe for one Markdown table cell (a pipe would split the row)."""
    return str(text).replace("|", "\\|")


def _interval(effect: float, low: float | None, high: float | None, digits: int = 3) -> str:
    if low is None or high is None:  # too few seeds for an interval (the record says why)
        return f"{effect:+.{digits}f} [no interval]"
    return f"{effect:+.{digits}f} [{low:+.{digits}f}, {high:+.{digits}f}]"


def _p(record: Mapping) -> str:
    """The p a verdict is judged on: Holm's where the record has one, else its own (marked)."""
    if record.get("p_holm") is not None:
        return f"{record['p_holm']:.2g}"
    return f"{record['p']:.2g} (unadjusted)"


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
        f"| {_p(record)} | **{verdict_label(record)}** | {alone} |"
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


LM_CLAIMS_HEAD = (
    "| measure | model vs baseline | mean (model; baseline) | effect [95% CI] | Holm $p$ "
    "| verdict |\n|---|---|---|---|---|---|"
)


def lm_claims_table(records: Iterable[Mapping]) -> str:
    """The language-model study's claims, one row each in their order: the measure, the
    comparison, both variants' means over seeds (four significant digits), the effect (signed so
    that positive is the predicted direction) with its interval, Holm p and the verdict.

    >>> print(lm_claims_table([{"measure": "sink", "model": "g", "baseline": "u",
    ...     "mean_model": 0.1, "mean_baseline": 0.3, "effect": 0.2, "ci_low": 0.1,
    ...     "ci_high": 0.3, "p": 0.01, "p_holm": 0.02, "verdict": "supported"}]))
    | measure | model vs baseline | mean (model; baseline) | effect [95% CI] | Holm $p$ | verdict |
    |---|---|---|---|---|---|
    | sink | g vs u | 0.1; 0.3 | +0.200 [+0.100, +0.300] | 0.02 | **supported** |
    """
    rows = [
        f"| {_cell(r['measure'])} | {_cell(r['model'])} vs {_cell(r['baseline'])} "
        f"| {r['mean_model']:.4g}; {r['mean_baseline']:.4g} "
        f"| {_interval(r['effect'], r['ci_low'], r['ci_high'])} | {_p(r)} "
        f"| **{verdict_label(r)}** |"
        for r in records
    ]
    return "\n".join([LM_CLAIMS_HEAD, *rows])


TWO_STUDIES_HEAD = (
    "| claim | statement | stratum | exploratory (seeds 0–19) | confirmatory (the plan) "
    "| confirmatory, ladder |\n|---|---|---|---|---|---|"
)


def _study_cell(record: Mapping | None) -> str:
    if record is None:
        return "–"
    evidence = _interval(record["effect"], record["ci_low"], record["ci_high"])
    return f"{evidence}; p {_p(record)} → **{verdict_label(record)}**"


def two_studies_table(records: Iterable[Mapping]) -> str:
    """The empirical claims of both studies side by side, one row per claim (in the order of
    their first record): effect [interval], the p the verdict is judged on (Holm's, or the
    claim's own for a secondary claim, marked) and the verdict, for the exploratory and the
    confirmatory study, then the confirmatory verdict under the retraining ladder
    (``ladder_verdict``; "–" where a study has no such record).

    >>> rows = [{"claim": "E2", "statement": "gated > ungated", "stratum": "hard",
    ...          "study": s, "effect": 0.05, "ci_low": 0.01, "ci_high": 0.09, "p": 0.01,
    ...          "p_holm": 0.03, "verdict": "supported", "ladder_verdict": "supported"}
    ...         for s in ("exploratory", "confirmatory")]
    >>> two_studies_table(rows).splitlines()[2]
    '| **E2** | gated > ungated | hard | +0.050 [+0.010, +0.090]; p 0.03 → **supported** \
| +0.050 [+0.010, +0.090]; p 0.03 → **supported** | supported |'
    """
    by_claim: dict[str, dict[str, Mapping]] = {}
    for record in records:
        if record.get("study") not in ("exploratory", "confirmatory"):
            raise ValueError(f"records: {record.get('claim')!r} names no study")
        by_claim.setdefault(record["claim"], {})[record["study"]] = record
    rows = []
    for claim, studies in by_claim.items():
        first = next(iter(studies.values()))
        confirmatory = studies.get("confirmatory")
        ladder = (confirmatory or {}).get("ladder_verdict") or "–"
        rows.append(
            f"| **{claim}** | {_cell(first['statement'])} | {first['stratum']} "
            f"| {_study_cell(studies.get('exploratory'))} | {_study_cell(confirmatory)} "
            f"| {ladder} |"
        )
    return "\n".join([TWO_STUDIES_HEAD, *rows])


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


# --- one study's verdicts, each with its chapter ----------------------------------------------

STUDY_VERDICTS_HEAD = (
    "| claim | statement | effect [interval]; p → verdict | decided in |\n|---|---|---|---|"
)


def study_verdicts_table(
    records: Iterable[Mapping], chapters: Mapping[str, str], *, study: str = "confirmatory"
) -> str:
    """The verdicts of ``study`` on the claims of ``chapters`` (claim → the document name of
    the chapter that decides it, in the order of the rows): statement, effect and interval,
    the p the verdict is judged on, the verdict, and a ``{doc}`` link to the chapter.

    ``records``: the empirical records of ``claims.json`` (those of other studies are
    skipped).  A claim of ``chapters`` without a record of ``study`` is a ``ValueError``:
    the table never leaves a claim out.

    >>> rows = [{"claim": "E2", "statement": "gated > ungated", "study": s, "effect": 0.05,
    ...          "ci_low": 0.01, "ci_high": 0.09, "p": 0.01, "p_holm": 0.03,
    ...          "verdict": "supported"} for s in ("exploratory", "confirmatory")]
    >>> study_verdicts_table(rows, {"E2": "experiments/reproduction"}).splitlines()[2]
    '| **E2** | gated > ungated | +0.050 [+0.010, +0.090]; p 0.03 → **supported** \
| {doc}`experiments/reproduction` |'
    """
    arguments.one_of("study", study, STUDIES)
    if not isinstance(chapters, Mapping) or not chapters:
        raise ValueError(f"chapters: expected a nonempty mapping claim → chapter, got {chapters!r}")
    ours = {r["claim"]: r for r in records if r.get("study") == study}
    missing = [claim for claim in chapters if claim not in ours]
    if missing:
        raise ValueError(f"records: no {study} record of {', '.join(missing)}")
    rows = [
        f"| **{claim}** | {_cell(ours[claim]['statement'])} | {_study_cell(ours[claim])} "
        f"| {{doc}}`{chapter}` |"
        for claim, chapter in chapters.items()
    ]
    return "\n".join([STUDY_VERDICTS_HEAD, *rows])


# --- a few numbers, with what they mean -------------------------------------------------------


def _number_cell(value: object, digits: int) -> str:
    if hasattr(value, "item") and not isinstance(value, str):  # NumPy or torch scalar
        value = value.item()
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    return _cell(value)


def numbers_table(head: Sequence[str], rows: Iterable[Sequence[object]], *, digits: int = 4) -> str:
    """A small Markdown table of numbers: ``head`` names each column (what it means, with its
    unit), then one line per row of ``rows``. A float is printed with ``digits`` significant
    digits, an integer as it is, a bool as yes or no, a NumPy or one-element torch scalar as
    its value, anything else (a label, an already formatted number) as text.

    >>> print(numbers_table(["phase", "χ₁ (mean field)", "stable"],
    ...                     [["ordered", 0.55664, True], ["chaotic", 1.25691, False]]))
    | phase | χ₁ (mean field) | stable |
    |---|---|---|
    | ordered | 0.5566 | yes |
    | chaotic | 1.257 | no |
    """
    head = [_cell(h) for h in head]
    if not head:
        raise ValueError("head: expected at least one column title")
    arguments.integer("digits", digits, 1)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        row = list(row)
        if len(row) != len(head):
            raise ValueError(f"rows: expected {len(head)} values a row, got {len(row)} in {row!r}")
        lines.append("| " + " | ".join(_number_cell(v, digits) for v in row) + " |")
    return "\n".join(lines)
