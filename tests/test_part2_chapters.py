"""Laws of the Part II chapters' source: code that fits the page, one table of checks, and no
assertion of which verdict comes out (by ``assert`` or by a check table's ``holds``)."""

import io
import re
import tokenize
from pathlib import Path

import pytest

from tools import lint_chapters

REPOSITORY = Path(__file__).resolve().parents[1]
CHAPTERS = REPOSITORY / "book" / "experiments"
SLIM = (  # chapters whose cells show, not compute
    "autodiff-curvature",
    "depth-amplification",
    "decision-boundaries",
    "reproduction",
)
STUDY = ("decision-boundaries", "reproduction")  # the chapters that read the reproduction


def _code_cells(name: str) -> list[str]:
    text = (CHAPTERS / f"{name}.md").read_text(encoding="utf-8")
    return re.findall(r"```\{code-cell\} ipython3\n(.*?)\n```", text, flags=re.DOTALL)


@pytest.mark.parametrize("name", SLIM)
def test_no_code_line_overflows_the_page(name):
    """No line is wider than the code column the page shows (the chapter linter's widths)."""
    lines = (CHAPTERS / f"{name}.md").read_text(encoding="utf-8").split("\n")
    long = [
        line
        for cell in lint_chapters.code_cells(lines)
        for line in cell.lines
        if len(line) > lint_chapters.columns(cell)
    ]
    assert long == []


@pytest.mark.parametrize("name", SLIM)
def test_a_chapter_reports_its_checks_in_one_table(name):
    cells = _code_cells(name)
    assert sum("CheckTable(" in cell for cell in cells) == 1
    assert any(cell.strip().splitlines()[-1] == "checks" for cell in cells)


def _lines(cell: str) -> int:
    """The lines of ``cell``, a statement the formatter broke over several counted once."""
    continued = 0
    start = None
    for token in tokenize.generate_tokens(io.StringIO(cell + "\n").readline):
        if token.type in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
            continue
        if start is None:
            start = token.start[0]
        if token.type == tokenize.NEWLINE:
            continued += token.start[0] - start
            start = None
    return len(cell.splitlines()) - continued


def test_a_statement_broken_over_lines_counts_once():
    assert _lines("x = f(\n    1,\n    2,\n)\n# note\n\ny = 1") == 4


@pytest.mark.parametrize("name", SLIM)
def test_cells_are_short(name):
    lengths = [_lines(cell) for cell in _code_cells(name)]
    assert sum(lengths) / len(lengths) < 16
    assert max(lengths[1:]) <= 40  # the first cell holds the imports


def _verdicts() -> tuple[str, ...]:
    from curvlab.analysis.claims import EMPIRICAL_VERDICTS, GEOMETRIC_VERDICTS

    return (*EMPIRICAL_VERDICTS, *GEOMETRIC_VERDICTS)


def _call_arguments(source: str, start: int) -> str:
    """The text between the parenthesis opening at ``start`` and its match (strings skipped)."""
    depth, quote, i = 0, None, start
    while i < len(source):
        char = source[i]
        if quote:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return source[start + 1 : i]
        i += 1
    return source[start + 1 :]


def verdict_assertions(source: str) -> list[str]:
    """The statements of ``source`` that assert which verdict comes out: an ``assert`` line, or
    a ``holds(...)`` call (``checks.holds``, ``CheckTable.holds``), that compares with a verdict
    literal ("supported", "reproduced", ...) or names a claim's ``verdict`` beside ``==``/``!=``."""
    literal = "|".join(re.escape(v) for v in _verdicts())
    compares = re.compile(
        rf"(?:==|!=|\bin\b)\s*[\[(]?\s*[\"'](?:{literal})[\"']"
        rf"|[\"'](?:{literal})[\"']\s*[\])]?\s*(?:==|!=)"
        rf"|=\s*[\"'](?:{literal})[\"']"
        r"|\[[\"']verdict[\"']\]\s*(?:==|!=)\s*[\"']"
    )
    found = [
        line.strip()
        for line in source.splitlines()
        if line.lstrip().startswith("assert") and (compares.search(line) or "verdict" in line)
    ]
    for match in re.finditer(r"\bholds\s*\(", source):
        arguments = _call_arguments(source, match.end() - 1)
        if compares.search(arguments):
            found.append(f"holds({arguments.strip()})")
    return found


@pytest.mark.parametrize(
    "planted",
    [
        'checks.holds("x", claims["E2"]["verdict"] == "supported")',
        'CheckTable("t").holds("x", verdicts == dict(T1="reproduced", T2="partly"))',
        'checks.holds(\n    "E1 holds",\n    record["verdict"] in ("supported",),\n)',
        'assert claims["E2"]["verdict"] == "supported"',
    ],
)
def test_the_verdict_detector_flags_a_planted_assertion(planted):
    assert verdict_assertions(f"x = 1\n{planted}\ny = 2") != []


@pytest.mark.parametrize(
    "innocent",
    [
        'checks.holds(f"{name}: rule", stats.verdict_follows(record), record["verdict"])',
        'checks.holds("rule", record["verdict"] == verdict(record["checks"]), record["verdict"])',
        'checks.holds("T1, T2 reproduced (prose)", stats.holm(p) == adjusted)',
    ],
)
def test_the_verdict_detector_lets_a_rule_check_pass(innocent):
    assert verdict_assertions(innocent) == []


@pytest.mark.parametrize("name", STUDY)
def test_no_study_chapter_asserts_which_verdict_comes_out(name):
    cells = _code_cells(name)
    asserted = [found for cell in cells for found in verdict_assertions(cell)]
    assert asserted == []
    # verdicts are checked against their rule, by the library's rule function
    assert any("stats.verdict_follows(record)" in cell for cell in cells)


def test_the_study_chapters_run_one_protocol_and_share_its_cache():
    calls = {
        name: re.findall(r"run_study\(REPRODUCE, (.*?)\)\n", "\n".join(_code_cells(name)))
        for name in STUDY
    }
    assert all(len(found) == 1 for found in calls.values()), calls
    assert calls["decision-boundaries"] == calls["reproduction"]


def _synthetic_runs(gap_nonlinear, gap_linear, seeds=8):
    """Runs of every model on every task whose accuracies differ by a known, noisy gap."""
    from curvlab.data.tasks import LINEAR_TASKS, TASKS
    from curvlab.models.attention import VARIANTS

    runs = []
    for seed in range(seeds):
        noise = 0.002 * ((seed * 7) % 5 - 2)
        for task in TASKS:
            gap = gap_linear if task in LINEAR_TASKS else gap_nonlinear
            for model in VARIANTS:
                gated = model.startswith("gated")
                value = 0.8 + (gap + noise if gated else 0.0)
                runs.append(
                    {
                        "task": task,
                        "boundary": "linear" if task in LINEAR_TASKS else "nonlinear",
                        "model": model,
                        "depth": 1,
                        "seed": seed,
                        "converged": True,
                        "test_accuracy": value,
                        "log_curvature_total_abs": value + 0.01 * seed,
                        "log_rho": value - 0.01 * seed,
                        "log_rho_normal": value + 0.003 * seed**2,
                    }
                )
    return runs


@pytest.mark.parametrize(("gap_nonlinear", "gap_linear"), [(0.05, 0.0), (-0.05, 0.03), (0, 0)])
def test_claims_and_the_verdict_rule_read_the_same_p(gap_nonlinear, gap_linear):
    """claims.json's equivalence records carry the TOST p in ``p`` and its Holm adjustment in
    ``p_holm``, which is what stats.verdict_follows judges them on: every record's verdict
    follows, whatever it is."""
    from curvlab.analysis import stats
    from curvlab.studies.reproduce import claims

    records = claims(_synthetic_runs(gap_nonlinear, gap_linear))
    linear = [r for r in records if r["margin"] is not None]
    assert {r["claim"] for r in linear} == {"E1-linear", "E2-linear"}
    assert all(r["ci_level"] == pytest.approx(0.9) for r in linear)
    assert all(stats.verdict_follows(r) for r in records)
    for record in linear:
        flipped = {
            **record,
            "verdict": "contradicted" if record["verdict"] != "contradicted" else "supported",
        }
        assert not stats.verdict_follows(flipped)


def test_the_sensitivity_analysis_recomputes_each_claim_on_converged_runs_only():
    from curvlab.analysis.empirical import SENSITIVITY_FIELDS, analyse, claims

    runs = _synthetic_runs(0.05, 0.0)
    for run in runs:  # seeds 0 and 1 lose one run each; seed 1's gated run becomes an outlier
        if (run["seed"], run["task"], run["model"]) in {
            (0, "xor", "ungated"),
            (1, "spirals", "gated_elementwise"),
        }:
            run["converged"] = False
            run["test_accuracy"] = 0.2
    records = {r["claim"]: r for r in analyse(runs)["claims"]}
    alone = {r["claim"]: r for r in claims([r for r in runs if r["converged"]])}
    e2 = records["E2"]
    assert e2["n_seeds"] == 8 and e2["converged_n_seeds"] == 6  # seeds 0 and 1 drop out
    for field in SENSITIVITY_FIELDS:
        assert e2[f"converged_{field}"] == alone["E2"][field]
    assert e2["converged_effect"] != e2["effect"]  # the unconverged runs moved the estimate
    assert records["E2-linear"]["converged_n_seeds"] == 8  # no linear run was unconverged
