"""Reading and updating submission records in the store's submissions area.

Every update is an optimistic read-modify-write (`commit_with_retry`), so the web process and any number
of workers can change records concurrently without losing an update.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from scoring.tracks import TRACK_NAMES
from worker.records import is_submission_id, record_path
from worker.store import Store, commit_with_retry

AREA = "submissions"


def dumps(obj) -> bytes:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, indent=1).encode() + b"\n"


def read_json(store: Store, area: str, path: str, revision: str | None = None):
    raw = store.read(area, path, revision)
    return None if raw is None else json.loads(raw)


def load_record(store: Store, track: str, submission_id: str, revision: str | None = None) -> dict | None:
    return read_json(store, AREA, record_path(track, submission_id), revision)


def find_record(store: Store, submission_id: str) -> dict | None:
    """The record with this id on any track (None for unknown or malformed ids)."""
    if not is_submission_id(submission_id):
        return None
    for track in TRACK_NAMES:
        record = load_record(store, track, submission_id)
        if record is not None:
            return record
    return None


def list_records(store: Store, track: str, revision: str | None = None) -> list[dict]:
    """All records of a track, oldest first."""
    paths = [p for p in store.list(AREA, f"{track}/", revision) if p.endswith("/submission.json")]
    records = [json.loads(store.read(AREA, p, revision) or b"null") for p in paths]
    return sorted((r for r in records if r), key=lambda r: r["created_at"])


Change = Callable[[Store, str, dict], tuple[dict | None, dict[str, bytes]]]


def update_record(store: Store, track: str, submission_id: str, change: Change, message: str) -> dict | None:
    """Apply `change(store, head, record) -> (new_record | None, extra_files)` atomically.

    `change` sees the record as of the head it is given and may return None to leave it alone (e.g. a
    transition that another process already made). Returns the record as committed (or as found).
    """
    result: dict = {}

    def build(store: Store, head: str) -> tuple[dict[str, bytes], list[str]]:
        record = load_record(store, track, submission_id, head)
        result["record"] = record
        if record is None:
            return {}, []
        new, extra = change(store, head, record)
        if new is None:
            return {}, []
        result["record"] = new
        return {record_path(track, submission_id): dumps(new), **extra}, []

    commit_with_retry(store, AREA, build, message, attempts=20)
    return result.get("record")
