"""The memo tables of a Publisher (one per worker process), and the one place that says what invalidates what.

A publish reads from the store only what changed since the last one; the rest comes from here. No table is
ever cleared: each is keyed, or checked on use, so that a stale value cannot be used. Table: what it holds
-> when a value stops being used.

- segments: live-board segments and boards read (`live_board.read`) -> its rank table's stamp is not the
  one at the revision read.
- shards: record index shards per track (`read_index`) -> the shard's stamp at the head differs.
- listed: per track, each record summary's entry -> another (re-score stamp, published runs), or the
  index's summary is another dict (the record changed).
- columns: per track, the metric columns of the rows on the board at one results revision -> another
  revision.
- results, rows: staged results and prepared row outcomes by (id, version) -> never (immutable); the least
  recently used go.
- below: paired verdicts by (track, leader key, entry key) -> never (immutable inputs, and one scorer
  version per process); the least recently used go.
- recalled: tracks whose published verdicts seeded `below` -> never (once per Publisher).
- built: per track, each entry's row on the last board built -> its record differs (the row content), or
  its rank fields do (the row).
- last_verdicts: per track, the verdicts the last board's tie groups used -> replaced by every board.
- contents: per track, {id: row content} of the last board built -> the board asked about is another.
- cleared: (track, id) -> updated_at of a hidden submission seen without envelopes (history.py) -> the
  record's updated_at differs, or the submission is on the board at the head.
- margins: the Ladder's margins by (track, new key, best key) (laddered.py) -> never (immutable inputs);
  the least recently used go.
- status: per track, (references head, whether the Ladder applies) -> another references head.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from cachetools import LRUCache

from scoring.ladder import Margin
from worker.leaderboard import Entry

ROWS_CACHED = 256  # prepared row-outcome files kept by a Publisher (~46 MB at 1,600 rows)
RESULTS_CACHED = 256  # staged results kept by a Publisher (only new entries need theirs)
COMPARISONS_CACHED = 200_000  # paired-comparison verdicts kept by a Publisher (a few dozen bytes each)

Key = tuple[str, int]  # (submission id, version)
RankFields = tuple[int, int, int, int]


class Listed(NamedTuple):
    """A record summary of the index and its entry (the summary itself when the record is hidden)."""

    summary: dict
    entry: Entry | dict


class Built(NamedTuple):
    """An entry's row on the last board built: its record, row content and sort key, and (once ranked) its
    rank fields and the row with them."""

    record: dict
    content: dict
    sort_key: tuple
    fields: RankFields | None
    row: dict | None


@dataclass
class Cache:
    segments: dict = field(default_factory=dict)
    shards: dict[str, dict] = field(default_factory=dict)
    listed: dict[str, tuple[tuple, dict[str, Listed]]] = field(default_factory=dict)
    columns: dict[str, tuple[str, dict[Key, dict]]] = field(default_factory=dict)
    results: LRUCache[Key, dict] = field(default_factory=lambda: LRUCache(maxsize=RESULTS_CACHED))
    rows: LRUCache[Key, object] = field(default_factory=lambda: LRUCache(maxsize=ROWS_CACHED))
    below: LRUCache[tuple, bool] = field(default_factory=lambda: LRUCache(maxsize=COMPARISONS_CACHED))
    recalled: set[str] = field(default_factory=set)
    built: dict[str, dict[Key, Built]] = field(default_factory=dict)
    last_verdicts: dict[str, dict[tuple[Key, Key], bool]] = field(default_factory=dict)
    contents: dict[str, tuple[dict, dict[str, dict]]] = field(default_factory=dict)
    cleared: dict[tuple[str, str], str] = field(default_factory=dict)
    margins: LRUCache[tuple, Margin] = field(default_factory=lambda: LRUCache(maxsize=COMPARISONS_CACHED))
    status: dict[str, tuple[str, bool]] = field(default_factory=dict)

    def listing(self, track: str, context: tuple) -> dict[str, Listed]:
        """The last listing of `track`, if it was made in the same `context`."""
        last_context, last = self.listed.get(track, (None, {}))
        return last if last_context == context else {}

    def columns_at(self, track: str, revision: str) -> dict[Key, dict] | None:
        """The metric columns of the board at `revision`, if those are the ones remembered."""
        cached = self.columns.get(track)
        return cached[1] if cached is not None and cached[0] == revision else None

    def built_row(self, track: str, entry: Entry) -> Built | None:
        """The entry's row of the last board, if its record did not change."""
        hit = self.built.get(track, {}).get(entry.key)
        return hit if hit is not None and (hit.record is entry.record or hit.record == entry.record) else None

    def contents_of(self, track: str, board: dict) -> dict[str, dict] | None:
        """{id: row content} of `board` if it is the last board built (None for another board)."""
        built = self.contents.get(track)
        return built[1] if built is not None and built[0] is board else None

    def seen_empty(self, track: str, record: dict) -> bool:
        """Was this hidden record's results folder seen empty since the record last changed?"""
        at = record.get("updated_at")
        return at is not None and self.cleared.get((track, record["submission_id"])) == at
