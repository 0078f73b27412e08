"""The decision records (docs/decisions/) hold the project's history: every record has its three
sections and a row in the index, the index names no record that is missing, and every
``docs/decisions/....md`` path that the code, BUILDING.md or the README names exists."""

import re
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
DECISIONS = REPOSITORY / "docs" / "decisions"
RECORD = re.compile(r"^\d{4}-[a-z0-9]+(?:-[a-z0-9]+)*\.md$")
SECTIONS = ("Context", "Decision", "Consequences")
MENTION = re.compile(r"docs/decisions/[\w.-]+\.md")
# Where the history is pointed at from: the library's code and the two front documents.
POINTERS = ("README.md", "BUILDING.md")


def records() -> list[Path]:
    return sorted(p for p in DECISIONS.glob("*.md") if RECORD.match(p.name))


def missing_sections(text: str) -> list[str]:
    """The sections of ``SECTIONS`` that a record's text has no ``## `` heading for (a heading
    counts when it starts with the section's name: "Consequences and the numbers")."""
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    return [s for s in SECTIONS if not any(h.strip().startswith(s) for h in headings)]


def indexed(readme: str) -> set[str]:
    """The record files linked from a row of the index table of the README."""
    rows = [line for line in readme.splitlines() if line.startswith("|")]
    return {name for row in rows for name in re.findall(r"\]\(([^)#\s]+\.md)\)", row)}


def mentions(text: str) -> set[str]:
    """The ``docs/decisions/....md`` paths a text names."""
    return set(MENTION.findall(text))


def _pointer_texts() -> dict[str, str]:
    texts = {name: (REPOSITORY / name).read_text(encoding="utf-8") for name in POINTERS}
    for path in sorted((REPOSITORY / "src").rglob("*.py")):
        texts[str(path.relative_to(REPOSITORY))] = path.read_text(encoding="utf-8")
    return texts


def test_there_are_records_and_an_index():
    assert (DECISIONS / "README.md").is_file()
    assert records(), "docs/decisions holds no record"
    odd = [
        p.name for p in DECISIONS.glob("*.md") if p.name != "README.md" and not RECORD.match(p.name)
    ]
    assert not odd, f"not named NNNN-short-title.md: {odd}"


def test_every_record_has_its_three_sections_and_a_unique_number():
    broken = {}
    for path in records():
        text = path.read_text(encoding="utf-8")
        if not text.startswith(f"# {path.name[:4]}. "):
            broken[path.name] = "title is not '# NNNN. ...'"
        elif missing_sections(text):
            broken[path.name] = f"no section {missing_sections(text)}"
    assert not broken, broken
    numbers = [p.name[:4] for p in records()]
    assert len(set(numbers)) == len(numbers), f"a number used twice: {numbers}"


def test_the_index_lists_every_record_and_only_records():
    listed = indexed((DECISIONS / "README.md").read_text(encoding="utf-8"))
    names = {p.name for p in records()}
    assert names - listed == set(), f"records missing from the index: {sorted(names - listed)}"
    assert listed - names == set(), f"index rows with no record: {sorted(listed - names)}"


def test_every_record_named_in_the_code_and_the_documents_exists():
    dead = {}
    for name, text in _pointer_texts().items():
        missing = sorted(m for m in mentions(text) if not (REPOSITORY / m).is_file())
        if missing:
            dead[name] = missing
    assert not dead, f"decision records named but missing: {dead}"


def test_the_checks_catch_a_missing_section_an_unindexed_record_and_a_dead_path():
    record = "# 0099. A title\n\n## Context\n\nx\n\n## Consequences and the numbers\n\ny\n"
    assert missing_sections(record) == ["Decision"]
    readme = "| [0001](0001-a.md) | a | 2026 |\n\nSee [0002](0002-b.md) in prose.\n"
    assert indexed(readme) == {"0001-a.md"}
    text = "the timings: docs/decisions/0005-x.md), and `docs/decisions/README.md`."
    assert mentions(text) == {"docs/decisions/0005-x.md", "docs/decisions/README.md"}
