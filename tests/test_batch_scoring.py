"""Batch scoring under a paced Hub commit budget (worker/gold/batch.py): several queued records of several
tracks scored and committed in ONE submissions commit, a bad file isolated to its own record, the tasks of
the batched records doing nothing, and published marks carried by the next batch's commit.

Positive controls: without pacing every record costs its own commits; the bad file is really rejected."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from tests.conftest_pipeline import Paced
from tests.conftest_ui import seed_public
from tests.factories import mixed_predictions
from worker.gold import batch
from worker.gold.publish import Publisher
from worker.gold.references import ReferenceCache
from worker.records import new_record, predictions_path, staged_result_path
from worker.store.claims import Claims
from worker.store.local import LocalStore
from worker.submissions import load_record, read_index, record_files


class Budgeted(Paced):
    """`Paced` (tight or not) with its own leases, counting commits by area."""

    def __init__(self, store: LocalStore, tight: bool) -> None:
        super().__init__(store)
        self.tight, self.commits = tight, {"submissions": 0, "results": 0}
        self.claims = Claims()

    def commit(self, area, *args, **kwargs):
        self.commits[area] = self.commits.get(area, 0) + 1
        return self._store.commit(area, *args, **kwargs)


def upload(store: LocalStore, track: str, n: int, data: bytes | None = None) -> str:
    sid = f"{n:016x}"
    record = new_record(
        submission_id=sid,
        track=track,
        sha256=f"{n:064x}",
        submitter=f"u{n}",
        metadata={"model_name": f"m{n}"},
    )
    data = data if data is not None else mixed_predictions(track, 0.3 + 0.1 * n, seed=n)
    head = store.head("submissions")
    store.commit(
        "submissions",
        {predictions_path(track, sid): data, **record_files(store, head, [record])},
        [],
        f"upload {sid}",
    )
    return sid


@pytest.fixture
def queued(tmp_path: Path):
    """Five queued uploads over two tracks; the fourth file is garbage that only scoring finds out."""
    local = LocalStore(tmp_path / "data")
    for track in ("varm", "cold"):
        seed_public(local, track)
    keys = [
        ("varm", upload(local, "varm", 1)),
        ("cold", upload(local, "cold", 2)),
        ("varm", upload(local, "varm", 3)),
        ("varm", upload(local, "varm", 4, b'{"id": 1}\nnot json\n')),
        ("cold", upload(local, "cold", 5)),
    ]
    return local, keys


def statuses(store, keys) -> dict:
    return {key: load_record(store, *key)["status"] for key in keys}


def test_a_paced_batch_scores_every_queued_record_in_one_commit(queued) -> None:
    local, keys = queued
    store = Budgeted(local, tight=True)
    refs = ReferenceCache(local).get
    outcomes = batch.score(store, refs, *keys[0], time_limit=60)
    assert store.commits["submissions"] == 1, "one commit for the whole batch"
    bad = keys[3]
    assert outcomes == {k: ("rejected" if k == bad else "scored") for k in keys}
    assert statuses(local, keys) == {k: ("rejected" if k == bad else "scored") for k in keys}
    rejected = load_record(local, *bad)
    assert rejected["report"]["errors"] and rejected["attempts"] == 1  # its own reason, counted attempt
    for key in keys:
        if key != bad:
            record = load_record(local, *key)
            assert record["attempts"] == 1 and [v["version"] for v in record["versions"]] == [1]
            assert local.read("submissions", staged_result_path(*key, 1)) is not None
    for track in ("varm", "cold"):  # the record index says what the records say
        index = read_index(local, track)
        assert {sid: s["status"] for sid, s in index.items()} == {
            sid: load_record(local, track, sid)["status"] for sid in index
        }
    # The tasks sent for the batched records find them done and write nothing.
    for key in keys[1:]:
        assert batch.score(store, refs, *key, time_limit=60)[key] in ("already", "final")
    assert store.commits["submissions"] == 1

    # A paced publish leaves its marks; the next batch's commit carries them at no commit of its own.
    for track in ("varm", "cold"):
        Publisher(store).publish(track)
    assert store.commits["submissions"] == 1 and statuses(local, [keys[0]]) == {keys[0]: "scored"}
    late = ("varm", upload(local, "varm", 6))
    assert batch.score(store, refs, *late, time_limit=60) == {late: "scored"}
    assert store.commits["submissions"] == 2
    assert statuses(local, keys) == {k: ("rejected" if k == bad else "published") for k in keys}
    assert statuses(local, [late]) == {late: "scored"}  # not on the board yet


def test_without_pacing_a_lone_record_is_scored_alone_and_several_in_a_batch(tmp_path: Path) -> None:
    """Not paced, one waiting record keeps the quiet path ('scoring' commit, then the result); several
    waiting ones (a burst starting) share one batch commit."""
    local = LocalStore(tmp_path / "data")
    for track in ("varm", "cold"):
        seed_public(local, track)
    store = Budgeted(local, tight=False)
    refs = ReferenceCache(local).get
    alone = ("varm", upload(local, "varm", 1))
    assert batch.score(store, refs, *alone, time_limit=60) == {alone: "scored"}
    assert store.commits["submissions"] == 2
    assert "scoring" in [h["status"] for h in load_record(local, *alone)["history"]]
    several = [("varm", upload(local, "varm", 2)), ("cold", upload(local, "cold", 3))]
    assert batch.score(store, refs, *several[0], time_limit=60) == {k: "scored" for k in several}
    assert store.commits["submissions"] == 3


def test_a_record_leased_elsewhere_is_left_alone_and_a_lapsed_lease_goes_alone(queued) -> None:
    local, keys = queued
    store = Budgeted(local, tight=True)
    refs = ReferenceCache(local).get
    store.claims.claim(batch.lease_key(keys[1]), 600)  # another worker's batch holds it
    assert batch.score(store, refs, *keys[1], time_limit=60) == {keys[1]: "claimed"}
    assert store.commits["submissions"] == 0

    # A lease that ran out unfinished (its worker died): that record is not batched with the others, and
    # its own next attempt runs alone with a committed 'scoring' step (MAX_ATTEMPTS counts it).
    store.claims.clock = lambda: 1e12  # every lease has lapsed
    outcomes = batch.score(store, refs, *keys[0], time_limit=60)
    assert keys[1] not in outcomes and outcomes[keys[0]] == "scored"
    assert load_record(local, *keys[1])["status"] == "queued"
    before = store.commits["submissions"]
    assert batch.score(store, refs, *keys[1], time_limit=60) == {keys[1]: "scored"}
    assert store.commits["submissions"] == before + 2
    assert "scoring" in [h["status"] for h in load_record(local, *keys[1])["history"]]


def test_the_workers_log_what_the_scoring_itself_cost(queued, caplog) -> None:
    """The batch's log line and the lone path's say the CPU spent in `compute` (bench/bench_burst.py sums
    them): more than nothing, and less than the whole call that also read, committed and indexed."""
    local, keys = queued
    refs = ReferenceCache(local).get
    caplog.set_level("INFO", logger="worker.gold")
    paths = ((Budgeted(local, tight=True), keys[0], "batch: "), (Budgeted(local, tight=False), None, "alone"))
    for store, key, line in paths:
        if key is None:  # the lone path: one waiting record, no pacing
            key = ("varm", upload(local, "varm", 7))
        caplog.clear()
        started = time.thread_time()
        batch.score(store, refs, *key, time_limit=60)
        whole = time.thread_time() - started
        logged = [float(m) for m in re.findall(r"scoring ([\d.]+) s CPU", caplog.text)]
        assert len(logged) == 1 and line in caplog.text, caplog.text
        assert 0 < logged[0] < whole
