"""Publishing a track: the live board, changelog, new result envelopes and (when due) the complete exports
and dataset card in ONE commit.

A reader of the results area therefore sees either the old leaderboard or the new one, never a mix.
Only the publish queue's single worker runs this, and the commit is optimistic (parent = head) anyway.
A publish writes a bounded amount however long the board is: the live board's rank table and changed
segments (worker/live_board.py), the open head of the changelog, and the new envelopes; the complete
`leaderboard.json`/`.parquet` exports are rebuilt when `live_board.export_due` says so, always when a
submission leaves the board hidden, and on a re-score or maintainer publish (`export=True`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

from cachetools import LRUCache

from scoring.tracks import get_track
from scoring.version import SCORER_VERSION
from worker import live_board
from worker.gold.outcomes import unpack_arrays
from worker.leaderboard import (
    BASE_COLUMNS,
    Entry,
    dataset_card,
    known_verdicts,
    rank_fields,
    row_content,
    sort_key,
    tie_groups,
    to_parquet,
    with_ranks,
)
from worker.records import (
    FINAL_BAD,
    PUBLISHED,
    SCORED,
    now_iso,
    parse_iso,
    public_view,
    published_result_path,
    rows_path,
    staged_result_path,
    transition,
)
from worker.store import Store, codec, commit_change, commit_with_retry, layout
from worker.submissions import AREA, list_records, load_record, read_index, read_json, record_files

RESULTS = "results"
log = logging.getLogger(__name__)
TIE_BOOTSTRAP = 1000
TIE_SEED = 0
ROWS_CACHED = 256  # prepared row-outcome files kept by a Publisher (~46 MB at 1,600 rows)
RESULTS_CACHED = 256  # staged results kept by a Publisher (only new entries need theirs)
COMPARISONS_CACHED = 200_000  # paired-comparison verdicts kept by a Publisher (a few dozen bytes each)
CHANGELOG_HEAD_BYTES = 32_000  # `changelog.jsonl` is sealed into a part once this long (~200 lines)


def _report_names(store: Store, track: str, revision: str | None) -> list[str]:
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
    return frozenset(name.removesuffix(".json") for name in _report_names(store, track, revision))


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


def scrub_hidden(path: str, data: bytes, hidden: frozenset[str]) -> bytes:
    """A public history file (the changelog's head or a part, a re-score report) without any mention of the
    `hidden` submission ids, so the results head shows a hidden submission nowhere. Other files: unchanged."""
    if not hidden:
        return data
    if layout.is_changelog(path):
        lines = []
        for raw in data.splitlines():
            line = json.loads(raw)
            line["added"] = [a for a in line.get("added") or [] if a.split("/")[0] not in hidden]
            if isinstance(line.get("removed"), list):  # older lines listed ids; new ones count
                line["removed"] = [r for r in line["removed"] if r not in hidden]
            lines.append(codec.line(line))
        return b"".join(lines)
    if layout.is_rescore_report(path):
        report = json.loads(data)
        rows = report.get("submissions") or []
        kept = [r for r in rows if r.get("submission_id") not in hidden]
        if len(kept) == len(rows):
            return data
        return codec.pretty(_report_without(report, kept))
    return data


def competition_ranks(values: list[float | None]) -> list[int]:
    """Competition ranks by value (higher is better), as a re-score report ranks its rows: equal values share
    a rank, missing values rank last."""
    scores = [float("-inf") if v is None else v for v in values]
    first: dict[float, int] = {}
    for position, value in enumerate(sorted(scores, reverse=True), start=1):
        first.setdefault(value, position)
    return [first[v] for v in scores]


def _report_without(report: dict, kept: list[dict]) -> dict:
    """A re-score report with only the `kept` rows, counted and ranked among themselves: a removed row
    leaves neither a count nor a rank gap behind."""
    primary = get_track(report["track"]).primary_metric
    old = competition_ranks([(r.get("old") or {}).get(primary) for r in kept])
    new = competition_ranks([(r.get("new") or r.get("old") or {}).get(primary) for r in kept])
    rows = sorted(
        ({**r, "old_rank": o, "new_rank": n} for r, o, n in zip(kept, old, new, strict=True)),
        key=lambda r: r["new_rank"],
    )
    summary = {
        **(report.get("summary") or {}),
        "submissions": len(rows),
        "rescored": sum(not r.get("skipped") for r in rows),
        "skipped": sum(bool(r.get("skipped")) for r in rows),
        "errors": sum(r.get("error") is not None for r in rows),
        "rank_changes": sum(r["old_rank"] != r["new_rank"] for r in rows),
    }
    return {**report, "summary": summary, "submissions": rows}


class Publisher:
    """Builds and commits a track's public files. Keeps immutable per-version files in memory."""

    def __init__(self, store: Store, *, export_every: float = live_board.EXPORT_EVERY_SECONDS) -> None:
        self.store = store
        self.export_every = export_every  # seconds changes may wait for the complete exports
        self._segments: dict = {}  # the live board's segments read or written so far (live_board.read)
        self._results: LRUCache[tuple[str, int], dict] = LRUCache(maxsize=RESULTS_CACHED)
        self._shards: dict[str, dict] = {}  # track -> record index shards read so far (read_index)
        # track -> (results revision, {(id, version): metric columns of its row on that revision's board})
        self._columns: dict[str, tuple[str, dict]] = {}
        # Row outcomes prepared for comparisons (~110 bytes a row, 180 kB for 1,600 VARM rows): a long-lived
        # worker keeps the recently used ones.
        self._rows: LRUCache[tuple[str, int], object] = LRUCache(maxsize=ROWS_CACHED)
        self._below: LRUCache[tuple, bool] = LRUCache(maxsize=COMPARISONS_CACHED)
        self._recalled: set[str] = set()  # tracks whose published verdicts are in `_below`
        # track -> {(id, version): (record, row content, sort key, rank fields, row)} of the last board built:
        # an entry whose record did not change keeps its row content, and its row while its rank does not
        self._built: dict[str, dict[tuple[str, int], tuple]] = {}
        # track -> {(leader key, entry key): verdict} that the last board's tie groups used: most of the next
        # board's are the same, found here without the bounded cache's bookkeeping
        self._verdicts: dict[str, dict] = {}
        # (track, id) -> the record's updated_at when its results folder was seen empty: a hidden submission
        # off the board is looked at once, not at every publish (results_change)
        self._cleared: dict[tuple[str, str], str] = {}
        self._contents: dict[str, tuple[dict, dict]] = {}  # track -> (last board built, {id: row content})
        # track -> ((re-score stamp, published runs), {id: (summary, its entry or, if hidden, the summary)})
        # of the last listing: a summary the index still holds (the same dict) gives the same answer
        self._listed: dict[str, tuple[tuple, dict]] = {}

    def entries(
        self, track: str, rescore_stamp: str | None = None, results_head: str | None = None
    ) -> tuple[list[Entry], list[dict]]:
        """(visible entries, hidden records) of a track as of the submissions head, read now.

        Records come from the record index (summaries: only the shards that changed are read), and an
        entry already on the board at `results_head` (default: the results head) reuses its row's metric
        columns (its result is immutable), so a publish reads the staged results of new entries only."""
        entries, hidden = [], []
        results_head = self.store.head(RESULTS) if results_head is None else results_head
        context = (rescore_stamp, published_runs(self.store, track, results_head))
        on_board = self._board_columns(track, results_head)
        last_context, last = self._listed.get(track, (None, {}))
        last = last if last_context == context else {}
        listed = {}
        for record in self._records(track):
            hit = last.get(record["submission_id"])
            # the index's summary of a record is another dict once the record changed
            entry = (
                hit[1]
                if hit is not None and hit[0] is record
                else self._entry(track, record, *context, on_board)
            )
            if entry is None:
                continue
            listed[record["submission_id"]] = (record, entry)
            if entry is record:
                hidden.append(record)
            else:
                entries.append(entry)
        self._listed[track] = (context, listed)
        return entries, hidden

    def _entry(
        self, track: str, record: dict, rescore_stamp: str | None, published: frozenset[str], on_board: dict
    ) -> Entry | dict | None:
        """The entry of a record; the record itself when it is hidden; None when it is not on the board."""
        version = version_for(record, rescore_stamp, published)
        if version is None or record["status"] in FINAL_BAD:
            return None
        if record.get("hidden"):
            return record
        columns = on_board.get((record["submission_id"], version["version"]))
        if columns is not None:
            return Entry(record, version, None, columns)
        try:
            result = self.result(track, record["submission_id"], version["version"])
        except ValueError:  # a corrupt staged result: leave this one off, publish the others
            result = None
        if result is None:
            log.warning(
                "not publishing %s/%s v%s: its staged result is missing or unreadable",
                track,
                record["submission_id"],
                version["version"],
            )
            return None
        return Entry(record, version, result)

    def _records(self, track: str) -> list[dict]:
        """Summaries of the track's records (oldest first), from the index at the submissions head; every
        record of a store that has no index yet (it gets one with its next record change)."""
        head = self.store.head(AREA)
        index = read_index(self.store, track, head, self._shards.setdefault(track, {}))
        records = list_records(self.store, track, head) if index is None else list(index.values())
        return sorted(records, key=lambda r: r["created_at"])

    def _board_columns(self, track: str, revision: str) -> dict[tuple[str, int], dict]:
        """{(id, version): metric columns} of the rows on the board at `revision` (cached per revision)."""
        cached = self._columns.get(track)
        if cached is not None and cached[0] == revision:
            return cached[1]
        board = live_board.read(self.store, track, revision, self._segments)[0] or {}
        columns = {
            (row["submission_id"], row["version"]): {k: v for k, v in row.items() if k not in BASE_COLUMNS}
            for row in board.get("rows") or []
        }
        self._columns[track] = (revision, columns)
        return columns

    def envelope(self, track: str, entry: Entry) -> dict:
        """The public result envelope of a new entry: the FULL record's public fields (the index keeps
        no description) and its staged result."""
        record = load_record(self.store, track, entry.key[0]) or entry.record
        result = entry.result or self.result(track, *entry.key)
        return {"submission": public_view(record), "version": entry.key[1], "result": result}

    def result(self, track: str, submission_id: str, version: int) -> dict:
        key = (submission_id, version)
        if key not in self._results:
            self._results[key] = read_json(
                self.store, AREA, staged_result_path(track, submission_id, version)
            )
        return self._results[key]

    def _row_outcomes(self, track: str, entry: Entry):
        """The entry's row outcomes in the track's `prepare_compare` form (decoded once, then cached)."""
        if entry.key not in self._rows:
            rows = unpack_arrays(read_json(self.store, AREA, rows_path(track, *entry.key)))
            self._rows[entry.key] = get_track(track).prepare_compare(rows)
        return self._rows[entry.key]

    def significance(self, track: str) -> Callable[[Entry, Entry], bool]:
        """`below(leader, entry)`: is `entry` significantly worse than `leader` on the primary metric?"""
        track_obj = get_track(track)
        primary = track_obj.primary_metric

        def below(leader: Entry, entry: Entry) -> bool:
            key = (track, leader.key, entry.key)
            if key not in self._below:
                cmp = track_obj.paired_compare_prepared(
                    self._row_outcomes(track, leader),
                    self._row_outcomes(track, entry),
                    bootstrap=TIE_BOOTSTRAP,
                    seed=TIE_SEED,
                    metrics=[primary],  # tie groups only need the primary metric
                ).get(primary, {})
                self._below[key] = bool(cmp.get("significant")) and cmp.get("diff", 0) > 0
            return self._below[key]

        return below

    def recall_verdicts(self, track: str) -> int:
        """Seed the comparison cache from the published board (once per track and Publisher), so a worker
        that restarts does not recompute every paired bootstrap: the board's tie groups ARE the verdicts
        it was built from (`known_verdicts`). A board from another scorer version is not used. Returns how
        many verdicts were recalled."""
        if track in self._recalled:
            return 0
        self._recalled.add(track)
        board = live_board.read(self.store, track, None, self._segments)[0]
        if not board or board.get("scorer_version") != SCORER_VERSION:
            return 0
        if board.get("primary_metric") != get_track(track).primary_metric:
            return 0
        recalled = 0
        for (leader, entry), verdict in known_verdicts(board.get("rows") or []).items():
            key = (track, leader, entry)
            if key not in self._below:
                self._below[key] = verdict
                recalled += 1
        return recalled

    def board(self, track: str, entries: list[Entry]) -> dict:
        """The board of `entries` (rows as `worker.leaderboard.build_rows` gives them). Built from the last
        board of this Publisher: rows whose record and rank did not change are reused, and the tie groups
        look up the verdicts they used first."""
        track_obj = get_track(track)
        primary = track_obj.primary_metric
        self.recall_verdicts(track)
        last = self._built.get(track, {})
        items = []
        for e in entries:
            hit = last.get(e.key)
            if hit is None or (hit[0] is not e.record and hit[0] != e.record):
                hit = (e.record, row_content(e), sort_key(e, primary), None, None)
            items.append((hit, e))
        items.sort(key=lambda item: item[0][2])
        ordered = [e for _, e in items]
        built, rows, contents = {}, [], {}
        for (hit, e), fields in zip(items, rank_fields(self._tie_groups(track, ordered)), strict=True):
            row = hit[4] if hit[3] == fields else with_ranks(hit[1], fields)
            built[e.key] = (hit[0], hit[1], hit[2], fields, row)
            rows.append(row)
            contents[e.key[0]] = hit[1]
        self._built[track] = built
        board = {
            "track": track,
            "title": track_obj.title,
            "primary_metric": primary,
            "headline_metrics": list(track_obj.headline_metrics),
            "scorer_version": SCORER_VERSION,
            "generated_at": now_iso(),
            "rows": rows,
        }
        self._contents[track] = (board, contents)
        return board

    def _tie_groups(self, track: str, ordered: list[Entry]) -> list[int]:
        slow = self.significance(track)
        last = self._verdicts.get(track, {})
        used: dict = {}

        def below(leader: Entry, entry: Entry) -> bool:
            key = (leader.key, entry.key)
            verdict = last.get(key)
            if verdict is None:
                verdict = slow(leader, entry)
            used[key] = verdict
            return verdict

        groups = tie_groups(ordered, below)
        self._verdicts[track] = used
        return groups

    def contents(self, track: str, board: dict) -> dict[str, dict] | None:
        """{id: row without rank fields} of a board this Publisher built last (None for another board)."""
        built = self._contents.get(track)
        return built[1] if built is not None and built[0] is board else None

    def publish(
        self,
        track: str,
        *,
        rescore_stamp: str | None = None,
        extra: dict[str, bytes] | None = None,
        note: str = "",
        export: bool = False,
    ) -> dict:
        """Commit the track's public state; then mark its scored submissions published. The complete exports
        are rebuilt when due, and always with `export` or a re-score (`rescore_stamp`).

        Returns {"revision", "changed", "added", "removed", "rows"}; "changed" is False when the results
        area already showed exactly this state (so a burst of publish tasks costs one real publish).
        """
        listed: list[list[Entry]] = []  # the entries of each build; the last one is the committed one

        def build(store: Store, head: str) -> tuple[dict[str, bytes], list[str], dict]:
            # Listed from the submissions head read AFTER `head`, on every attempt: the board at `head` was
            # built from records no newer than these, so this board never takes a row off a newer one
            # (a stale listing rebuilt on a conflict's new head did, issue 22 item 8).
            entries, hidden = self.entries(track, rescore_stamp, head)
            listed.append(entries)
            board = self.board(track, entries)
            envelope = lambda e: self.envelope(track, e)  # noqa: E731 - read only for new entries
            return results_change(
                store,
                head,
                track,
                board,
                entries,
                hidden,
                extra or {},
                note,
                envelope,
                segments=self._segments,
                cleared=self._cleared,
                contents=self.contents(track, board),
                export_every=self.export_every,
                export=export or rescore_stamp is not None,
            )

        before = self.store.head(RESULTS)
        revision, summary = commit_change(self.store, RESULTS, build, f"publish {track}", attempts=10)
        entries = listed[-1]
        self._columns[track] = (revision, {e.key: e.metric_columns() for e in entries})
        # Flags of runs that are published (this one, or an earlier one whose publisher died before this
        # step) are cleared; until then `published_runs` keeps their versions on the board anyway.
        done = published_runs(self.store, track, revision) | ({rescore_stamp} if rescore_stamp else set())
        self._mark_published(track, entries, done)
        return {"revision": revision, "changed": revision != before, **summary}

    def _mark_published(self, track: str, entries: list[Entry], done: frozenset[str] | set[str]) -> None:
        # Only records that were scored or flagged when listed can need a change: re-reading the others
        # (every published submission) made each publish read N records twice.
        waiting = [
            e
            for e in entries
            if e.record["status"] == SCORED
            or (done and any(v.get("pending_rescore") in done for v in e.record["versions"]))
        ]
        if not waiting:
            return
        tight = getattr(self.store, "budget_tight", None)
        if tight is not None and tight(AREA):
            # The Hub's commit budget is being paced (worker/store/budget.py): the board already shows these,
            # so their records wait for a quieter publish (the reconciler republishes scored records).
            return

        def build(store: Store, head: str) -> tuple[dict[str, bytes], list[str]]:
            changed = []
            for e in waiting:
                record = load_record(store, track, e.key[0], head)
                if record is None:
                    continue
                pending = any(v.get("pending_rescore") in done for v in record["versions"])
                if record["status"] != SCORED and not pending:
                    continue
                if pending:
                    record = {
                        **record,
                        "versions": [
                            {k: v for k, v in ver.items() if not (k == "pending_rescore" and v in done)}
                            for ver in record["versions"]
                        ],
                    }
                if record["status"] == SCORED:
                    record = transition(record, PUBLISHED, f"on the leaderboard as version {e.key[1]}")
                changed.append(record)
            return record_files(store, head, changed), []

        commit_with_retry(self.store, AREA, build, f"mark {track} submissions published", attempts=20)


FEW_FOLDERS = 8  # up to this many submissions' results folders are listed one by one (a request each)


def published_files(store: Store, head: str, track: str, ids: set[str]) -> set[str]:
    """The published envelopes of the submissions `ids` at `head`: a listing of each one's folder, whose
    cost does not grow with the board, or of the whole results folder when there are many (a re-score, a
    first publish, a restarted publisher's look at the hidden ones)."""
    if len(ids) > FEW_FOLDERS:
        return set(store.list(RESULTS, layout.results_dir(track), head))
    folders = [layout.published_result_dir(track, sid) for sid in sorted(ids)]
    return {p for folder in folders for p in store.list(RESULTS, folder, head)}


def _seen_empty(cleared: dict[tuple[str, str], str], track: str, record: dict) -> bool:
    """Was this hidden record's results folder seen empty since the record last changed?"""
    at = record.get("updated_at")
    return at is not None and cleared.get((track, record["submission_id"])) == at


def results_change(
    store: Store,
    head: str,
    track: str,
    board: dict,
    entries: list[Entry],
    hidden: list[dict],
    extra: dict[str, bytes],
    note: str,
    envelope: Callable[[Entry], dict],
    *,
    segments: dict | None = None,
    cleared: dict[tuple[str, str], str] | None = None,
    contents: dict[str, dict] | None = None,
    export_every: float = live_board.EXPORT_EVERY_SECONDS,
    export: bool = False,
) -> tuple[dict[str, bytes], list[str], dict]:
    """The results commit that publishes `board` on top of `head`: (add, delete, summary), where summary
    is {"added": ["<id>/v<N>", ...], "removed": [hidden ids whose envelopes go], "rows": n}; `envelope(e)`
    gives the published envelope of an entry that has none yet; `segments`: the live board's segments
    known to the caller (live_board.read); `cleared`: {(track, id): updated_at} of hidden submissions seen
    without envelopes (updated in place); `contents`: {id: row without rank fields} of `board`, when the
    caller has them (else derived from the rows). No operations when the head already shows exactly this
    board and nothing is due (the summary then lists nothing added)."""
    segments = {} if segments is None else segments
    cleared = {} if cleared is None else cleared
    before, table = live_board.read(store, track, head, segments)
    before_rows = (before or {}).get("rows") or []
    # A row on the board at the head was published with its envelope in the same commit: only the others
    # can need one (building 3,000 checked paths per publish cost ~25 ms).
    on_board = {(row["submission_id"], row["version"]) for row in before_rows}
    board_ids = {row["submission_id"] for row in before_rows}
    # The envelopes to know of: those of new entries, and of hidden submissions that may still have some
    # (on the board at the head, or not seen without any since their record last changed).
    unseen = [r for r in hidden if r["submission_id"] in board_ids or not _seen_empty(cleared, track, r)]
    existing = published_files(
        store,
        head,
        track,
        {e.key[0] for e in entries if e.key not in on_board} | {r["submission_id"] for r in unseen},
    )
    add: dict[str, bytes] = {}
    added = []
    for e in entries:
        if e.key in on_board:
            continue
        path = published_result_path(track, *e.key)
        if path not in existing:
            add[path] = codec.pretty(envelope(e))
            added.append(f"{e.key[0]}/v{e.key[1]}")
    hidden_dirs = tuple(layout.published_result_dir(track, r["submission_id"]) for r in unseen)
    delete = sorted(p for p in existing if p.startswith(hidden_dirs)) if hidden_dirs else []
    for r in unseen:  # off the board with no envelope left (or none after this commit): not again
        if r["submission_id"] not in board_ids and not any(
            p.startswith(layout.published_result_dir(track, r["submission_id"])) for p in delete
        ):
            if r.get("updated_at") is not None:  # without it, a change could not be told: look every time
                cleared[(track, r["submission_id"])] = r["updated_at"]
    summary = {
        "added": added,
        "removed": sorted({layout.published_result_id(p) for p in delete}),
        "rows": len(board["rows"]),
    }
    # Hidden means hidden at the head. Every file written since a submission was hidden leaves it out, so
    # only one shown at the head (on the board, or with an envelope) can be named in a history file or an
    # export: those are rewritten now, in the commit that takes it off the board.
    hidden_ids = frozenset(r["submission_id"] for r in hidden)
    shown = {row["submission_id"] for row in before_rows} | set(summary["removed"])
    scrub = frozenset(hidden_ids & shown)
    for path in [
        f"{layout.rescore_reports_dir(track)}{name}"
        for name in (_report_names(store, track, head) if scrub else [])
    ]:
        before_bytes = store.read(RESULTS, path, head) or b""
        after = scrub_hidden(path, before_bytes, scrub)
        if after != before_bytes:
            add[path] = after
    previous_export = (table or {}).get("export")
    contents = contents if contents is not None else live_board.contents(board["rows"])
    before_contents = live_board.cached_contents(segments, track, before)
    changed = (previous_export or {}).get("changed", 0) + live_board.changed_rows(before_contents, contents)
    now = parse_iso(board["generated_at"])
    export = (
        export
        or table is None
        or bool(scrub)
        or live_board.export_due(previous_export, changed, len(board["rows"]), now, export_every)
    )
    if not add and not delete and not extra and not export and before_rows == board["rows"]:
        return {}, [], summary
    state = (
        {"generated_at": board["generated_at"], "changed": 0}
        if export
        else {**previous_export, "changed": changed}
    )
    files = live_board.encode(board, state, table, segments, contents)
    live_board.remember(segments, track, files, board, contents)
    add.update(files)
    delete += live_board.stale_files(track, table, files)
    if export:
        add[layout.leaderboard_json(track)] = codec.pretty(board)
        add[layout.leaderboard_parquet(track)] = to_parquet(board["rows"])
        boards = {t for t in map(layout.board_track, store.list(RESULTS, "", head)) if t}
        add[layout.DATASET_CARD] = dataset_card({t: get_track(t).title for t in boards | {track}})
    line = {
        "at": board["generated_at"],
        "track": track,
        "scorer_version": SCORER_VERSION,
        "added": added,
        "removed": len(summary["removed"]),  # a count: removed entries are hidden ones
        "rows": len(board["rows"]),
        "note": note,
    }
    add.update(changelog_change(store, head, line, scrub))
    add.update({p: scrub_hidden(p, d, hidden_ids) for p, d in extra.items()})
    return add, sorted(delete), summary


def changelog_change(store: Store, head: str, line: dict, scrub: frozenset[str]) -> dict[str, bytes]:
    """The changelog files to commit with a publish: the head `changelog.jsonl` with `line` appended
    (sealed first into the next part `changelog/<NNNNN>.jsonl` once CHANGELOG_HEAD_BYTES long, so a publish
    rewrites a bounded file), and every part that names a submission in `scrub`, without it."""
    files: dict[str, bytes] = {}
    parts = (
        sorted(p for p in store.list(RESULTS, layout.CHANGELOG_PARTS, head) if layout.is_changelog(p))
        if scrub
        else None
    )
    for path in parts or []:
        data = store.read(RESULTS, path, head) or b""
        if (after := scrub_hidden(path, data, scrub)) != data:
            files[path] = after
    current = scrub_hidden(layout.CHANGELOG, store.read(RESULTS, layout.CHANGELOG, head) or b"", scrub)
    if len(current) >= CHANGELOG_HEAD_BYTES:
        if parts is None:
            parts = [p for p in store.list(RESULTS, layout.CHANGELOG_PARTS, head) if layout.is_changelog(p)]
        files[layout.changelog_part(len(parts))] = current
        current = b""
    files[layout.CHANGELOG] = current + codec.line(line)
    return files
