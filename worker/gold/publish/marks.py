"""After a publish: its scored submissions are marked published, and the re-score flags of published runs are
cleared, in one submissions commit (skipped while the Hub's commit budget is paced: worker/gold/marks.py
then lets them ride along with a later commit)."""

from __future__ import annotations

from worker.gold.ladder import Step
from worker.leaderboard import Entry
from worker.records import PUBLISHED, SCORED, noted, transition
from worker.store import Store, commit_with_retry
from worker.submissions import AREA, load_record, record_files


def needs_mark(entry: Entry, done: frozenset[str] | set[str], steps: dict[tuple[str, int], Step]) -> bool:
    """Can a published entry's record need a change by `mark_published`: scored and shown, flagged by a
    run that is `done`, or its Ladder step (`steps`) not the one on the record?"""
    record = entry.record
    if record["status"] == SCORED and not record.get("hidden"):
        return True
    if done and any(v.get("pending_rescore") in done for v in record["versions"]):
        return True
    step = steps.get(entry.key)
    return step is not None and record.get("ladder") != step.as_record(entry.key[1])


def mark_published(  # noqa: C901
    store: Store,
    track: str,
    entries: list[Entry],
    done: frozenset[str] | set[str],
    steps: dict[tuple[str, int], Step] | None = None,
    paced_too: bool = False,
) -> list[Entry]:
    """Mark the scored ones of the published `entries` published, clear the flags of the runs `done`, and
    write each entry's Ladder step (`steps`, worker/gold/ladder.py) on its record. Returns the entries that
    needed it (`needs_mark`), marked or left for a later commit: while the Hub's commit budget is paced,
    unless `paced_too` (the reconciler's request once a burst is over, worker/gold/reconcile.py)."""
    steps = steps or {}
    # Only records that were scored, flagged or given another Ladder step can need a change: re-reading the
    # others (every published submission) made each publish read N records twice.
    waiting = [e for e in entries if needs_mark(e, done, steps)]
    if not waiting:
        return waiting
    tight = getattr(store, "budget_tight", None)
    if tight is not None and tight(AREA) and not paced_too:
        # The Hub's commit budget is being paced (worker/store/budget.py): the board already shows these,
        # so their records wait for a quieter publish (the reconciler republishes scored records).
        return waiting

    def build(store: Store, head: str) -> tuple[dict[str, bytes], list[str]]:
        changed = []
        for e in waiting:
            found = load_record(store, track, e.key[0], head)
            if found is None:
                continue
            record = found
            pending = any(v.get("pending_rescore") in done for v in record["versions"])
            step = steps.get(e.key)
            if step is not None:
                record = {**record, "ladder": step.as_record(e.key[1])}
            if pending:
                shown = [v for v in record["versions"] if v.get("pending_rescore") in done]
                record = {
                    **record,
                    "versions": [
                        {k: v for k, v in ver.items() if not (k == "pending_rescore" and v in done)}
                        for ver in record["versions"]
                    ],
                }
                for ver in shown:
                    note = f"re-score {ver['pending_rescore']} published: version {ver['version']} is shown"
                    record = noted(record, note)
            if record["status"] == SCORED and not record.get("hidden"):
                note = (
                    f"on the leaderboard as version {e.key[1]}"
                    if step is None or step.released
                    else f"scored as version {e.key[1]}; not released (the Ladder)"
                )
                record = transition(record, PUBLISHED, note)
            if record != found:
                changed.append(record)
        return record_files(store, head, changed), []

    commit_with_retry(store, AREA, build, f"mark {track} submissions published", attempts=20)
    return waiting
