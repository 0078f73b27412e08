"""The autograder bundle: everything grading needs, as frozen dataclasses saved as JSON.

- :class:`CheckSpec`     one check: its source, points, visibility;
- :class:`ExerciseSpec`  an exercise: the names its answer defines (``required``: those the
  statement asks for), its checks, and a digest of its solution's answer lines (to flag a
  submission that is the solution line for line, without the bundle holding the solution),
  and its answer cells as the student edition gives them (``templates``: the given lines a
  returned cell is restored to, :mod:`curvgrade.scaffold`);
- :class:`Bundle`        the chapter: its exercises, the given code cells of the student
  edition (``given``, restored before a submission runs) and the ``layout`` of the student
  edition (``given:<k>``, ``answer:<label>``, ``checks:<label>`` in order), and the
  exercises without checks (``manual``: written answers, graded by hand).

The bundle holds check sources (hidden ones too), never solutions: it stays with the grader.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path

BUNDLE_FORMAT = "curvlab-classroom-autograder/2"


@dataclass(frozen=True)
class CheckSpec:
    """One check of an exercise: ``points`` earned when ``source`` runs without an error."""

    exercise: str
    number: int
    points: int | float
    what: str
    hidden: bool
    source: str

    @property
    def key(self) -> str:
        """A stable name for the check, ``<exercise-label>#<number>``."""
        return f"{self.exercise}#{self.number}"

    def spec(self) -> CheckSpec:
        """This check as the bundle holds it (a subclass's extra fields left out)."""
        return CheckSpec(**{item.name: getattr(self, item.name) for item in fields(CheckSpec)})


@dataclass(frozen=True)
class ExerciseSpec:
    """An exercise as graded: answer names, checks, and the digest of its solution lines."""

    label: str
    title: str
    names: tuple[str, ...]
    required: tuple[str, ...]
    checks: tuple[CheckSpec, ...]
    solution_sha256: str
    scaffold: tuple[str, ...] = ()
    templates: tuple[str, ...] = ()  # the student edition's answer cells, in order

    @property
    def points(self) -> int | float:
        """The sum of the points of the checks."""
        return sum(check.points for check in self.checks)


@dataclass(frozen=True)
class Bundle:
    """A chapter's autograder bundle (see the module docstring)."""

    chapter: str
    title: str
    source_sha256: str
    exercises: tuple[ExerciseSpec, ...]
    given: tuple[str, ...]
    layout: tuple[str, ...]
    manual: tuple[str, ...] = ()
    format: str = BUNDLE_FORMAT

    @property
    def points(self) -> int | float:
        """Total points of the chapter."""
        return sum(exercise.points for exercise in self.exercises)

    @property
    def checks(self) -> tuple[CheckSpec, ...]:
        """Every check, in order."""
        return tuple(check for exercise in self.exercises for check in exercise.checks)

    def exercise(self, label: str) -> ExerciseSpec:
        """The exercise labelled ``label``."""
        for exercise in self.exercises:
            if exercise.label == label:
                return exercise
        raise KeyError(label)

    def to_json(self) -> str:
        """The bundle as JSON text; :meth:`from_json` reads it back."""
        return json.dumps(asdict(self), indent=1, ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, text: str, where: str = "bundle") -> Bundle:
        """Read a bundle written by :meth:`to_json`; ``ValueError`` when it is not one."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise ValueError(f"chapter: {where} is not JSON ({error})") from None
        if not isinstance(data, dict) or data.get("format") != BUNDLE_FORMAT:
            raise ValueError(
                f"chapter: {where} is not an autograder bundle (format {BUNDLE_FORMAT!r})"
            )
        exercises = tuple(
            ExerciseSpec(
                label=item["label"],
                title=item["title"],
                names=tuple(item["names"]),
                required=tuple(item["required"]),
                checks=tuple(CheckSpec(**check) for check in item["checks"]),
                solution_sha256=item["solution_sha256"],
                scaffold=tuple(item.get("scaffold", ())),
                templates=tuple(item.get("templates", ())),
            )
            for item in data["exercises"]
        )
        return cls(
            chapter=data["chapter"],
            title=data["title"],
            source_sha256=data["source_sha256"],
            exercises=exercises,
            given=tuple(data["given"]),
            layout=tuple(data["layout"]),
            manual=tuple(data.get("manual", ())),
        )

    @classmethod
    def read(cls, path: str | Path) -> Bundle:
        """Read the bundle file at ``path``."""
        path = Path(path)
        return cls.from_json(path.read_text(encoding="utf-8"), str(path))


def normalized(source: str) -> str:
    """Source with trailing spaces and surrounding blank lines removed (for comparisons).

    >>> normalized("\\nx = 1   \\n\\n")
    'x = 1'
    """
    return "\n".join(line.rstrip() for line in source.strip("\n").split("\n"))


def answer_digest(lines: list[str]) -> str:
    """SHA-256 of answer lines, stripped, blank and comment-only lines left out.

    >>> answer_digest(["  x = 1", "# note", ""]) == answer_digest(["x = 1"])
    True
    """
    kept = [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]
    return hashlib.sha256("\n".join(kept).encode("utf-8")).hexdigest()
