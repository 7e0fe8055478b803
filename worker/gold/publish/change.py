"""The results commit of a publish, as steps that each return a `Change(add, delete, value)` on top of the
head, composed in `results_change`: the new entries' envelopes, the hidden ones' deletions and rewritten
history, the live board (and the complete exports when due), the changelog line, the caller's extra files.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from scoring.tracks import get_track
from scoring.version import SCORER_VERSION
from worker import live_board
from worker.gold.publish import history
from worker.gold.publish.cache import Cache, Key
from worker.gold.publish.listing import Listing
from worker.gold.signing import PUBLIC_KEY_PATH
from worker.leaderboard import Entry, dataset_card, to_parquet
from worker.records import parse_iso, published_result_path
from worker.store import Store, codec, layout
from worker.submissions import read_json

RESULTS = "results"
FEW_FOLDERS = 8  # up to this many submissions' results folders are listed one by one (a request each)


@dataclass(frozen=True)
class Change:
    """A step's part of the results commit: files written, files deleted, and what the step found."""

    add: dict[str, bytes] = field(default_factory=dict)
    delete: list[str] = field(default_factory=list)
    value: Any = None


@dataclass(frozen=True)
class Head:
    """The board at the head the change is built on."""

    board: dict | None
    table: dict | None  # its rank table (None for a store that has no live board yet)
    keys: set[Key]  # (id, version) of its rows
    ids: set[str]

    @property
    def rows(self) -> list[dict]:
        return (self.board or {}).get("rows") or []


@dataclass(frozen=True)
class Request:
    """What the caller of a publish asks for besides the board."""

    extra: dict[str, bytes] = field(default_factory=dict)  # more files (a re-score report), scrubbed
    note: str = ""  # the changelog line's note
    export: bool = False  # rebuild the complete exports now
    export_every: float = live_board.EXPORT_EVERY_SECONDS  # seconds a change may wait for them


def results_change(
    store: Store,
    head: str,
    track: str,
    cache: Cache,
    board: dict,
    listing: Listing,
    envelope: Callable[[Entry], dict],
    request: Request,
) -> tuple[dict[str, bytes], list[str], dict]:
    """The results commit that publishes `board` (of `listing`) on top of `head`: (add, delete, summary),
    summary = {"added": ["<id>/v<N>", ...], "removed": [hidden ids whose envelopes go], "rows": n};
    `envelope(e)` gives the published envelope of an entry that has none yet. No operations when the head
    already shows exactly this board and nothing is due (the summary then lists nothing added)."""
    at = _head(store, head, track, cache)
    look = history.to_look_at(cache, track, listing.hidden, at.ids)
    # A row on the board at the head was published with its envelope in the same commit: only the others
    # can need one (building 3,000 checked paths per publish cost ~25 ms).
    new = [e for e in listing.entries if e.key not in at.keys]
    existing = published_files(
        store, head, track, {e.key[0] for e in new} | {r["submission_id"] for r in look}
    )
    envelopes = envelopes_change(track, new, existing, envelope)
    hidden = hidden_change(store, head, track, cache, listing, look, existing, at)
    summary = {"added": envelopes.value, "removed": hidden.value.removed, "rows": len(board["rows"])}
    due = bool(envelopes.add or hidden.add or hidden.delete or request.extra)
    shown = board_change(store, head, track, cache, board, at, hidden.value.scrub, due, request)
    if shown is None:
        return {}, [], summary
    logged = changelog_change(
        store,
        head,
        track,
        board["generated_at"],
        len(board["rows"]),
        request.note,
        envelopes.value,
        hidden.value,
    )
    extras = Change({p: history.scrub_hidden(p, d, hidden.value.hidden) for p, d in request.extra.items()})
    steps = [envelopes, hidden, shown, logged, extras]
    return (
        {p: d for s in steps for p, d in s.add.items()},
        sorted(p for s in steps for p in s.delete),
        summary,
    )


def _head(store: Store, head: str, track: str, cache: Cache) -> Head:
    board, table = live_board.read(store, track, head, cache.segments)
    rows = (board or {}).get("rows") or []
    return Head(
        board, table, {(r["submission_id"], r["version"]) for r in rows}, {r["submission_id"] for r in rows}
    )


def published_files(store: Store, head: str, track: str, ids: set[str]) -> set[str]:
    """The published envelopes of the submissions `ids` at `head`: a listing of each one's folder, whose
    cost does not grow with the board, or of the whole results folder when there are many (a re-score, a
    first publish, a restarted publisher's look at the hidden ones)."""
    if len(ids) > FEW_FOLDERS:
        return set(store.list(RESULTS, layout.results_dir(track), head))
    folders = [layout.published_result_dir(track, sid) for sid in sorted(ids)]
    return {p for folder in folders for p in store.list(RESULTS, folder, head)}


def envelopes_change(
    track: str, new: list[Entry], existing: set[str], envelope: Callable[[Entry], dict]
) -> Change:
    """The envelopes of new entries that have none at the head; value: ["<id>/v<N>", ...]."""
    add, added = {}, []
    for e in new:
        path = published_result_path(track, *e.key)
        if path not in existing:
            add[path] = codec.pretty(envelope(e))
            added.append(f"{e.key[0]}/v{e.key[1]}")
    return Change(add, [], added)


def hidden_change(
    store: Store,
    head: str,
    track: str,
    cache: Cache,
    listing: Listing,
    look: list[dict],
    existing: set[str],
    at: Head,
) -> Change:
    """The hidden submissions' envelopes deleted and the re-score reports naming them rewritten; value: the
    `history.Hiding`."""
    hiding = history.hiding(cache, track, listing.hidden, look, existing, at.ids)
    return Change(history.scrubbed_reports(store, head, track, hiding.scrub), hiding.delete, hiding)


def board_change(  # noqa: PLR0913
    store: Store,
    head: str,
    track: str,
    cache: Cache,
    board: dict,
    at: Head,
    scrub: frozenset[str],
    due: bool,
    request: Request,
) -> Change | None:
    """The live board's files (and the complete exports and dataset card when due: with `export`, on a
    first live board, when a hidden submission is scrubbed, or by `live_board.export_due`), replacing the
    head's; value: were the exports rebuilt. None when nothing else is `due`, the head already shows
    exactly this board and no export is due: then the publish commits nothing."""
    previous = (at.table or {}).get("export")
    contents = cache.contents_of(track, board)
    contents = contents if contents is not None else live_board.contents(board["rows"])
    before = live_board.cached_contents(cache.segments, track, at.board)
    changed = (previous or {}).get("changed", 0) + live_board.changed_rows(before, contents)
    now = parse_iso(board["generated_at"])
    export = (
        request.export
        or at.table is None
        or bool(scrub)
        or live_board.export_due(previous, changed, len(board["rows"]), now, request.export_every)
    )
    if not due and not export and at.rows == board["rows"]:
        return None
    state = (
        {"generated_at": board["generated_at"], "changed": 0}
        if export
        else {**(previous or {}), "changed": changed}
    )
    files = live_board.encode(board, state, at.table, cache.segments, contents)
    live_board.remember(cache.segments, track, files, board, contents)
    delete = live_board.stale_files(track, at.table, files)
    if export:
        files.update(export_files(store, head, track, board))
    return Change(files, delete, export)


def export_files(store: Store, head: str, track: str, board: dict) -> dict[str, bytes]:
    """The complete exports of `board` (leaderboard.json and .parquet) and the dataset card, on `head`."""
    files = {
        layout.leaderboard_json(track): codec.pretty(board),
        layout.leaderboard_parquet(track): to_parquet(board["rows"]),
    }
    boards = {t for t in map(layout.board_track, store.list(RESULTS, "", head)) if t}
    shown = boards | {track}
    statuses = {
        t: (read_json(store, RESULTS, layout.public_file(t, layout.REFERENCE_SET), head) or {}).get(
            "test_status", "private"
        )
        for t in shown
    }
    key = store.read(RESULTS, PUBLIC_KEY_PATH, head)
    rows = len(board["rows"]) + sum(live_board.row_count(store, t, head) for t in boards - {track})
    files[layout.DATASET_CARD] = dataset_card(
        {t: get_track(t).title for t in shown}, statuses, key.decode() if key else None, rows
    )
    return files


def changelog_change(  # noqa: PLR0913
    store: Store,
    head: str,
    track: str,
    at: str,
    rows: int,
    note: str,
    added: list[str],
    hiding: history.Hiding,
) -> Change:
    """The changelog's line for this publish of a board generated `at` with `rows` rows (and its files
    scrubbed of the hidden ones shown at the head)."""
    line = {
        "at": at,
        "track": track,
        "scorer_version": SCORER_VERSION,
        "added": added,
        "removed": len(hiding.removed),  # a count: removed entries are hidden ones
        "rows": rows,
        "note": note,
    }
    return Change(history.changelog_files(store, head, line, hiding.scrub))
