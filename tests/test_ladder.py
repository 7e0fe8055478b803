"""The Ladder (../shared/spec/disclosure.md §3): release rule and chain replay."""

from __future__ import annotations

import time

import numpy as np
import pytest

from scoring.ladder import Margin, bootstrap_margin, per_row_margin
from scoring.tracks import get_track
from tests.conftest_pipeline import DEMO
from tests.factories import mixed_predictions
from worker.gold.ladder import Step, replay
from worker.leaderboard import Entry


def test_per_row_margin_is_mean_difference_and_std_over_root_n():
    new, best = np.array([1, 1, 0, 1]), np.array([1, 0, 0, 0])
    margin = per_row_margin(new, best)
    d = np.array([0, 1, 0, 1], dtype=float)
    assert margin.diff == d.mean() and margin.se == d.std() / 2
    assert margin.released  # 0.5 > 0.25
    assert not per_row_margin(best, best).released  # no gain is never released (0 > 0 is false)
    assert not Margin(0.01, 0.02).released and Margin(0.03, 0.02).released


def test_bootstrap_margin_reads_the_paired_bootstrap():
    track = get_track("cold")
    refs = track.load_references(DEMO / "cold" / "test.jsonl")
    rows = {
        name: track.prepare_compare(
            track.row_outcomes(refs, (DEMO / "cold" / "baselines" / f"{name}.test.jsonl").read_bytes())
        )
        for name in ("char-ngram", "lexicon")
    }
    margin = track.release_margin(rows["char-ngram"], rows["lexicon"], bootstrap=200, seed=0)
    cmp = track.paired_compare_prepared(
        rows["char-ngram"], rows["lexicon"], bootstrap=200, seed=0, metrics=["f1"]
    )
    assert margin == bootstrap_margin(cmp["f1"]) and margin.se > 0
    assert margin.diff == cmp["f1"]["diff"]
    same = track.release_margin(rows["lexicon"], rows["lexicon"], bootstrap=200, seed=0)
    assert same.diff == 0 and not same.released


def test_varm_margin_is_per_row_jrem():
    track = get_track("varm")
    refs = track.load_references(DEMO / "varm" / "test.jsonl", DEMO / "varm" / "subsets")
    prepared = {
        name: track.prepare_compare(
            track.row_outcomes(refs, (DEMO / "varm" / "baselines" / f"{name}.test.jsonl").read_bytes())
        )
        for name in ("char-ngram", "majority")
    }
    margin = track.release_margin(prepared["char-ngram"], prepared["majority"], bootstrap=0, seed=0)
    cmp = track.paired_compare_prepared(
        prepared["char-ngram"], prepared["majority"], bootstrap=10, seed=0, metrics=["jrem"]
    )
    assert abs(margin.diff - cmp["jrem"]["diff"]) < 1e-12 and margin.released


def _entry(sid: str, who: str, at: str, score: float) -> Entry:
    record = {"submission_id": sid, "submitter": who, "created_at": at}
    return Entry(record, {"version": 1}, {"metrics": {"score": score}})


def test_replay_releases_the_first_and_then_only_clear_gains_per_submitter():
    score = lambda e: e.result["metrics"]["score"]  # noqa: E731
    margin = lambda new, best: Margin(score(new) - score(best), 0.05)  # noqa: E731
    entries = [
        _entry("a1", "alice", "2026-01-01", 0.50),
        _entry("b1", "bob", "2026-01-02", 0.10),
        _entry("a2", "alice", "2026-01-03", 0.53),  # +0.03 < SE: not released
        _entry("a3", "alice", "2026-01-04", 0.60),  # +0.10 over a1: released
        _entry("a4", "alice", "2026-01-05", 0.62),  # +0.02 over a3 (not a1): not released
        _entry("b2", "bob", "2026-01-06", 0.16),  # bob's own chain: +0.06 over b1
    ]
    steps = replay(reversed(entries), margin)  # order comes from created_at, not the list
    assert {k[0]: s.released for k, s in steps.items()} == {
        "a1": True,
        "b1": True,
        "a2": False,
        "a3": True,
        "a4": False,
        "b2": True,
    }
    assert steps[("a2", 1)] == Step(False, ("a1", 1), 0.05)
    assert steps[("a4", 1)] == Step(False, ("a3", 1), 0.05) and steps[("a3", 1)] == Step(True, ("a1", 1))


def test_replay_reuses_a_remembered_step_only_while_its_best_is_unchanged():
    calls = []

    def margin(new, best):
        calls.append((new.key[0], best.key[0]))
        return Margin(-1.0, 0.05)  # never released when measured

    first = _entry("a1", "alice", "2026-01-01", 0.5)
    second = _entry("a2", "alice", "2026-01-02", 0.9)
    second.record["ladder"] = Step(True, ("a1", 1)).as_record(1)  # remembered: released over a1
    assert replay([first, second], margin)[("a2", 1)].released and calls == []
    # a0 joins before a1 (an older submission made public): a2's best moved, so it is measured again
    zeroth = _entry("a0", "alice", "2025-12-31", 0.5)
    first.record["ladder"] = Step(True).as_record(1)
    steps = replay([zeroth, first, second], margin)
    # a1 is measured against a0 and not released; a2 was remembered over a1, now its best is a0: measured
    assert calls == [("a1", "a0"), ("a2", "a0")]
    assert not steps[("a1", 1)].released and not steps[("a2", 1)].released


def test_the_board_shows_only_released_submissions_and_their_owner_sees_why(local_store, tmp_path):
    """In-process pipeline on the demo VARM (a private test): alice's first upload is released; a worse
    one is published but not released (no number for anyone, a reason for her, off the board, no Compare);
    a clearly better one is released. Bob's chain is his own."""
    from tests.conftest_pipeline import RecordingEnqueuer, baseline_file
    from worker.config import Config
    from worker.gold.install import install
    from worker.gold.publish import Publisher
    from worker.gold.references import ReferenceCache
    from worker.gold.scoring_job import score_submission
    from worker.service import Service

    store = local_store
    install(store, "varm", DEMO / "varm", kind="demo")
    service = Service(Config(data_dir=tmp_path / "data"), store, RecordingEnqueuer())
    cache, publisher = ReferenceCache(store), Publisher(store)

    def upload(who: str, name: str) -> str:
        return upload_data(who, baseline_file("varm", name), name)

    def upload_data(who: str, data: bytes, name: str) -> str:
        sid = service.submit(identity=who, track="varm", data=data, metadata={"model_name": name})[
            "submission_id"
        ]
        assert score_submission(store, cache.get, "varm", sid, time_limit=300) == "scored"
        assert service.submission(sid, viewer=who)["result"] is None  # not before the Ladder decided
        publisher.publish("varm")
        return sid

    first, worse, better = (
        upload("alice", "lexicon"),
        upload("alice", "majority"),
        upload("alice", "char-ngram"),
    )
    bobs = upload_data("bob", mixed_predictions("varm", 0.1, seed="bob"), "bob")  # his first: released
    board = {row["submission_id"] for row in service.leaderboard("varm")["rows"]}
    assert {first, better, bobs} <= board and worse not in board

    mine = service.submission(worse, viewer="alice")
    assert mine["status"] == "published" and mine["released"] is False and mine["result"] is None
    assert "not released" in mine["not_released"] and "points" in mine["not_released"]
    assert service.submission(worse) is None  # nobody else sees it at all
    assert service.submission(first)["result"]["result"]["slice"] == "public"  # positive control
    own = {s.submission_id: s for s in service.my_submissions("alice", "varm")}
    assert own[worse].scores in (None, {}) and own[first].scores
    with pytest.raises(ValueError):
        service.compare(first, worse)
    published = store.list("results", "")
    assert not any(worse in path for path in published)
    assert not any(worse.encode() in (store.read("results", path) or b"") for path in published)
    assert any(first.encode() in (store.read("results", path) or b"") for path in published)  # control
    # The reconciler agrees the board is right: a withheld record is not "missing from the board" (it asked
    # for a publish of the track at every pass, every 15 s, for as long as such a record existed).
    from worker.gold.reconcile import reconcile

    summary = reconcile(store, RecordingEnqueuer(), stuck_after=0, tracks=("varm",))
    assert summary["publish"] == [], summary


def test_private_submissions_are_in_their_submitters_chain(local_store, tmp_path):
    """A private upload's number would be an oracle beside the Ladder: it is in its submitter's chain, and
    its owner sees a number only when it is released; released or not, it stays off the board."""
    from tests.conftest_pipeline import RecordingEnqueuer, baseline_file
    from worker.config import Config
    from worker.gold.install import install
    from worker.gold.publish import Publisher
    from worker.gold.references import ReferenceCache
    from worker.gold.scoring_job import score_submission
    from worker.service import Service

    store = local_store
    install(store, "cold", DEMO / "cold", kind="demo")
    service = Service(Config(data_dir=tmp_path / "data"), store, RecordingEnqueuer())
    cache, publisher = ReferenceCache(store), Publisher(store)

    def upload(name: str, private: bool) -> str:
        sid = service.submit(
            identity="alice",
            track="cold",
            data=baseline_file("cold", name),
            metadata={"model_name": name},
            private=private,
        )["submission_id"]
        assert score_submission(store, cache.get, "cold", sid, time_limit=300) == "scored"
        publisher.publish("cold")
        return sid

    public, worse, better = upload("lexicon", False), upload("majority", True), upload("char-ngram", True)
    assert service.submission(worse, viewer="alice")["result"] is None
    assert service.submission(better, viewer="alice")["result"]["result"]["slice"] == "public"
    board = {row["submission_id"] for row in service.leaderboard("cold")["rows"]}
    assert public in board and not board & {worse, better}
    assert service.submission(better) is None and service.submission(worse) is None
    # A private scored record is settled: it stays `scored` (never on the board, never marked published),
    # and the reconciler asks for no publish (it asked at every pass, every 15 s, a publish changing nothing).
    from worker.gold.reconcile import reconcile
    from worker.submissions import load_record, update_records

    assert load_record(store, "cold", worse)["status"] == "scored"
    passes = [reconcile(store, RecordingEnqueuer(), stuck_after=0, tracks=("cold",)) for _ in range(2)]
    assert [p["publish"] for p in passes] == [[], []]
    # Positive control: made public again (not by its owner's Service, so no publish follows), it is
    # missing from the board, and the reconciler asks.
    update_records(
        store,
        lambda s, head: [{**load_record(s, "cold", worse, head), "hidden": False, "hidden_reason": None}],
        "public again",
    )
    assert reconcile(store, RecordingEnqueuer(), stuck_after=0, tracks=("cold",))["publish"] == ["cold"]


def test_a_withheld_record_is_marked_once_a_paced_burst_is_over(local_store, tmp_path, monkeypatch):
    """While the Hub's commit budget is paced a publish skips its marks; a record the board shows gets them
    from the next batch or the reconciler's own commit, but one the Ladder withheld has no envelope to be
    found by: it stayed `scored` until the pacing ended (an hour on the Hub; ~5 % of a 150-upload burst
    waited a whole window in bench/bench_burst.py). Once no first attempt waits, the reconciler asks for a
    publish that commits the marks even though paced, once per pair of heads. Positive controls: while a
    first attempt waits it asks for a plain publish (the batch is coming), and a plain paced publish leaves
    the record scored."""
    from tests.conftest_pipeline import Paced, RecordingEnqueuer, baseline_file
    from worker.config import Config
    from worker.gold import tasks
    from worker.gold.install import install
    from worker.gold.publish import Publisher
    from worker.gold.reconcile import reconcile
    from worker.gold.references import ReferenceCache
    from worker.gold.scoring_job import score_submission
    from worker.service import Service
    from worker.submissions import load_record

    store = local_store
    install(store, "varm", DEMO / "varm", kind="demo")
    service = Service(Config(data_dir=tmp_path / "data"), store, RecordingEnqueuer())
    paced = Paced(store)
    cache, publisher = ReferenceCache(store), Publisher(paced)

    def upload(name: str, score: bool = True) -> str:
        sid = service.submit(
            identity="alice", track="varm", data=baseline_file("varm", name), metadata={"model_name": name}
        )["submission_id"]
        if score:
            assert score_submission(store, cache.get, "varm", sid, time_limit=300) == "scored"
        return sid

    first = upload("lexicon")
    Publisher(store).publish("varm")  # not paced: released and marked
    worse = upload("majority")
    publisher.publish("varm")  # paced: withheld by the Ladder, its mark skipped
    assert load_record(store, "varm", first)["status"] == "published"
    assert load_record(store, "varm", worse)["status"] == "scored"  # the straggler

    queued = upload("char-ngram", score=False)  # a first attempt waits: its batch carries marks
    sent = RecordingEnqueuer()
    summary = reconcile(paced, sent, stuck_after=0, tracks=("varm",))
    assert summary["publish"] == ["varm"] and summary["publish_marks"] == []
    assert [s for s in sent.sent if s[0] == "publish"] == [("publish", "varm")]  # (and its re-sent score)
    assert score_submission(store, cache.get, "varm", queued, time_limit=300) == "scored"
    publisher.publish("varm")  # paced again: nothing marked
    assert load_record(store, "varm", worse)["status"] == "scored"

    sent = RecordingEnqueuer()  # the burst is over: nothing waits for a first attempt
    passes = [reconcile(paced, sent, stuck_after=0, tracks=("varm",)) for _ in range(3)]
    assert [p["publish_marks"] for p in passes] == [["varm"], [], []]  # once per pair of heads
    assert sent.sent == [("publish", "varm", "marks")]
    assert [p["publish"] for p in passes] == [[], [], []]

    ran: list[bool] = []

    class Recording:
        def publish(self, track: str, marks: bool = False) -> dict:
            ran.append(marks)
            return publisher.publish(track, marks=marks)

    # The Celery task: a request covered by a later publish is still published when it asks for marks.
    monkeypatch.setattr(tasks, "publisher", lambda: Recording())
    monkeypatch.setattr(tasks, "_publish_started", {"varm": time.time() + 3600})
    assert tasks.publish_track("varm", time.time()) == {"changed": False, "covered": True}
    assert ran == []  # positive control: a plain request is covered
    tasks.publish_track("varm", time.time(), True)
    assert ran == [True]
    after = load_record(store, "varm", worse)
    assert after["status"] == "published" and after["ladder"]["released"] is False
    assert load_record(store, "varm", queued)["status"] == "published"
    assert reconcile(paced, RecordingEnqueuer(), stuck_after=0, tracks=("varm",))["publish_marks"] == []
