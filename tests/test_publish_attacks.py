"""Attacks on the rank parts (worker/live_board.py), the folder listings of HubStore.list and the publisher's
memo of hidden submissions seen without envelopes (worker/gold/publish/history.py), with real stores.

Each scenario ends at the results head: a hidden submission named in no file there, the rank parts on disk
exactly the ones the rank table lists, the live board as leaderboard.json holds it when that was rebuilt
in the same commit. Every check has a positive control, so a scenario cannot pass by doing nothing."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from tests.conftest_pipeline import RecordingEnqueuer
from tests.conftest_ui import publish_demo_board
from tests.test_live_board import TRACK, add_submission, head_files
from worker import live_board
from worker.config import Config
from worker.gold.publish import Publisher
from worker.service import Service
from worker.store import LocalStore, Store, layout
from worker.submissions import load_record, record_files

pytest_plugins = ["tests.conftest_hub"]


def naming(store: Store, sid: str) -> list[str]:
    """Files at the results head that name `sid` (in their path or their bytes)."""
    return sorted(p for p, data in head_files(store).items() if sid in p or sid.encode() in data)


def check_rank_parts(store: Store) -> dict:
    """The rank parts on disk are exactly those the rank table lists, and they hold the board's rows;
    returns the board."""
    board, table = live_board.read(store, TRACK)
    listed = {layout.board_rank_part(TRACK, s) for s in table["ranks"]}
    assert set(store.list("results", layout.board_rank_parts_dir(TRACK))) == listed
    parts = [json.loads(store.read("results", p)) for p in sorted(listed)]
    assert sum(len(p["order"]) for p in parts) == len(board["rows"])
    return board


class RacingStore:
    """A store that runs `before` once, just before the first results commit it is asked for (what another
    process does while this one builds its change); everything else goes to the real store."""

    def __init__(self, store: Store, before) -> None:
        self._store, self._before = store, before

    def __getattr__(self, name: str):
        return getattr(self._store, name)

    def commit(self, area, add, delete, message, parent=None):
        if area == "results" and self._before is not None:
            before, self._before = self._before, None
            before()
        return self._store.commit(area, add, delete, message, parent=parent)


def test_a_hidden_record_without_updated_at_is_looked_at_again(tmp_path) -> None:
    """3d0e234: "a hidden record without updated_at is never taken as seen empty". A record without the
    field is remembered as seen empty at None, and None == None: its folder is never listed again."""
    store = LocalStore(tmp_path)
    ids = publish_demo_board(store, TRACK, 4)
    target = ids[3]
    record = load_record(store, TRACK, target)
    record = {k: v for k, v in record.items() if k != "updated_at"} | {"hidden": True, "hidden_reason": "x"}
    head = store.head("submissions")
    store.commit("submissions", record_files(store, head, [record]), [], "a hidden record without updated_at")
    publisher = Publisher(store, export_every=1e9)
    publisher.publish(TRACK)  # on the board: taken off with its envelope
    assert naming(store, target) == []
    publisher.publish(TRACK)  # off the board: its folder is looked at (empty)
    left = layout.published_result_path(TRACK, target, 1)
    store.commit("results", {left: b"{}"}, [], "an envelope left behind (as the project's own test plants)")
    assert store.read("results", left) == b"{}"  # positive control: it is there
    add_submission(store, 1, 0.5)
    publisher.publish(TRACK)
    assert store.read("results", left) is None, "a record without updated_at was taken as seen empty"


def test_a_publisher_overtaken_by_a_hide_does_not_put_the_submission_back(tmp_path) -> None:
    """Two worker processes: B listed the records before the hide; while it builds, A publishes the hide.
    B's commit conflicts and B rebuilds from the records at the new head (issue 22 item 8): the hidden
    submission stays off (a stale listing used to put its envelope and row back)."""
    store = LocalStore(tmp_path)
    ids = publish_demo_board(store, TRACK, 4)
    target = ids[4]
    service = Service(Config(data_dir=tmp_path, maintainers=("boss",)), store, RecordingEnqueuer())
    a = Publisher(store, export_every=1e9)
    raced = []

    def meanwhile() -> None:
        service.moderate(target, actor="boss", hidden=True, reason="probe")
        a.publish(TRACK)
        raced.append(naming(store, target))

    b = Publisher(RacingStore(store, meanwhile), export_every=1e9)
    add_submission(store, 1, 0.5)  # B has something to publish
    assert target in {r["submission_id"] for r in live_board.read(store, TRACK)[0]["rows"]}  # B lists it
    b.publish(TRACK)
    assert raced == [[]]  # positive control: the hide was published in the middle of B's publish
    assert naming(store, target) == []
    check_rank_parts(store)


def test_a_stale_writer_puts_a_hidden_submission_back_and_the_next_publish_takes_it_off(tmp_path) -> None:
    """A's memo holds the hidden submission as seen empty (A published the hide twice); then a stale writer
    (a worker of an older release during an upgrade) commits the board of before the hide again, envelope
    and row. A's next publish must look again (it is on the board at the head) and take it off, memo or
    not."""
    store = LocalStore(tmp_path)
    ids = publish_demo_board(store, TRACK, 4)
    target = ids[4]
    service = Service(Config(data_dir=tmp_path, maintainers=("boss",)), store, RecordingEnqueuer())
    a = Publisher(store, export_every=1e9)
    a.publish(TRACK)
    shown = store.head("results")
    service.moderate(target, actor="boss", hidden=True, reason="probe")
    a.publish(TRACK)
    a.publish(TRACK)
    assert naming(store, target) == []
    assert (TRACK, target) in a.cache.cleared  # A remembers it as seen empty
    old = {p: store.read("results", p, shown) for p in store.list("results", "", shown)}
    store.commit("results", old, sorted(set(store.list("results", "")) - set(old)), "a stale writer")
    # Positive control: the stale writer put it back at the head.
    assert layout.published_result_path(TRACK, target, 1) in naming(store, target)
    assert target in {r["submission_id"] for r in live_board.read(store, TRACK)[0]["rows"]}
    add_submission(store, 1, 0.5)
    a.publish(TRACK)
    assert naming(store, target) == []
    check_rank_parts(store)


@pytest.mark.parametrize("seed", [5, 11, 23])
def test_random_moderation_keeps_rank_parts_exact_and_hidden_ones_nowhere(
    tmp_path, monkeypatch, seed
) -> None:
    """Hides, unhides and new entries in a random order, published by two publishers in turn (two worker
    processes, each with its memo) and, now and then, a restarted one. After every publish: the rank parts
    on disk are exactly those listed (none left behind), they hold every row and no more, no hidden
    submission is named at the head, a reader that kept its cache gets the board a cold reader gets, and
    leaderboard.json is that board when it was rebuilt in the same commit."""
    monkeypatch.setattr(live_board, "RANK_PART_ROWS", 3)  # several parts on a board of ten rows
    monkeypatch.setattr(live_board, "SEGMENT_ROWS", 4)
    store = LocalStore(tmp_path)
    ids = publish_demo_board(store, TRACK, 6)
    config = Config(data_dir=tmp_path, maintainers=("boss",))
    service = Service(config, store, RecordingEnqueuer(), head_ttl=0)
    publishers = [Publisher(store, export_every=1e9), Publisher(store, export_every=1e9)]
    rng = random.Random(seed)
    hidden: set[str] = set()
    parts_seen, rebuilt, done = set(), 0, Counter()
    for step in range(14):
        op = rng.choice(["hide", "hide", "unhide", "unhide", "add"] if step % 5 else ["add"])
        if op == "hide" and len(hidden) < len(ids) - 2:
            sid = rng.choice(sorted(set(ids) - hidden))
            service.moderate(sid, actor="boss", hidden=True, reason=f"step {step}")
            hidden.add(sid)
            done[op] += 1
        elif op == "unhide" and hidden:
            sid = rng.choice(sorted(hidden))
            service.moderate(sid, actor="boss", hidden=False, reason=f"step {step}")
            hidden.discard(sid)
            done[op] += 1
        elif op == "add":
            ids.append(
                add_submission(
                    store, 100 + step, rng.uniform(0.1, 0.9), at=f"2026-12-02T00:00:{step:02d}.000Z"
                )
            )
        publisher = publishers[step % 2] if step % 7 else Publisher(store, export_every=1e9)
        publisher.publish(TRACK, export=step % 3 == 0)
        board = check_rank_parts(store)
        shown = {r["submission_id"] for r in board["rows"]}
        assert shown == set(ids) - hidden  # every visible one, no hidden one
        for sid in hidden:
            assert naming(store, sid) == [], (step, sid)
        assert service.leaderboard(TRACK) == board  # a reader with its cache == a cold reader
        export = json.loads(store.read("results", layout.leaderboard_json(TRACK)))
        state = live_board.read(store, TRACK)[1]["export"]
        if export["generated_at"] == board["generated_at"]:  # rebuilt by this publish
            assert export == board
            rebuilt += 1
        if state["changed"] == 0:  # the rank table says the exports are current
            assert export["rows"] == board["rows"], (step, op, state, export["generated_at"])
        parts_seen |= set(store.list("results", layout.board_rank_parts_dir(TRACK)))
    # Positive controls: the walk hid and unhid, rebuilt the exports, and rank parts came and went.
    assert done["hide"] >= 2 and done["unhide"] >= 1 and rebuilt >= 4, (done, rebuilt)
    assert len(parts_seen) > len(store.list("results", layout.board_rank_parts_dir(TRACK))) + 3


PREFIXES = [
    "",
    "a",
    "a/",
    "a/1",
    "a/deep",
    "a/deep/",
    "a/deep/x",
    "a/zzz/",
    "a/zzz/q",
    "zzz/q/",
    "ab",
    "c.json",
    "c.json/",
    "b/2.json",
    "deep/",
    "a/deep/more/",
]


def test_hub_list_matches_local_list_for_every_kind_of_prefix(hub_store: Store, tmp_path) -> None:
    """HubStore.list lists the prefix's folder only: the same answers as LocalStore for partial names,
    nested folders, a missing folder inside an existing one, a file taken as a folder, the root, and an
    older revision whose folders the head no longer has."""
    local = LocalStore(tmp_path / "local")
    files = {
        "a/0.json": b"0",
        "a/1.json": b"1",
        "ab/y.json": b"y",
        "b/2.json": b"2",
        "c.json": b"c",
        "a/deep/x.json": b"x",
        "a/deep/more/z.json": b"z",
        "deep/w.json": b"w",
        "a1.json": b"a",
    }
    firsts = [s.commit("results", files, [], "seed") for s in (local, hub_store)]
    for s in (local, hub_store):
        s.commit(
            "results",
            {"new/n.json": b"n"},
            ["a/deep/x.json", "a/deep/more/z.json", "deep/w.json"],
            "a folder gone",
        )
    for prefix in PREFIXES:
        assert hub_store.list("results", prefix) == local.list("results", prefix), prefix
        assert hub_store.list("results", prefix, firsts[1]) == local.list("results", prefix, firsts[0]), (
            "at the first revision",
            prefix,
        )
    # Positive controls: the answers differ by prefix and by revision.
    assert local.list("results", "a/deep/", firsts[0]) == ["a/deep/more/z.json", "a/deep/x.json"]
    assert local.list("results", "a/deep/") == [] and local.list("results", "a") == [
        "a/0.json",
        "a/1.json",
        "a1.json",
        "ab/y.json",
    ]


def test_a_rescore_report_scrubbed_of_a_hidden_submission_keeps_no_trace_of_its_rank(tmp_path) -> None:
    """A re-score report at the head loses a hidden submission's row, but its summary still counted it and
    the other rows' ranks still made room for it: a report whose ranks start at 2 says that a hidden
    submission was first (positions and counts of hidden submissions, in a public file at the head)."""
    from worker.gold.references import ReferenceCache
    from worker.gold.rescore import finalize, plan, score_chunk, stamp

    store = LocalStore(tmp_path)
    publish_demo_board(store, TRACK, 4)
    pinned = ReferenceCache(store).get(TRACK)
    run = stamp()
    chunks = [score_chunk(store, pinned, TRACK, run, i, c, False) for i, c in enumerate(plan(store, TRACK))]
    finalize(store, Publisher(store), TRACK, run, "boss", False, chunks)
    path = layout.rescore_report(TRACK, run)
    report = json.loads(store.read("results", path))
    rows = report["submissions"]
    assert report["summary"]["submissions"] == len(rows) == 7  # positive control: all of them, counted
    top = min(rows, key=lambda r: r["new_rank"])
    assert top["new_rank"] == 1 and min(r["old_rank"] for r in rows) == 1
    service = Service(Config(data_dir=tmp_path, maintainers=("boss",)), store, RecordingEnqueuer())
    service.moderate(top["submission_id"], actor="boss", hidden=True, reason="probe")
    Publisher(store).publish(TRACK, note="hide")
    assert naming(store, top["submission_id"]) == []  # its id is gone everywhere ...
    report = json.loads(store.read("results", path))
    rows = report["submissions"]
    assert len(rows) == 6
    # ... and so is its place: the others are counted and ranked as if it had never been there.
    assert report["summary"]["submissions"] == len(rows)
    assert report["summary"]["rescored"] + report["summary"]["skipped"] == len(rows)
    assert min(r["new_rank"] for r in rows) == 1 and min(r["old_rank"] for r in rows) == 1
