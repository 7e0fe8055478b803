"""What is on the board: the entries (and hidden records) of a track as of the submissions head.

Records come from the record index (summaries: only the shards that changed are read), and an entry already
on the board at the results revision the publish builds on reuses its row's metric columns (its result is
immutable), so a publish reads the staged results of new entries only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from worker import live_board
from worker.gold.publish.cache import Cache, Key, Listed
from worker.leaderboard import BASE_COLUMNS, Entry
from worker.records import FINAL_BAD, HELD
from worker.store import Store, layout
from worker.submissions import AREA, list_records, read_index

RESULTS = "results"
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Listing:
    entries: list[Entry]  # visible, oldest first
    hidden: list[dict]  # records of hidden submissions that have a version to show


def report_names(store: Store, track: str, revision: str | None) -> list[str]:
    """File names of the published re-score reports of `track` (`rescore/<track>/<run>.json`)."""
    prefix = layout.rescore_reports_dir(track)
    return [
        p[len(prefix) :]
        for p in store.list(RESULTS, prefix, revision)
        if p.endswith(".json") and "/" not in p[len(prefix) :]
    ]


def published_runs(store: Store, track: str, revision: str | None = None) -> frozenset[str]:
    """Stamps of the re-score runs of `track` whose results commit has landed.

    A run's diff report `rescore/<track>/<run>.json` is written to the results area in the SAME commit as
    its new versions' envelopes and leaderboard, so its presence proves that the run was published, even
    when the process died before clearing the `pending_rescore` flags in the submissions area.
    """
    return frozenset(name.removesuffix(".json") for name in report_names(store, track, revision))


def version_for(
    record: dict, rescore_stamp: str | None = None, published: frozenset[str] = frozenset()
) -> dict | None:
    """The version to show: the latest one, skipping versions of a re-score that is not published yet
    (`published`: stamps of runs already published, see `published_runs`; `rescore_stamp`: the run
    being published now)."""
    ready = [
        v
        for v in record.get("versions", [])
        if not v.get("pending_rescore")
        or v["pending_rescore"] == rescore_stamp
        or v["pending_rescore"] in published
    ]
    return ready[-1] if ready else None


def listing(
    store: Store,
    cache: Cache,
    track: str,
    rescore_stamp: str | None,
    results_head: str,
    result: Callable[[str, int], dict | None],
) -> Listing:
    """The track's listing at the submissions head read now, for a board built on `results_head`;
    `result(id, version)` reads a staged result (raises ValueError when it is corrupt)."""
    entries, hidden = [], []
    context = (rescore_stamp, published_runs(store, track, results_head))
    on_board = board_columns(store, cache, track, results_head)
    last = cache.listing(track, context)
    listed = {}
    for record in _records(store, cache, track):
        hit = last.get(record["submission_id"])
        # the index's summary of a record is another dict once the record changed
        entry = (
            hit.entry
            if hit is not None and hit.summary is record
            else _entry(track, record, *context, on_board, result)
        )
        if entry is None:
            continue
        listed[record["submission_id"]] = Listed(record, entry)
        if isinstance(entry, Entry):
            entries.append(entry)
        else:  # the record itself: hidden
            hidden.append(record)
    cache.listed[track] = (context, listed)
    return Listing(entries, hidden)


def _entry(
    track: str,
    record: dict,
    rescore_stamp: str | None,
    published: frozenset[str],
    on_board: dict[Key, dict],
    result: Callable[[str, int], dict | None],
) -> Entry | dict | None:
    """The entry of a record; the record itself when it is hidden; None when it is not on the board."""
    version = version_for(record, rescore_stamp, published)
    if version is None or record["status"] in FINAL_BAD or record["status"] == HELD:  # held: a gold match
        return None
    if record.get("hidden"):
        return record
    columns = on_board.get((record["submission_id"], version["version"]))
    if columns is not None:
        return Entry(record, version, None, columns)
    try:
        staged = result(record["submission_id"], version["version"])
    except ValueError:  # a corrupt staged result: leave this one off, publish the others
        staged = None
    if staged is None:
        log.warning(
            "not publishing %s/%s v%s: its staged result is missing or unreadable",
            track,
            record["submission_id"],
            version["version"],
        )
        return None
    return Entry(record, version, staged)


def _records(store: Store, cache: Cache, track: str) -> list[dict]:
    """Summaries of the track's records (oldest first), from the index at the submissions head; every
    record of a store that has no index yet (it gets one with its next record change)."""
    head = store.head(AREA)
    index = read_index(store, track, head, cache.shards.setdefault(track, {}))
    records = list_records(store, track, head) if index is None else list(index.values())
    return sorted(records, key=lambda r: r["created_at"])


def board_columns(store: Store, cache: Cache, track: str, revision: str) -> dict[Key, dict]:
    """{(id, version): metric columns} of the rows on the board at `revision` (cached per revision)."""
    cached = cache.columns_at(track, revision)
    if cached is not None:
        return cached
    board = live_board.read(store, track, revision, cache.segments)[0] or {}
    columns = {
        (row["submission_id"], row["version"]): _metric_columns(row) for row in board.get("rows") or []
    }
    cache.columns[track] = (revision, columns)
    return columns


def _metric_columns(row: dict) -> dict:
    """A board row's columns other than BASE_COLUMNS (a C-level copy and a delete per base column: ~5x
    faster than a filtering comprehension over its ~130 columns)."""
    columns = dict(row)
    for name in BASE_COLUMNS:
        columns.pop(name, None)
    return columns
