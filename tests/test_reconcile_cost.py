"""The reconciler's cost does not grow with the number of submissions (issue 26, item 1).

It works from the record index (`worker/submissions.py`): an idle pass reads the two area heads and
nothing else once it has seen them; a pass after a change reads the index table, the shards whose stamps
moved and only the records that may be stuck. Counted on a real LocalStore through a proxy.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from tests.conftest_hub import HUB_TEST_OPTIONS
from tests.conftest_pipeline import Paced, RecordingEnqueuer, baseline_file, seed_store
from worker.config import Config
from worker.gold.reconcile import reconcile
from worker.records import transition
from worker.service import Service
from worker.store import open_store
from worker.submissions import load_record, update_records


class CallCountingStore:
    """Counts every store call that would be a request on the Hub (head, read, list); delegates the rest."""

    def __init__(self, store) -> None:
        self._store = store
        self.calls: list[tuple] = []

    def __getattr__(self, name: str):
        return getattr(self._store, name)

    def head(self, area):
        self.calls.append(("head", area))
        return self._store.head(area)

    def read(self, area, path, revision=None):
        self.calls.append(("read", area, path))
        return self._store.read(area, path, revision)

    def list(self, area, prefix="", revision=None):
        self.calls.append(("list", area, prefix))
        return self._store.list(area, prefix, revision)


def _store_with(tmp_path: Path, demo_dir: Path, n: int, config: Config | None = None):
    """A seeded store whose cold track holds `n` settled (rejected) submissions, and one of their ids."""
    config = config or Config(data_dir=tmp_path / "data", quota_per_day=50, attempts_per_day=50)
    seed_store(config, demo_dir, **HUB_TEST_OPTIONS)
    store = open_store(config, **HUB_TEST_OPTIONS)
    service = Service(config, store, RecordingEnqueuer())
    out = service.submit(identity="u", track="cold", data=baseline_file("cold"), metadata={"model_name": "m"})
    original = load_record(store, "cold", out["submission_id"])

    def clones(store, head):
        records = []
        for i in range(n):
            record = copy.deepcopy(original)
            record["submission_id"] = f"{i:016x}"
            records.append(transition(record, "rejected", "settled", error="test"))
        return [transition(original, "rejected", "settled", error="test"), *records]

    update_records(store, clones, f"{n} settled submissions")
    return store, "0" * 16


@pytest.mark.parametrize("n", [20, 400])
def test_an_idle_pass_reads_the_same_few_files_whatever_n(tmp_path, demo_dir, n):
    store, some_id = _store_with(tmp_path, demo_dir, n)
    counting = CallCountingStore(store)
    reconcile(counting, RecordingEnqueuer(), stuck_after=0, tracks=("cold",))  # the first pass learns
    counting.calls.clear()
    summary = reconcile(counting, RecordingEnqueuer(), stuck_after=0, tracks=("cold",))
    assert summary["requeued"] == [] and summary["publish"] == []
    assert sorted(counting.calls) == [("head", "results"), ("head", "submissions")], counting.calls

    # positive control: a record made stuck is found, read and re-sent; the others are not read
    def stuck(store, head):
        return [transition(load_record(store, "cold", some_id), "queued", "as if its message was lost")]

    update_records(store, stuck, "a stuck one")
    counting.calls.clear()
    summary = reconcile(counting, RecordingEnqueuer(), stuck_after=0, tracks=("cold",))
    assert summary["requeued"] == [some_id]
    records_read = {c[2] for c in counting.calls if c[0] == "read" and c[2].endswith("submission.json")}
    assert records_read == {f"cold/{some_id}/submission.json"}, records_read
    assert len(counting.calls) <= 12, counting.calls  # heads, the index table, one shard, the record, ...


def test_an_idle_pass_on_the_hub_costs_two_requests(tmp_path, demo_dir, hub_config, fakehub):
    """The same on the Hub, counted by the fake Hub itself: the two heads' repo-info calls per idle pass,
    at 300 submissions (it was about 2 per record per pass)."""
    store, _ = _store_with(tmp_path, demo_dir, 300, config=hub_config)
    reconcile(store, RecordingEnqueuer(), stuck_after=0)
    fakehub.reset()
    reconcile(store, RecordingEnqueuer(), stuck_after=0)
    requests = {route: count for route, count in fakehub.stats().items() if count}
    assert sum(requests.values()) <= 2, requests


def test_a_paced_pass_asks_once_per_results_head_for_a_publish_that_cannot_mark(tmp_path, demo_dir):
    """A scored record the board does not show (e.g. one the Ladder did not release, whose mark a paced
    publish could not commit) made every pass ask for a publish that rebuilt the same board; while paced it
    is asked for once per results head (with no batch coming: one that commits its marks even though paced,
    tests/test_ladder.py). Positive controls: a moved results head and the end of the pacing each ask
    again."""
    store, some_id = _store_with(tmp_path, demo_dir, 3)

    def scored(store, head):
        return [transition(load_record(store, "cold", some_id), "scored", "as if its mark was skipped")]

    update_records(store, scored, "scored, not shown")
    paced = Paced(store)
    passes = [reconcile(paced, RecordingEnqueuer(), stuck_after=0, tracks=("cold",)) for _ in range(3)]
    assert [p["publish_marks"] for p in passes] == [["cold"], [], []]
    assert [p["publish"] for p in passes] == [[], [], []]
    store.commit("results", {"cold/moved.txt": b"a publish that changed the board"}, [], "moved")
    assert reconcile(paced, RecordingEnqueuer(), stuck_after=0, tracks=("cold",))["publish_marks"] == ["cold"]
    assert reconcile(paced, RecordingEnqueuer(), stuck_after=0, tracks=("cold",))["publish_marks"] == []
    paced.tight = False  # the burst is over: the publish can commit its marks now
    asked = [
        reconcile(paced, RecordingEnqueuer(), stuck_after=0, tracks=("cold",))["publish"] for _ in range(2)
    ]
    assert asked == [["cold"], ["cold"]]  # unpaced, as before: every pass while the record is not shown


def test_a_paced_publish_request_is_asked_again_after_a_while_and_a_broker_outage_loses_nothing(
    tmp_path, demo_dir, monkeypatch
):
    """A publish with marks asked for while paced may be lost (a dropped task, a worker that failed it): it
    is asked for again after MARKS_ASK_AGAIN_SECONDS at the same heads. A broker that refuses the request
    does not stop the pass (its other work is reported) and does not count as asked."""
    from worker.gold import reconcile as module

    store, some_id = _store_with(tmp_path, demo_dir, 3)

    def scored(store, head):
        return [transition(load_record(store, "cold", some_id), "scored", "as if its mark was skipped")]

    update_records(store, scored, "scored, not shown")
    paced = Paced(store)

    class DownBroker(RecordingEnqueuer):
        def publish(self, track: str, marks: bool = False) -> None:
            raise ConnectionError("broker down")

    summary = reconcile(paced, DownBroker(), stuck_after=0, tracks=("cold",))
    assert summary["publish_marks"] == [] and summary["errors"] == ["cold publish: ConnectionError"]
    sent = RecordingEnqueuer()
    assert reconcile(paced, sent, stuck_after=0, tracks=("cold",))["publish_marks"] == ["cold"]  # not lost
    assert sent.sent == [("publish", "cold", "marks")]
    assert reconcile(paced, sent, stuck_after=0, tracks=("cold",))["publish_marks"] == []  # asked already
    monkeypatch.setattr(module, "MARKS_ASK_AGAIN_SECONDS", 0.0)  # as if five minutes went by
    assert reconcile(paced, sent, stuck_after=0, tracks=("cold",))["publish_marks"] == ["cold"]
