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
  generated_at}, "ranks": [stamp of each rank part], "segment_rows": S, "segments": [stamp of each
  segment's bytes], "export": {"generated_at", "changed"}, "fresh": {stamp: part or null}}`. `export` says
  when the complete exports (leaderboard.json/.parquet) were last rebuilt and how many rows changed since
  (`export_due`). `fresh` names the rank parts the last export does not hold (those changed since it) and
  carries the first FRESH_PART_BODIES of them whole, so a cold reader, which seeds the rest from the
  export, reads no rank part whatever the board's size (`fresh_parts`).
- `<track>/board/ranks/<stamp>.json`: a part of the rank order, `{"order": [segment row of each rank in the
  part], "starts": [place in the part of each row that starts a tie group]}`, named by the stamp of its
  bytes. The order is cut after each row whose id's CRC-32 is a multiple of RANK_PART_ROWS: cut by content,
  not by position, so a new entry changes the part it lands in (and the parts whose tie groups change) and
  no other, and the rank table lists a stamp per ~RANK_PART_ROWS rows. A publish thus writes a few hundred
  bytes of rank order instead of the whole order (5 bytes a row: 15 kB at 3,000 rows).
  A row's rank is its place in the whole order; its tie_group counts the group starts at or before it;
  rank_low and rank_high are the first and last rank of its group, as `worker.leaderboard.build_rows` sets
  them. A rank table written before the rank parts holds the whole order (`"order"`, `"groups"`: first rank
  of each tie group) instead of `"ranks"`; it is read as it is and replaced at the next publish.

Segments are named by their place and stamped in the rank table, so a reader keeps the ones it has by stamp
and after a publish reads the rank table and the changed segments only. The files are a function of the
board alone: the same board gives byte-identical files.
"""

from __future__ import annotations

import functools
import itertools
import zlib
from collections.abc import Callable
from datetime import datetime

import orjson

from worker.leaderboard import to_parquet
from worker.records import parse_iso
from worker.store import Store, codec, layout
from worker.store.base import UnreadableObject
from worker.submissions import read_json

RESULTS = "results"
SEGMENT_ROWS = 64  # a publish rewrites ~32 rows on average (~40 kB); a cold reader reads N / 64 files
RANK_PART_ROWS = 64  # mean rows of a rank part (a publish rewrites ~0.3 kB of rank order a part it changes)
RANK_FIELDS = ("rank", "rank_low", "rank_high", "tie_group")
EXPORT_EVERY_SECONDS = 600.0
EXPORT_CHANGED_SHARE = 0.1  # the exports are rebuilt once this share of the rows changed since the last one
# A board of more rows than this waits proportionally longer for a time-triggered export: an export's bytes
# grow with its rows, so a fixed interval would make the bytes added to the results history an hour grow
# with the board (~2 GB an hour at 100,000 rows and 600 s); scaled, they stay flat (~0.2 GB an hour at most).
EXPORT_SCALE_ROWS = 10_000
# Rank parts changed since the last export carried whole in the rank table (~0.3 kB each): a cold reader
# then reads the rank table, the export and the changed segments only. Bounded, so the table a publish
# rewrites stays small however long the exports wait on a long board (past it, parts are read one by one).
FRESH_PART_BODIES = 64


def _slot_key(row: dict) -> tuple[str, str]:
    return row["created_at"], row["submission_id"]


def _content(row: dict) -> dict:
    content = dict(row)  # a C-level copy and four deletes: ~50x faster than a filtering comprehension
    for field in RANK_FIELDS:
        del content[field]
    return content


def _group_starts(rows: list[dict]) -> list[int]:
    """First rank of each tie group; ValueError when the rows' rank fields are not what build_rows sets
    (then the rank table could not give them back). Checked column by column (list comparisons run in C:
    a row-by-row check was ~35 ms of a publish at 10,000 rows); a mismatch is then named row by row."""
    groups = [row["tie_group"] for row in rows]
    starts = [i + 1 for i in range(len(groups)) if i == 0 or groups[i] != groups[i - 1]]
    bounds = [*starts, len(rows) + 1]
    lows: list[int] = []
    highs: list[int] = []
    numbers: list[int] = []
    for number, (start, end) in enumerate(itertools.pairwise(bounds), start=1):
        lows += [start] * (end - start)
        highs += [end - 1] * (end - start)
        numbers += [number] * (end - start)
    if (
        groups == numbers
        and [row["rank"] for row in rows] == list(range(1, len(rows) + 1))
        and [row["rank_low"] for row in rows] == lows
        and [row["rank_high"] for row in rows] == highs
    ):
        return starts
    _name_rank_mismatch(rows, starts)
    return starts


def _name_rank_mismatch(rows: list[dict], starts: list[int]) -> None:
    """ValueError naming the first row whose rank fields differ from what its place gives."""
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


def encode_segment(rows: list[dict]) -> bytes:
    columns = sorted(set().union(*(row.keys() for row in rows)))
    body: dict = {"columns": columns, "rows": [list(map(row.get, columns)) for row in rows]}
    # a row with every column has as many keys as there are columns: only the others are looked at
    absent = [
        [i, [j for j, c in enumerate(columns) if c not in row]]
        for i, row in enumerate(rows)
        if len(row) != len(columns)
    ]
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
    slots = sorted(range(len(rows)), key=[_slot_key(row) for row in rows].__getitem__)
    place = [0] * len(rows)  # the segment slot of each row, in rank order
    for slot, row_index in enumerate(slots):
        place[row_index] = slot
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
        stamps.append(codec.stamp(files[path]))
        known[path] = (stamps[-1], content)
    ranks = []
    before_parts = set((table or {}).get("ranks") or [])
    parts = rank_parts(rows, place, starts)
    for part in parts:
        data = codec.compact(part)
        ranks.append(codec.stamp(data))
        path = layout.board_rank_part(track, ranks[-1])
        if ranks[-1] not in before_parts:
            files[path] = data
        known[path] = (ranks[-1], part)
    meta = {k: v for k, v in board.items() if k != "rows"}
    new_table = rank_table(
        meta, ranks, stamps, export, fresh_parts(table, ranks, parts.__getitem__, meta, export)
    )
    return {layout.board_rank(track): codec.compact(new_table), **files}


def rank_table(meta: dict, ranks: list[str], segments: list[str], export: dict, fresh: dict) -> dict:
    table = {
        "board": meta,
        "ranks": ranks,
        "segment_rows": SEGMENT_ROWS,
        "segments": segments,
        "export": export,
    }
    if fresh:
        table["fresh"] = fresh
    return table


def fresh_parts(
    before: dict | None, ranks: list[str], body: Callable[[int], dict], meta: dict, export: dict
) -> dict[str, dict | None]:
    """The rank table's `fresh`: the parts of `ranks` that the last complete export does not hold, in rank
    order, {stamp: its body (`body(i)` of the i-th part), or None past the first FRESH_PART_BODIES}; none
    when this publish rebuilds the export (`export` stamped with the board's own time). The parts the
    export holds are those of the head's table (`before`) that it did not name fresh, so the same board on
    the same head gives the same table whichever way it was built."""
    if export.get("changed") == 0 and export.get("generated_at") == meta.get("generated_at"):
        return {}
    before = before or {}
    exported = set(before.get("ranks") or []) - set(before.get("fresh") or {})
    fresh = [i for i, name in enumerate(ranks) if name not in exported]
    return {ranks[i]: body(i) if n < FRESH_PART_BODIES else None for n, i in enumerate(fresh)}


def _part_ends(rows: list[dict]) -> list[int]:
    """Where the rank order is cut (the end of each part): after each row whose id's CRC-32 is a multiple
    of RANK_PART_ROWS, and after the last row."""
    ends = [i + 1 for i, row in enumerate(rows) if _ends_part(row["submission_id"])]
    if rows and (not ends or ends[-1] != len(rows)):
        ends.append(len(rows))
    return ends


@functools.lru_cache(maxsize=1 << 18)  # a publish asks for every row's id: computed once per id
def _ends_part(submission_id: str) -> bool:
    return zlib.crc32(submission_id.encode()) % RANK_PART_ROWS == 0


def rank_parts(rows: list[dict], order: list[int], starts: list[int]) -> list[dict]:
    """The rank parts of rows in rank order: `order`, the segment row of each; `starts`, the first rank of
    each tie group (as `_group_starts` gives them)."""
    parts, begin, group = [], 0, 0
    for end in _part_ends(rows):
        local = []
        while group < len(starts) and starts[group] <= end:
            local.append(starts[group] - 1 - begin)
            group += 1
        parts.append({"order": order[begin:end], "starts": local})
        begin = end
    return parts


def _whole_order(table: dict, parts: list[dict] | None) -> tuple[list[int], list[int]]:
    """(order, first rank of each tie group) of a rank table and its parts (read in table order)."""
    if parts is None:  # a rank table written before the rank parts
        return table["order"], table["groups"]
    order: list[int] = []
    starts: list[int] = []
    for part in parts:
        starts.extend(len(order) + j + 1 for j in part["starts"])
        order.extend(part["order"])
    return order, starts


def assemble(table: dict, segments: list[list[dict]], parts: list[dict] | None = None) -> dict:
    """The board dict (as leaderboard.json holds it) from a rank table, its decoded segments and its rank
    parts (None for a rank table written before the rank parts)."""
    slots = [row for segment in segments for row in segment]
    order, starts = _whole_order(table, parts)
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


def stale_files(track: str, table: dict | None, files: dict[str, bytes]) -> list[str]:
    """Files of the head's live board (`table`) that the board in `files` (from `encode`) no longer uses:
    segments past its end and rank parts it does not list."""
    new = orjson.loads(files[layout.board_rank(track)])
    before = table or {}
    count = len(new["segments"])
    kept = set(new["ranks"])
    return [
        *(layout.board_segment(track, k) for k in range(count, len(before.get("segments") or []))),
        *(layout.board_rank_part(track, s) for s in before.get("ranks") or [] if s not in kept),
    ]


def changed_rows(before: dict[str, dict], after: dict[str, dict]) -> int:
    """Rows added, removed or changed other than in their rank fields, from two boards' `contents`."""
    return len(before.keys() ^ after.keys()) + sum(
        1 for k, row in after.items() if k in before and before[k] is not row and before[k] != row
    )


def export_due(export: dict | None, changed: int, rows: int, now: datetime, every: float) -> bool:
    """Are the complete exports to be rebuilt? When a share of the rows changed since the last export (so
    their cost per change stays flat as the board grows), or when changes waited `export_interval` (`every`
    seconds, longer for a board of more than EXPORT_SCALE_ROWS rows)."""
    if export is None:
        return True
    if changed <= 0:
        return False
    if changed >= EXPORT_CHANGED_SHARE * rows:
        return True
    return (now - parse_iso(export["generated_at"])).total_seconds() >= export_interval(every, rows)


def export_interval(every: float, rows: int) -> float:
    """Seconds a change may wait for the complete exports of a board of `rows` rows: `every`, scaled by
    rows / EXPORT_SCALE_ROWS above that size, so that export bytes an hour do not grow with the board."""
    return every * max(1.0, rows / EXPORT_SCALE_ROWS)


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
    if last is not None and last[0] == codec.stamp(raw):
        return last[1], last[2]
    table = orjson.loads(raw)
    if last is None:
        _seed_from_export(store, track, table, revision, cache)
    _take_fresh_parts(track, table, cache)
    segments = []
    for k, want in enumerate(table["segments"]):
        path = layout.board_segment(track, k)
        hit = cache.get(path)
        if hit is None or hit[0] != want:
            data = store.read(RESULTS, path, revision)
            if data is None or codec.stamp(data) != want:
                raise ValueError(f"{path} at {revision} does not match its rank table")
            hit = cache[path] = (want, decode_segment(data))
        segments.append(hit[1])
    prefix, end = layout.board_segments_dir(track), layout.board_segment(track, len(segments))
    # list(cache): a web process shares one cache across tracks, whose readers may add to it meanwhile
    for path in [p for p in list(cache) if isinstance(p, str) and p.startswith(prefix) and p >= end]:
        del cache[path]  # a shorter board: forget the rest
    parts = (
        None
        if "ranks" not in table
        else [_rank_part(store, track, want, revision, cache) for want in table["ranks"]]
    )
    listed = {layout.board_rank_part(track, want) for want in table.get("ranks") or []}
    prefix = layout.board_rank_parts_dir(track)
    for path in [p for p in list(cache) if isinstance(p, str) and p.startswith(prefix) and p not in listed]:
        del cache[path]  # parts replaced since
    board = assemble(table, segments, parts)
    row_contents = {row["submission_id"]: row for segment in segments for row in segment}
    cache[("board", track)] = (codec.stamp(raw), board, table, row_contents)
    return board, table


SEED_FROM_EXPORT_FILES = 8  # a board of more files than this is read from its export first when cold


def _seed_from_export(store: Store, track: str, table: dict, revision: str, cache: dict) -> None:
    """A cold reader of a long board: its segments and rank parts as of the last complete export
    (leaderboard.json, rebuilt after EXPORT_CHANGED_SHARE of the rows changed or EXPORT_EVERY_SECONDS),
    derived from that one file into `cache`, so `read` then reads only the files changed since it: a cold
    start costs the same number of reads at 1,000 and 100,000 rows instead of N / 32. The cache is keyed by
    the stamps the rank table lists, so a file that differs from the export's is read as before."""
    if len(table.get("segments") or []) + len(table.get("ranks") or []) <= SEED_FROM_EXPORT_FILES:
        return
    # The export only saves reads: one that is torn, not JSON or of an older format is skipped, and the
    # board is read from its own files as before (which are checked against their stamps).
    try:
        raw = store.read(RESULTS, layout.leaderboard_json(track), revision)
        exported = orjson.loads(raw) if raw is not None else None  # ~3x json's speed on a 31 MB export
        if exported and exported.get("rows"):
            encode(exported, {}, known=cache)  # fills `cache` as `read` would have: segments and rank parts
    except (UnreadableObject, KeyError, TypeError, ValueError):
        return


def _take_fresh_parts(track: str, table: dict, cache: dict) -> None:
    """Put the rank parts the table carries whole (`fresh`) in `cache`, each checked against its stamp (a
    part whose bytes do not give its stamp is read from its own file, which is checked the same way)."""
    for name, body in (table.get("fresh") or {}).items():
        path = layout.board_rank_part(track, name)
        if body is not None and path not in cache and codec.stamp(codec.compact(body)) == name:
            cache[path] = (name, body)


def row_count(store: Store, track: str, revision: str) -> int:
    """How many rows the board of `track` has at `revision`: the full segments from its rank table and the
    last segment's rows (two reads, whatever the board's size); 0 without a board."""
    raw = store.read(RESULTS, layout.board_rank(track), revision)
    if raw is None:
        board = read_json(store, RESULTS, layout.leaderboard_json(track), revision)
        return len((board or {}).get("rows") or [])
    table = orjson.loads(raw)
    stamps = table["segments"]
    if not stamps:
        return 0
    last = store.read(RESULTS, layout.board_segment(track, len(stamps) - 1), revision)
    return (len(stamps) - 1) * table["segment_rows"] + (len(orjson.loads(last)["rows"]) if last else 0)


def _rank_part(store: Store, track: str, want: str, revision: str, cache: dict) -> dict:
    path = layout.board_rank_part(track, want)
    hit = cache.get(path)
    if hit is None:  # named by its stamp: a part in the cache is that part
        data = store.read(RESULTS, path, revision)
        if data is None or codec.stamp(data) != want:
            raise ValueError(f"{path} at {revision} does not match its rank table")
        hit = cache[path] = (want, orjson.loads(data))
    return hit[1]


def remember(
    cache: dict, track: str, files: dict[str, bytes], board: dict, row_contents: dict[str, dict]
) -> None:
    """Tell `cache` (as `read` keeps it) that the rank table in `files` (from `encode`) gives `board`, whose
    rows without rank fields are `row_contents`: a publisher that committed them reads its own board back
    without assembling it (unused until a head holds exactly that rank table)."""
    raw = files[layout.board_rank(track)]
    cache[("board", track)] = (codec.stamp(raw), board, orjson.loads(raw), row_contents)
