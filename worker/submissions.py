"""Reading and updating submission records in the store's submissions area.

Every update is an optimistic read-modify-write (`commit_with_retry`), so the web process and any number
of workers can change records concurrently without losing an update.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable

from scoring.tracks import TRACK_NAMES
from worker.records import is_submission_id, record_path
from worker.store import Store, codec, commit_change, layout

AREA = "submissions"
RECORD_KEYS = ("submission_id", "track", "status", "created_at", "updated_at")
log = logging.getLogger(__name__)
_logged: set[str] = set()  # unreadable records already logged by this process (each is logged once)
_logged_lock = threading.Lock()


dumps = codec.record  # records and other private JSON of the submissions area


def read_json(store: Store, area: str, path: str, revision: str | None = None):
    raw = store.read(area, path, revision)
    return None if raw is None else json.loads(raw)


def load_record(store: Store, track: str, submission_id: str, revision: str | None = None) -> dict | None:
    """The record, or None when it does not exist or is unreadable (quarantined: logged once)."""
    path = record_path(track, submission_id)
    raw = store.read(AREA, path, revision)
    problem = record_problem(raw)
    if problem is None:
        return json.loads(raw)
    if problem != "missing":
        _quarantine(path, problem)
    return None


def find_record(store: Store, submission_id: str) -> dict | None:
    """The record with this id on any track (None for unknown or malformed ids)."""
    if not is_submission_id(submission_id):
        return None
    for track in TRACK_NAMES:
        record = load_record(store, track, submission_id)
        if record is not None:
            return record
    return None


def record_problem(raw: bytes | None) -> str | None:
    """Why a stored submission.json cannot be used (None when it can)."""
    if raw is None:
        return "missing"
    try:
        record = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        return f"not JSON ({type(exc).__name__})"
    if not isinstance(record, dict):
        return "not a JSON object"
    missing = [k for k in RECORD_KEYS if not isinstance(record.get(k), str)]
    return f"missing or non-text fields: {', '.join(missing)}" if missing else None


def _quarantine(path: str, problem: str) -> None:
    with _logged_lock:
        if path in _logged:
            return
        _logged.add(path)
    log.warning("skipping unreadable submission record %s (%s); see `python -m worker quarantine`", path,
                problem)


def list_records(store: Store, track: str, revision: str | None = None) -> list[dict]:
    """All readable records of a track, oldest first. An unreadable one is skipped (logged once per process;
    `quarantined` lists them), so one corrupt file never blocks the others."""
    records = []
    for path in filter(layout.is_record_path, store.list(AREA, layout.track_dir(track), revision)):
        raw = store.read(AREA, path, revision)
        problem = record_problem(raw)
        if problem is None:
            records.append(json.loads(raw))
        elif problem != "missing":  # deleted between list and read: not a problem
            _quarantine(path, problem)
    return sorted(records, key=lambda r: r["created_at"])


def quarantined(store: Store, track: str) -> list[dict]:
    """The track's unreadable submission records: [{"path", "problem"}], for maintainers."""
    out = []
    for path in filter(layout.is_record_path, store.list(AREA, layout.track_dir(track))):
        problem = record_problem(store.read(AREA, path))
        if problem not in (None, "missing"):
            out.append({"path": path, "problem": problem})
    return out


Change = Callable[[Store, str, dict], tuple[dict | None, dict[str, bytes]]]


def update_record(store: Store, track: str, submission_id: str, change: Change, message: str) -> dict | None:
    """Apply `change(store, head, record) -> (new_record | None, extra_files)` atomically.

    `change` sees the record as of the head it is given and may return None to leave it alone (e.g. a
    transition that another process already made). Returns the record as committed (or as found).
    """

    def build(store: Store, head: str) -> tuple[dict[str, bytes], list[str], dict | None]:
        record = load_record(store, track, submission_id, head)
        if record is None:
            return {}, [], None
        new, extra = change(store, head, record)
        if new is None:
            return {}, [], record
        return {record_path(track, submission_id): dumps(new), **extra}, [], new

    return commit_change(store, AREA, build, message, attempts=20)[1]
