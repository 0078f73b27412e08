"""Gradescope's autograder: the zip, its results.json, and its rehearsal against ``grade``.

Without a sandbox: every ``results.json`` follows Gradescope's specification (:data:`SCHEMA`,
checked by :func:`schema_problems`: jsonschema is not among the pins), a hidden check's source
or description never reaches a test or an output students see at once, a submission without
exactly one notebook or naming no chapter of the zip is refused with the reason, and a wheel
carrying a chapter is refused. Slow: the zip, with the real wheel, holds no line of any
solution and leaves no ``build/`` behind. Slow and sandboxed (skipped without a sandbox
unless CI is set): the rehearsal of the zip gives every sample notebook of the fixture chapter
(right and honest wrong work, the instructor edition, the book's notebook, attacks) and the
solution and honest wrong work of fisher-rao exactly the points, status and flags
``curvgrade grade`` gives them.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import shutil
import sys
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest

from curvgrade import gradescope, markup, read_chapter
from curvgrade.cli import main
from curvgrade.editions import autograder_bundle, instructor_notebook, leaked_solution_lines
from curvgrade.results import CheckResult, SubmissionResult
from curvgrade.sandbox import sandbox_problem

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"
SPHERE = FIXTURES / "sphere-demo.md"
TINY = FIXTURES / "tiny.md"
FISHER = ROOT / "book" / "geometry" / "fisher-rao.md"
# Skipped on a machine without a sandbox, never in CI (CI installs bubblewrap).
needs_sandbox = pytest.mark.skipif(
    sandbox_problem() is not None and not os.environ.get("CI"),
    reason=f"no sandbox here: {sandbox_problem()}",
)
VISIBILITY = {"enum": list(gradescope.VISIBILITIES)}
FORMATS = {"enum": ["text", "html", "simple_format", "md", "ansi"]}
NUMBER = {"type": "number"}
TEST = {
    "type": "object",
    "required": ["name", "score", "max_score", "output", "visibility"],
    "additionalProperties": False,
    "properties": {
        "score": NUMBER,
        "max_score": {"type": "number", "minimum": 0},
        "status": {"enum": ["passed", "failed"]},
        "name": {"type": "string"},
        "name_format": FORMATS,
        "number": {"type": "string"},
        "output": {"type": "string"},
        "output_format": FORMATS,
        "tags": {"type": "array", "items": {"type": "string"}},
        "visibility": VISIBILITY,
        "extra_data": {"type": "object"},
    },
}
SCHEMA = {  # Gradescope's results.json, as its autograder specification gives it
    "type": "object",
    "required": ["score", "execution_time", "output", "visibility", "stdout_visibility", "tests"],
    "additionalProperties": False,
    "properties": {
        "score": NUMBER,
        "execution_time": {"type": "number", "minimum": 0},
        "output": {"type": "string"},
        "output_format": FORMATS,
        "test_output_format": FORMATS,
        "test_name_format": FORMATS,
        "visibility": VISIBILITY,
        "stdout_visibility": VISIBILITY,
        "extra_data": {"type": "object"},
        "tests": {"type": "array", "items": TEST},
        "leaderboard": {"type": "array", "items": {"type": "object"}},
    },
}


def schema_problems(data, schema: dict = SCHEMA, where: str = "results") -> list[str]:
    """Where ``data`` breaks ``schema``: the JSON Schema keywords :data:`SCHEMA` uses."""
    kinds = {
        "object": dict,
        "array": list,
        "string": str,
        "number": (int, float),
    }
    found = []
    if "type" in schema:
        kind = kinds[schema["type"]]
        if not isinstance(data, kind) or (schema["type"] == "number" and isinstance(data, bool)):
            return [f"{where}: expected {schema['type']}, got {type(data).__name__}"]
    if "enum" in schema and data not in schema["enum"]:
        found.append(f"{where}: {data!r} is not one of {schema['enum']}")
    if "minimum" in schema and data < schema["minimum"]:
        found.append(f"{where}: {data} is below {schema['minimum']}")
    if isinstance(data, dict):
        found += [f"{where}: no {key!r}" for key in schema.get("required", []) if key not in data]
        properties = schema.get("properties", {})
        for key, value in data.items():
            if key in properties:
                found += schema_problems(value, properties[key], f"{where}.{key}")
            elif schema.get("additionalProperties") is False:
                found.append(f"{where}: unknown field {key!r}")
    if isinstance(data, list) and "items" in schema:
        for index, item in enumerate(data):
            found += schema_problems(item, schema["items"], f"{where}[{index}]")
    return found


def hidden_leaks(bundle, data: dict) -> list[str]:
    """Hidden checks' descriptions and source lines found in what students see at once."""
    shown = [data["output"]] + [
        text
        for test in data["tests"]
        if test["visibility"] == "visible"
        for text in (test["name"], test["output"])
    ]
    public = {
        line.strip()
        for check in bundle.checks
        if not check.hidden
        for line in check.source.split("\n")
    }
    found = []
    for check in bundle.checks:
        if not check.hidden:
            continue
        pieces = [check.what] + [
            line.strip()
            for line in check.source.split("\n")[1:]
            if len(line.strip()) > 12 and line.strip() not in public
        ]
        found += [piece for piece in pieces if any(piece in text for text in shown)]
    return found


def _module(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


SAMPLES = _module("sample_submissions", FIXTURES / "sample_submissions.py")


@pytest.fixture(scope="module")
def fake_wheel(tmp_path_factory) -> Path:
    """A wheel of the right shape (grading in these tests runs the installed grader)."""
    wheel = tmp_path_factory.mktemp("wheel") / "curvlab-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("curvgrade/__init__.py", "")
        archive.writestr("curvlab-0.1.0.dist-info/METADATA", "Name: curvlab\n")
    return wheel


def _bundle(chapter: Path):
    return autograder_bundle(read_chapter(chapter))


def _root(zip_path: Path, folder: Path) -> Path:
    """``folder`` laid out as Gradescope's /autograder, the zip unpacked in ``source/``."""
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(folder / "source")
    (folder / "submission").mkdir()
    return folder


@pytest.fixture(scope="module")
def editions(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("editions")
    for chapter in (SPHERE, TINY):
        assert main(["student", str(chapter), "--out", str(out)]) == 0
    return out


def _result(bundle, passed: set, **fields) -> SubmissionResult:
    result = SubmissionResult(student="alice", path=Path("alice.ipynb"), **fields)
    result.checks = [
        CheckResult(c.exercise, c.number, c.points, c.what, c.hidden, c.key in passed, "x")
        for c in bundle.checks
    ]
    for check in result.checks:
        check.reason = "passed" if check.passed else "AssertionError"
    return result


def test_the_schema_check_refuses_what_gradescope_would_not_read():
    good = {
        "score": 1,
        "execution_time": 3,
        "output": "",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [{"name": "a", "score": 1, "max_score": 1, "output": "", "visibility": "visible"}],
    }
    assert schema_problems(good) == []
    for broken, expected in [
        ({**good, "score": "1"}, "results.score: expected number"),
        ({**good, "visibility": "public"}, "is not one of"),
        ({**good, "total": 1}, "unknown field 'total'"),
        ({**good, "tests": [{**good["tests"][0], "visibility": "later"}]}, "tests[0].visibility"),
        ({**good, "tests": [{"name": "a"}]}, "no 'max_score'"),
        ({**good, "tests": [{**good["tests"][0], "status": "ok"}]}, "tests[0].status"),
    ]:
        assert any(expected in problem for problem in schema_problems(broken)), expected


def test_results_follow_the_specification_and_hide_the_hidden_checks():
    bundle = _bundle(SPHERE)
    public = {c.key for c in bundle.checks if not c.hidden}
    result = _result(bundle, public, written={"ex-sphere-demo-sign": "It is positive."})
    data = gradescope.results(bundle, result)
    assert schema_problems(data) == []
    assert data["score"] == result.total == sum(test["score"] for test in data["tests"])
    assert hidden_leaks(bundle, data) == []
    by_name = {test["name"]: test for test in data["tests"]}
    for check in bundle.checks:
        tests = [t for t in data["tests"] if t["number"].endswith(f".{check.number}")]
        test = next(t for t in tests if check.exercise in t["tags"])
        assert test["max_score"] == check.points
        assert test["visibility"] == ("after_published" if check.hidden else "visible")
        assert (check.what in test["name"]) == (not check.hidden)
    written = by_name["Written exercise (ex-sphere-demo-sign): graded by hand"]
    assert (written["score"], written["max_score"]) == (0, 0)
    assert "was found" in written["output"]


def test_withheld_points_count_zero_in_every_test_and_the_flags_are_in_the_output():
    bundle = _bundle(SPHERE)
    result = _result(bundle, {c.key for c in bundle.checks})
    result.flags.append("instructor-edition")
    result.flag("flagged", "the notebook's metadata says it is the instructor edition")
    result.withheld = True
    data = gradescope.results(bundle, result)
    assert schema_problems(data) == []
    assert data["score"] == 0 and all(test["score"] == 0 for test in data["tests"])
    assert all(t["status"] == "passed" for t in data["tests"] if "status" in t)
    assert "Flags: instructor-edition" in data["output"]
    assert "instructor edition" in data["output"] and "flagged" in data["output"]


def test_the_zip_holds_the_scripts_the_pins_the_wheel_and_the_bundles(tmp_path, fake_wheel):
    zip_path = gradescope.write_autograder(
        [_bundle(SPHERE), _bundle(TINY)],
        tmp_path / "autograder.zip",
        wheel=fake_wheel,
        timeout=45,
        cell_timeout=8,
    )
    with zipfile.ZipFile(zip_path) as archive:
        names = set(archive.namelist())
        modes = {info.filename: info.external_attr >> 16 for info in archive.infolist()}
        setup = archive.read("setup.sh").decode()
        config = json.loads(archive.read(gradescope.CONFIG))
        bundle = json.loads(archive.read("bundles/sphere-demo.json"))
    assert names == {
        "setup.sh",
        "run_autograder",
        "requirements.txt",
        fake_wheel.name,
        gradescope.CONFIG,
        "bundles/sphere-demo.json",
        "bundles/tiny.json",
    }
    assert modes["setup.sh"] & 0o111 and modes["run_autograder"] & 0o111
    assert "bubblewrap" in setup and "requirements.txt" in setup and "*.whl" in setup
    assert (config["timeout"], config["cell_timeout"]) == (45, 8)
    assert bundle == json.loads(_bundle(SPHERE).to_json())
    again = gradescope.write_autograder(
        [_bundle(SPHERE), _bundle(TINY)],
        tmp_path / "again.zip",
        wheel=fake_wheel,
        timeout=45,
        cell_timeout=8,
    )
    assert again.read_bytes() == zip_path.read_bytes()  # the same zip from the same chapters


def test_a_wheel_carrying_a_chapter_is_refused(tmp_path, fake_wheel):
    spoiled = tmp_path / fake_wheel.name
    shutil.copy(fake_wheel, spoiled)
    with zipfile.ZipFile(spoiled, "a") as archive:
        archive.writestr("book/geometry/fisher-rao.md", "# a chapter")
    with pytest.raises(ValueError, match="--wheel: .*book/geometry/fisher-rao.md"):
        gradescope.write_autograder([_bundle(SPHERE)], tmp_path / "a.zip", wheel=spoiled)


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({}, "holds no notebook"),
        (
            {"notes.txt": "hi"},
            "holds no notebook (.ipynb): submit your saved student edition. "
            "(other files, not graded: notes.txt)",
        ),
        (
            {"a.ipynb": "{}", "b/sphere-demo.ipynb": "{}"},
            "holds 2 notebooks (a.ipynb, b/sphere-demo.ipynb)",
        ),
    ],
)
def test_a_submission_without_exactly_one_notebook_is_refused(
    tmp_path, fake_wheel, files, expected
):
    zip_path = gradescope.write_autograder(
        [_bundle(SPHERE)], tmp_path / "autograder.zip", wheel=fake_wheel
    )
    root = _root(zip_path, tmp_path / "autograder")
    for name, text in files.items():
        (root / "submission" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "submission" / name).write_text(text)
    data = gradescope.run(root)
    assert json.loads((root / "results" / "results.json").read_text()) == data
    assert schema_problems(data) == []
    assert expected in data["output"] and data["score"] == 0
    assert len(data["tests"]) == len(_bundle(SPHERE).checks) + 1  # every check, not run
    assert all(test["score"] == 0 for test in data["tests"])


def test_the_chapter_is_the_one_the_metadata_or_the_file_name_names(tmp_path, fake_wheel, editions):
    bundles = {bundle.chapter: bundle for bundle in (_bundle(SPHERE), _bundle(TINY))}
    config = {"max_bytes": 2**20, "max_cells": 100}
    student = editions / "student" / "sphere-demo.ipynb"
    renamed = tmp_path / "homework.ipynb"
    shutil.copy(student, renamed)
    assert gradescope.choose_chapter(renamed, bundles, config).chapter == "sphere-demo"
    stripped = nbformat.read(student, as_version=4)
    stripped.metadata.pop("curvlab")
    nbformat.write(stripped, tmp_path / "tiny.ipynb")
    assert gradescope.choose_chapter(tmp_path / "tiny.ipynb", bundles, config).chapter == "tiny"
    nbformat.write(stripped, tmp_path / "mine.ipynb")
    why = gradescope.choose_chapter(tmp_path / "mine.ipynb", bundles, config)
    assert isinstance(why, str) and "sphere-demo, tiny" in why and "'mine.ipynb'" in why
    zip_path = gradescope.write_autograder(
        list(bundles.values()), tmp_path / "autograder.zip", wheel=fake_wheel
    )
    root = _root(zip_path, tmp_path / "autograder")
    shutil.copy(tmp_path / "mine.ipynb", root / "submission")
    data = gradescope.run(root)
    assert schema_problems(data) == [] and data["score"] == 0 and data["tests"] == []
    assert "names none of them" in data["output"]


def test_a_linked_notebook_is_refused_by_grading(tmp_path, fake_wheel, editions):
    zip_path = gradescope.write_autograder(
        [_bundle(SPHERE)], tmp_path / "autograder.zip", wheel=fake_wheel
    )
    root = _root(zip_path, tmp_path / "autograder")
    os.symlink(editions / "instructor" / "sphere-demo.ipynb", root / "submission" / "a.ipynb")
    data = gradescope.run(root)
    assert schema_problems(data) == []
    assert data["score"] == 0 and data["extra_data"]["status"] == "unreadable"
    assert "a symbolic link, not a file the student wrote" in data["output"]


def test_the_command_line_names_what_is_wrong(tmp_path, capsys):
    assert main(["gradescope"]) == 2
    assert "give chapter files and --out" in capsys.readouterr().err
    assert main(["gradescope", str(SPHERE), "--out", str(tmp_path / "a.tar")]) == 2
    assert "--out: expected the autograder .zip" in capsys.readouterr().err
    assert main(["gradescope", str(SPHERE), "--out", str(tmp_path / "a.zip"), "--timeout", "0"])
    assert "--timeout: expected a positive number" in capsys.readouterr().err
    assert main(["gradescope", "--rehearse", str(SPHERE), str(SPHERE)]) == 2
    assert "BUNDLE: expected an autograder .zip" in capsys.readouterr().err


def _texts(zip_path: Path) -> dict[str, str]:
    """Every file of the zip as text, the wheel's files included."""
    texts = {}
    with zipfile.ZipFile(zip_path) as archive:
        for name in archive.namelist():
            data = archive.read(name)
            if name.endswith(".whl"):
                wheel = zip_path.parent / "inner.whl"
                wheel.write_bytes(data)
                texts.update({f"{name}/{k}": v for k, v in _texts(wheel).items()})
            else:
                texts[name] = data.decode("utf-8", errors="replace")
    return texts


@pytest.mark.slow
def test_the_zip_holds_no_solution_and_a_wheel_of_the_libraries_only(tmp_path):
    build_before = (ROOT / "build").exists()
    zip_path = tmp_path / "autograder.zip"
    assert main(["gradescope", str(FISHER), str(SPHERE), "--out", str(zip_path)]) == 0
    assert (ROOT / "build").exists() == build_before  # built from a copy of the sources
    texts = _texts(zip_path)
    assert any(name.startswith("curvlab-") and "/curvgrade/gradescope.py" in name for name in texts)
    for chapter_path in (FISHER, SPHERE):
        chapter = read_chapter(chapter_path)
        lines = leaked_solution_lines(chapter, instructor_notebook(chapter))
        assert lines, chapter.slug
        found = [(line, name) for line in lines for name, text in texts.items() if line in text]
        assert found == [], chapter.slug
    with zipfile.ZipFile(zip_path) as archive:
        (wheel,) = [name for name in archive.namelist() if name.endswith(".whl")]
        kit = tmp_path / "kit"
        archive.extract(wheel, kit)
        archive.extract("requirements.txt", kit)
    assert gradescope.wheel_problems(kit / wheel) == []
    assert (kit / "requirements.txt").read_bytes() == (ROOT / "requirements.txt").read_bytes()


LIMITS = ["--timeout", "120", "--cell-timeout", "60"]  # for grade and for the zip alike


def _grade_folder(bundle_source: Path, folder: Path, out: Path) -> dict[str, dict]:
    """``curvgrade grade`` on ``folder``: the scores.csv rows by student."""
    status = main(
        ["grade", "--chapter", str(bundle_source), "--submissions", str(folder)]
        + ["--out", str(out / "scores.csv"), *LIMITS, "--jobs", "2"]
    )
    assert status == 0
    with (out / "scores.csv").open(encoding="utf-8") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


def _rehearse_all(zip_path: Path, paths: dict[str, Path]) -> dict[str, dict]:
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {name: pool.submit(gradescope.rehearse, zip_path, p) for name, p in paths.items()}
        return {name: future.result() for name, future in futures.items()}


def _same_as_grade(bundle, data: dict, row: dict) -> None:
    assert schema_problems(data) == []
    assert hidden_leaks(bundle, data) == []
    assert data["score"] == float(row["total"]), (data["output"], row["notes"])
    for exercise in bundle.exercises:
        earned = sum(t["score"] for t in data["tests"] if exercise.label in t["tags"])
        assert earned == float(row[exercise.label]), exercise.label
    assert data["extra_data"]["status"] == row["status"]
    assert set(data["extra_data"]["flags"]) == set(row["flags"].split())


SPHERE_SAMPLES = [
    "right",
    "wrong",
    "attack-instructor-edition",
    "attack-book-notebook",
    "attack-simplify",
]


@pytest.mark.slow
@needs_sandbox
def test_the_rehearsal_gives_the_samples_what_grade_gives_them(tmp_path, editions):
    written = SAMPLES.write_samples(
        editions / "student" / "sphere-demo.ipynb",
        tmp_path / "all",
        instructor=editions / "instructor" / "sphere-demo.ipynb",
        chapter=SPHERE,
    )
    chosen = tmp_path / "submissions"
    chosen.mkdir()
    for name in SPHERE_SAMPLES:
        shutil.copy(written[name], chosen)
    rows = _grade_folder(editions / "autograder" / "sphere-demo.json", chosen, tmp_path / "grades")
    zip_path = tmp_path / "autograder.zip"
    assert main(["gradescope", str(SPHERE), "--out", str(zip_path), *LIMITS]) == 0
    rehearsed = _rehearse_all(zip_path, {name: chosen / f"{name}.ipynb" for name in SPHERE_SAMPLES})
    bundle = _bundle(SPHERE)
    for name, data in rehearsed.items():
        _same_as_grade(bundle, data, rows[name])
        expected = SAMPLES.SAMPLES[name].expected
        assert {label: float(row) for label, row in expected.items()} == {
            label: float(rows[name][label]) for label in expected
        }
    assert rehearsed["right"]["score"] == bundle.points
    assert rehearsed["attack-instructor-edition"]["score"] == 0
    assert "contains-hidden-checks" in rehearsed["attack-book-notebook"]["output"]


def _solved(chapter, student: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The student edition with each answer placeholder replaced by the chapter's solution."""
    answers: dict[str, list[list[str]]] = {}
    for exercise in chapter.graded_exercises:
        for index in exercise.solution_cells:
            source = chapter.notebook.cells[index].source
            parts = [part for is_answer, part in markup.scaffold_parts(source) if is_answer]
            answers.setdefault(exercise.label, []).extend(parts)
    notebook = nbformat.from_dict(json.loads(json.dumps(student)))
    for cell in notebook.cells:
        meta = cell.metadata.get("curvlab", {})
        if meta.get("role") != "answer":
            continue
        lines = []
        for line in cell.source.split("\n"):
            if line.strip().startswith("raise NotImplementedError("):
                lines.extend(answers[meta["exercise"]].pop(0))
            else:
                lines.append(line)
        cell.source = "\n".join(lines)
    assert not any(answers.values())
    return notebook


@pytest.mark.slow
@needs_sandbox
def test_the_rehearsal_grades_fisher_rao_as_grade_does(tmp_path):
    """The issue's measure of done: the solution full marks, honest wrong work as grade."""
    book = _module("grading_book_chapters", Path(__file__).parent / "test_grading_book_chapters.py")
    editions = tmp_path / "editions"
    assert main(["student", str(FISHER), "--out", str(editions)]) == 0
    student = nbformat.read(editions / "student" / "fisher-rao.ipynb", as_version=4)
    chapter = read_chapter(FISHER)
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    nbformat.write(_solved(chapter, student), submissions / "solution.ipynb")
    nbformat.write(SAMPLES.filled(student, book.FISHER_WRONG), submissions / "wrong.ipynb")
    nbformat.write(student, submissions / "unanswered.ipynb")
    rows = _grade_folder(editions / "autograder" / "fisher-rao.json", submissions, tmp_path / "g")
    zip_path = tmp_path / "out" / "autograder.zip"
    assert main(["gradescope", str(FISHER), "--out", str(zip_path), *LIMITS]) == 0
    paths = {name: submissions / f"{name}.ipynb" for name in rows}
    rehearsed = _rehearse_all(zip_path, paths)
    bundle = _bundle(FISHER)
    for name, data in rehearsed.items():
        _same_as_grade(bundle, data, rows[name])
    assert rehearsed["solution"]["score"] == bundle.points
    assert any(
        f.startswith("matches-solution:") for f in rehearsed["solution"]["extra_data"]["flags"]
    )
    assert rehearsed["wrong"]["score"] == 2 and rehearsed["unanswered"]["score"] == 0
