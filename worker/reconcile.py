"""The reconciler: finds submissions whose task was lost or whose worker died, and gets them moving.

Runs periodically (celery beat) and on demand (`python -m worker reconcile`). Safe to run any number of
times concurrently with workers: re-sent tasks are idempotent.
"""

from __future__ import annotations

from datetime import UTC, datetime

from scoring.tracks import TRACK_NAMES
from worker.records import FAILED, MAX_ATTEMPTS, PENDING, QUEUED, SCORED, SCORING, parse_iso, transition
from worker.store import Store
from worker.submissions import list_records, update_record


def reconcile(store: Store, enqueue, stuck_after: float, tracks=TRACK_NAMES) -> dict:
    """Re-send submissions stuck in received/queued/scoring for longer than `stuck_after` seconds, fail
    those that already crashed MAX_ATTEMPTS times, and re-send publishes for stuck `scored` ones.
    `enqueue` needs `score(track, id)` and `publish(track)`. Returns counts and ids."""
    now = datetime.now(UTC)
    summary: dict = {"requeued": [], "failed": [], "publish": []}
    for track in tracks:
        republish = False
        for record in list_records(store, track):
            if (now - parse_iso(record["updated_at"])).total_seconds() < stuck_after:
                continue
            sid, status = record["submission_id"], record["status"]
            if status == SCORED:
                republish = True
            elif status in PENDING:
                outcome = _requeue_or_fail(store, track, sid, stuck_after)
                if outcome == QUEUED:
                    enqueue.score(track, sid)
                    summary["requeued"].append(sid)
                elif outcome == FAILED:
                    summary["failed"].append(sid)
        if republish:
            enqueue.publish(track)
            summary["publish"].append(track)
    return summary


def _requeue_or_fail(store: Store, track: str, sid: str, stuck_after: float) -> str | None:
    outcome: dict = {}

    def change(store: Store, head: str, rec: dict):
        # Re-checked at the head: a worker may have moved it on since we listed it.
        age = (datetime.now(UTC) - parse_iso(rec["updated_at"])).total_seconds()
        if rec["status"] not in PENDING or age < stuck_after:
            return None, {}
        if rec["status"] == SCORING and rec.get("attempts", 0) >= MAX_ATTEMPTS:
            outcome["status"] = FAILED
            return transition(
                rec,
                FAILED,
                "reconciler",
                error=f"scoring crashed or timed out {rec['attempts']} times; giving up",
            ), {}
        outcome["status"] = QUEUED
        return transition(
            rec, QUEUED, f"re-sent by the reconciler (was {rec['status']} for {int(age)} s)"
        ), {}

    update_record(store, track, sid, change, f"reconcile {sid}")
    return outcome.get("status")
