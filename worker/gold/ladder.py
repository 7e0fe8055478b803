"""Which scored submissions the live board shows: each submitter's chain replayed under the Ladder.

At every publish of a private test's track, each submitter's visible, scored entries are walked in
submission order (created_at, then id): the first is released; a later one is released only when it beats
the submitter's released best by more than the standard error of the paired difference on the public slice
(scoring/ladder.py). The replay is a pure function of the entries and their row outcomes, so a re-score
replays every chain under the new scorer and two publishers agree. Baselines follow the same rule, each
baseline its own chain. A submitter's private submissions are in their chain too (a private upload's number
would otherwise be an oracle beside the Ladder): released or not, they stay off the board.

A step is remembered on its record (`ladder`: the version it was decided for, the best it was measured
against, the verdict): while the chain before it is unchanged the replay reuses it, so a restarted worker
does not recompute every chain, and a changed chain (a re-score, a submission made private) is recomputed
from the first entry whose best moved.
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
    best: Key | None = None  # the released best it was measured against (None: the submitter's first)
    se: float | None = None  # the margin it had to beat, for the owner's message when not released

    def as_record(self, version: int) -> dict:
        best = None if self.best is None else f"{self.best[0]}/v{self.best[1]}"
        return {"version": version, "released": self.released, "best": best, "se": self.se}


def remembered(record: dict) -> Step | None:
    """The step stored on a record (for the version it names), or None."""
    stored = record.get("ladder")
    if not isinstance(stored, dict) or not isinstance(stored.get("released"), bool):
        return None
    best = stored.get("best")
    key = None
    if isinstance(best, str) and "/v" in best:
        sid, _, version = best.rpartition("/v")
        key = (sid, int(version)) if version.isdigit() else None
    return Step(stored["released"], key, stored.get("se"))


def chain_of(record: dict) -> str:
    """Whose chain a submission is in: its submitter's; each of the project's baselines is a system of its
    own (a majority and a lexicon baseline are reference points, not one submitter's attempts)."""
    if record.get("is_baseline"):
        return "baseline:" + str((record.get("metadata") or {}).get("model_name") or "")
    return "user:" + str(record.get("submitter") or "")


def replay(entries: Iterable[Entry], margin: Callable[[Entry, Entry], Margin]) -> dict[Key, Step]:
    """{entry key: Step}. `margin(new, best)` compares two entries of one submitter on the public slice."""
    best: dict[str, Entry] = {}
    steps: dict[Key, Step] = {}
    for entry in sorted(entries, key=lambda e: (e.record["created_at"], e.key)):
        submitter = chain_of(entry.record)
        held = best.get(submitter)
        against = None if held is None else held.key
        known = remembered(entry.record)
        stored_version = (entry.record.get("ladder") or {}).get("version")
        if known is not None and stored_version == entry.key[1] and known.best == against:
            step = known
        elif held is None:
            step = Step(True)
        else:
            measured = margin(entry, held)
            step = Step(True, against) if measured.released else Step(False, against, measured.se)
        steps[entry.key] = step
        if step.released:
            best[submitter] = entry
    return steps
