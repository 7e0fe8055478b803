"""The live board of a track in the results area: a small rank table plus row segments, so that a publish
rewrites a bounded amount however long the board is (issue 15), while every reader still gets the complete
board dict that `<track>/leaderboard.json` holds (same row dicts, same order, keys sorted as json.loads of
that file gives them).

- `<track>/board/rows/<NNNNN>.json`: the rows without their rank fields, SEGMENT_ROWS a file, in
  (created_at, submission_id) order. A new submission is the newest, so it lands in the last segment and a
  publish rewrites that one; a removed, re-versioned or late-arriving entry rewrites the segments from it on
  (rare). Columnar compact JSON: `{"columns": [name, ...], "rows": [[value per column], ...]}` plus
  `"absent": [[row, [column, ...]], ...]` for columns a row does not have (e.g. `undefined.<metric>`).
- `<track>/board/rank.json`: `{"board": {track, title, primary_metric, headline_metrics, scorer_version,
  generated_at}, "order": [segment row of rank 1, of rank 2, ...], "groups": [first rank of each tie group],
  "segment_rows": S, "segments": [stamp of each segment's bytes], "export": {"generated_at", "changed"}}`.
  A row's rank is its place in `order`; its tie_group counts the group starts at or before it; rank_low and
  rank_high are the first and last rank of its group, as `worker.leaderboard.build_rows` sets them. `export`
  says when the complete exports (leaderboard.json/.parquet) were last rebuilt and how many rows changed
  since (`export_due`).

Segments are named by their place and stamped in the rank table, so a reader keeps the ones it has by stamp
and after a publish reads the rank table and the changed segments only. The files are a function of the
board alone: the same board gives byte-identical files.
"""

from __future__ import annotations

import hashlib
from datetime import datetime

import orjson

from worker.leaderboard import to_parquet
from worker.records import parse_iso
from worker.store import Store, codec, layout
from worker.submissions import read_json

RESULTS = "results"
SEGMENT_ROWS = 64  # a publish rewrites ~32 rows on average (~40 kB); a cold reader reads N / 64 files
RANK_FIELDS = ("rank", "rank_low", "rank_high", "tie_group")
EXPORT_EVERY_SECONDS = 600.0
EXPORT_CHANGED_SHARE = 0.1  # the exports are rebuilt once this share of the rows changed since the last one


def stamp(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _slot_key(row: dict) -> tuple[str, str]:
    return row["created_at"], row["submission_id"]


def _content(row: dict) -> dict:
    content = dict(row)  # a C-level copy and four deletes: ~50x faster than a filtering comprehension
    for field in RANK_FIELDS:
        del content[field]
    return content


def _group_starts(rows: list[dict]) -> list[int]:
    """First rank of each tie group; ValueError when the rows' rank fields are not what build_rows sets
    (then the rank table could not give them back)."""
    starts: list[int] = []
    for i, row in enumerate(rows):
        if i == 0 or row["tie_group"] != rows[i - 1]["tie_group"]:
            starts.append(i + 1)
    bounds = [*starts, len(rows) + 1]
    group = 0
    for i, row in enumerate(rows):
        if group < len(starts) and i + 1 == bounds[group]:
            group += 1
        expected = (i + 1, bounds[group - 1], bounds[group] - 1, group)
        if tuple(row[f] for f in RANK_FIELDS) != expected:
            raise ValueError(
                f"board row {i + 1} has rank fields {[row[f] for f in RANK_FIELDS]}, "
                f"expected {list(expected)} (rank order, consecutive tie groups)"
            )
    return starts


def encode_segment(rows: list[dict]) -> bytes:
    columns = sorted(set().union(*(row.keys() for row in rows)))
    body: dict = {"columns": columns, "rows": [[row.get(c) for c in columns] for row in rows]}
    absent = [[i, [j for j, c in enumerate(columns) if c not in row]] for i, row in enumerate(rows)]
    absent = [a for a in absent if a[1]]
    if absent:
        body["absent"] = absent
    return codec.compact(body)


def decode_segment(data: bytes) -> list[dict]:
    body = orjson.loads(data)
    columns = body["columns"]
    rows = [dict(zip(columns, values, strict=True)) for values in body["rows"]]
    for i, missing in body.get("absent") or []:
        for j in missing:
            del rows[i][columns[j]]
    return rows


def contents(rows: list[dict]) -> dict[str, dict]:
    """{submission id: row without its rank fields} of a board's rows."""
    return {row["submission_id"]: _content(row) for row in rows}


def cached_contents(cache: dict, track: str, board: dict | None) -> dict[str, dict]:
    """`contents` of `board` as `read` or `remember` kept them in `cache` (the same dicts as its segments,
    so comparing them with a board built from them is mostly identity checks); derived when not kept."""
    last = cache.get(("board", track))
    if last is not None and last[1] is board:
        return last[3]
    return contents((board or {}).get("rows") or [])


def encode(
    board: dict,
    export: dict,
    table: dict | None = None,
    known: dict | None = None,
    row_contents: dict[str, dict] | None = None,
) -> dict[str, bytes]:
    """The rank table and the segments of `board` (a board dict as `Publisher.board` builds it). With the
    rank table at the head (`table`) and segments read from it (`known`, as `read` fills it), a segment whose
    rows are those of the head's is left out (it is not rewritten) and `known` gets the new ones.
    `row_contents`: `contents(board["rows"])` when the caller has them."""
    track, rows = board["track"], board["rows"]
    starts = _group_starts(rows)
    row_contents = contents(rows) if row_contents is None else row_contents
    slots = sorted(range(len(rows)), key=lambda i: _slot_key(rows[i]))
    place = {row_index: slot for slot, row_index in enumerate(slots)}
    before = (table or {}).get("segments") or []
    known = {} if known is None else known
    files, stamps = {}, []
    for k, start in enumerate(range(0, len(rows), SEGMENT_ROWS)):
        path = layout.board_segment(track, k)
        content = [row_contents[rows[i]["submission_id"]] for i in slots[start : start + SEGMENT_ROWS]]
        hit = known.get(path)
        if k < len(before) and hit is not None and hit[0] == before[k] and hit[1] == content:
            stamps.append(hit[0])
            known[path] = (hit[0], content)  # the same rows, as the caller's dicts: next time, identity
            continue
        files[path] = encode_segment(content)
        stamps.append(stamp(files[path]))
        known[path] = (stamps[-1], content)
    table = {
        "board": {k: v for k, v in board.items() if k != "rows"},
        "order": [place[i] for i in range(len(rows))],
        "groups": starts,
        "segment_rows": SEGMENT_ROWS,
        "segments": stamps,
        "export": export,
    }
    return {layout.board_rank(track): codec.compact(table), **files}


def assemble(table: dict, segments: list[list[dict]]) -> dict:
    """The board dict (as leaderboard.json holds it) from a rank table and its decoded segments."""
    slots = [row for segment in segments for row in segment]
    order, starts = table["order"], table["groups"]
    bounds = [*starts, len(order) + 1]
    rows, group = [], 0
    for i, slot in enumerate(order):
        if group < len(starts) and i + 1 == bounds[group]:
            group += 1
        row = {
            **slots[slot],
            "rank": i + 1,
            "rank_low": bounds[group - 1],
            "rank_high": bounds[group] - 1,
            "tie_group": group,
        }
        rows.append({k: row[k] for k in sorted(row)})
    return {**table["board"], "rows": rows}


def board_files(board: dict) -> dict[str, bytes]:
    """Every results file of a board published from scratch: the live board and both exports."""
    return {
        **encode(board, {"generated_at": board["generated_at"], "changed": 0}),
        layout.leaderboard_json(board["track"]): codec.pretty(board),
        layout.leaderboard_parquet(board["track"]): to_parquet(board["rows"]),
    }


def stale_segments(track: str, table: dict | None, rows: int) -> list[str]:
    """Segments of the head's live board (`table`) past the end of a board of `rows` rows."""
    count = -(-rows // SEGMENT_ROWS)
    return [layout.board_segment(track, k) for k in range(count, len((table or {}).get("segments") or []))]


def changed_rows(before: dict[str, dict], after: dict[str, dict]) -> int:
    """Rows added, removed or changed other than in their rank fields, from two boards' `contents`."""
    return len(before.keys() ^ after.keys()) + sum(
        1 for k, row in after.items() if k in before and before[k] is not row and before[k] != row
    )


def export_due(export: dict | None, changed: int, rows: int, now: datetime, every: float) -> bool:
    """Are the complete exports to be rebuilt? When a share of the rows changed since the last export (so
    their cost per change stays flat as the board grows), or when changes wait longer than `every` seconds."""
    if export is None:
        return True
    if changed <= 0:
        return False
    if changed >= EXPORT_CHANGED_SHARE * rows:
        return True
    return (now - parse_iso(export["generated_at"])).total_seconds() >= every


def read(
    store: Store, track: str, revision: str | None = None, cache: dict | None = None
) -> tuple[dict | None, dict | None]:
    """(board, rank table) of `track` at `revision`: assembled from the live board, or leaderboard.json
    for a store published before the live board existed (rank table None); (None, None) when neither.
    `cache` (updated in place) keeps what was read: segments by path and stamp, and the last board per
    track by the stamp of its rank table (with its rows' `contents`, the segments' dicts), so a rank table
    seen before costs one read and no assembling. Treat the board as read-only: a cached one is shared."""
    revision = revision or store.head(RESULTS)
    raw = store.read(RESULTS, layout.board_rank(track), revision)
    if raw is None:
        return read_json(store, RESULTS, layout.leaderboard_json(track), revision), None
    cache = {} if cache is None else cache
    last = cache.get(("board", track))
    if last is not None and last[0] == stamp(raw):
        return last[1], last[2]
    table = orjson.loads(raw)
    segments = []
    for k, want in enumerate(table["segments"]):
        path = layout.board_segment(track, k)
        hit = cache.get(path)
        if hit is None or hit[0] != want:
            data = store.read(RESULTS, path, revision)
            if data is None or stamp(data) != want:
                raise ValueError(f"{path} at {revision} does not match its rank table")
            hit = cache[path] = (want, decode_segment(data))
        segments.append(hit[1])
    prefix, end = layout.board_segments_dir(track), layout.board_segment(track, len(segments))
    for path in [p for p in cache if isinstance(p, str) and p.startswith(prefix) and p >= end]:
        del cache[path]  # a shorter board: forget the rest
    board = assemble(table, segments)
    row_contents = {row["submission_id"]: row for segment in segments for row in segment}
    cache[("board", track)] = (stamp(raw), board, table, row_contents)
    return board, table


def remember(
    cache: dict, track: str, files: dict[str, bytes], board: dict, row_contents: dict[str, dict]
) -> None:
    """Tell `cache` (as `read` keeps it) that the rank table in `files` (from `encode`) gives `board`, whose
    rows without rank fields are `row_contents`: a publisher that committed them reads its own board back
    without assembling it (unused until a head holds exactly that rank table)."""
    raw = files[layout.board_rank(track)]
    cache[("board", track)] = (stamp(raw), board, orjson.loads(raw), row_contents)
