"""Line-numbered validation problems, shared by every reader."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Problem:
    """One problem a researcher can act on: where (line, field) and what was expected.

    Messages never quote gold values: they may reach the submitter of a hidden-test upload.
    """

    line: int | None  # 1-based physical line in the file; None for file-level problems
    field: str | None  # e.g. "id", "output", "label", "spans[2]"
    message: str

    def as_dict(self) -> dict[str, Any]:
        return {"line": self.line, "field": self.field, "message": self.message}

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line is not None else "file"
        if self.field:
            where += f", field '{self.field}'"
        return f"{where}: {self.message}"


class InputError(Exception):
    """A file that cannot be used at all; carries every problem found."""

    def __init__(self, problems: list[Problem], total: int | None = None) -> None:
        self.problems = problems
        self.total = total if total is not None else len(problems)
        super().__init__("; ".join(str(p) for p in problems[:5]) or "invalid input")
