"""The validation report shown to a submitter before anything is queued."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .limits import MAX_ERRORS_KEPT
from .problems import Problem


@dataclass
class Report:
    """Gold-independent validation of a predictions file (safe to show to its submitter)."""

    errors: list[Problem] = field(default_factory=list)
    errors_total: int = 0
    advice: list[str] = field(default_factory=list)  # lenient-parser hints; never change a score
    # VARM: {"line", "id", "issues"} per invalid output
    format_report: list[dict[str, Any]] = field(default_factory=list)
    rows: int = 0

    @property
    def valid(self) -> bool:
        return self.errors_total == 0

    def add(self, problem: Problem) -> None:
        """Record a problem, keeping the first MAX_ERRORS_KEPT and counting the rest."""
        self.errors_total += 1
        if len(self.errors) < MAX_ERRORS_KEPT:
            self.errors.append(problem)

    def extend(self, problems: list[Problem]) -> None:
        for problem in problems:
            self.add(problem)

    def as_dict(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "rows": self.rows,
            "errors": [p.as_dict() for p in self.errors],
            "errors_total": self.errors_total,
            "advice": list(self.advice),
            "format_report": list(self.format_report),
        }
