"""What a study returns: one frozen object, whose files are one method of it.

A :class:`StudyResult` holds a study's tidy tables, each a tuple of flat records, and its
``meta`` (a JSON object).  A study fills what it has; the rest stays empty::

    runs           one record per trained model or measured run   runs.csv
    curves         loss curves, one row per (run, epoch)          loss_curves.csv
    claims         one record per claim, with its verdict         claims.json
    effects        per-task paired differences                    effects.csv
    correlations   correlation records                            correlations.json
    meta           configuration, code version, timings           meta.json

A study may name its files otherwise (``names``: the depth study writes its runs to
``depth.csv``, the pilot its per-budget summary, its curves, to ``pilot_summary.csv``); the
records of one table share their keys.

:meth:`StudyResult.write` writes the nonempty tables and ``meta.json`` into a folder;
:meth:`StudyResult.read` reads them back into an equal result.  A CSV cell is read back as
the value it was written from: empty is None, ``True``/``False`` a bool, then an int, a float
(Python writes floats with the digits that round-trip), else the text.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path

from curvlab.studies import write_csv

__all__ = ["StudyResult"]

_FILES = {
    "runs": "runs.csv",
    "curves": "loss_curves.csv",
    "claims": "claims.json",
    "effects": "effects.csv",
    "correlations": "correlations.json",
    "meta": "meta.json",
}
_JSON = ("claims", "correlations")
_TABLES = ("runs", "curves", "claims", "effects", "correlations")


def _records(name: str, value: Iterable) -> tuple[dict, ...]:
    records = tuple(value)
    for record in records:
        if not isinstance(record, Mapping):
            raise TypeError(f"{name}: expected records (dicts), got {type(record).__name__}")
    return tuple(dict(record) for record in records)


def _cell(text: str):
    if text == "":
        return None
    if text in ("True", "False"):
        return text == "True"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _read_csv(path: Path) -> tuple[dict, ...]:
    with path.open(newline="", encoding="utf-8") as handle:
        return tuple({k: _cell(v) for k, v in row.items()} for row in csv.DictReader(handle))


def _plain(stem: str) -> bool:
    return all(c.isalnum() or c in "-_" for c in stem)


def _write_json(value, path: Path) -> Path:
    path.write_text(json.dumps(value, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    return path


@dataclass(frozen=True)
class StudyResult:
    """A study's results (module docstring): tables of records, ``meta``, and ``names``, the
    file names that differ from the defaults, by field (``{"runs": "depth.csv"}``).

    >>> import tempfile
    >>> result = StudyResult(runs=[{"seed": 0, "accuracy": 0.75, "converged": True}],
    ...                      meta={"scale": "small"})
    >>> with tempfile.TemporaryDirectory() as d:
    ...     paths = result.write(d)
    ...     again = StudyResult.read(d)
    >>> sorted(paths), again == result
    (['meta', 'runs'], True)
    """

    runs: tuple[dict, ...] = ()
    curves: tuple[dict, ...] = ()
    claims: tuple[dict, ...] = ()
    effects: tuple[dict, ...] = ()
    correlations: tuple[dict, ...] = ()
    meta: dict = field(default_factory=dict)
    names: dict = field(default_factory=dict)
    plan_sha256: str | None = None

    def __post_init__(self):
        for name in _TABLES:
            object.__setattr__(self, name, _records(name, getattr(self, name)))
        if not isinstance(self.meta, Mapping):
            raise TypeError(f"meta: expected a mapping, got {type(self.meta).__name__}")
        object.__setattr__(self, "meta", dict(self.meta))
        object.__setattr__(self, "names", dict(self.names))
        for key, name in self.names.items():
            if key not in _FILES:
                raise ValueError(f"names: expected keys from {tuple(_FILES)}, got {key!r}")
            suffix = "." + _FILES[key].rpartition(".")[2]
            stem = name.removesuffix(suffix) if isinstance(name, str) else ""
            if not stem or stem == name or not _plain(stem):
                raise ValueError(f"names: expected a plain file name *{suffix}, got {name!r}")

    def files(self) -> dict[str, str]:
        """The file name of each table (whether or not it is empty), and of ``meta``."""
        return {**_FILES, **self.names}

    def write(self, directory) -> dict[str, Path]:
        """Write the nonempty tables and ``meta.json`` into ``directory`` (created if need be);
        the paths written, by field name."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        names, paths = self.files(), {}
        for name in _TABLES:
            records = getattr(self, name)
            if not records:
                continue
            if name == "claims" and self.plan_sha256 is not None:
                paths[name] = _write_json(self.claims_document(), directory / names[name])
            elif name in _JSON:
                paths[name] = _write_json(list(records), directory / names[name])
            else:
                paths[name] = write_csv(records, directory / names[name])
        paths["meta"] = _write_json(self.meta, directory / names["meta"])
        return paths

    def claims_document(self) -> dict:
        """``claims.json`` of a study analysed under a plan: ``plan_sha256``, ``claims`` (the
        records that name their ``study``: the schema of :mod:`curvlab.analysis.schema`) and
        ``geometric`` (the others: the geometric claims)."""
        if self.plan_sha256 is None:
            raise ValueError("plan_sha256: this result was not analysed under a plan")
        return {
            "plan_sha256": self.plan_sha256,
            "claims": [r for r in self.claims if "study" in r],
            "geometric": [r for r in self.claims if "study" not in r],
        }

    @classmethod
    def read(cls, directory, names: Mapping[str, str] | None = None) -> StudyResult:
        """The result written into ``directory`` by :meth:`write` with these ``names`` (a
        missing table is empty)."""
        directory = Path(directory)
        names = dict(names or {})
        files = cls(names=names).files()
        if not (directory / files["meta"]).is_file():
            raise ValueError(f"directory: no {files['meta']} in {directory}")
        tables = {}
        for name in _TABLES:
            path = directory / files[name]
            if not path.is_file():
                continue
            if name in _JSON:
                tables[name] = json.loads(path.read_text(encoding="utf-8"))
                if name == "claims" and isinstance(tables[name], dict):  # under a plan
                    document = tables[name]
                    tables["plan_sha256"] = document["plan_sha256"]
                    tables[name] = [*document["geometric"], *document["claims"]]
            else:
                tables[name] = _read_csv(path)
        meta = json.loads((directory / files["meta"]).read_text(encoding="utf-8"))
        return cls(**tables, meta=meta, names=names)

    def __repr__(self) -> str:
        sizes = ", ".join(f"{f.name}={len(getattr(self, f.name))}" for f in fields(self)[:5])
        return f"StudyResult({sizes}, meta keys {sorted(self.meta)}, names={self.names!r})"
