"""What ``tools.raw_outputs`` calls a raw repr on the page, on synthetic notebook outputs."""

import pytest

from tools import raw_outputs


def _result(text, **more):
    return {"output_type": "execute_result", "data": {"text/plain": text, **more}, "metadata": {}}


def _notebook(*cells):
    return {
        "cells": [
            {"cell_type": "code", "metadata": {"tags": tags}, "outputs": outputs}
            for tags, outputs in cells
        ]
    }


@pytest.mark.parametrize(
    "text",
    [
        "('had not finished', 10.0)",
        "{'ungated': 85, 'ungated_wide': 104}",
        "({'ordered': 0.5566}, {'growth_factor': 1.18})",
        "[0.1, 0.2]",
        "(0.5427890491234133,\n -0.038665493353253456)",
        "0.5427890491234133",
        "-3",
        "np.float64(0.5)",
        "{1, 2}",
        "(['T1', 'T2'], {'exploratory': 14})",
    ],
)
def test_a_bare_tuple_dict_list_or_number_is_raw(text):
    assert raw_outputs.raw_repr(_result(text)) == text
    shown = {"output_type": "display_data", "data": {"text/plain": [text]}, "metadata": {}}
    assert raw_outputs.raw_repr(shown) == text


@pytest.mark.parametrize(
    "output",
    [
        _result("(x, y)", **{"text/latex": "$\\left( x, \\  y\\right)$"}),  # SymPy: typeset
        _result("<IPython.core.display.Markdown object>", **{"text/markdown": "| a |"}),
        _result("'a sentence'"),
        _result("True"),
        _result("Matrix([[1, 0], [0, 1]])"),
        _result("<Figure size 640x480 with 1 Axes>"),
        _result("CheckTable(3 rows)"),
        {"output_type": "stream", "name": "stdout", "text": "(1, 2)\n"},
        {
            "output_type": "display_data",
            "data": {"text/plain": "0.5"},
            "metadata": {"scrapbook": {}},
        },
    ],
)
def test_a_figure_table_typeset_value_or_sentence_is_not(output):
    assert raw_outputs.raw_repr(output) is None


def test_outputs_the_page_hides_are_skipped_and_the_allow_list_holds(tmp_path):
    notebook = _notebook(
        ([], [_result("(1, 2)")]),
        (["remove-output"], [_result("(3, 4)")]),
        (["remove-cell"], [_result("[5]")]),
        (["hide-output"], [_result("{'shown': 1}")]),
    )
    assert raw_outputs.raw_outputs(notebook) == ["(1, 2)", "{'shown': 1}"]
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "a.ipynb").write_text(raw_outputs.json.dumps(notebook))
    assert raw_outputs.findings(tmp_path) == ["book/a: (1, 2)", "book/a: {'shown': 1}"]
    allowed = {("book/a", "(1, "): "the pair is the lesson"}
    assert raw_outputs.findings(tmp_path, allowed) == ["book/a: {'shown': 1}"]
    assert raw_outputs.main([str(tmp_path)]) == 1
