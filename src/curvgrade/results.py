"""A submission's grade as data: each check's outcome, a status, flags and notes, and what the
class adds (written answers, manual scores, the roster entry, lateness).

:class:`SubmissionResult` is what :func:`curvgrade.grading.grade_notebook` returns, what the
reports read (:mod:`curvgrade.reports`) and what ``results.json`` saves
(:meth:`~SubmissionResult.to_dict`) for ``grade --only`` to read back. A status only rises,
in the order of :data:`STATUS_ORDER`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

STATUS_ORDER = ("ok", "flagged", "tampered", "timeout", "crashed", "unreadable", "missing")


@dataclass
class CheckResult:
    """The outcome of one check for one submission."""

    exercise: str
    number: int
    points: int | float
    what: str
    hidden: bool
    passed: bool = False
    reason: str = "not run"

    @property
    def earned(self) -> int | float:
        """Points earned: all of them when the check passed, none otherwise."""
        return self.points if self.passed else 0


@dataclass
class SubmissionResult:
    """The grade of one returned notebook: per-check results, a status, flags and notes."""

    student: str
    path: Path
    checks: list[CheckResult] = field(default_factory=list)
    status: str = "ok"
    notes: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    answer_errors: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    withheld: bool = False  # a copy of the instructor edition or the book's notebook
    written: dict[str, str] = field(default_factory=dict)  # written answers, by exercise
    manual: dict[str, float] = field(default_factory=dict)  # the instructor's scores of them
    identity: dict[str, str] | None = None  # the roster entry (None: not in a roster)
    submitted: str | None = None  # ISO time the submission was made (roster or file)
    late_days: int = 0
    late_share: float = 0.0  # share of the points the late policy takes

    def to_dict(self) -> dict:
        """This result as JSON data (``results.json``, read back by :meth:`from_dict`)."""
        from dataclasses import asdict

        data = asdict(self)
        data["path"] = str(self.path)
        return data

    @classmethod
    def from_dict(cls, data: dict) -> SubmissionResult:
        """A result saved by :meth:`to_dict`."""
        data = dict(data)
        data["path"] = Path(data["path"])
        data["checks"] = [CheckResult(**check) for check in data.get("checks", [])]
        return cls(**data)

    def flag(self, status: str, note: str) -> None:
        """Record ``note`` and raise the status to ``status`` if that is more severe."""
        self.notes.append(note)
        if STATUS_ORDER.index(status) > STATUS_ORDER.index(self.status):
            self.status = status

    def score(self, exercise: str) -> int | float:
        """Points earned on ``exercise`` (none while withheld: see :attr:`withheld`)."""
        if self.withheld:
            return 0
        return sum(check.earned for check in self.checks if check.exercise == exercise)

    @property
    def auto(self) -> int | float:
        """Points the checks gave on the whole chapter (none while withheld)."""
        if self.withheld:
            return 0
        return sum(check.earned for check in self.checks)

    @property
    def penalty(self) -> int | float:
        """Points the late policy takes: its share of the checks' and the manual points."""
        if not self.late_share:
            return 0
        return round((self.auto + sum(self.manual.values())) * self.late_share, 6)

    @property
    def total(self) -> int | float:
        """The grade: the checks' points and the manual scores, less the late penalty."""
        if self.withheld:
            return 0
        earned = self.auto + sum(self.manual.values())
        return round(earned - self.penalty, 6) if self.penalty else earned
