"""The graded exercises of Part III's real-data chapter: the chapter's own solution passes
every check of its exercise, and each wrong answer below fails a hidden check (a leak of the
test rows into the standardisation, a split that ignores the seed, tokens in the wrong order,
an answer that wraps the library's loader, pairs taken by position instead of by seed, the
exact integral instead of the centroid rule, half the centroids)."""

import ast
import math
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

from curvgrade import read_chapter
from curvlab.analysis import stats
from curvlab.data.realdata import load_tokens
from curvlab.measurement.slices import triangle_nodes

CHAPTER = read_chapter(Path(__file__).resolve().parents[1] / "book" / "beyond" / "real-data.md")
EXERCISES = {e.label: e for e in CHAPTER.exercises}
GIVEN = {
    "np": np,
    "math": math,
    "stats": stats,
    "triangle_nodes": triangle_nodes,
    "load_breast_cancer": load_breast_cancer,
}


def _solution(label: str, name: str):
    """The function ``name`` as the chapter's solution cell defines it."""
    source = CHAPTER.notebook.cells[EXERCISES[label].solution_cells[0]].source
    tree = ast.parse(source)
    (node,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
    namespace = dict(GIVEN)
    exec(compile(ast.Module([node], []), "<solution>", "exec"), namespace)  # noqa: S102
    return namespace[name]


def _failures(label: str, name: str, answer, *, hidden_only: bool = False) -> list[int]:
    """The numbers of the checks of ``label`` that fail with ``answer`` bound to ``name``."""
    failed = []
    for check in EXERCISES[label].checks:
        if hidden_only and not check.hidden:
            continue
        namespace = {**GIVEN, name: answer}
        try:
            exec(check.source, namespace)  # noqa: S102
        except AssertionError:
            failed.append(check.number)
    return failed


def _split(labels, seed):
    rows = np.arange(len(labels))
    return train_test_split(
        rows, test_size=math.ceil(len(labels) / 4), stratify=labels, random_state=seed
    )


def _tokens(features, index, mean, sd):
    return ((features[index] - mean) / sd).reshape(len(index), 3, 10)


def leaky(features, labels, seed):
    train, test = _split(labels, seed)
    mean, sd = features.mean(axis=0), features.std(axis=0)  # every row: the leak
    return _tokens(features, train, mean, sd), _tokens(features, test, mean, sd), train, test


def seedless(features, labels, seed):
    train, test = _split(labels, 0)
    mean, sd = features[train].mean(axis=0), features[train].std(axis=0)
    return _tokens(features, train, mean, sd), _tokens(features, test, mean, sd), train, test


def transposed(features, labels, seed):
    train, test = _split(labels, seed)
    mean, sd = features[train].mean(axis=0), features[train].std(axis=0)

    def tokens(index):
        return ((features[index] - mean) / sd).reshape(len(index), 10, 3).transpose(0, 2, 1)

    return tokens(train), tokens(test), train, test


def wrapped(features, labels, seed):
    task = load_tokens("breast_cancer", seed=seed)
    return (
        task.train_tokens.numpy(),
        task.test_tokens.numpy(),
        task.train_index.numpy(),
        task.test_index.numpy(),
    )


def by_position(runs, dataset):
    def logs(model):
        return [
            r["log_curvature_total_abs"]
            for r in runs
            if (r["dataset"], r["model"]) == (dataset, model)
        ]

    record = stats.paired_difference(logs("gated_elementwise"), logs("ungated"))
    return record["effect"], record["ci_low"], record["ci_high"]


def exact_integral(coefficients, P):
    c = np.asarray(coefficients, dtype=float)
    # ∫_Δ u1^a u2^b du = a! b! / (a + b + 2)!
    return float(
        sum(
            c[a, b] * math.factorial(a) * math.factorial(b) / math.factorial(a + b + 2)
            for a in range(c.shape[0])
            for b in range(c.shape[1])
        )
    )


def upward_only(coefficients, P):
    c = np.asarray(coefficients, dtype=float)
    points = [((i + 1 / 3) / P, (j + 1 / 3) / P) for i in range(P) for j in range(P - i)]
    total = sum(
        c[a, b] * u**a * v**b
        for u, v in points
        for a in range(c.shape[0])
        for b in range(c.shape[1])
    )
    return float(total / (P * (P + 1) / 2) / 2)


def test_the_chapter_has_the_three_graded_exercises():
    assert set(EXERCISES) == {"ex-real-data-tokenise", "ex-real-data-e1", "ex-real-data-centroid"}
    assert all(any(c.hidden for c in e.checks) for e in EXERCISES.values())


@pytest.mark.parametrize(
    ("label", "name"),
    [("ex-real-data-tokenise", "tokenise"), ("ex-real-data-centroid", "centroid_rule")],
)
def test_the_solution_passes_every_check(label, name):
    assert _failures(label, name, _solution(label, name)) == []


def test_the_e1_solution_passes_the_hidden_check():
    label = "ex-real-data-e1"
    assert _failures(label, "e1_interval", _solution(label, "e1_interval"), hidden_only=True) == []


@pytest.mark.parametrize("wrong", [leaky, seedless, transposed, wrapped], ids=lambda f: f.__name__)
def test_a_wrong_tokenisation_fails_a_hidden_check(wrong):
    assert _failures("ex-real-data-tokenise", "tokenise", wrong, hidden_only=True)


def test_pairs_by_position_fail_the_hidden_e1_check():
    assert _failures("ex-real-data-e1", "e1_interval", by_position, hidden_only=True)


@pytest.mark.parametrize("wrong", [exact_integral, upward_only], ids=lambda f: f.__name__)
def test_a_wrong_rule_fails_the_hidden_centroid_check(wrong):
    assert _failures("ex-real-data-centroid", "centroid_rule", wrong, hidden_only=True)
