"""A track's live board kept in a Publisher's memory between publishes, so that a publish that adds entries
or changes rows in place costs O(changes), not O(rows) (issue 26).

The model holds exactly what `worker.live_board.encode` derives from a whole board: the rows in rank order
with their tie-group starts, cut into the rank parts (after each row whose id ends a part), the rows'
contents in segment-slot order ((created_at, id), SEGMENT_ROWS a segment), and the stamps of the files at
the revision it was built for. An insertion finds its place by bisection, re-walks the tie groups only until
the walk is back in its old state (the walk's state is its current leader: from a row whose leader is the
old one, every later decision is the old one), and marks the parts and segments it touched; only those are
encoded. The files it gives are byte-identical to `encode` of the whole board
(tests/test_publish_incremental.py checks them against a full rebuild after every step of random sequences).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass, field

from worker import live_board
from worker.leaderboard import Entry, with_ranks
from worker.store import codec, layout

SEGMENT_ROWS = live_board.SEGMENT_ROWS

Below = Callable[[Entry, Entry], bool]  # below(leader, entry), as `ranking.significance` gives it


@dataclass
class Part:
    """A rank part: its rows' sort keys and ids in rank order, which of them start a tie group, and the
    stamp of its bytes as last encoded (None: changed since)."""

    keys: list[tuple]
    ids: list[str]
    starts: list[bool]
    stamp: str | None = None
    body: dict | None = None


@dataclass
class BoardModel:
    track: str
    entries: dict[str, Entry]  # the rows' entries by id
    sort_keys: dict[str, tuple]
    contents: dict[str, dict]  # row without rank fields, by id
    parts: list[Part]
    first_keys: list[tuple]  # sort key of each part's first row
    part_of: dict[str, Part]
    slot_keys: list[tuple]  # (created_at, id) of each segment slot
    slots: list[str]  # id in each slot
    slot_of: dict[str, int]
    segments: list[tuple[str, list[dict]]]  # (stamp, contents) of each segment as last encoded
    dirty_segments: set[int] = field(default_factory=set)
    changed: int = 0  # rows added or changed since the last `files` (for the export's count)

    @classmethod
    def from_board(
        cls,
        track: str,
        rows: list[dict],
        entries: dict[str, Entry],
        sort_keys: dict[str, tuple],
        table: dict,
        contents: dict[str, dict] | None = None,
    ) -> BoardModel | None:
        """The model of a published board (`rows` in rank order with rank fields, as `ranking.board` gives
        them; `contents`: theirs without rank fields, when known) whose rank table at the head is `table`;
        None when its stamps do not agree with that table (then the publisher builds every board from
        scratch until they do)."""
        # a copy: the model changes its own, and the given ones may be a cache's (`live_board.remember`)
        contents = live_board.contents(rows) if contents is None else dict(contents)
        parts: list[Part] = []
        current = Part([], [], [])
        group = None
        for row in rows:
            sid = row["submission_id"]
            current.keys.append(sort_keys[sid])
            current.ids.append(sid)
            current.starts.append(row["tie_group"] != group)
            group = row["tie_group"]
            if live_board._ends_part(sid):
                parts.append(current)
                current = Part([], [], [])
        if current.ids:
            parts.append(current)
        slot_keys = sorted((row["created_at"], row["submission_id"]) for row in rows)
        slots = [sid for _, sid in slot_keys]
        model = cls(
            track,
            entries,
            sort_keys,
            contents,
            parts,
            [p.keys[0] for p in parts],
            {sid: p for p in parts for sid in p.ids},
            slot_keys,
            slots,
            {sid: k for k, sid in enumerate(slots)},
            [
                (want, [contents[sid] for sid in slots[k * SEGMENT_ROWS : (k + 1) * SEGMENT_ROWS]])
                for k, want in enumerate(table.get("segments") or [])
            ],
        )
        for part in parts:
            model._encode_part(part)
        if [p.stamp for p in parts] != table.get("ranks") or len(model.segments) != model.segment_count():
            return None
        return model

    def segment_count(self) -> int:
        return -(-len(self.slots) // SEGMENT_ROWS)

    def __len__(self) -> int:
        return len(self.slots)

    # -- changes ---------------------------------------------------------------------------------------

    def replace(self, entry: Entry, content: dict) -> None:
        """An entry on the board whose row content (not its place) changed, or whose record did."""
        sid = entry.key[0]
        self.entries[sid] = entry
        if self.contents[sid] is not content and self.contents[sid] != content:
            self.contents[sid] = content
            self.dirty_segments.add(self.slot_of[sid] // SEGMENT_ROWS)
            self.changed += 1

    def insert(self, entry: Entry, sort_key: tuple, content: dict, below: Below) -> None:
        """Add a row: its segment slot, its place in the rank order and its part, then the tie groups from
        it on until the walk is back in its old state."""
        sid = entry.key[0]
        self.entries[sid] = entry
        self.sort_keys[sid] = sort_key
        self.contents[sid] = content
        self.changed += 1
        # segment slot
        slot_key = (entry.record["created_at"], sid)
        s = bisect.bisect_left(self.slot_keys, slot_key)
        self.slot_keys.insert(s, slot_key)
        self.slots.insert(s, sid)
        for k in range(s + 1, len(self.slots)):  # later slots move by one (usually none: the newest)
            moved = self.slots[k]
            self.slot_of[moved] = k
            self.part_of[moved].stamp = None
        self.slot_of[sid] = s
        self.dirty_segments.update(range(s // SEGMENT_ROWS, self.segment_count()))
        # rank order
        pi, j = self._place(sort_key)
        part = self.parts[pi]
        part.keys.insert(j, sort_key)
        part.ids.insert(j, sid)
        part.starts.insert(j, True)
        part.stamp = None
        self.part_of[sid] = part
        if j == 0:
            self.first_keys[pi] = sort_key
        if live_board._ends_part(sid) and j + 1 < len(part.ids):  # a new cut: the part splits after it
            tail = Part(part.keys[j + 1 :], part.ids[j + 1 :], part.starts[j + 1 :])
            del part.keys[j + 1 :], part.ids[j + 1 :], part.starts[j + 1 :]
            self.parts.insert(pi + 1, tail)
            self.first_keys.insert(pi + 1, tail.keys[0])
            for moved in tail.ids:
                self.part_of[moved] = tail
        self._rewalk(pi, j, below)

    def _place(self, sort_key: tuple) -> tuple[int, int]:
        """(part, place in it) of a new row with this sort key; a new part when it follows the last cut."""
        if not self.parts:
            self.parts.append(Part([], [], []))
            self.first_keys.append(sort_key)
            return 0, 0
        pi = max(bisect.bisect_right(self.first_keys, sort_key) - 1, 0)
        part = self.parts[pi]
        j = bisect.bisect_right(part.keys, sort_key)
        if j == len(part.ids) and live_board._ends_part(part.ids[-1]):  # after a cut: the next part's first
            pi += 1
            if pi == len(self.parts):
                self.parts.append(Part([], [], []))
                self.first_keys.append(sort_key)
            j = 0
        return pi, j

    def _leader_before(self, pi: int, j: int) -> str | None:
        """The leader (first row of the tie group) of the row before (pi, j); None at the top."""
        if j == 0:
            pi -= 1
            if pi < 0:
                return None
            j = len(self.parts[pi].ids)
        while pi >= 0:
            starts = self.parts[pi].starts
            if j > 0 and True in starts[:j]:
                last = j - 1 - starts[j - 1 :: -1].index(True)
                return self.parts[pi].ids[last]
            pi -= 1
            j = len(self.parts[pi].ids) if pi >= 0 else 0
        return None  # unreachable: the first row starts a group

    def _rewalk(self, pi: int, j: int, below: Below) -> None:
        """Tie groups after inserting the row at (pi, j): it and the rows after it are walked with the new
        leader until the old walk had the same leader before a row."""
        old = self._leader_before(pi, j)  # the walk's state before the new row, and in the old walk before
        part = self.parts[pi]  # the row that now follows it
        sid = part.ids[j]
        start = old is None or below(self.entries[old], self.entries[sid])
        part.starts[j] = start
        new = sid if start else old
        while True:
            j += 1
            if j == len(part.ids):
                pi, j = pi + 1, 0
                if pi == len(self.parts):
                    return
                part = self.parts[pi]
            if new == old:
                return
            sid = part.ids[j]
            was = part.starts[j]
            now = new is None or below(self.entries[new], self.entries[sid])
            if now != was:
                part.starts[j] = now
                part.stamp = None
            old = sid if was else old
            new = sid if now else new

    # -- files -----------------------------------------------------------------------------------------

    def _encode_part(self, part: Part) -> tuple[str, bytes]:
        body = {
            "order": [self.slot_of[sid] for sid in part.ids],
            "starts": [j for j, start in enumerate(part.starts) if start],
        }
        data = codec.compact(body)
        part.stamp, part.body = codec.stamp(data), body
        return part.stamp, data

    def files(self, meta: dict, export: dict, table: dict, known: dict) -> tuple[dict[str, bytes], dict]:
        """The rank table and the changed segments and rank parts, as `live_board.encode` of the whole board
        gives them on top of the head's rank table `table`, and the new rank table; `known` (the publisher's
        segment cache, as `live_board.read` keeps it) gets the new ones."""
        track = self.track
        files: dict[str, bytes] = {}
        count = self.segment_count()
        before = table.get("segments") or []
        for k in sorted(d for d in self.dirty_segments if d < count):
            path = layout.board_segment(track, k)
            content = [self.contents[sid] for sid in self.slots[k * SEGMENT_ROWS : (k + 1) * SEGMENT_ROWS]]
            if k < len(before) and k < len(self.segments) and self.segments[k][1] == content:
                hit = (self.segments[k][0], content)
            else:
                files[path] = live_board.encode_segment(content)
                hit = (codec.stamp(files[path]), content)
            if k < len(self.segments):
                self.segments[k] = hit
            else:
                self.segments.append(hit)
            known[path] = hit
        self.dirty_segments.clear()
        before_parts = set(table.get("ranks") or [])
        for part in self.parts:
            if part.stamp is None:
                name, data = self._encode_part(part)
                path = layout.board_rank_part(track, name)
                if name not in before_parts:
                    files[path] = data
                known[path] = (name, part.body)
        ranks: list[str] = []
        bodies: list[dict] = []
        for part in self.parts:
            assert part.stamp is not None and part.body is not None  # every part is encoded by now
            ranks.append(part.stamp)
            bodies.append(part.body)
        fresh = live_board.fresh_parts(table, ranks, bodies.__getitem__, meta, export)
        new_table = live_board.rank_table(meta, ranks, [s for s, _ in self.segments], export, fresh)
        return {layout.board_rank(track): codec.compact(new_table), **files}, new_table

    def rows(self) -> list[dict]:
        """The board's rows in rank order with their rank fields (O(rows): for the complete exports)."""
        ids = [sid for part in self.parts for sid in part.ids]
        starts = [start for part in self.parts for start in part.starts]
        firsts = [i + 1 for i, start in enumerate(starts) if start]
        bounds = [*firsts, len(ids) + 1]
        rows, group = [], 0
        for i, sid in enumerate(ids):
            if group < len(firsts) and i + 1 == bounds[group]:
                group += 1
            rows.append(with_ranks(self.contents[sid], (i + 1, bounds[group - 1], bounds[group] - 1, group)))
        return rows
