"""The live board (worker/live_board.py): a rank table plus row segments that a publish rewrites in bounded
amounts, the complete exports rebuilt on a cadence, the changelog sealed into parts. Readers get exactly
the board dict leaderboard.json holds; an older store (leaderboard.json only) reads and migrates."""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest

from tests.conftest_pipeline import RecordingEnqueuer
from tests.conftest_ui import publish_demo_board
from tests.factories import PRIMARY, make_entries, mixed_predictions
from worker import live_board
from worker.config import Config
from worker.gold.publish import Publisher, history
from worker.gold.references import ReferenceCache
from worker.gold.scoring_job import score_submission
from worker.leaderboard import metric
from worker.records import new_record, now_iso, parse_iso, predictions_path, record_path
from worker.service import Service
from worker.store import codec, layout
from worker.store.local import LocalStore
from worker.submissions import dumps

TRACK = "cold"


class StandInTies(Publisher):
    """Tie groups from a 2-point rule (synthetic entries have no row outcomes for the paired bootstrap)."""

    def significance(self, track: str):
        primary = PRIMARY[track]
        return lambda a, b: (metric(a.result, primary) or 0) - (metric(b.result, primary) or 0) > 0.02


def stand_in_board(tmp_path: Path, track: str, n: int, order_seed: int | None = None) -> dict:
    entries = make_entries(track, n, seed=1)
    if order_seed is not None:
        random.Random(order_seed).shuffle(entries)
    return StandInTies(LocalStore(tmp_path)).board(track, entries)


def files_of(board: dict) -> dict[str, bytes]:
    return live_board.encode(board, {"generated_at": board["generated_at"], "changed": 0})


def read_back(files: dict[str, bytes], track: str) -> dict:
    table = json.loads(files[layout.board_rank(track)])
    segments = [
        live_board.decode_segment(files[layout.board_segment(track, k)])
        for k in range(len(table["segments"]))
    ]
    parts = [json.loads(files[layout.board_rank_part(track, s)]) for s in table["ranks"]]
    return live_board.assemble(table, segments, parts)


@pytest.mark.parametrize("track", ["varm", "cntp"])
def test_the_board_comes_back_exactly_as_leaderboard_json_holds_it(tmp_path, track) -> None:
    board = stand_in_board(tmp_path, track, 300)
    assert len({r["tie_group"] for r in board["rows"]}) > 3  # positive control: several tie groups
    files = files_of(board)
    back = read_back(files, track)
    want = json.loads(codec.pretty(board))  # what a reader of leaderboard.json gets
    assert back == want
    assert [list(r) for r in back["rows"]] == [list(r) for r in want["rows"]]  # keys in the same order
    assert codec.pretty(back) == codec.pretty(board)
    # Bounded pieces: the rank table is a stamp per SEGMENT_ROWS and per ~RANK_PART_ROWS rows (under a byte
    # a row), a segment holds SEGMENT_ROWS rows, a rank part a few bytes for each of its rows.
    table = json.loads(files[layout.board_rank(track)])
    assert len(files[layout.board_rank(track)]) < len(board["rows"]) + 1000
    assert len(table["segments"]) == -(-300 // live_board.SEGMENT_ROWS)
    assert 2 <= len(table["ranks"]) < 300 // 8  # cut by the ids: several parts, none tiny on average
    assert len(files) == 1 + len(table["segments"]) + len(table["ranks"])


def test_same_board_same_bytes(tmp_path) -> None:
    a = stand_in_board(tmp_path / "a", "varm", 150)
    b = stand_in_board(tmp_path / "b", "varm", 150, order_seed=7)  # entries listed in another order
    b["generated_at"] = a["generated_at"]
    assert files_of(a) == files_of(b)


def test_one_more_entry_rewrites_one_or_two_rank_parts_of_a_long_board(tmp_path) -> None:
    """The rank order is cut by the rows' ids, so a new entry changes the part it lands in (and a part
    whose tie groups move), whatever its rank; the other parts keep their names and bytes."""
    before = stand_in_board(tmp_path / "a", "varm", 1000)
    after = stand_in_board(tmp_path / "b", "varm", 1001)
    assert [r["submission_id"] for r in after["rows"]] != [r["submission_id"] for r in before["rows"]][:1000]
    old_files, known = files_of(before), {}
    table = json.loads(old_files[layout.board_rank("varm")])
    live_board.encode(before, table["export"], None, known)  # what a reader of the head keeps
    new_files = live_board.encode(after, table["export"], table, known)
    written = [p for p in new_files if p.startswith(layout.board_rank_parts_dir("varm"))]
    stale = live_board.stale_files("varm", table, new_files)
    assert 1 <= len(written) <= 3 and len(stale) == len(written)  # a part replaced by one (or split in two)
    assert sum(len(new_files[p]) for p in written) < 2_000  # vs ~5 kB for the whole order of 1,000 rows
    assert len(table["ranks"]) > 8  # positive control: a long board has many parts, most untouched
    kept = {**{p: d for p, d in old_files.items() if p not in stale}, **new_files}
    assert read_back(kept, "varm") == read_back(files_of(after), "varm")  # the same board as from scratch
    assert set(json.loads(files_of(after)[layout.board_rank("varm")])["ranks"]) == set(
        json.loads(new_files[layout.board_rank("varm")])["ranks"]
    )


def test_rank_fields_that_build_rows_cannot_give_are_refused(tmp_path) -> None:
    board = stand_in_board(tmp_path, "varm", 10)
    board["rows"][3]["rank_high"] += 1
    with pytest.raises(ValueError, match="board row 4"):
        files_of(board)


def test_export_due() -> None:
    now = parse_iso("2026-01-01T01:00:00.000Z")
    last = {"generated_at": "2026-01-01T00:55:00.000Z", "changed": 0}
    assert live_board.export_due(None, 0, 10, now, 600)  # no export yet
    assert not live_board.export_due(last, 0, 10, now, 0)  # nothing changed since: never
    assert not live_board.export_due(last, 9, 100, now, 600)  # 9 % changed, 5 minutes old
    assert live_board.export_due(last, 10, 100, now, 600)  # 10 % changed
    assert live_board.export_due(last, 1, 100, now + timedelta(minutes=5), 600)  # 10 minutes old


def test_export_interval_grows_with_a_large_board_so_export_bytes_an_hour_stay_flat() -> None:
    now = parse_iso("2026-12-06T12:00:00.000Z")
    last = {"generated_at": "2026-12-06T11:40:00.000Z", "changed": 0}  # 20 minutes old
    assert live_board.export_interval(600, 100) == live_board.export_interval(600, 10_000) == 600
    assert live_board.export_interval(600, 100_000) == 6000  # 10x the rows: a tenth as often
    assert live_board.export_interval(0, 100_000) == 0  # EXPORT_EVERY_SECONDS=0 still means every publish
    assert live_board.export_due(last, 1, 10_000, now, 600)  # 20 minutes > 10 at 10,000 rows
    assert not live_board.export_due(last, 1, 30_000, now, 600)  # 20 minutes < 30 at 30,000 rows
    assert live_board.export_due(last, 1, 30_000, now + timedelta(minutes=10), 600)
    assert live_board.export_due(last, 3_000, 30_000, now, 600)  # 10 % changed: at once, whatever the size
    # Bytes an hour: an export's bytes are ~proportional to its rows; one every interval.
    per_hour = {rows: rows * 3600 / live_board.export_interval(600, rows) for rows in (10_000, 100_000)}
    assert per_hour[100_000] == per_hour[10_000]


# -- through the publisher ------------------------------------------------------------------------------


def add_submission(store, i: int, quality: float, at: str = "2026-12-01T00:00:{i:02d}.000Z") -> str:
    data = mixed_predictions(TRACK, quality, seed=2000 + i)
    sid = hashlib.sha256(f"live-{i}".encode()).hexdigest()[:16]
    record = new_record(
        submission_id=sid,
        track=TRACK,
        sha256=hashlib.sha256(data).hexdigest(),
        submitter=f"live{i}",
        metadata={
            "model_name": f"live-{i}",
            "organisation": "",
            "model_type": "open",
            "setting": "zero-shot",
            "paper_url": "",
            "code_url": "",
            "description": "",
        },
        is_baseline=False,
        at=at.format(i=i),
    )
    store.commit(
        "submissions",
        {predictions_path(TRACK, sid): data, record_path(TRACK, sid): dumps(record)},
        [],
        f"test: submission {i}",
    )
    assert score_submission(store, ReferenceCache(store).get, TRACK, sid, time_limit=120) == "scored"
    return sid


class CountingStore:
    """A store proxy recording the results-area paths read and committed (everything else delegates)."""

    def __init__(self, store) -> None:
        self._store = store
        self.read_paths: list[str] = []
        self.committed: list[str] = []
        self.deleted: list[str] = []
        self.listed: list[str] = []

    def __getattr__(self, name: str):
        return getattr(self._store, name)

    def list(self, area, prefix="", revision=None):
        if area == "results":
            self.listed.append(prefix)
        return self._store.list(area, prefix, revision)

    def read(self, area, path, revision=None):
        if area == "results":
            self.read_paths.append(path)
        return self._store.read(area, path, revision)

    def commit(self, area, add, delete, message, parent=None):
        if area == "results":
            self.committed += list(add)
            self.deleted += list(delete)
        return self._store.commit(area, add, delete, message, parent=parent)


def head_files(store) -> dict[str, bytes]:
    return {p: store.read("results", p) or b"" for p in store.list("results", "")}


@pytest.fixture
def small_segments(monkeypatch):
    monkeypatch.setattr(live_board, "SEGMENT_ROWS", 2)  # 6-row demo boards span 3 segments


def test_a_publish_rewrites_the_rank_table_and_the_open_segment(
    tmp_path, small_segments, monkeypatch
) -> None:
    store = LocalStore(tmp_path)
    ids = publish_demo_board(store, TRACK, 4)  # 7 rows: segments 0-3, the last one half full
    export_before = store.read("results", layout.leaderboard_json(TRACK))
    counting = CountingStore(store)
    publisher = Publisher(counting, export_every=1e9)
    publisher.recall_verdicts(TRACK)
    add_submission(store, 1, 0.5)
    monkeypatch.setattr(live_board, "EXPORT_CHANGED_SHARE", 0.5)  # one new row of 8: the exports wait
    out = publisher.publish(TRACK, note="one more")
    assert out["rows"] == 8
    board_files = sorted(p for p in counting.committed if "/board/" in p)
    parts = [p for p in board_files if p.startswith(layout.board_rank_parts_dir(TRACK))]
    assert board_files == sorted([layout.board_rank(TRACK), *parts, layout.board_segment(TRACK, 3)])
    assert len(parts) == 1  # the part the new row landed in (a 7-row board has one or two parts)
    assert [p for p in counting.deleted if "/board/" in p] != [] and all(  # the part it replaces
        p.startswith(layout.board_rank_parts_dir(TRACK)) for p in counting.deleted if "/board/" in p
    )
    assert store.read("results", layout.leaderboard_json(TRACK)) == export_before  # not rebuilt
    assert counting.committed.count(layout.CHANGELOG) == 1 and layout.DATASET_CARD not in counting.committed
    # The live board is current; the rank table says how far the exports lag.
    board, table = live_board.read(store, TRACK)
    assert len(board["rows"]) == 8 and table["export"]["changed"] == 1
    assert len(json.loads(export_before)["rows"]) == 7
    assert board["rows"] == Publisher(store).board(TRACK, Publisher(store).entries(TRACK)[0])["rows"]

    # Positive control: hiding the earliest entry shifts every later row, so every segment is rewritten,
    # and the exports are rebuilt at once (they showed it).
    counting.committed.clear()
    service = Service(Config(data_dir=tmp_path, maintainers=("boss",)), store, RecordingEnqueuer())
    service.moderate(ids[0], actor="boss", hidden=True, reason="probe")
    publisher.publish(TRACK, note="hide")
    assert sorted(p for p in counting.committed if "/board/rows/" in p) == [
        layout.board_segment(TRACK, k) for k in range(4)
    ]
    assert layout.leaderboard_json(TRACK) in counting.committed
    deleted = [p for p in counting.deleted if not p.startswith(layout.board_rank_parts_dir(TRACK))]
    assert deleted and all(ids[0] in p for p in deleted)  # its envelope (and the replaced rank parts)
    files = head_files(store)
    assert not [p for p, data in files.items() if ids[0].encode() in data]
    assert (
        json.loads(files[layout.leaderboard_json(TRACK)])["rows"] == live_board.read(store, TRACK)[0]["rows"]
    )


def test_exports_follow_the_clock_and_a_forced_publish(tmp_path) -> None:
    store = LocalStore(tmp_path)
    publish_demo_board(store, TRACK, 20)  # 23 rows: one more is under 10 %
    add_submission(store, 2, 0.4)
    Publisher(store, export_every=1e9).publish(TRACK)
    export = json.loads(store.read("results", layout.leaderboard_json(TRACK)))
    assert len(export["rows"]) == 23 and len(live_board.read(store, TRACK)[0]["rows"]) == 24
    # Nothing new, but the change waited longer than export_every: the next publish rebuilds the exports.
    out = Publisher(store, export_every=0).publish(TRACK)
    assert out["changed"] and out["added"] == []
    board = live_board.read(store, TRACK)[0]
    assert json.loads(store.read("results", layout.leaderboard_json(TRACK))) == board
    assert Publisher(store, export_every=0).publish(TRACK)["changed"] is False  # then nothing is due
    add_submission(store, 3, 0.6)
    Publisher(store, export_every=1e9).publish(TRACK, export=True)  # a maintainer's publish
    assert len(json.loads(store.read("results", layout.leaderboard_json(TRACK)))["rows"]) == 25


def test_an_older_store_reads_and_gets_the_live_board_at_its_next_publish(tmp_path) -> None:
    store = LocalStore(tmp_path)
    publish_demo_board(store, TRACK, 3)
    # As an older pipeline left it: leaderboard.json and its parquet, no live board.
    old = store.read("results", layout.leaderboard_json(TRACK))
    store.commit("results", {}, [p for p in store.list("results", f"{TRACK}/board/")], "an older store")
    assert live_board.read(store, TRACK) == (json.loads(old), None)
    service = Service(Config(data_dir=tmp_path), store, RecordingEnqueuer())
    assert service.leaderboard(TRACK) == json.loads(old)
    assert (
        Publisher(store).board(TRACK, Publisher(store).entries(TRACK)[0])["rows"] == json.loads(old)["rows"]
    )

    add_submission(store, 4, 0.7)
    Publisher(store, export_every=1e9).publish(TRACK)
    board, table = live_board.read(store, TRACK)
    assert table is not None and len(board["rows"]) == 7
    assert json.loads(store.read("results", layout.leaderboard_json(TRACK))) == board  # exports rebuilt
    service.head_ttl = 0
    assert service.leaderboard(TRACK) == board


def test_a_reader_after_a_publish_reads_the_rank_table_and_the_changed_segment(
    tmp_path, small_segments
) -> None:
    store = LocalStore(tmp_path)
    publish_demo_board(store, TRACK, 4)
    counting = CountingStore(store)
    service = Service(Config(data_dir=tmp_path), counting, RecordingEnqueuer(), head_ttl=0)
    first = service.leaderboard(TRACK)
    cold = Counter(p.split("/")[-2] for p in counting.read_paths)
    assert cold["board"] == 1 and cold["rows"] == 4 and cold["ranks"] >= 1 and len(cold) == 3  # all
    add_submission(store, 5, 0.3)
    Publisher(store, export_every=1e9).publish(TRACK)
    counting.read_paths.clear()
    board = service.leaderboard(TRACK)
    parts = [p for p in counting.read_paths if p.startswith(layout.board_rank_parts_dir(TRACK))]
    assert counting.read_paths == [layout.board_rank(TRACK), layout.board_segment(TRACK, 3), *parts]
    assert len(parts) == 1  # the part that changed, not the others
    assert len(board["rows"]) == len(first["rows"]) + 1
    assert board == live_board.read(store, TRACK)[0]


def test_a_cold_reader_of_a_long_board_reads_the_export_and_the_files_changed_since(
    tmp_path, small_segments, monkeypatch
) -> None:
    store = LocalStore(tmp_path)
    publish_demo_board(store, TRACK, 20)  # 23 rows: 12 segments and a few rank parts
    add_submission(store, 6, 0.45)
    monkeypatch.setattr(live_board, "EXPORT_CHANGED_SHARE", 0.5)  # one new row of 24: the exports wait
    Publisher(store, export_every=1e9).publish(TRACK)
    expected, table = live_board.read(store, TRACK)
    assert table is not None and table["export"]["changed"] == 1  # the export lags by the new row

    def cold_reads() -> tuple[dict, list[str]]:
        counting = CountingStore(store)
        service = Service(Config(data_dir=tmp_path), counting, RecordingEnqueuer(), head_ttl=0)
        return service.leaderboard(TRACK), counting.read_paths

    board, reads = cold_reads()
    assert board == expected
    rows_read = [p for p in reads if p.startswith(layout.board_segments_dir(TRACK))]
    parts_read = [p for p in reads if p.startswith(layout.board_rank_parts_dir(TRACK))]
    assert reads[:2] == [layout.board_rank(TRACK), layout.leaderboard_json(TRACK)]
    assert rows_read == [layout.board_segment(TRACK, 11)]  # the one segment the new row changed
    # The parts the new row changed come whole in the rank table (`fresh`): no part is read.
    assert 1 <= len(table["fresh"]) <= 2 and parts_read == [] and len(reads) == 3
    # Control: a table that carries no part whole: the changed parts are read, and only those.
    monkeypatch.setattr(live_board, "FRESH_PART_BODIES", 0)
    add_submission(store, 7, 0.55)
    Publisher(store, export_every=1e9).publish(TRACK)
    expected, table = live_board.read(store, TRACK)
    assert table["export"]["changed"] == 2 and set(table["fresh"].values()) == {None}
    board, reads = cold_reads()
    assert board == expected
    parts_read = [p for p in reads if p.startswith(layout.board_rank_parts_dir(TRACK))]
    assert sorted(parts_read) == sorted(layout.board_rank_part(TRACK, s) for s in table["fresh"])
    assert 1 <= len(parts_read) <= 4
    # Control: a reader that does not start from the export reads every segment and every part.
    monkeypatch.setattr(live_board, "SEED_FROM_EXPORT_FILES", 10**9)
    board, reads = cold_reads()
    assert board == expected
    assert len([p for p in reads if p.startswith(layout.board_segments_dir(TRACK))]) == len(table["segments"])
    assert len([p for p in reads if p.startswith(layout.board_rank_parts_dir(TRACK))]) == len(table["ranks"])


def test_a_rank_part_carried_in_the_table_is_taken_only_when_it_gives_its_stamp(
    tmp_path, small_segments, monkeypatch
) -> None:
    """The rank table's `fresh` bodies only save reads: one altered in the table (here: its tie starts, so
    the board's ranks would be wrong) does not give its stamp, and the part is read from its own file."""
    store = LocalStore(tmp_path)
    publish_demo_board(store, TRACK, 20)
    add_submission(store, 6, 0.45)
    monkeypatch.setattr(live_board, "EXPORT_CHANGED_SHARE", 0.5)
    Publisher(store, export_every=1e9).publish(TRACK)
    expected, table = live_board.read(store, TRACK)
    name, body = next(iter(table["fresh"].items()))
    altered = {**table, "fresh": {**table["fresh"], name: {**body, "starts": [0]}}}
    store.commit("results", {layout.board_rank(TRACK): json.dumps(altered).encode()}, [], "altered table")
    counting = CountingStore(store)
    board = Service(Config(data_dir=tmp_path), counting, RecordingEnqueuer(), head_ttl=0).leaderboard(TRACK)
    assert board == expected
    assert layout.board_rank_part(TRACK, name) in counting.read_paths
    # Positive control: the unaltered body is taken and its file not read (the test above).


def test_a_torn_export_costs_a_cold_reader_reads_not_the_board(tmp_path, small_segments) -> None:
    from worker.store import local

    store = LocalStore(tmp_path)
    publish_demo_board(store, TRACK, 20)  # 23 rows: 12 segments, seeded from the export when cold
    expected = live_board.read(store, TRACK)[0]
    export = store.read("results", layout.leaderboard_json(TRACK))
    oid = hashlib.sha1(export).hexdigest()
    (tmp_path / "store" / "results" / "objects" / oid[:2] / f"{oid}.z").write_bytes(b"torn")
    local.forget_decoded()
    counting = CountingStore(store)
    board, _ = live_board.read(counting, TRACK, None, {})
    assert board == expected  # from its own files: every segment read
    assert len([p for p in counting.read_paths if p.startswith(layout.board_segments_dir(TRACK))]) == 12


def test_the_changelog_is_sealed_into_parts_and_scrubbed_in_all(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(history, "CHANGELOG_HEAD_BYTES", 400)  # two or three lines a part
    store = LocalStore(tmp_path)
    ids = publish_demo_board(store, TRACK, 3)
    late = []
    for i in range(6):
        late.append(add_submission(store, 10 + i, 0.2 + 0.1 * i, at=f"2026-12-01T00:01:{i:02d}.000Z"))
        Publisher(store).publish(TRACK, note=f"publish {i}")
    parts = sorted(p for p in store.list("results", "changelog/"))
    assert len(parts) >= 2 and all(layout.is_changelog(p) for p in parts)
    for part in parts:
        assert len(store.read("results", part)) < 1000
    lines = [json.loads(x) for p in [*parts, layout.CHANGELOG] for x in store.read("results", p).splitlines()]
    assert [x["note"] for x in lines] == ["test boards", *[f"publish {i}" for i in range(6)]]
    assert sorted(a.split("/")[0] for x in lines for a in x["added"]) == sorted(ids + late)
    hidden = late[0]
    assert any(hidden.encode() in store.read("results", p) for p in parts)  # positive control
    service = Service(Config(data_dir=tmp_path, maintainers=("boss",)), store, RecordingEnqueuer())
    service.moderate(hidden, actor="boss", hidden=True, reason="probe")
    Publisher(store).publish(TRACK, note="hide")
    assert not [p for p, data in head_files(store).items() if hidden.encode() in data]
    assert any(late[1].encode() in store.read("results", p) for p in parts)  # the others stay


def test_generated_at_says_how_old_the_exports_are(tmp_path) -> None:
    store = LocalStore(tmp_path)
    publish_demo_board(store, TRACK, 3)
    before = now_iso()
    add_submission(store, 6, 0.5)
    Publisher(store, export_every=1e9).publish(TRACK)  # 1 of 7 rows: over 10 %, rebuilt
    export = json.loads(store.read("results", layout.leaderboard_json(TRACK)))
    assert export["generated_at"] >= before
    assert live_board.read(store, TRACK)[1]["export"] == {
        "generated_at": export["generated_at"],
        "changed": 0,
    }


def test_a_rank_table_written_before_the_rank_parts_reads_and_is_replaced(tmp_path) -> None:
    store = LocalStore(tmp_path)
    publish_demo_board(store, TRACK, 5)
    board, table = live_board.read(store, TRACK)
    # As the previous release wrote it: the whole order and the group starts in the rank table.
    parts = [json.loads(store.read("results", layout.board_rank_part(TRACK, s))) for s in table["ranks"]]
    order, starts = live_board._whole_order(table, parts)
    old = {k: v for k, v in table.items() if k != "ranks"} | {"order": order, "groups": starts}
    store.commit(
        "results",
        {layout.board_rank(TRACK): codec.compact(old)},
        store.list("results", layout.board_rank_parts_dir(TRACK)),
        "an older rank table",
    )
    assert live_board.read(store, TRACK) == (board, old)
    add_submission(store, 7, 0.5)
    Publisher(store, export_every=1e9).publish(TRACK)
    after, new = live_board.read(store, TRACK)
    assert "order" not in new and new["ranks"] and len(after["rows"]) == len(board["rows"]) + 1
    assert sorted(store.list("results", layout.board_rank_parts_dir(TRACK))) == sorted(
        layout.board_rank_part(TRACK, s) for s in new["ranks"]
    )


def test_a_publish_lists_the_new_entries_folders_not_every_envelope(tmp_path) -> None:
    """On the Hub a listing costs a request per 1,000 files it covers: a publish looks at the folders of
    its new entries and of hidden submissions that may still have envelopes, not at every envelope. A
    hidden submission off the board is looked at once, and again when its record changes."""
    store = LocalStore(tmp_path)
    ids = publish_demo_board(store, TRACK, 4)
    counting = CountingStore(store)
    publisher = Publisher(counting, export_every=1e9)
    new = add_submission(store, 1, 0.5)
    publisher.publish(TRACK)
    envelopes = [p for p in counting.listed if p.startswith(layout.results_dir(TRACK))]
    assert envelopes == [layout.published_result_dir(TRACK, new)]
    assert store.list("results", layout.published_result_dir(TRACK, new))  # it was published

    # A hidden submission's envelope left behind off the board (as an older pipeline could leave one):
    # the next publish deletes it, the one after does not look again.
    service = Service(Config(data_dir=tmp_path, maintainers=("boss",)), store, RecordingEnqueuer())
    service.moderate(ids[3], actor="boss", hidden=True, reason="probe")
    publisher.publish(TRACK)
    assert not store.list("results", layout.published_result_dir(TRACK, ids[3]))  # taken off with it
    add_submission(store, 2, 0.4)
    publisher.publish(TRACK)  # off the board now: its folder is looked at once more (empty)
    left = layout.published_result_path(TRACK, ids[3], 1)
    store.commit("results", {left: b"{}"}, [], "an envelope left behind")
    counting.listed.clear()
    third = add_submission(store, 3, 0.45)
    publisher.publish(TRACK)
    # The publisher saw its folder empty and its record has not changed since: this publish trusts that
    # look (the planted file stays: the positive control that the look is skipped) ...
    assert store.read("results", left) == b"{}"
    assert [p for p in counting.listed if p.startswith(layout.results_dir(TRACK))] == [
        layout.published_result_dir(TRACK, third)
    ]
    # ... a changed record is looked at again, and so is every hidden one by a publisher that restarted.
    service.moderate(ids[3], actor="boss", hidden=True, reason="probe, again")
    publisher.publish(TRACK)
    assert store.read("results", left) is None
    store.commit("results", {left: b"{}"}, [], "an envelope left behind again")
    Publisher(store, export_every=1e9).publish(TRACK, export=True)
    assert store.read("results", left) is None
    assert not [p for p, data in head_files(store).items() if ids[3].encode() in data]


@pytest.mark.parametrize("n", [0, 1, live_board.SEGMENT_ROWS, live_board.SEGMENT_ROWS * 2 + 5])
def test_row_count_reads_two_files_whatever_the_size(tmp_path, n) -> None:
    store = LocalStore(tmp_path)
    board = stand_in_board(tmp_path / "entries", "varm", n)
    store.commit("results", files_of(board), [], "board")
    reads = Counter()
    read = store.read
    store.read = lambda area, path, *a, **k: reads.update([path]) or read(area, path, *a, **k)
    assert live_board.row_count(store, "varm", store.head("results")) == len(board["rows"]) == n
    assert sum(reads.values()) <= 2
    assert live_board.row_count(store, "cold", store.head("results")) == 0  # no board


def test_the_dataset_card_counts_every_tracks_rows(tmp_path) -> None:
    """The card's size category is the rows of all boards (the Hub's `size_categories`), written at export."""
    import yaml

    store = LocalStore(tmp_path)
    publish_demo_board(store, TRACK, 20)
    other = stand_in_board(tmp_path / "entries", "varm", 1000)
    store.commit("results", live_board.board_files(other), [], "a long board of another track")
    add_submission(store, 2, 0.4)
    Publisher(store).publish(TRACK, export=True)
    card = store.read("results", layout.DATASET_CARD).decode()
    assert yaml.safe_load(card.split("---")[1])["size_categories"] == ["1K<n<10K"]  # 1,000 + 24 rows
