"""A returned answer cell put back on its scaffold: the given lines restored, the answer kept.

A scaffolded answer cell of the student edition (:func:`~curvgrade.markup.
placeholder_source`) has given lines (an import, a function signature) and, between
``# BEGIN ANSWER`` and ``# END ANSWER``, the student's answer. :func:`restore_answer` rebuilds
the cell from the original template and the student's answer regions:

- markers intact: the regions between them are the answer; given lines the student edited are
  replaced by the originals (reported);
- markers deleted or unbalanced: the student's lines are aligned with the template's given
  lines (:class:`difflib.SequenceMatcher`); lines matching a given line are given, the others
  are the answer; given lines missing or edited are restored (reported).

Either way the cell that runs has exactly the original given lines.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from . import markup

_MARKER_PAIRS = (markup.ANSWER_MARKERS, (markup.BEGIN_SOLUTION, markup.END_SOLUTION))


@dataclass(frozen=True)
class Restored:
    """The cell to run, its answer lines, and what was restored (empty when untouched)."""

    source: str
    answer: tuple[str, ...]
    problems: tuple[str, ...] = ()


def _template_parts(template: str) -> tuple[str, list[tuple[bool, list[str]]]]:
    header, _, body = template.partition("\n")
    return header, markup.scaffold_parts(body, markup.ANSWER_MARKERS)


def _student_regions(lines: list[str], slots: int) -> tuple[list[list[str]], list[str]] | None:
    """Answer regions and given lines of a cell whose markers are intact, else ``None``."""
    for markers in _MARKER_PAIRS:
        try:
            parts = markup.scaffold_parts("\n".join(lines), markers)
        except ValueError:
            continue
        answers = [part for is_answer, part in parts if is_answer]
        if len(answers) == slots and any(line.strip() == markers[0] for line in lines):
            given = [line for is_answer, part in parts if not is_answer for line in part]
            return answers, given
    return None


def _aligned_regions(
    lines: list[str], parts: list[tuple[bool, list[str]]]
) -> tuple[list[list[str]], list[str]]:
    """Answer regions of a cell without usable markers: its lines no given line matches."""
    markers = {marker for pair in _MARKER_PAIRS for marker in pair}
    lines = [line for line in lines if line.strip() not in markers]
    template: list[str | None] = []  # given lines (stripped), None for an answer slot
    for is_answer, part in parts:
        template.extend([None] if is_answer else [line.strip() for line in part])
    slot_at = [index for index, line in enumerate(template) if line is None]
    answers: list[list[str]] = [[] for _ in slot_at]
    matched: list[str] = []
    stripped = [line.strip() for line in lines]
    opcodes = difflib.SequenceMatcher(None, template, stripped, autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            matched.extend(lines[j1:j2])
            continue
        if j1 == j2:
            continue
        inside = [k for k, at in enumerate(slot_at) if i1 <= at < max(i2, i1 + 1)]
        before = [k for k, at in enumerate(slot_at) if at < i1]
        slot = inside[0] if inside else (before[-1] if before else 0)
        answers[slot].extend(line for line in lines[j1:j2] if line.strip())
    return answers, matched


def restore_answer(label: str, template: str, source: str) -> Restored:
    """The student's answer cell ``source`` rebuilt on its student-edition ``template``.

    >>> template = (
    ...     "# ANSWER ex-f: ...\\ndef f(x):\\n    # BEGIN ANSWER\\n    raise NotImplementedError\\n"
    ...     "    # END ANSWER")
    >>> edited = template.replace("def f(x):", "def f(x, y=1):").replace(
    ...     "    raise NotImplementedError", "    return 2 * x")
    >>> restored = restore_answer("ex-f", template, edited)
    >>> print(restored.source)
    # ANSWER ex-f: ...
    def f(x):
        # BEGIN ANSWER
        return 2 * x
        # END ANSWER
    >>> restored.problems
    ('ex-f: given lines of the answer cell edited or deleted (graded with the originals)',)
    >>> restore_answer("ex-f", template, "# ANSWER ex-f\\ndef f(x):\\n    return x").problems
    ()
    """
    header, parts = _template_parts(template)
    slots = sum(is_answer for is_answer, _ in parts)
    if slots == len(parts):  # no given line: the whole cell is the answer
        return Restored(source, tuple(source.split("\n")[1:]))
    lines = source.split("\n")
    if markup.answer_label(source) is not None:
        lines = lines[1:]
    found = _student_regions(lines, slots)
    answers, given = found if found is not None else _aligned_regions(lines, parts)
    original = [line for is_answer, part in parts if not is_answer for line in part]
    problems = ()
    if [line.rstrip() for line in given] != [line.rstrip() for line in original]:
        problems = (
            f"{label}: given lines of the answer cell edited or deleted "
            "(graded with the originals)",
        )
    rebuilt = [header]
    regions = iter(answers)
    answer_lines: list[str] = []
    for is_answer, part in parts:
        if not is_answer:
            rebuilt.extend(part)
            continue
        region = next(regions)
        indent = part[0][: len(part[0]) - len(part[0].lstrip())] if part else ""
        rebuilt.extend([indent + markup.BEGIN_ANSWER, *region, indent + markup.END_ANSWER])
        answer_lines.extend(region)
    return Restored("\n".join(rebuilt), tuple(answer_lines), problems)
