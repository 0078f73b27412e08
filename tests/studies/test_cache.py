"""Laws of the experiments' plumbing: the on-disk cache keyed by configuration and by the code
of the study's import closure, and the CSV writer of tidy records."""

import json

import pytest

import curvlab.studies.cache as cache_module
from curvlab.studies import write_csv
from curvlab.studies.cache import cache_dir, cache_key, cached, code_version, import_closure

TASKS = "curvlab.data.tasks"


@pytest.fixture
def edited(monkeypatch):
    """``edit(module, old, new)``: the cache reads ``module`` with ``old`` replaced by ``new``
    (its file is untouched); what the process remembered of the sources is forgotten."""
    reader = cache_module._source
    edits = {}

    def source(name):
        text = reader(name)
        for old, new in edits.get(name, ()):
            assert old in text, f"{old!r} is not in {name}"
            text = text.replace(old, new, 1)
        return text

    def edit(module, old, new):
        edits.setdefault(module, []).append((old, new))
        cache_module._forget()

    monkeypatch.setattr(cache_module, "_source", source)
    cache_module._forget()
    yield edit
    cache_module._forget()


def test_cache_hits_on_the_same_config_and_misses_on_a_changed_one(tmp_path):
    calls = []

    def compute(config):
        calls.append(config)
        return {"value": config["x"] * 2}

    kwargs = {"name": "t", "entry": TASKS, "directory": tmp_path}
    assert cached(compute, {"x": 1}, **kwargs) == {"value": 2}
    assert cached(compute, {"x": 1}, **kwargs) == {"value": 2}
    assert len(calls) == 1
    assert cached(compute, {"x": 2}, **kwargs) == {"value": 4}
    assert len(calls) == 2
    assert cached(compute, {"x": 1}, refresh=True, **kwargs) == {"value": 2}
    assert len(calls) == 3
    stored = json.loads(next(tmp_path.glob("t-*.json")).read_text())
    assert set(stored) == {"config", "result"}


def test_the_closure_follows_imports_at_any_depth_and_inside_functions():
    cells = import_closure("curvlab.studies.cells")
    # cells -> measurement.sheets -> geometry.measures -> geometry.quadrature, and the point map
    assert {"curvlab.geometry.quadrature", "curvlab.models.point_map"} <= set(cells)
    assert {"curvlab", "curvlab.models", "curvlab.geometry"} <= set(cells)  # the packages run
    assert all(name.startswith("curvlab") for name in cells)
    # curved_ungated_slice imports the symbolic attention maps inside the function
    assert "curvlab.symbolic.attention_maps" in import_closure("curvlab.studies.input_slices")
    assert "curvlab.plotting" not in import_closure("curvlab.studies.depth")
    with pytest.raises(ValueError, match="entry"):
        import_closure("numpy")


@pytest.mark.parametrize(
    ("entry", "module"),
    [
        ("curvlab.studies.cells", "curvlab.geometry.quadrature"),
        ("curvlab.studies.cells", "curvlab.models.point_map"),
        ("curvlab.studies.depth", "curvlab.geometry.quadrature"),
        ("curvlab.studies.poole", "curvlab.geometry.gauss_equation"),
    ],
)
def test_a_code_edit_in_any_imported_module_changes_the_key(edited, entry, module):
    before = cache_key({"x": 1}, entry)
    future = "\nfrom __future__ import annotations\n"
    edited(module, future, future + "X = 1\n")
    assert cache_key({"x": 1}, entry) != before


def test_a_comment_docstring_or_layout_edit_keeps_the_key(edited):
    entry, module = "curvlab.studies.cells", "curvlab.geometry.quadrature"
    before = code_version(entry)
    edited(module, '"""', '"""The module docstring, rewritten. ')
    edited(module, '    """A box patch', '    """A function docstring, rewritten: a box patch')
    edited(module, "def as_patch(patch)", "# a comment\n\n\ndef as_patch(  patch  )")
    assert code_version(entry) == before


def test_cached_keys_a_curvlab_function_by_its_own_module_and_refuses_a_foreign_one(tmp_path):
    with pytest.raises(ValueError, match="entry"):
        cached(lambda c: 1, {}, name="t", directory=tmp_path)
    assert cached(lambda c: 1, {}, name="t", entry=TASKS, directory=tmp_path) == 1


def test_cache_misses_when_the_code_changes(tmp_path, edited):
    calls = []

    def compute(config):
        calls.append(1)
        return len(calls)

    kwargs = {"name": "t", "entry": "curvlab.studies.cells", "directory": tmp_path}
    assert cached(compute, {}, **kwargs) == 1
    edited("curvlab.models.point_map", "\nfrom __future__ import annotations\n", "\nY = 2\n")
    assert cached(compute, {}, **kwargs) == 2
    assert cached(compute, {}, **kwargs) == 2


def test_code_version_depends_on_the_closure_of_the_entry():
    assert code_version(TASKS) != code_version("curvlab.models.attention")
    assert cache_key({"a": [1, 2]}, TASKS) != cache_key({"a": [2, 1]}, TASKS)


def test_cache_directory_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("CURVLAB_CACHE", str(tmp_path / "here"))
    assert cache_dir() == tmp_path / "here"
    monkeypatch.delenv("CURVLAB_CACHE")
    assert cache_dir().name == ".curvlab-cache"


def test_cache_rejects_configs_that_are_not_json():
    with pytest.raises(TypeError, match="config"):
        cache_key({"x": object()}, TASKS)
    with pytest.raises(TypeError, match="config"):
        cache_key({"x": float("nan")}, TASKS)


def test_write_csv_round_trips_the_columns(tmp_path):
    path = write_csv(
        [{"task": "xor", "accuracy": 0.5}, {"task": "moons", "loss": 1.0}], tmp_path / "out.csv"
    )
    lines = path.read_text().splitlines()
    assert lines[0] == "task,accuracy,loss" and len(lines) == 3


def test_a_read_only_cache_returns_the_result_with_a_warning(tmp_path, monkeypatch):
    from curvlab.studies import cache

    def refuse(*args, **kwargs):
        raise PermissionError("read-only file system")

    monkeypatch.setattr(cache.tempfile, "NamedTemporaryFile", refuse)
    with pytest.warns(UserWarning, match="not writable"):
        got = cache.cached(
            lambda c: {"x": c["x"] + 1},
            {"x": 1},
            name="ro",
            entry="curvlab.data.tasks",
            directory=tmp_path,
        )
    assert got == {"x": 2} and not list(tmp_path.glob("ro-*.json"))
