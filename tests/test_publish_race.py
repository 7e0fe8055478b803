"""Issue 22 item 8: a stale publish never replaces a newer board.

Several publishers (one per worker process in production; here threads or spawned processes, each with its
own Publisher) publish the same track while submissions keep arriving, against a store that holds each
results commit back until another writer has had a chance to land first, so commits conflict and are
rebuilt. Every revision of the results history is then walked: a row once on the board stays on it (no
submission is hidden in these scenarios). The positive controls show the races happened (conflicts, a
publish in the middle of another) and that the walk does see a row leave a planted stale board. Against
the code before the fix, the scripted and the thread scenario failed every run, the process one 3 of 3
(about half the runs with 20 submissions instead of 30)."""

from __future__ import annotations

import multiprocessing
import random
import threading
import time
from pathlib import Path

import pytest

from tests.conftest_ui import publish_demo_board
from tests.test_live_board import TRACK, add_submission
from tests.test_publish_attacks import RacingStore
from worker import live_board
from worker.gold.publish import Publisher
from worker.store import ConflictError, LocalStore, Store


def board_ids(store: Store, revision: str, track: str = TRACK) -> set[str]:
    board = live_board.read(store, track, revision)[0] or {}
    return {row["submission_id"] for row in board.get("rows") or []}


def rows_that_left(store: Store, track: str = TRACK) -> list[tuple[int, set[str]]]:
    """(revision number, ids) for every results revision whose board of `track` lacks rows of the one
    before it."""
    revisions = [h["revision"] for h in reversed(store.history("results", limit=100_000))]
    left, before = [], set()
    for number, revision in enumerate(revisions):
        now = board_ids(store, revision, track)
        if before - now:
            left.append((number, before - now))
        before = now
    return left


class HeldCommits:
    """A store whose results commits wait (a random time up to `hold` seconds, as a slow Hub commit does)
    for another results commit to land on top of the parent they were built on, so concurrent publishers
    overtake each other and rebuild; counts conflicts. It watches the head, so it holds commits of other
    threads and processes alike."""

    def __init__(self, store: Store, hold: float, seed: int = 0) -> None:
        self._store, self._hold, self._rng = store, hold, random.Random(seed)
        self._lock = threading.Lock()
        self.conflicts = 0

    def __getattr__(self, name: str):
        return getattr(self._store, name)

    def commit(self, area, add, delete, message, parent=None):
        if area == "results":
            with self._lock:
                until = time.monotonic() + self._rng.uniform(0, self._hold)
            while self._store.head(area) == parent and time.monotonic() < until:
                time.sleep(0.005)
        try:
            return self._store.commit(area, add, delete, message, parent=parent)
        except ConflictError:
            with self._lock:
                self.conflicts += 1
            raise


def publish_until(store: Store, stop, seed: int) -> None:
    """Publish the track again and again (pausing up to 0.3 s, so publishers' listings are not all taken
    together) until `stop` is set, then once more."""
    publisher, rng = Publisher(store, export_every=1e9), random.Random(seed)
    while not stop.is_set():
        publisher.publish(TRACK)
        stop.wait(rng.uniform(0, 0.3))
    publisher.publish(TRACK)


def publishing_process(data_dir: str, seed: int, ready, stop, out) -> None:
    """A worker process's publisher: its own Publisher (memo tables) over its own view of the store."""
    store = HeldCommits(LocalStore(Path(data_dir)), hold=0.3, seed=seed)
    ready.put(seed)
    try:
        publish_until(store, stop, seed)
        out.put((store.conflicts, None))
    except BaseException as exc:  # reported to the test: a failing process must fail it
        out.put((store.conflicts, repr(exc)))


def submissions_arrive(store: Store, n: int) -> list[str]:
    """`n` scored submissions, arriving while publishes are under way."""
    rng, arrived = random.Random(99), []
    for i in range(n):
        arrived.append(add_submission(store, 10 + i, round(0.3 + 0.02 * i, 2)))
        time.sleep(rng.uniform(0, 0.3))
    return arrived


def test_an_overtaken_publish_is_rebuilt_from_the_records_at_the_new_head(tmp_path) -> None:
    """B lists the records, then (before its commit) a new submission is scored and A publishes it. B's
    commit conflicts; its rebuild must not commit B's old board over A's newer one."""
    store = LocalStore(tmp_path)
    publish_demo_board(store, TRACK, 2)
    a = Publisher(store, export_every=1e9)
    newer: list[str] = []

    def meanwhile() -> None:
        newer.append(add_submission(store, 2, 0.6))
        a.publish(TRACK)
        assert newer[0] in board_ids(store, store.head("results"))

    b = Publisher(RacingStore(store, meanwhile), export_every=1e9)
    first = add_submission(store, 1, 0.5)  # B has something to publish
    out = b.publish(TRACK)
    assert newer, "the race did not happen"  # positive control: A published in the middle of B's publish
    assert {first, newer[0]} <= board_ids(store, store.head("results"))
    assert out["rows"] == len(board_ids(store, store.head("results")))
    assert rows_that_left(store) == []


def test_concurrent_publishers_never_take_a_published_row_off_the_board(tmp_path) -> None:
    """Three publisher threads, each with its own Publisher."""
    store = LocalStore(tmp_path)
    publish_demo_board(store, TRACK, 2)
    held = HeldCommits(store, hold=0.3)
    stop = threading.Event()
    errors: list[BaseException] = []

    def publisher(k: int) -> None:
        try:
            publish_until(held, stop, k)
        except BaseException as exc:  # reported below: a failing thread must fail the test
            errors.append(exc)

    threads = [threading.Thread(target=publisher, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    try:
        arrived = submissions_arrive(store, 20)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=300)
    assert errors == []
    assert held.conflicts > 0  # positive control: publishers did overtake each other
    assert set(arrived) <= board_ids(store, store.head("results"))
    assert rows_that_left(store) == []


@pytest.mark.slow
def test_publisher_processes_never_take_a_published_row_off_the_board(tmp_path) -> None:
    """Three worker processes, each with its own Publisher, over one LocalStore folder."""
    store = LocalStore(tmp_path)
    publish_demo_board(store, TRACK, 2)
    ctx = multiprocessing.get_context("spawn")
    ready, stop, out = ctx.Queue(), ctx.Event(), ctx.Queue()
    processes = [
        ctx.Process(target=publishing_process, args=(str(tmp_path), k, ready, stop, out)) for k in range(3)
    ]
    for p in processes:
        p.start()
    try:
        assert sorted(ready.get(timeout=120) for _ in processes) == [0, 1, 2]  # all publishing from now on
        arrived = submissions_arrive(store, 30)
    finally:
        stop.set()
        reports = [out.get(timeout=300) for _ in processes]
        for p in processes:
            p.join(timeout=60)
    assert [error for _, error in reports] == [None, None, None]
    assert sum(conflicts for conflicts, _ in reports) > 0  # positive control: they overtook each other
    assert set(arrived) <= board_ids(store, store.head("results"))
    assert rows_that_left(store) == []


def test_the_history_walk_sees_a_row_leave_a_stale_board(tmp_path) -> None:
    """Positive control of the walk: a board committed from an older listing is found."""
    store = LocalStore(tmp_path)
    publish_demo_board(store, TRACK, 2)
    old = store.head("results")
    stale = {p: store.read("results", p, old) for p in store.list("results", "cold/board/", old)}
    sid = add_submission(store, 1, 0.5)
    Publisher(store, export_every=1e9).publish(TRACK)
    now = store.list("results", "cold/board/")
    store.commit("results", stale, sorted(set(now) - set(stale)), "a stale board (as an older worker wrote)")
    assert rows_that_left(store) == [(len(store.history("results", limit=100_000)) - 1, {sid})]


def test_a_publish_that_failed_covers_no_request(monkeypatch) -> None:
    """A request sent before a publish started is skipped as covered by it only when that publish
    committed: one that gave up (its commits kept being overtaken) covers nothing."""
    from worker.gold import tasks

    calls = []

    class Overtaken:
        def publish(self, track: str) -> dict:
            calls.append(track)
            if len(calls) == 1:
                raise ConflictError("overtaken on every attempt")
            return {"changed": True, "rows": 1}

    monkeypatch.setattr(tasks, "publisher", lambda: Overtaken())
    monkeypatch.setattr(tasks, "_publish_started", {})
    asked = time.time() - 10  # sent before both publishes below started
    with pytest.raises(ConflictError):
        tasks.publish_track(TRACK, time.time())
    assert tasks.publish_track(TRACK, asked)["changed"]  # not covered by the failed one
    assert tasks.publish_track(TRACK, asked) == {"changed": False, "covered": True}  # positive control
    assert calls == [TRACK, TRACK]
