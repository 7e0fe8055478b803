"""The incremental publish (issue 26): a Publisher keeps, per track, the state its last publish committed (the
listing, the Ladder's chains and steps, the board model of `board_model.py`), keyed by the results revision it
committed and the record index it listed. The next publish on that same revision reads only the index shards
whose stamps moved, takes the records that changed in them, and applies those changes: new rows inserted,
rows changed in place, chains whose members changed replayed. What it commits is byte-identical to what the
full build (listing, `laddered.apply`, `ranking.board`, `change.results_change`) gives for the same store
state; when a change is one it does not apply (a row leaves the board or moves, a version changes, a hidden
submission has files to remove, a re-score, an export asked for, another writer moved the head, a store
without a record index), it answers None and the publish is the full build, after which the state is built
again from what that build committed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from scoring.tracks import get_track
from worker import live_board
from worker.gold.ladder import Step, chain_of, replay
from worker.gold.publish import disclosure, history, laddered, ranking
from worker.gold.publish.board_model import BoardModel
from worker.gold.publish.cache import Cache, Key
from worker.gold.publish.change import (
    Change,
    Request,
    changelog_change,
    envelopes_change,
    export_files,
    published_files,
)
from worker.gold.publish.listing import _entry, published_runs, version_for
from worker.gold.publish.marks import needs_mark
from worker.leaderboard import Entry, sort_key
from worker.records import parse_iso
from worker.store import Store, layout
from worker.submissions import AREA, read_json

RESULTS = "results"


@dataclass
class State:
    """What a Publisher's last publish of a track committed, for the next one to start from."""

    revision: str  # the results revision whose live board `board` is
    laddered: bool  # did the Ladder apply
    published: frozenset[str]  # the re-score runs published at that revision
    shards: dict[str, tuple[str, dict]]  # the record index as listed: {shard: (stamp, {id: summary})}
    listed: dict[str, Entry | dict]  # each listed record's entry (visible) or the record (hidden)
    private: dict[str, Entry]  # private records' entries in their chains (the Ladder)
    chains: dict[str, dict[Key, Entry]]  # the Ladder's chains
    chain_of_id: dict[str, tuple[str, Key]]
    steps: dict[Key, Step]
    board: BoardModel
    columns: dict[Key, dict]  # metric columns of the board's rows (`Cache.columns`)
    table: dict  # the rank table at `revision`
    unsettled: dict[str, dict]  # hidden records (and withheld entries') not yet seen without envelopes
    unmarked: dict[str, Entry]  # chained entries whose records `mark_published` may still change
    pending: dict | None = None  # the rank table of the change being committed
    inserted: list[Entry] = field(default_factory=list)  # its new rows


def from_publish(  # noqa: PLR0913
    store: Store,
    cache: Cache,
    track: str,
    revision: str,
    shown: list[Entry],
    hidden: list[dict],
    chained: list[Entry],
    steps: dict[Key, Step],
    is_laddered: bool,
    published: frozenset[str],
    unmarked: list[Entry],
) -> State | None:
    """The state after a full publish committed `revision` (its listing: `shown` entries and `hidden`
    records, the Ladder's `chained` entries and `steps`, the entries `mark_published` was given to mark);
    None when it cannot be had (no record index, no live board)."""
    shards = cache.shards.get(track)
    last = cache.listed.get(track)
    columns = cache.columns_at(track, revision)
    if not shards or last is None or columns is None:
        return None
    board, table = live_board.read(store, track, revision, cache.segments)
    if board is None or table is None or "ranks" not in table:
        return None
    rows = board.get("rows") or []
    entries = {e.key[0]: e for e in shown}
    if len(entries) != len(rows) or any(
        entries.get(r["submission_id"]) is None or entries[r["submission_id"]].key[1] != r["version"]
        for r in rows
    ):
        return None
    built = cache.built.get(track, {})
    primary = get_track(track).primary_metric
    sort_keys = {
        sid: (built[e.key].sort_key if e.key in built else sort_key(e, primary)) for sid, e in entries.items()
    }
    contents = live_board.cached_contents(cache.segments, track, board)
    model = BoardModel.from_board(track, rows, entries, sort_keys, table, contents)
    if model is None:
        return None
    listed = {sid: item.entry for sid, item in last[1].items()}
    private = {e.key[0]: e for e in chained if not isinstance(listed.get(e.key[0]), Entry)}
    chains: dict[str, dict[Key, Entry]] = {}
    chain_of_id = {}
    if is_laddered:
        for e in chained:
            name = chain_of(e.record)
            chains.setdefault(name, {})[e.key] = e
            chain_of_id[e.key[0]] = (name, e.key)
    return State(
        revision,
        is_laddered,
        published,
        dict(shards),
        listed,
        private,
        chains,
        chain_of_id,
        dict(steps),
        model,
        columns,
        table,
        {r["submission_id"]: r for r in hidden if not cache.seen_empty(track, r)},
        {e.key[0]: e for e in unmarked},
    )


def _changed_records(store: Store, state: State, track: str) -> list[dict] | None:
    """Summaries of the records that changed since the state's listing (the index shards whose stamps
    moved), oldest first; None when a shard or a record left the index, or there is no index."""
    head = store.head(AREA)
    table = read_json(store, AREA, layout.index_path(track), head)
    if table is None:
        return None
    stamps = table["shards"]
    if any(key not in stamps for key in state.shards):
        return None
    changed = []
    for key, sha in stamps.items():
        old = state.shards.get(key)
        if old is not None and old[0] == sha:
            continue
        shard = read_json(store, AREA, layout.index_shard_path(track, key), head) or {}
        before = old[1] if old is not None else {}
        if any(sid not in shard for sid in before):
            return None
        changed += [summary for sid, summary in shard.items() if before.get(sid) != summary]
        state.shards[key] = (sha, shard)
    return sorted(changed, key=lambda r: (r["created_at"], r["submission_id"]))


def build(  # noqa: C901, PLR0912, PLR0913, PLR0915
    store: Store,
    cache: Cache,
    track: str,
    state: State,
    head: str,
    request: Request,
    result: Callable[[str, int], dict | None],
    below: ranking.Below,
    envelope: Callable[[Entry], dict],
) -> tuple[dict[str, bytes], list[str], dict] | None:
    """The results commit of a publish on `head` from `state` (which it updates: the caller drops it when
    this answers None or the commit fails), as `change.results_change` gives it; None: do the full build."""
    if head != state.revision or request.extra or request.export:
        return None
    if laddered.laddered(store, cache, track) != state.laddered:
        return None
    published = published_runs(store, track, head)
    if published != state.published:
        return None
    changed = _changed_records(store, state, track)
    if changed is None:
        return None
    primary = get_track(track).primary_metric
    board = state.board
    replay_chains: set[str] = set()
    touched: dict[str, Entry | None] = {}  # id -> its visible entry now (None: not visible)
    looked: dict[str, dict] = {}  # hidden records and withheld entries' records to look at
    for summary in changed:
        sid = summary["submission_id"]
        new = _entry(track, summary, None, published, state.columns, result)
        if new is None:
            state.listed.pop(sid, None)
        else:
            state.listed[sid] = new
        state.unsettled.pop(sid, None)
        state.unmarked.pop(sid, None)
        visible = new if isinstance(new, Entry) else None
        touched[sid] = visible
        if isinstance(new, dict):
            looked[sid] = new
        chained = visible
        if state.laddered and isinstance(new, dict) and laddered.is_private(new):
            version = version_for(new, None, published)
            chained = Entry(new, version, None) if version is not None else None
        state.private.pop(sid, None)
        if chained is not None and visible is None:
            state.private[sid] = chained
        if state.laddered:
            old = state.chain_of_id.pop(sid, None)
            if old is not None:
                replay_chains.add(old[0])
                state.chains[old[0]].pop(old[1], None)
                state.steps.pop(old[1], None)
            if chained is not None:
                name = chain_of(chained.record)
                state.chains.setdefault(name, {})[chained.key] = chained
                state.chain_of_id[sid] = (name, chained.key)
                replay_chains.add(name)
        elif chained is not None and needs_mark(chained, published, state.steps):
            state.unmarked[sid] = chained
    released: dict[str, bool] = {}
    if replay_chains:
        margin = laddered.margins(store, cache, track)
        for name in sorted(replay_chains):
            members = state.chains.get(name) or {}
            steps = replay(members.values(), margin)
            for key, step in steps.items():
                state.steps[key] = step
                e = members[key]
                released[key[0]] = step.released
                touched.setdefault(key[0], e if isinstance(state.listed.get(key[0]), Entry) else None)
                if needs_mark(e, published, state.steps):
                    state.unmarked[key[0]] = e
                else:
                    state.unmarked.pop(key[0], None)
            if not members:
                state.chains.pop(name, None)
    inserted: list[Entry] = []
    for sid, visible in touched.items():
        shown = visible is not None and released.get(sid, True)
        was = board.entries.get(sid)
        if visible is not None and not shown:
            looked[sid] = visible.record  # withheld by the Ladder: its record is among the hidden ones
        if was is None:
            if shown:
                inserted.append(visible)  # type: ignore[arg-type]
            continue
        if not shown or visible is None or visible.key != was.key:
            return None  # a row leaves the board, or shows another version: the full build
        if visible is not was:
            if sort_key(visible, primary) != board.sort_keys[sid]:
                return None
            board.replace(visible, disclosure.row(visible))
    # Hidden ones: those that changed, and the ones not yet seen without envelopes.
    candidates = {**state.unsettled, **looked}
    look = [r for r in candidates.values() if not cache.seen_empty(track, r)]
    inserted.sort(key=lambda e: (e.record["created_at"], e.key[0]))
    # listed as the full build lists them: a folder at a time (a Hub request each), all past FEW_FOLDERS
    ids = {e.key[0] for e in inserted} | {r["submission_id"] for r in look}
    existing = published_files(store, head, track, ids)
    hiding = history.hiding(cache, track, look, look, existing, set())
    if hiding.delete or hiding.scrub:
        return None
    for r in look:
        if not cache.seen_empty(track, r):
            state.unsettled[r["submission_id"]] = r
    envelopes = envelopes_change(track, inserted, existing, envelope)
    for e in inserted:
        board.insert(e, sort_key(e, primary), disclosure.row(e), below)
    state.inserted = inserted
    summary = {"added": envelopes.value, "removed": [], "rows": len(board)}
    previous = state.table.get("export")
    changed_rows = (previous or {}).get("changed", 0) + board.changed
    generated_at = ranking.now_iso()
    export = live_board.export_due(
        previous, changed_rows, len(board), parse_iso(generated_at), request.export_every
    )
    if not envelopes.add and not export and board.changed == 0:
        state.pending = None
        return {}, [], summary
    board.changed = 0
    export_state = (
        {"generated_at": generated_at, "changed": 0}
        if export
        else {**(previous or {}), "changed": changed_rows}
    )
    meta = ranking.board_meta(track, generated_at)
    files, state.pending = board.files(meta, export_state, state.table, cache.segments)
    delete = live_board.stale_files(track, state.table, files)
    if export:
        files.update(export_files(store, head, track, {**meta, "rows": board.rows()}))
    logged = changelog_change(
        store, head, track, generated_at, len(board), request.note, envelopes.value, hiding
    )
    parts = [envelopes, Change(files, delete), logged]
    return (
        {p: d for s in parts for p, d in s.add.items()},
        sorted(p for s in parts for p in s.delete),
        summary,
    )


def committed(state: State, cache: Cache, track: str, revision: str) -> None:
    """The change `build` made was committed as `revision` (or nothing was committed)."""
    if state.pending is not None:
        state.table, state.pending = state.pending, None
    for e in state.inserted:  # the board's columns, shared with the listing's cache: only once committed
        state.columns[e.key] = disclosure.columns(e)
    state.inserted = []
    state.revision = revision
    cache.columns[track] = (revision, state.columns)
