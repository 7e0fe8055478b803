"""A torn store object (issue 27 item 4): one submission record's file cut to half its bytes on disk, as a
crash mid-write would leave it. It is a fault of that record only: its id answers a clear 404, the owner's
list and the quarantine listing go on, and the reconciler still re-sends the same track's other stuck
records (it used to skip the whole track every round)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from fastapi.testclient import TestClient

from space.auth import Auth
from space.server import create_app
from tests.conftest_pipeline import RecordingEnqueuer
from tests.test_faults import baseline, seed, small_demo, submit
from worker.config import Config
from worker.gold.reconcile import reconcile
from worker.service import Service
from worker.store import layout, local, open_store
from worker.submissions import list_records, load_records, quarantined

TRACK = "cold"


def _tear(data_dir: Path, raw: bytes) -> Path:
    """Cut the stored object holding `raw` (content-addressed by its sha1) to half its bytes."""
    oid = hashlib.sha1(raw).hexdigest()
    (obj,) = data_dir.rglob(f"{oid}.z")
    obj.write_bytes(obj.read_bytes()[: obj.stat().st_size // 2])
    return obj


def test_a_torn_record_is_a_fault_of_that_record_only(tmp_path: Path) -> None:
    config = Config(data_dir=tmp_path / "data", stuck_after_seconds=1)
    seed(config, small_demo(tmp_path, (TRACK,)))
    sent = RecordingEnqueuer()
    service = Service(config, open_store(config), sent)
    torn, other = (submit(service, baseline(TRACK, "lexicon", i), f"u{i}", TRACK) for i in range(2))
    path = layout.record_path(TRACK, torn)
    _tear(config.data_dir, open_store(config).read("submissions", path))
    local.forget_decoded()  # a new process: nothing decoded or cached yet
    store = open_store(config)

    client = TestClient(create_app(config, service=service, auth=Auth(config, "open"), with_ui=False))
    answer = client.get(f"/api/v1/submissions/{torn}")
    assert answer.status_code == 404 and "Traceback" not in answer.text, answer.text
    assert client.get(f"/api/v1/submissions/{other}").status_code == 200  # positive control
    mine = client.get("/api/v1/me/submissions", headers={"X-User": "u0"})
    assert mine.status_code == 200 and mine.json()["submissions"] == [], mine.text

    (listed,) = quarantined(store, TRACK)
    assert listed["path"] == path and "unreadable object" in listed["problem"], listed
    assert [r["submission_id"] for r in list_records(store, TRACK)] == [other]

    sent.sent.clear()
    summary = reconcile(store, sent, stuck_after=0, tracks=(TRACK,))
    assert ("score", TRACK, other) in sent.sent, (summary, sent.sent)


def test_a_torn_record_in_a_batched_read_is_quarantined_and_the_others_are_read(tmp_path: Path) -> None:
    """`load_records` (the quota check, the record index, batches, the reconciler's suspects) reads many
    records in one go: a torn one among them is None and quarantined, the others are read, and the same
    submitter's next upload is still taken (its quota check reads that batch)."""
    config = Config(data_dir=tmp_path / "data", quota_per_day=5)
    seed(config, small_demo(tmp_path, (TRACK,)))
    service = Service(config, open_store(config), RecordingEnqueuer())
    torn, other = (submit(service, baseline(TRACK, "lexicon", i), "u0", TRACK) for i in range(2))
    ids = [torn, other, "0" * 16]  # and one that does not exist
    before = load_records(open_store(config), TRACK, ids)
    assert before[torn] is not None and before[other] is not None  # positive control: both read untorn
    _tear(config.data_dir, open_store(config).read("submissions", layout.record_path(TRACK, torn)))
    local.forget_decoded()
    store = open_store(config)

    after = load_records(store, TRACK, ids)
    assert after == {torn: None, other: before[other], "0" * 16: None}, after
    (listed,) = quarantined(store, TRACK)
    assert listed["path"] == layout.record_path(TRACK, torn) and "unreadable object" in listed["problem"]
    third = Service(config, store, RecordingEnqueuer()).submit(
        identity="u0", track=TRACK, data=baseline(TRACK, "lexicon", 3), metadata={"model_name": "m-u0 3"}
    )
    assert third["status"] == "queued", third
