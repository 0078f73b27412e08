"""A class around the grades: roster, deadline and late policy, manual scores, LMS exports.

- :func:`read_roster`: ``--roster FILE.csv`` maps submission files to LMS identities. Columns
  (header names compared without case, spaces or underscores): ``file`` (the submission's
  path under the submissions folder, ``alice.ipynb`` or ``alice/``, or its student name,
  ``alice``), ``name``, and optionally ``id`` (Canvas user id), ``sis_user_id``,
  ``sis_login_id``, ``section``, ``email``, ``sid`` and ``submitted`` (the submission time the
  LMS recorded, ISO 8601). A file matches an entry only when its path or student name is
  exactly the entry's ``file``: no case folding, no Unicode normalisation, nothing read from
  the notebook. A file that matches no entry is graded but flagged ``not-in-roster`` and left
  out of the exports; two files for one entry are both flagged ``duplicate-submission`` and
  that student's export cell is left blank; an entry without a file gets a ``missing`` row.
- :class:`LatePolicy`: ``--deadline`` and ``--late-policy`` (``none``, ``zero``, or
  ``P%/day`` with optional ``,max=Nd`` (zero after N days) and ``,grace=Mm``); the
  submission time is the roster's ``submitted`` when given, else the file's modification time.
- :func:`read_manual`: ``--manual FILE.csv``, scores of the written exercises, one row per
  student (the ``manual:<label>`` columns of ``scores.csv``, or ``written.csv``), and a row
  whose student is :data:`POSSIBLE_ROW`, ``(possible)/``, giving each written exercise's
  points: no student can have that name (a student is named by a path under the submissions
  folder, which never ends with ``/``). Names are read back as written (:func:`uncell` undoes
  :func:`cell`); a name twice, or one that names no student, is refused.
- :func:`write_canvas` and :func:`write_gradescope`: the LMS import files (see each).
"""

from __future__ import annotations

import csv
import math
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROSTER_COLUMNS = (
    "file",
    "name",
    "id",
    "sis_user_id",
    "sis_login_id",
    "section",
    "email",
    "sid",
    "submitted",
)
POSSIBLE_ROW = "(possible)/"
"""The student cell of the possible-points row of a manual-score sheet: a name no file can
give (student names are paths under the submissions folder, and none ends with ``/``)."""


def _key(header: str) -> str:
    return re.sub(r"[\s_]+", "_", header.strip().lower())


def cell(value: object) -> str:
    """A CSV cell that a spreadsheet will not read as a formula (CSV injection): text that
    starts like one (``=``, ``+``, ``-``, ``@``, a tab, a carriage return), or with the quote
    ``'`` itself, gets a leading ``'``, so that :func:`uncell` gives every text back.

    >>> cell("=HYPERLINK(1)"), cell("alice"), cell(3), cell("'@x")
    ("'=HYPERLINK(1)", 'alice', '3', "''@x")
    """
    text = str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r", "'") else text


def uncell(text: str) -> str:
    """The text that :func:`cell` wrote as ``text``: its leading ``'``, if any, taken off.

    >>> [uncell(cell(text)) for text in ("@bob", "'@bob", "alice", "-1")]
    ['@bob', "'@bob", 'alice', '-1']
    """
    return text[1:] if text.startswith("'") else text


def read_roster(path: str | Path) -> list[dict[str, str]]:
    """The roster's entries (dicts keyed by :data:`ROSTER_COLUMNS`); ``ValueError`` if bad.

    >>> import tempfile
    >>> roster = Path(tempfile.mkdtemp()) / "roster.csv"
    >>> _ = roster.write_text("File,Name,SIS User ID\\nalice.ipynb,Alice A,s1\\n")
    >>> read_roster(roster)[0]["sis_user_id"]
    's1'
    """
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            rows = list(csv.reader(handle))
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"--roster: cannot read {path} ({type(error).__name__})") from None
    if not rows:
        raise ValueError(f"--roster: {path} is empty")
    header = [_key(name) for name in rows[0]]
    if "file" not in header or "name" not in header:
        raise ValueError(f"--roster: {path} needs the columns 'file' and 'name'")
    entries, seen = [], set()
    for number, row in enumerate(rows[1:], start=2):
        if not any(value.strip() for value in row):
            continue
        entry = {column: "" for column in ROSTER_COLUMNS}
        for name, value in zip(header, row, strict=False):
            if name in entry:
                entry[name] = value.strip()
        if not entry["file"]:
            raise ValueError(f"--roster: line {number} of {path} has no file")
        if entry["file"] in seen:
            raise ValueError(f"--roster: {entry['file']!r} appears twice in {path}")
        if entry["submitted"]:
            parse_time(entry["submitted"], f"--roster line {number}: submitted")
        seen.add(entry["file"])
        entries.append(entry)
    return entries


def roster_entry(roster: list[dict], relative: str, student: str) -> dict | None:
    """The entry whose ``file`` is exactly ``relative`` (the path), its folder, or ``student``.

    >>> roster = [{"file": "alice.ipynb"}, {"file": "bob"}]
    >>> roster_entry(roster, "alice.ipynb", "alice")["file"], roster_entry(roster, "Alice.ipynb",
    ...     "Alice"), roster_entry(roster, "bob/fisher-rao.ipynb", "bob")["file"]
    ('alice.ipynb', None, 'bob')
    """
    candidates = {relative, student, relative.split("/", 1)[0] + "/"}
    for entry in roster:
        if entry["file"] in candidates or entry["file"].rstrip("/") == student:
            return entry
    return None


def parse_time(text: str, what: str) -> datetime:
    """An ISO 8601 time; a time without zone is local time.

    >>> parse_time("2026-05-01T23:59+02:00", "t").isoformat()
    '2026-05-01T23:59:00+02:00'
    """
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(
            f"{what}: expected an ISO 8601 time (2026-05-01T23:59), got {text!r}"
        ) from None
    return moment if moment.tzinfo else moment.astimezone()


@dataclass(frozen=True)
class LatePolicy:
    """What lateness costs: a share of the points per started day, a grace period, a cut-off.

    >>> policy = LatePolicy.parse("10%/day,max=3d,grace=15m")
    >>> deadline = parse_time("2026-05-01T12:00+00:00", "d")
    >>> [policy.penalty(deadline, deadline + timedelta(hours=h)) for h in (0.2, 1, 25, 80)]
    [(0, 0.0), (1, 0.1), (2, 0.2), (4, 1.0)]
    >>> LatePolicy.parse("zero").penalty(deadline, deadline + timedelta(minutes=1))
    (1, 1.0)
    """

    per_day: float = 0.0
    max_days: float | None = None
    grace: timedelta = timedelta(0)
    text: str = "none"

    @classmethod
    def parse(cls, text: str) -> LatePolicy:
        text = text.strip()
        if text == "none":
            return cls(text=text)
        if text == "zero":
            return cls(per_day=1.0, text=text)
        parts = [part.strip() for part in text.split(",")]
        match = re.fullmatch(r"(\d+(?:\.\d+)?)%/day", parts[0])
        if match is None:
            raise ValueError(
                f"--late-policy: expected none, zero or P%/day[,max=Nd][,grace=Mm], got {text!r}"
            )
        per_day, max_days, grace = float(match.group(1)) / 100, None, timedelta(0)
        for part in parts[1:]:
            if found := re.fullmatch(r"max=(\d+(?:\.\d+)?)d", part):
                max_days = float(found.group(1))
            elif found := re.fullmatch(r"grace=(\d+)m", part):
                grace = timedelta(minutes=int(found.group(1)))
            else:
                raise ValueError(f"--late-policy: unknown part {part!r} in {text!r}")
        return cls(per_day=per_day, max_days=max_days, grace=grace, text=text)

    def penalty(self, deadline: datetime, submitted: datetime) -> tuple[int, float]:
        """Days late (started days after deadline and grace) and the share of points lost."""
        late = submitted - deadline - self.grace
        if late <= timedelta(0):
            return 0, 0.0
        days = math.ceil(late / timedelta(days=1))
        if self.max_days is not None and days > self.max_days:
            return days, 1.0
        return days, round(min(1.0, self.per_day * days), 6)


def file_time(path: Path) -> datetime:
    """The file's modification time (the submission time when the roster gives none); of a
    symbolic link, the link's own time, never its target's."""
    return datetime.fromtimestamp(os.lstat(path).st_mtime, tz=UTC).astimezone()


def read_manual(
    path: str | Path, labels: tuple[str, ...], students: set[str] | None = None
) -> tuple[dict, dict]:
    """Manual scores ``{student: {label: points}}`` and possible points ``{label: points}``.

    The sheet has a ``student`` column and a column per written exercise (``<label>`` or
    ``manual:<label>``). Each student cell is read back as :func:`cell` wrote it
    (:func:`uncell`: ``'@bob`` is ``@bob``); the row :data:`POSSIBLE_ROW` gives the possible
    points. ``ValueError`` names the line and the student of a score that is no number, is
    negative or over the possible points, of a student named twice, and, given ``students``
    (the names this grading knows), of a name that is none of them. Blank rows are skipped.

    >>> import tempfile
    >>> manual = Path(tempfile.mkdtemp()) / "written.csv"
    >>> _ = manual.write_text("student,ex-w\\n(possible)/,2\\nalice,1.5\\n'@bob,\\n")
    >>> read_manual(manual, ("ex-w",), {"alice", "@bob"})
    ({'alice': {'ex-w': 1.5}}, {'ex-w': 2.0})
    >>> _ = manual.write_text("student,ex-w\\n(possible)/,2\\nalice,1\\nalice,2\\n")
    >>> read_manual(manual, ("ex-w",))
    Traceback (most recent call last):
    ValueError: --manual: line 4: the student 'alice' is there twice (first on line 3)
    """
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            rows = [(reader.line_num, row) for row in reader]
            header = reader.fieldnames or []
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise ValueError(f"--manual: cannot read {path} ({type(error).__name__})") from None
    if "student" not in header:
        raise ValueError(f"--manual: {path} needs a 'student' column (the sheet written.csv)")
    scores: dict[str, dict] = {}
    possible: dict[str, float] = {}
    seen: dict[str, int] = {}
    for number, row in rows:
        raw = row.get("student") or ""
        values = [value for key, value in row.items() if key != "student"]
        if not raw.strip() and not any(
            isinstance(value, str) and value.strip() for value in values
        ):
            continue  # a blank line of the spreadsheet
        if not raw.strip():
            raise ValueError(f"--manual: line {number} has scores but no student")
        student = uncell(raw)
        if student in seen:
            raise ValueError(
                f"--manual: line {number}: the student {student!r} is there twice "
                f"(first on line {seen[student]})"
            )
        seen[student] = number
        if student != POSSIBLE_ROW and students is not None and student not in students:
            hint = (
                f" (the possible points go in the row {POSSIBLE_ROW!r})"
                if student.strip() == "(possible)"
                else ""
            )
            raise ValueError(
                f"--manual: line {number}: {student!r} is no student of this grading: a "
                f"student is named by their file under --submissions, as in scores.csv{hint}"
            )
        for label in labels:
            value = row.get(label, row.get(f"manual:{label}"))
            if value is None or not value.strip():
                continue
            try:
                points = float(value)
            except ValueError:
                raise ValueError(
                    f"--manual: line {number}, {label}: {value!r} is not a number"
                ) from None
            if not math.isfinite(points) or points < 0:
                raise ValueError(f"--manual: line {number}, {label}: {value!r} is not a score")
            if student == POSSIBLE_ROW:
                possible[label] = points
            else:
                scores.setdefault(student, {})[label] = points
    for student, given in scores.items():
        for label, points in given.items():
            if label in possible and points > possible[label]:
                raise ValueError(
                    f"--manual: {student!r}, {label}: {points:g} is more than the "
                    f"{possible[label]:g} possible"
                )
    return scores, possible


def write_canvas(path: Path, assignment: str, possible: float, rows: list[tuple]) -> Path:
    """A Canvas gradebook import: ``Student, ID, SIS User ID, SIS Login ID, Section``, then
    the assignment column ``Name (ID)`` (a name without an id makes Canvas create it), a
    ``Points Possible`` row, then one row per roster entry (``rows``: ``(entry, score)``,
    ``score`` ``None`` for a blank cell). Canvas reads every other column as an assignment,
    so there is no other column.
    """
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", assignment])
        writer.writerow(["Points Possible", "", "", "", "", f"{possible:g}"])
        for entry, score in rows:
            writer.writerow(
                [
                    cell(entry["name"]),
                    cell(entry["id"]),
                    cell(entry["sis_user_id"]),
                    cell(entry["sis_login_id"]),
                    cell(entry["section"]),
                    "" if score is None else f"{score:g}",
                ]
            )
    return path


def write_gradescope(path: Path, possible: float, rows: list[tuple]) -> Path:
    """A Gradescope-shaped score sheet: the roster columns Gradescope matches students on
    (``Name``, ``SID``, ``Email``) and the score columns of its grade export (``Total Score``,
    ``Max Points``, ``Status``, ``Lateness (H:M:S)``); ``rows``: ``(entry, score, status,
    late)``, ``late`` a :class:`~datetime.timedelta` or ``None``."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            ["Name", "SID", "Email", "Total Score", "Max Points", "Status", "Lateness (H:M:S)"]
        )
        for entry, score, status, late in rows:
            seconds = int(late.total_seconds()) if late is not None else 0
            lateness = f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
            writer.writerow(
                [
                    cell(entry["name"]),
                    cell(entry["sid"] or entry["sis_user_id"] or entry["id"]),
                    cell(entry["email"]),
                    "" if score is None else f"{score:g}",
                    f"{possible:g}",
                    status,
                    lateness,
                ]
            )
    return path
