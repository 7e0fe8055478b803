"""Which scored submissions the live board shows: each submitter's chain replayed under the Ladder.

At every publish each submitter's visible, scored entries of the track are walked in submission order
(created_at, then id): the first is released; a later one is released only when it beats the submitter's
released best by more than the standard error of the paired difference on the public slice
(scoring/ladder.py). The replay is a pure function of the entries and their row outcomes, so a re-score
replays every chain under the new scorer, and two publishers agree. Baselines follow the same rule.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from scoring.ladder import Margin
from worker.leaderboard import Entry

Key = tuple[str, int]


@dataclass(frozen=True)
class Step:
    released: bool
    se: float | None = None  # the margin it missed (the owner is told it); None when released


def replay(entries: Iterable[Entry], margin: Callable[[Entry, Entry], Margin]) -> dict[Key, Step]:
    """{entry key: Step}. `margin(new, best)` compares two entries of one submitter on the public slice."""
    best: dict[str, Entry] = {}
    steps: dict[Key, Step] = {}
    for entry in sorted(entries, key=lambda e: (e.record["created_at"], e.key)):
        submitter = entry.record.get("submitter") or ""
        held = best.get(submitter)
        if held is None:
            steps[entry.key], best[submitter] = Step(True), entry
            continue
        step = margin(entry, held)
        if step.released:
            steps[entry.key], best[submitter] = Step(True), entry
        else:
            steps[entry.key] = Step(False, step.se)
    return steps
