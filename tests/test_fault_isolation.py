"""Fault handling that needs no extra processes: the Hub auth cache, a full disk, the upload slots, a corrupt
record, and a moderation whose publish is lost while the broker is down. The same faults against real
processes (Celery worker, redis-server, `python -m space`) are in tests/test_faults.py."""

from __future__ import annotations

import errno
import json
import threading
import time
from contextlib import ExitStack
from pathlib import Path

import pytest
from cachetools import TTLCache
from fastapi.testclient import TestClient

from space.auth import Auth
from space.server import create_app
from tests.conftest_pipeline import RecordingEnqueuer, baseline_file, seed_store
from tests.factories import mixed_predictions
from worker.config import Config
from worker.errors import Busy
from worker.gold.reconcile import reconcile
from worker.service import Service
from worker.slots import WorkSlots
from worker.store import WEB_AREAS, open_store
from worker.submissions import list_records, quarantined, update_record

VALID = baseline_file("varm")


# -- Hub auth cache --------------------------------------------------------------------------------------


def test_hub_auth_cache_is_bounded_and_never_caches_a_rate_limit(fakehub, fakehub_url: str, tmp_path: Path):
    auth = Auth(Config(data_dir=tmp_path, hf_endpoint=fakehub_url), "hub")
    auth._hub_cache = TTLCache(50, 60)  # a small bound, so the test needs few Hub calls to fill it
    for i in range(120):  # random tokens: each is asked once, the cache never grows past its bound
        assert auth.identify(f"Bearer hf_random_{i}") is None
    assert len(auth._hub_cache) == 50
    asked = fakehub.stats().get("GET whoami-v2", 0) or sum(
        v for k, v in fakehub.stats().items() if "whoami" in k
    )
    assert asked >= 120
    assert auth.identify("Bearer hf_random_119") is None  # a cached "invalid" answer
    # A rate-limited answer is not remembered as "invalid token": the next call asks again and succeeds.
    fakehub.fault("whoami", status=429, count=1)
    assert auth.identify("Bearer hf_test_write_token") is None
    assert auth.identify("Bearer hf_test_write_token") == "tester"  # positive control
    fakehub.fault("whoami", status=401, count=1)
    assert auth.identify("Bearer hf_test_other") is None
    assert auth.identify("Bearer hf_test_other") is None  # a real 401 IS cached (no second Hub call)


# -- a full disk -----------------------------------------------------------------------------------------


@pytest.fixture
def config(tmp_path: Path, demo_dir: Path) -> Config:
    cfg = Config(data_dir=tmp_path / "data", quota_per_day=50, attempts_per_day=50)
    seed_store(cfg, demo_dir)
    return cfg


def _client(config: Config, service: Service) -> TestClient:
    return TestClient(create_app(config, service=service, auth=Auth(config, "open"), with_ui=False))


def _submit(client: TestClient, data: bytes = VALID, user: str = "alice"):
    return client.post(
        "/api/v1/submissions",
        data={"track": "varm", "model_name": "m"},
        files={"file": ("p.jsonl", data)},
        headers={"X-User": user},
    )


def test_disk_full_answers_507_json_and_health_is_degraded(config: Config, monkeypatch) -> None:
    service = Service(config, open_store(config, areas=WEB_AREAS), RecordingEnqueuer())
    client = _client(config, service)
    assert _submit(client, user="before").status_code == 202  # positive control
    before = set(service.store.list("submissions"))

    def no_space(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(config.data_dir))

    monkeypatch.setattr(service.store, "commit", no_space)  # the disk fills between check and write
    answer = _submit(client, data=VALID + b"\n", user="during")
    assert answer.status_code == 507, answer.text
    assert answer.json()["problem"] == "disk_full" and "disk is full" in answer.json()["detail"]
    assert str(config.data_dir) not in answer.text  # no server path in the answer
    monkeypatch.undo()
    assert set(service.store.list("submissions")) == before  # nothing half-written

    # Below MIN_FREE_DISK_MB: refused before writing, and health says so.
    full = Config(**{**config.__dict__, "min_free_disk_mb": 10**9})
    service = Service(full, open_store(full, areas=WEB_AREAS), RecordingEnqueuer())
    client = _client(full, service)
    assert _submit(client, data=VALID + b"\n\n", user="low").status_code == 507
    health = client.get("/api/v1/health")
    assert health.status_code == 503 and health.json()["disk"].startswith("full:")
    assert set(service.store.list("submissions")) == before


# -- upload slots ----------------------------------------------------------------------------------------


def test_work_slots_bound_concurrency_and_refuse_the_excess() -> None:
    slots = WorkSlots(2, queue_seconds=0.5, budget_bytes=10**9)
    inside, peak, refused = [0], [0], []
    lock = threading.Lock()

    def work() -> None:
        try:
            with slots.hold(1000):
                with lock:
                    inside[0] += 1
                    peak[0] = max(peak[0], inside[0])
                time.sleep(0.3)
                with lock:
                    inside[0] -= 1
        except Busy as exc:
            refused.append(exc.retry_after)

    threads = [threading.Thread(target=work) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak[0] == 2
    assert refused and all(r >= 1 for r in refused)  # more than 2 + 8 waiters, or waited too long
    assert len(refused) < 16  # positive control: the slots did let work through
    with slots.hold(1000):  # and are all free again
        pass
    # The memory budget: two large uploads take turns, a small one runs beside a large one.
    budget = WorkSlots(4, queue_seconds=0.1, budget_bytes=600)
    with budget.hold(60):  # costs 360
        with pytest.raises(Busy):
            with budget.hold(60):
                pass
        with budget.hold(10):
            pass
    with budget.hold(200):  # alone, even over the budget
        pass


def test_a_parked_upload_frees_its_slot_within_the_parking_bound() -> None:
    """An upload waiting for its commit parks: its slot serves the next upload; parking is bounded in
    count and raw bytes. Positive control: unparked, the one slot refuses the second upload."""
    slots = WorkSlots(1, queue_seconds=0.05, budget_bytes=10**6)
    with slots.hold(1000):
        with pytest.raises(Busy):
            with slots.hold(1000):
                pass
    with ExitStack() as stack:
        held = [stack.enter_context(slots.hold(1000))]
        for _ in range(8):  # 1 slot x 8 waiters: parked in turn, each freeing the slot for the next
            assert held[-1].park()
            held.append(stack.enter_context(slots.hold(1000)))
        assert not held[-1].park()  # the ninth would exceed the bound: it keeps its slot
        with pytest.raises(Busy):
            with slots.hold(1000):
                pass
    with slots.hold(1000):  # everything given back, parked or not
        pass
    big = WorkSlots(1, queue_seconds=0.05, budget_bytes=1500)
    with big.hold(1000) as first:
        assert first.park()
        with big.hold(1000) as second:
            assert not second.park()  # 2000 raw bytes parked would exceed the budget


def test_rest_upload_gets_503_with_retry_after_when_every_slot_is_taken(config: Config) -> None:
    service = Service(
        Config(**{**config.__dict__, "work_slots": 1, "work_queue_seconds": 0.2}),
        open_store(config, areas=WEB_AREAS),
        RecordingEnqueuer(),
    )
    client = _client(config, service)
    with service.slots.hold(len(VALID)):  # someone else is validating
        busy = client.post("/api/v1/validate", data={"track": "varm"}, files={"file": ("p", VALID)})
        assert busy.status_code == 503 and int(busy.headers["Retry-After"]) >= 1
        assert _submit(client).status_code == 503
    ok = client.post("/api/v1/validate", data={"track": "varm"}, files={"file": ("p", VALID)})
    assert ok.status_code == 200 and ok.json()["valid"] is True


# -- a corrupt record, a lost publish --------------------------------------------------------------------


def _corrupt(store, path: str) -> None:
    store.commit("submissions", {path: b'{"submission_id": "trunc'}, [], "a writer died half-way")


def test_corrupt_record_is_skipped_listed_and_logged_once(config: Config, caplog) -> None:
    service = Service(config, open_store(config), RecordingEnqueuer())
    client = _client(config, service)
    bad = _submit(client, user="bad").json()["submission_id"]
    good = _submit(client, data=VALID + b"\n", user="good").json()["submission_id"]
    path = f"varm/{bad}/submission.json"
    _corrupt(service.store, path)
    caplog.set_level("WARNING")
    for _ in range(3):
        ids = [r["submission_id"] for r in list_records(service.store, "varm")]
        assert ids.count(good) == 1 and bad not in ids
    assert sum(path in r.getMessage() for r in caplog.records) <= 1  # logged once per process
    assert quarantined(service.store, "varm") == [{"path": path, "problem": "not JSON (JSONDecodeError)"}]
    assert service.quarantined("cold") == []
    assert client.get(f"/api/v1/submissions/{bad}").status_code == 404  # not a 500
    assert client.get(f"/api/v1/submissions/{good}").status_code == 200


def test_reconcile_handles_each_track_and_record_on_its_own(config: Config) -> None:
    store = open_store(config)
    service = Service(config, store, RecordingEnqueuer())
    client = _client(config, service)
    # three users' files of their own (a copy of another user's file would be held, not queued)
    files = [mixed_predictions("varm", 0.2 + 0.3 * i, seed=f"u{i}") for i in range(3)]
    sids = [_submit(client, data=files[i], user=f"u{i}").json()["submission_id"] for i in range(3)]
    cold = client.post(
        "/api/v1/submissions",
        data={"track": "cold", "model_name": "m"},
        files={"file": ("p.jsonl", baseline_file("cold"))},
        headers={"X-User": "c"},
    ).json()["submission_id"]
    _corrupt(store, f"varm/{sids[0]}/submission.json")

    class FlakyEnqueuer(RecordingEnqueuer):
        def score(self, track: str, sid: str) -> None:
            if sid == sids[1]:
                raise ConnectionError("broker hiccup on this one")
            super().score(track, sid)

    enqueue = FlakyEnqueuer()
    summary = reconcile(store, enqueue, stuck_after=0)
    assert set(summary["requeued"]) == {sids[2], cold}  # the others still went
    assert summary["errors"] == [f"varm/{sids[1]}: ConnectionError"]


def test_hide_while_broker_down_is_republished_by_the_reconciler(config: Config) -> None:
    store = open_store(config)
    seen = RecordingEnqueuer()

    class DownBroker(RecordingEnqueuer):
        def publish(self, track: str) -> None:
            raise ConnectionError("broker down")

    service = Service(config, store, DownBroker())
    sid = _submit(_client(config, service)).json()["submission_id"]
    # As if scored and published: on the board, status published.
    board = {"rows": [{"submission_id": sid, "version": 1, "verified": False, "is_baseline": False}]}
    # Written as an older store holds its board (leaderboard.json, no live board), which readers still take.
    live = store.list("results", "varm/board/")
    store.commit("results", {"varm/leaderboard.json": json.dumps(board).encode()}, live, "board")

    def published(store, head, rec):
        return {**rec, "status": "published", "versions": [{"version": 1}]}, {}

    update_record(store, "varm", sid, published, "as if published")
    assert reconcile(store, seen, stuck_after=0)["publish"] == []  # board agrees: nothing to do
    started = time.monotonic()
    service.moderate(sid, actor="boss", hidden=True, reason="spam")  # the publish is lost
    assert time.monotonic() - started < 5
    assert reconcile(store, seen, stuck_after=0)["publish"] == ["varm"]  # the board disagrees: re-sent


def test_refused_ui_call_logs_one_line_and_the_maintainer_report_lists_quarantine(
    config: Config, caplog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gradio as gr

    from space.ui.app import build_app
    from space.ui.pages.maintainers import quarantine_markdown

    service = Service(config, open_store(config), RecordingEnqueuer())
    app = build_app(service, auth_mode="open", warm=False)
    # The handlers take only files in Gradio's upload folder (space/uploads.py): put the upload there.
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "uploads"))
    upload = tmp_path / "uploads" / "p.jsonl"
    upload.parent.mkdir()
    upload.write_bytes(VALID)
    app.demo.upload_file_set.add(str(upload))  # as Gradio's /gradio_api/upload route records it
    caplog.set_level("WARNING")
    with pytest.raises(gr.Error) as refused:
        app.submit.validate("no-such-track", str(upload), "en")
    assert refused.value.print_exception is False  # Gradio prints no traceback for it
    lines = [r.getMessage() for r in caplog.records if "refused UI call" in r.getMessage()]
    assert len(lines) == 1 and "\n" not in lines[0] and not any(r.exc_info for r in caplog.records)
    shown = app.submit.validate("varm", str(upload), "en")  # positive control: the same file on a real track
    assert "✓" in shown[app.submit.message]

    sid = _submit(_client(config, service)).json()["submission_id"]
    assert quarantine_markdown(service.quarantined("varm")) == ""
    _corrupt(service.store, f"varm/{sid}/submission.json")
    listed = quarantine_markdown(service.quarantined("varm"))
    assert f"varm/{sid}/submission.json" in listed and "not JSON" in listed


def test_a_record_whose_scoring_worker_stopped_is_re_sent_before_the_time_limit(config: Config) -> None:
    """Issue 27: a record `scoring` under a worker that was SIGKILLed waited for the hard time limit (6.6
    minutes). It names its worker's heartbeat (`holder`); once that heartbeat stops, the reconciler re-sends
    it after `stuck_after`. A record whose worker still beats (positive control) waits for the time limit."""
    store = open_store(config)
    service = Service(config, store, RecordingEnqueuer())
    client = _client(config, service)
    files = [mixed_predictions("varm", 0.3 + 0.3 * i, seed=f"lease{i}") for i in range(2)]
    dead, alive = (
        _submit(client, data=f, user=f"lease{i}").json()["submission_id"] for i, f in enumerate(files)
    )
    for sid, holder in ((dead, "worker:host:111"), (alive, "worker:host:222")):

        def scoring(store, head, rec, holder=holder):
            return {**rec, "status": "scoring", "attempts": 1, "holder": holder}, {}

        update_record(store, "varm", sid, scoring, "as if a worker took it")
    # without leases (no heartbeat reader) both wait for the time limit, as before
    assert reconcile(store, RecordingEnqueuer(), stuck_after=0, scoring_after=3600)["requeued"] == []
    gone = {"worker:host:111"}
    summary = reconcile(
        store, RecordingEnqueuer(), stuck_after=0, scoring_after=3600, holder_gone=gone.__contains__
    )
    assert summary["requeued"] == [dead]  # ... and the one whose worker still beats is left alone
    record = service.submission(dead, viewer="lease0")
    assert record["status"] == "queued"
    assert service.submission(alive, viewer="lease1")["status"] == "scoring"
