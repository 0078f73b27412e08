"""One table of checks per chapter: :class:`CheckTable` (claim, measured, rule, outcome)."""

from __future__ import annotations

import numpy as np

__all__ = [
    "CheckTable",
]


class CheckTable:
    """A chapter's checks as one table: what is claimed, what was measured, the rule, the outcome.

    Each method records one check and raises AssertionError at once when it fails (so the
    build stops at the cell whose claim is false); the rule column is written from the same
    comparison that decides the outcome, so the two cannot disagree. Displayed in a notebook
    the table renders as HTML, one row per check; ``str(table)`` gives plain text.

    >>> checks = CheckTable("Checks")
    >>> checks.below("round-off of K on the sphere", 3e-15, 1e-13)
    >>> checks.between("best step", 1.2e-4, 1e-5, 1e-3)
    >>> checks.holds("every ReLU value is exactly 0", True, "2000 of 2000")
    >>> len(checks), checks.rows[0]["rule"]
    (3, '< 1e-13')
    >>> checks.above("speed-up", 3.0, 20)
    Traceback (most recent call last):
    ...
    AssertionError: check failed: speed-up: 3 is not > 20
    """

    def __init__(self, title: str | None = None):
        self.title = title
        self.rows: list[dict[str, str]] = []

    def __len__(self) -> int:
        return len(self.rows)

    @staticmethod
    def _number(value: object) -> float:
        if hasattr(value, "item"):
            value = value.item()
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f"value must be a real number, got {type(value)}")
        return float(value)

    def _record(self, claim: str, measured: str, rule: str, passed: bool, failure: str) -> None:
        if not isinstance(claim, str) or not claim:
            raise TypeError(f"claim must be a nonempty string, got {claim!r}")
        self.rows.append(
            {"claim": claim, "measured": measured, "rule": rule, "outcome": "✓" if passed else "✗"}
        )
        if not passed:
            raise AssertionError(f"check failed: {claim}: {failure}")

    def below(self, claim: str, value: object, bound: float) -> None:
        """Check ``value < bound``."""
        value = self._number(value)
        self._record(
            claim,
            f"{value:.3g}",
            f"< {bound:.3g}",
            value < bound,
            f"{value:.3g} is not < {bound:.3g}",
        )

    def above(self, claim: str, value: object, bound: float) -> None:
        """Check ``value > bound``."""
        value = self._number(value)
        self._record(
            claim,
            f"{value:.3g}",
            f"> {bound:.3g}",
            value > bound,
            f"{value:.3g} is not > {bound:.3g}",
        )

    def between(self, claim: str, value: object, low: float, high: float) -> None:
        """Check ``low <= value <= high``."""
        value = self._number(value)
        inside = low <= value <= high
        self._record(
            claim,
            f"{value:.3g}",
            f"in [{low:.3g}, {high:.3g}]",
            inside,
            f"{value:.3g} is outside [{low:.3g}, {high:.3g}]",
        )

    def holds(self, claim: str, condition: object, measured: str = "") -> None:
        """Check that ``condition`` is true (a bool or a one-element tensor/array of bools)."""
        if hasattr(condition, "item"):
            condition = condition.item()
        if not isinstance(condition, bool | np.bool_):
            raise TypeError(f"condition must be a bool, got {type(condition)}")
        self._record(claim, measured, "holds", bool(condition), f"does not hold ({measured})")

    def __str__(self) -> str:
        header = ("claim", "measured", "rule", "outcome")
        widths = [max([len(h)] + [len(r[h]) for r in self.rows]) for h in header]
        lines = [self.title] if self.title else []
        lines.append("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
        for row in self.rows:
            lines.append("  ".join(row[h].ljust(w) for h, w in zip(header, widths, strict=True)))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        import html

        cells = "".join(
            "<tr>"
            + "".join(f"<td>{html.escape(row[h])}</td>" for h in ("claim", "measured", "rule"))
            + f"<td style='text-align:center'>{row['outcome']}</td></tr>"
            for row in self.rows
        )
        caption = f"<caption>{html.escape(self.title)}</caption>" if self.title else ""
        head = "".join(f"<th>{h}</th>" for h in ("claim", "measured", "rule", "outcome"))
        return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{cells}</tbody></table>"
