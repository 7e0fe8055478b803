"""Batch scoring under load: many queued records of every track, ONE submissions commit.

One commit per scored upload would cap a burst at the budget's rate (worker/store/budget.py). While the
submissions repo is paced, or when several first attempts wait (the start of a burst, still unpaced), a
scoring task therefore leases (worker/store/claims.py) the first attempts waiting on every track, its own
first then the oldest, up to BATCH_MAX records or BATCH_SHARE of the soft time limit, scores them and
commits all their outcomes together: each record its own scored, rejected or failed transition (one bad
file never fails the others), the staged results and row outcomes, the record index. The same commit marks
published the scored records a publish already shows (worker/gold/marks.py).
The tasks sent for the leased records find them leased ("claimed") or scored ("already") and do nothing.

Crash safety: nothing is written before that one commit, so a worker killed mid-batch leaves its records
queued; their leases run out (after the hard time limit, when the task would be dead anyway) and the
reconciler re-sends them. A record whose lease ran out unfinished is never batched again: its next attempt
runs alone, committing its 'scoring' step (worker/gold/scoring_job.py), so MAX_ATTEMPTS still bounds a
file that kills workers, and such a file cannot take a batch down twice.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from celery.exceptions import SoftTimeLimitExceeded

from scoring.names import TRACK_NAMES
from scoring.problems import InputError
from worker.gold import marks
from worker.gold.references import Pinned
from worker.gold.scoring_job import (
    CpuClock,
    attach_version,
    compute,
    safe_error,
    score_submission,
    scored_or_held,
)
from worker.records import FAILED, PENDING, PUBLISHED, QUEUED, RECEIVED, REJECTED, SCORED, predictions_path
from worker.records import transition as move
from worker.store import Store, commit_change
from worker.store.claims import Claims
from worker.submissions import AREA, load_keyed, load_record, read_index, record_files

log = logging.getLogger(__name__)
BATCH_MAX = 32  # records per commit
BATCH_SHARE = 0.25  # of the soft time limit spent scoring; the rest is for the commit and its slot
BATCH_WHEN_WAITING = 2  # first attempts waiting (any track) that make a batch worth it without pacing
FIRST_ATTEMPT = frozenset({RECEIVED, QUEUED})
Key = tuple[str, str]  # (track, submission id)
_shards: dict[str, dict] = {}  # track -> index shards this process has read (read_index's cache)
_local_claims = Claims()  # for a paced store that shares no ledger (one process)


def score(
    store: Store, pinned_for, track: str, submission_id: str, *, time_limit: float, lease: float | None = None
) -> dict[Key, str]:
    """Score one submission. On a store with a commit budget (HubStore), a first attempt goes to a batch
    while the submissions budget is paced, or when BATCH_WHEN_WAITING first attempts wait (a burst is
    starting: its first, free commits are not spent one record at a time); otherwise it is scored alone
    (scoring_job: a 'scoring' commit, then the result). Returns {key: outcome} of every record scored;
    `lease`: seconds a lease lasts, at least the task's hard time limit (default: `time_limit` + 60)."""
    key = (track, submission_id)
    tight = getattr(store, "budget_tight", None)
    record = load_record(store, track, submission_id) if tight is not None else None
    if record is not None and tight is not None and is_first_attempt(record):
        found = None
        if not tight(AREA):
            found = waiting(store, store.head(AREA))
        if found is None or len(found[0]) >= BATCH_WHEN_WAITING:
            claims = getattr(store, "claims", None) or _local_claims
            lease = lease or time_limit + 60
            tries = claims.claim(lease_key(key), lease)
            if tries is None:
                return {key: "claimed"}  # in someone's batch now
            if tries == 0:
                return score_batch(
                    store, pinned_for, key, claims, time_limit=time_limit, lease=lease, found=found
                )
            try:  # its lease ran out before: maybe it killed a worker, so alone, with a committed attempt
                return {key: score_submission(store, pinned_for, track, submission_id, time_limit=time_limit)}
            finally:
                claims.done(lease_key(key))
    return {key: score_submission(store, pinned_for, track, submission_id, time_limit=time_limit)}


@dataclass
class Scored:
    """What scoring one file produced, before anything is written."""

    kind: str  # "scored", "rejected" or "failed"
    pinned: Pinned
    result: dict = field(default_factory=dict)
    rows: dict = field(default_factory=dict)
    sealed: dict | None = None  # a private test's private and full results (worker/gold/sealed.py)
    report: dict | None = None
    error: str | None = None
    cpu: float = 0.0  # CPU seconds of the scoring itself (compute), logged with the batch


def lease_key(key: Key) -> str:
    return "/".join(key)


def is_first_attempt(record: dict) -> bool:
    return record["status"] in FIRST_ATTEMPT and not record.get("attempts")


def waiting(store: Store, head: str) -> tuple[list[Key], dict[Key, dict]]:
    """(first attempts waiting to be scored, oldest first; scored records) of every track at `head`, from
    the record index (only the shards that changed since this process last looked are read)."""
    queued, scored = [], {}
    for track in TRACK_NAMES:
        index = read_index(store, track, head, _shards.setdefault(track, {})) or {}
        for sid, summary in index.items():
            if summary["status"] in FIRST_ATTEMPT:
                queued.append((summary["created_at"], (track, sid)))
            elif summary["status"] == SCORED:
                scored[(track, sid)] = summary
    return [key for _, key in sorted(queued)], scored


def score_one(store: Store, pinned_for, key: Key) -> Scored:
    """Score one file; a bad file or a scorer bug is this record's outcome, never the batch's."""
    track, sid = key
    pinned = pinned_for(track)
    clock = CpuClock()
    try:
        data = store.read(AREA, predictions_path(track, sid)) or b""
        with clock:
            result, rows, sealed = compute(pinned, data)
    except InputError as exc:
        report = {"errors": [p.as_dict() for p in exc.problems], "errors_total": exc.total}
        return Scored("rejected", pinned, report=report, cpu=clock.spent)
    except SoftTimeLimitExceeded:
        raise
    except Exception as exc:  # noqa: BLE001 - a scorer bug fails this submission, not the batch
        return Scored("failed", pinned, error=safe_error(exc), cpu=clock.spent)
    return Scored("scored", pinned, result, rows, sealed, cpu=clock.spent)


def settle(record: dict, scored: Scored) -> tuple[dict | None, dict[str, bytes], str]:
    """(new record or None, files, outcome) for one record of the batch as found at the commit's head."""
    if record["status"] not in PENDING:
        return None, {}, "already" if record["status"] in (SCORED, PUBLISHED) else "final"
    attempts = record.get("attempts", 0) + 1
    if scored.kind == "rejected":
        return (
            move(
                record,
                REJECTED,
                "invalid at scoring time",
                report=scored.report,
                attempts=attempts,
                error="the predictions file could not be scored",
            ),
            {},
            "rejected",
        )
    if scored.kind == "failed":
        return move(record, FAILED, "scorer error", error=scored.error, attempts=attempts), {}, "failed"
    attached = attach_version(record, scored.pinned, scored.result, scored.rows, sealed=scored.sealed)
    if attached is None:  # another delivery attached this version: just finish the transition
        return move(record, SCORED, "scored", attempts=attempts), {}, "already"
    new, files = attached
    note = f"scored as version {new['versions'][-1]['version']} (batch)"
    settled = scored_or_held({**new, "attempts": attempts}, scored.pinned, scored.result, note=note)
    return settled, files, "scored" if settled["status"] == SCORED else "held"


def score_batch(  # noqa: C901
    store: Store,
    pinned_for,
    first: Key,
    claims: Claims,
    *,
    time_limit: float,
    lease: float,
    found: tuple[list[Key], dict[Key, dict]] | None = None,
) -> dict[Key, str]:
    """Score `first` (already leased by the caller, a first attempt) and whatever else waits, in one
    commit. Returns {key: outcome} for the records scored ("scored", "rejected", "failed", "already",
    "final", "missing"); `first` is "deferred" when the soft time limit stopped it (its lease then runs
    out, and it is scored alone next time). `found`: what `waiting` said, when the caller asked it."""
    started = time.monotonic()
    queued, shown_before = found or waiting(store, store.head(AREA))
    log.info("batch: starting with %s, %d first attempts waiting", "/".join(first), len(queued))
    done: dict[Key, Scored] = {}
    try:
        done[first] = score_one(store, pinned_for, first)
        for key in queued:
            if len(done) >= BATCH_MAX or time.monotonic() - started > time_limit * BATCH_SHARE:
                break
            if key in done or claims.claim(lease_key(key), lease, fresh_only=True) is None:
                continue
            record = load_record(store, *key)
            if record is None or not is_first_attempt(record):  # moved on since the index said so
                claims.done(lease_key(key))
                continue
            done[key] = score_one(store, pinned_for, key)
    except SoftTimeLimitExceeded:  # the record being scored keeps its lease: it goes alone next time
        log.warning("batch stopped by the soft time limit after %d records", len(done))
    results_head = store.head(marks.RESULTS)
    shown = marks.shown_versions(store, shown_before, results_head)

    def build(store: Store, head: str) -> tuple[dict[str, bytes], list[str], dict[Key, str]]:
        records, files, outcomes = [], {}, {}
        loaded = load_keyed(store, done, head)
        for key, scored in done.items():
            record = loaded[key]
            if record is None:
                outcomes[key] = "missing"
                continue
            new, extra, outcomes[key] = settle(record, scored)
            if new is not None:
                records.append(new)
                files.update(extra)
        records += marks.marked(store, head, {k: v for k, v in shown.items() if k not in done})
        return {**record_files(store, head, records), **files}, [], outcomes

    try:
        _, outcomes = commit_change(store, AREA, build, f"score {len(done)} submissions (batch)", attempts=20)
    except BaseException:
        for key in done:  # not these records' fault: they are fresh again for the re-send
            claims.done(lease_key(key))
        raise
    for key in done:
        claims.done(lease_key(key))
    log.info(
        "batch: %d records in one commit (%s), %d marked published, %.1f s, scoring %.4f s CPU",
        len(done),
        ", ".join(sorted({o for o in outcomes.values()})),
        len(shown),
        time.monotonic() - started,
        sum(scored.cpu for scored in done.values()),
    )
    return outcomes if first in done else {**outcomes, first: "deferred"}
