"""Reading and updating submission records in the store's submissions area.

Every update is an optimistic read-modify-write (`commit_with_retry`), so the web process and any number
of workers can change records concurrently without losing an update.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterable

from cachetools import LRUCache

from scoring.names import TRACK_NAMES
from worker.records import is_submission_id, record_path
from worker.store import Store, codec, commit_change, layout, read_many
from worker.store.base import UnreadableObject

AREA = "submissions"
RECORD_KEYS = ("submission_id", "track", "status", "created_at", "updated_at")
log = logging.getLogger(__name__)
_logged: set[str] = set()  # unreadable records already logged by this process (each is logged once)
_logged_lock = threading.Lock()


dumps = codec.record  # records and other private JSON of the submissions area

# Parsed index shards by (track, shard key, stamp), the stamp being the hash of the shard's bytes (as the
# index table names it): a hit is the shard any read at any revision whose table names that stamp returns.
# It holds what this process read or wrote, so an index read-modify-write, or a look after the process's own
# commit, reads no shard again (on the Hub each is a GET). Entries are shared: never mutated in place.
SHARDS_CACHED = 1024
_shards: LRUCache[tuple[str, str, str], dict] = LRUCache(maxsize=SHARDS_CACHED)
_shards_lock = threading.Lock()


def read_json(store: Store, area: str, path: str, revision: str | None = None):
    raw = store.read(area, path, revision)
    return None if raw is None else json.loads(raw)


def _read_record(store: Store, path: str, revision: str | None = None) -> tuple[bytes | None, str | None]:
    """(raw bytes, why they cannot be used or None). A torn object is a problem of this record only."""
    try:
        raw = store.read(AREA, path, revision)
    except UnreadableObject as exc:
        return None, f"unreadable object ({exc})"
    return raw, record_problem(raw)


def load_record(store: Store, track: str, submission_id: str, revision: str | None = None) -> dict | None:
    """The record, or None when it does not exist or is unreadable (quarantined: logged once)."""
    path = record_path(track, submission_id)
    return _decoded(path, *_read_record(store, path, revision))


def _decoded(path: str, raw: bytes | None, problem: str | None) -> dict | None:
    """The record read from `path`, or None (a problem other than "missing" is quarantined: logged once)."""
    if raw is not None and problem is None:
        return json.loads(raw)
    if problem is not None and problem != "missing":
        _quarantine(path, problem)
    return None


def load_records(
    store: Store, track: str, submission_ids: Iterable[str], revision: str | None = None
) -> dict[str, dict | None]:
    """`load_record` of each id, read in one go (`read_many`: one request on the Hub for the ones its read
    cache cannot answer)."""
    paths = {sid: record_path(track, sid) for sid in submission_ids}
    loaded = _load_paths(store, list(paths.values()), revision)
    return {sid: loaded[path] for sid, path in paths.items()}


def _load_paths(store: Store, paths: list[str], revision: str | None = None) -> dict[str, dict | None]:
    """{path: the record stored there, or None}, read in one go (`read_many`: one request on the Hub for
    the ones its read cache cannot answer)."""
    try:
        raws = read_many(store, AREA, paths, revision)
    except UnreadableObject:  # a torn object: each record on its own, so only that one is quarantined
        return {path: _decoded(path, *_read_record(store, path, revision)) for path in paths}
    return {path: _decoded(path, raws[path], record_problem(raws[path])) for path in paths}


def load_keyed(
    store: Store, keys: Iterable[tuple[str, str]], revision: str | None = None
) -> dict[tuple[str, str], dict | None]:
    """`load_records` of (track, id) keys over any tracks."""
    keys = list(keys)
    out: dict[tuple[str, str], dict | None] = {}
    for track in dict.fromkeys(track for track, _ in keys):
        ids = [sid for t, sid in keys if t == track]
        out.update(
            ((track, sid), record) for sid, record in load_records(store, track, ids, revision).items()
        )
    return out


def find_record(store: Store, submission_id: str) -> dict | None:
    """The record with this id on any track (None for unknown or malformed ids).

    Every track's path is asked in one go (`read_many`): on the Hub one paths-info request, plus a GET only
    when the record's bytes changed since this process last read them. A status poll (the most frequent
    request of a burst) asked the tracks one after another: a GET per track up to the record's, 2.5 on
    average and four for the last track's, each GET again at every poll."""
    if not is_submission_id(submission_id):
        return None
    loaded = _load_paths(store, [record_path(track, submission_id) for track in TRACK_NAMES])
    return next((record for record in loaded.values() if record is not None), None)


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
    log.warning(
        "skipping unreadable submission record %s (%s); see `python -m worker quarantine`", path, problem
    )


def list_records(store: Store, track: str, revision: str | None = None) -> list[dict]:
    """All readable records of a track, oldest first. An unreadable one is skipped (logged once per process;
    `quarantined` lists them), so one corrupt file never blocks the others."""
    records = []
    for path in filter(layout.is_record_path, store.list(AREA, layout.track_dir(track), revision)):
        raw, problem = _read_record(store, path, revision)
        if raw is not None and problem is None:
            records.append(json.loads(raw))
        elif problem is not None and problem != "missing":  # deleted between list and read: not a problem
            _quarantine(path, problem)
    return sorted(records, key=lambda r: r["created_at"])


def quarantined(store: Store, track: str) -> list[dict]:
    """The track's unreadable submission records: [{"path", "problem"}], for maintainers."""
    out = []
    for path in filter(layout.is_record_path, store.list(AREA, layout.track_dir(track))):
        problem = _read_record(store, path)[1]
        if problem not in (None, "missing"):
            out.append({"path": path, "problem": problem})
    return out


# -- the record index -------------------------------------------------------------------------------------
# `<track>/index.json` (shard -> 16 hex digits of the sha256 of the shard's bytes) and
# `<track>/index/<xx>.json` (id -> summary of the records whose id starts with xx), written in the SAME
# commit as the records they describe, so a publish reads the table and the shards that changed since it
# last looked instead of every record.
# Every writer of a record therefore commits `index_files(...)` with it (update_record does).

SUMMARY_KEYS = (
    "submission_id",
    "track",
    "status",
    "sha256",
    "submitter",
    "is_baseline",
    "verified",
    "hidden",
    "hidden_reason",
    "retired",
    "created_at",
    "updated_at",
    "metadata",
    "versions",
    "ladder",
)
SUMMARY_VERSION_KEYS = ("version", "scorer_version", "references_sha256", "scored_at", "pending_rescore")


def summary(record: dict) -> dict:
    """What a publish needs of a record: its public fields without the description, status, flags and
    versions (no history, report or private near-copy details). A board row is built from it alone."""
    out = {k: record[k] for k in SUMMARY_KEYS if k in record}
    out["metadata"] = {k: v for k, v in (record.get("metadata") or {}).items() if k != "description"}
    out["versions"] = [
        {k: v[k] for k in SUMMARY_VERSION_KEYS if k in v} for v in record.get("versions") or []
    ]
    return out


def _shard_bytes(shard: dict) -> bytes:
    return codec.compact(shard)


def _shard_key(submission_id: str) -> str:
    return submission_id[: layout.INDEX_SHARD_CHARS]


def _cached_shard(track: str, key: str, stamp: str) -> dict | None:
    with _shards_lock:
        return _shards.get((track, key, stamp))


def _remember_shard(track: str, key: str, stamp: str, shard: dict) -> None:
    with _shards_lock:
        _shards[(track, key, stamp)] = shard


def _parsed_shard(track: str, key: str, raw: bytes | None) -> dict:
    """A shard read from the store, remembered under the stamp of the bytes read (not the one the table
    asked for: a read without a revision may see a newer shard than its table)."""
    if raw is None:
        return {}
    shard = json.loads(raw)
    _remember_shard(track, key, codec.stamp(raw), shard)
    return shard


def read_index(
    store: Store, track: str, revision: str | None = None, known: dict[str, tuple[str, dict]] | None = None
) -> dict[str, dict] | None:
    """{id: summary} of the track as of `revision`, None when the track has no index yet. `known`
    ({shard: (sha256, shard)}, updated in place) holds shards already read: only changed ones are read."""
    table = read_json(store, AREA, layout.index_path(track), revision)
    if table is None:
        return None
    known = {} if known is None else known
    changed = [key for key, stamp in table["shards"].items() if key not in known or known[key][0] != stamp]
    found = {key: _cached_shard(track, key, table["shards"][key]) for key in changed}
    missing = {key: layout.index_shard_path(track, key) for key, shard in found.items() if shard is None}
    raws = read_many(store, AREA, missing.values(), revision)
    for key in changed:
        shard = found[key]
        known[key] = (
            table["shards"][key],
            shard if shard is not None else _parsed_shard(track, key, raws[missing[key]]),
        )
    out: dict[str, dict] = {}
    for key in table["shards"]:
        out.update(known[key][1])
    for key in set(known) - set(table["shards"]):
        del known[key]
    return out


def index_files(store: Store, head: str, track: str, records: Iterable[dict]) -> dict[str, bytes]:
    """The index files to commit together with `records` (as they will be committed) on top of `head`.
    A track without an index gets one built from every record (once: the migration of an older store)."""
    records = list(records)
    if not records:
        return {}
    table = read_json(store, AREA, layout.index_path(track), head)
    shards: dict[str, dict] = {}
    if table is None:
        table = {"shards": {}}
        for record in list_records(store, track, head):
            sid = record["submission_id"]
            shards.setdefault(_shard_key(sid), {})[sid] = summary(record)
    for record in records:
        key = _shard_key(record["submission_id"])
        if key not in shards:
            stamp = table["shards"].get(key)
            known = _cached_shard(track, key, stamp) if stamp is not None else {}
            if known is None:
                path = layout.index_shard_path(track, key)
                known = _parsed_shard(track, key, store.read(AREA, path, head))
            shards[key] = dict(known)  # a copy: the cached shard is shared
        shards[key][record["submission_id"]] = summary(record)
    files = {}
    for key, shard in shards.items():
        data = _shard_bytes(shard)
        files[layout.index_shard_path(track, key)] = data
        table["shards"][key] = codec.stamp(data)
        _remember_shard(track, key, table["shards"][key], shard)  # the next read after this commit
    files[layout.index_path(track)] = codec.compact(table)
    return files


def record_files(store: Store, head: str, records: Iterable[dict]) -> dict[str, bytes]:
    """Everything to commit for these new versions of records (any tracks): the records and the index."""
    records = list(records)
    files = {record_path(r["track"], r["submission_id"]): dumps(r) for r in records}
    for track in sorted({r["track"] for r in records}):
        files.update(index_files(store, head, track, [r for r in records if r["track"] == track]))
    return files


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
        return {**record_files(store, head, [new]), **extra}, [], new

    return commit_change(store, AREA, build, message, attempts=20)[1]


def update_records(store: Store, change: Callable[[Store, str], list[dict]], message: str) -> list[dict]:
    """Commit `change(store, head) -> new versions of records` (any number, any tracks) atomically with
    the index; returns the records as committed (nothing is committed for an empty list)."""

    def build(store: Store, head: str) -> tuple[dict[str, bytes], list[str], list[dict]]:
        records = change(store, head)
        return record_files(store, head, records), [], records

    return commit_change(store, AREA, build, message, attempts=20)[1]
