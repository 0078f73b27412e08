"""curvlab.plotting.tables.study_verdicts_table: one study's verdicts on chosen claims, read
from a claims.json written and read back as `make studies` leaves it, each row linked to its
chapter; a claim without a record is refused, never left out."""

import pytest

from curvlab.analysis import stats
from curvlab.analysis.plan import PLAN, plan_sha256
from curvlab.analysis.schema import claim_schema_record
from curvlab.plotting import tables
from curvlab.studies.result import StudyResult

CHAPTERS = {"E1-sheet": "experiments/reproduction", "E2": "experiments/reproduction",
            "E3": "experiments/decision-boundaries"}  # fmt: skip


def _records(study, effect, low, high):
    """Every claim of the plan in ``study``, with one interval for the directional claims."""
    seeds = list(PLAN.exploratory_seeds if study == "exploratory" else PLAN.confirmatory_seeds)
    raw = {spec.claim: 0.001 * (k + 1) for k, spec in enumerate(PLAN.claims)}
    family = PLAN.family()
    holm = dict(zip(family, stats.holm([raw[c] for c in family]), strict=True))
    floors = dict(zip(family, stats.holm([2.0**-19] * len(family)), strict=True))
    records = []
    for spec in PLAN.claims:
        interval = (0.0, -spec.margin / 2, spec.margin / 2) if spec.margin else (effect, low, high)
        records.append(
            claim_schema_record(
                spec, effect=interval[0], ci_low=interval[1], ci_high=interval[2],
                p=raw[spec.claim], p_holm=holm.get(spec.claim), seeds=seeds, mde_80=0.2,
                study=study, p_floor=2.0**-19, p_floor_holm=floors.get(spec.claim),
            )
        )  # fmt: skip
    return records


def _written_and_read(tmp_path):
    """A reproduction result with both studies (exploratory supported, confirmatory
    inconclusive), written and read back by StudyResult as the command line does."""
    geometric = [{"claim": "T1", "statement": "flat", "passed": 1, "n_checks": 1,
                  "verdict": "reproduced"}]  # fmt: skip
    claims = [*geometric, *_records("exploratory", 0.3, 0.1, 0.5),
              *_records("confirmatory", 0.04, -0.02, 0.1)]  # fmt: skip
    StudyResult(claims=claims, meta={"scale": "tiny"}, plan_sha256=plan_sha256(PLAN)).write(
        tmp_path
    )
    return StudyResult.read(tmp_path)


def test_the_rows_are_the_confirmatory_records_with_their_intervals_and_chapters(tmp_path):
    result = _written_and_read(tmp_path)
    lines = tables.study_verdicts_table(result.claims, CHAPTERS).splitlines()
    assert lines[0] == tables.STUDY_VERDICTS_HEAD.splitlines()[0]
    assert len(lines) == 2 + len(CHAPTERS)
    for line, (claim, chapter) in zip(lines[2:], CHAPTERS.items(), strict=True):
        assert line.startswith(f"| **{claim}** | ")
        assert "+0.040 [-0.020, +0.100]" in line and "**inconclusive**" in line, line
        assert "supported" not in line, "the exploratory verdict leaked into the row"
        assert line.endswith(f"| {{doc}}`{chapter}` |")
    exploratory = tables.study_verdicts_table(result.claims, CHAPTERS, study="exploratory")
    assert "+0.300 [+0.100, +0.500]" in exploratory and "**supported**" in exploratory


def test_a_claim_without_a_record_is_refused_by_name(tmp_path):
    result = _written_and_read(tmp_path)
    only_exploratory = [r for r in result.claims if r.get("study") == "exploratory"]
    with pytest.raises(ValueError, match=r"records: no confirmatory record of E1-sheet, E2, E3"):
        tables.study_verdicts_table(only_exploratory, CHAPTERS)
    with pytest.raises(ValueError, match="records: no confirmatory record of E9"):
        tables.study_verdicts_table(result.claims, {"E9": "experiments/reproduction"})


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [({"chapters": {}}, "chapters"), ({"chapters": ["E2"]}, "chapters"),
     ({"chapters": CHAPTERS, "study": "pilot"}, "study")],
)  # fmt: skip
def test_bad_arguments_are_named(kwargs, argument):
    with pytest.raises(ValueError, match=rf"^{argument}: "):
        tables.study_verdicts_table([], **kwargs)
