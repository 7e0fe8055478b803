"""End to end through the REST API with real Celery worker subprocesses: Redis + HubStore (fake Hub),
the embedded SQLite broker + LocalStore, crash redelivery, the reconciler, pickle refusal, re-scoring."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pandas as pd
import pytest
from fastapi.testclient import TestClient

from space.auth import Auth
from space.server import create_app
from tests.conftest_hub import HUB_TEST_OPTIONS, make_hub_config
from tests.conftest_pipeline import (
    DEMO,
    ROOT,
    RecordingEnqueuer,
    WorkerProcess,
    baseline_file,
    seed_store,
    variant,
    wait_for,
    worker_env,
)
from tests.factories import public_slice_result
from tests.test_publish_race import board_ids, rows_that_left
from worker.celery import make_app
from worker.config import Config
from worker.service import Service
from worker.store import Store, open_store
from worker.submissions import record_files

pytestmark = pytest.mark.slow


def api(config: Config) -> TestClient:
    return TestClient(create_app(config, auth=Auth(config, "open"), with_ui=False))


def submit(client: TestClient, data: bytes, user: str = "alice", track: str = "varm") -> dict:
    response = client.post(
        "/api/v1/submissions",
        data={"track": track, "model_name": f"model {len(data)}"},
        files={"file": ("p.jsonl", data)},
        headers={"X-User": user},
    )
    assert response.status_code == 202, response.text
    return response.json()


def status(client: TestClient, sid: str) -> dict:
    return client.get(f"/api/v1/submissions/{sid}").json()


def wait_status(client: TestClient, sid: str, wanted: str, timeout: float = 30) -> dict:
    return wait_for(
        lambda: (body := status(client, sid))["status"] == wanted and body,
        timeout,
        what=f"{sid} to be {wanted}",
    )


def record(store: Store, sid: str, track: str = "varm") -> dict:
    return json.loads(store.read("submissions", f"{track}/{sid}/submission.json"))


@pytest.fixture
def redis_config(tmp_path: Path, demo_dir: Path, redis_available: str, key_prefix: str) -> Config:
    config = Config(
        data_dir=tmp_path / "data",
        celery_broker_url=redis_available,
        celery_key_prefix=key_prefix,
        stuck_after_seconds=300,
    )
    seed_store(config, demo_dir)
    return config


def test_redis_hubstore_submit_to_published(
    tmp_path, fakehub_url, demo_dir, redis_available, key_prefix, workers
):
    hub = make_hub_config(fakehub_url, tmp_path / "data")
    config = dataclasses.replace(hub, celery_broker_url=redis_available, celery_key_prefix=key_prefix)
    seed_store(config, demo_dir, cache_dir=tmp_path / "seed-cache", **HUB_TEST_OPTIONS)
    workers.append(WorkerProcess(worker_env(config), tmp_path / "worker.log").start())
    client = api(config)

    sid = submit(client, baseline_file("varm"))["submission_id"]
    body = wait_status(client, sid, "published")
    assert body["result"]["version"] == 1 and body["result"]["result"]["track"] == "varm"
    board = client.get("/api/v1/leaderboard", params={"track": "varm"}).json()
    assert [r["submission_id"] for r in board["rows"]] == [sid]
    row = board["rows"][0]
    assert row["rank"] == row["rank_low"] == row["rank_high"] == 1 and "ci.jrem.low" in row and "jrem" in row

    results = open_store(config, areas=("results",), cache_dir=tmp_path / "check-cache", **HUB_TEST_OPTIONS)
    frame = pd.read_parquet(io.BytesIO(results.read("results", "varm/leaderboard.parquet")))
    assert list(frame["submission_id"]) == [sid] and frame["jrem"].iloc[0] == row["jrem"]
    card = results.read("results", "README.md").decode()
    assert "config_name: varm" in card and "path: varm/leaderboard.parquet" in card
    envelope = json.loads(results.read("results", f"varm/results/{sid}/v1.json"))
    assert envelope["submission"]["submission_id"] == sid and "rows" not in envelope["submission"]
    changelog = results.read("results", "changelog.jsonl").decode().splitlines()
    assert json.loads(changelog[-1])["added"] == [f"{sid}/v1"]
    # Hidden references never reach the public area: no gold rationale appears in any results file.
    gold = json.loads((DEMO / "varm" / "test.jsonl").read_text().splitlines()[0])["cot"]
    for path in results.list("results"):
        if path.endswith((".json", ".jsonl", ".md")):
            assert gold not in results.read("results", path).decode()

    # A re-sent task for a published submission writes nothing new (idempotent).
    app = make_app(config)
    before = results.head("results")
    for _ in range(2):
        app.send_task("worker.tasks.score_submission", args=["varm", sid]).get(timeout=30)
    store = open_store(config, areas=("submissions",), cache_dir=tmp_path / "c2", **HUB_TEST_OPTIONS)
    assert len(record(store, sid)["versions"]) == 1 and results.head("results") == before


def test_worker_killed_mid_task_scores_exactly_once(tmp_path, redis_config, workers, monkeypatch):
    # Redis redelivers an unacknowledged message once its visibility timeout has passed.
    slow = worker_env(redis_config, {"VARM_TEST_SCORE_DELAY": "3", "CELERY_VISIBILITY_TIMEOUT": "3"})
    first = WorkerProcess(slow, tmp_path / "w1.log").start()
    workers.append(first)
    client = api(redis_config)
    store = open_store(redis_config)
    sid = submit(client, baseline_file("varm"))["submission_id"]
    wait_for(lambda: record(store, sid)["status"] == "scoring", 20, what="scoring to start")
    first.kill()
    assert record(store, sid)["status"] == "scoring"

    fast = worker_env(redis_config, {"VARM_TEST_SCORE_DELAY": "0.2", "CELERY_VISIBILITY_TIMEOUT": "3"})
    workers.append(WorkerProcess(fast, tmp_path / "w2.log").start())
    wait_status(client, sid, "published", timeout=40)
    final = record(store, sid)
    assert [v["version"] for v in final["versions"]] == [1] and final["attempts"] == 2
    assert store.read("submissions", f"varm/{sid}/rows_v2.json") is None
    assert store.list("results", f"varm/results/{sid}/") == [f"varm/results/{sid}/v1.json"]


def test_reconciler_recovers_lost_message_on_embedded_broker(tmp_path, demo_dir, workers):
    config = Config(data_dir=tmp_path / "data", stuck_after_seconds=1)  # no broker URL: SQLite default
    seed_store(config, demo_dir)
    lost = RecordingEnqueuer()  # the record is stored, but its message never reaches a broker
    service = Service(config, open_store(config), lost)
    out = service.submit(
        identity="alice", track="varm", data=baseline_file("varm"), metadata={"model_name": "m"}
    )
    sid = out["submission_id"]
    assert out["status"] == "queued" and lost.sent == [("score", "varm", sid)]

    workers.append(WorkerProcess(worker_env(config), tmp_path / "worker.log", beat=True).start())
    wait_for(lambda: record(service.store, sid)["status"] == "published", 30, what="reconciled publish")
    notes = [h["note"] for h in record(service.store, sid)["history"]]
    assert any("reconciler" in n for n in notes)
    board = service.leaderboard("varm")
    assert [r["submission_id"] for r in board["rows"]] == [sid]


def test_pickle_is_refused(tmp_path, redis_config, workers):
    worker = WorkerProcess(worker_env(redis_config), tmp_path / "worker.log").start()
    workers.append(worker)
    service = Service(redis_config, open_store(redis_config), RecordingEnqueuer())
    sid = service.submit(
        identity="alice", track="varm", data=baseline_file("varm"), metadata={"model_name": "m"}
    )["submission_id"]
    app = make_app(redis_config)
    app.conf.accept_content = ["json", "pickle"]  # the sender may produce it; the worker must not accept it
    app.send_task("worker.tasks.score_submission", args=["varm", sid], serializer="pickle")
    wait_for(
        lambda: "Refusing to deserialize untrusted content of type pickle" in worker.log(),
        15,
        what="the worker to refuse the pickled message",
    )
    assert record(service.store, sid)["status"] == "queued"
    app.send_task("worker.tasks.score_submission", args=["varm", sid])  # JSON: accepted
    wait_for(lambda: record(service.store, sid)["status"] == "published", 30, what="JSON task to run")


def _pretend_old_scorer(store: Store, sids: list[str]) -> None:
    """Rewrite the records as if their version 1 came from an older scorer, so a re-score is due."""
    records = []
    for sid in sids:
        rec = record(store, sid)
        rec["versions"][0]["scorer_version"] = "0.9.0"
        records.append(rec)
    store.commit(
        "submissions",
        record_files(store, store.head("submissions"), records),
        [],
        "test: pretend an older scorer",
    )


def test_rescore_attaches_versions_and_publishes_once(tmp_path, redis_config, workers):
    workers.append(WorkerProcess(worker_env(redis_config), tmp_path / "worker.log", concurrency=2).start())
    client = api(redis_config)
    store = open_store(redis_config)
    sids = [
        submit(client, baseline_file("varm", name), user=name)["submission_id"]
        for name in ("lexicon", "majority")
    ]
    for sid in sids:
        wait_status(client, sid, "published")
    # Publishes may run at once (-c 2): none put an older board over a newer one (issue 22 item 8).
    assert set(sids) <= board_ids(store, store.head("results"), "varm")
    _pretend_old_scorer(store, sids)

    env = worker_env(redis_config)
    head = store.head("results")
    dry = subprocess.run(
        [sys.executable, "-m", "worker", "rescore", "--track", "varm", "--dry-run", "--timeout", "60"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert dry.returncode == 0, dry.stderr
    summary = json.loads(dry.stdout)
    assert summary["rescored"] == 2 and summary["report"] is None  # a dry run publishes nothing
    assert {c["submission_id"] for c in summary["changes"]} == set(sids)  # but says what would change
    assert all(c["metric"] == "jrem" and c["old"] == c["new"] for c in summary["changes"])
    assert "no metric or rank changed" in dry.stderr
    assert store.head("results") == head and all(len(record(store, s)["versions"]) == 1 for s in sids)

    app = make_app(redis_config)
    plan = app.send_task("worker.tasks.rescore_track", args=["varm", False, "maint"]).get(timeout=30)
    summary = app.AsyncResult(plan["finalize_task_id"]).get(timeout=60)
    assert summary["rescored"] == 2 and summary["rank_changes"] == 0
    report = json.loads(store.read("results", summary["report"]))
    assert {r["submission_id"] for r in report["submissions"]} == set(sids)
    assert all(r["delta"]["jrem"] == 0 for r in report["submissions"])
    board = json.loads(store.read("results", "varm/leaderboard.json"))
    assert {r["version"] for r in board["rows"]} == {2}
    # Everything arrived in one commit: the report and both new envelopes appeared together.
    latest = store.history("results", limit=1)[0]["revision"]
    parent = store.history("results", limit=2)[1]["revision"]
    new_paths = [summary["report"]] + [f"varm/results/{sid}/v2.json" for sid in sids]
    assert all(store.read("results", p, latest) for p in new_paths)
    assert not any(store.read("results", p, parent) for p in new_paths)
    for sid in sids:
        versions = record(store, sid)["versions"]
        assert [v["version"] for v in versions] == [1, 2] and "pending_rescore" not in versions[-1]

    again = app.send_task("worker.tasks.rescore_track", args=["varm", False, "maint"]).get(timeout=30)
    summary = app.AsyncResult(again["finalize_task_id"]).get(timeout=60)
    assert summary["rescored"] == 0 and summary["skipped"] == 2
    assert rows_that_left(store, "varm") == []  # no revision took a published row off the board


def test_seed_is_idempotent(tmp_path, demo_dir):
    config = Config(data_dir=tmp_path / "data")
    store = open_store(config)
    from worker.gold.seed import seed

    first_enqueuer = RecordingEnqueuer()
    first = seed(store, Service(config, store, first_enqueuer), DEMO)
    assert first["tracks"] == dict.fromkeys(("varm", "cold", "toxicn", "cntp"), "demo installed")
    assert len(first["baselines"]) == len(first_enqueuer.sent) > 0
    heads = {area: store.head(area) for area in ("references", "submissions", "results")}
    second = seed(store, Service(config, store, RecordingEnqueuer()), DEMO)
    assert second == {"tracks": dict.fromkeys(first["tracks"], "demo already present"), "baselines": []}
    assert heads == {area: store.head(area) for area in heads}
    assert json.loads(store.read("results", "varm/public/reference_set.json"))["kind"] == "demo"
    assert store.read("results", "varm/public/subsets.json") is not None
    # Dev-split cue-subset membership is published as is; it names dev ids only, never test ids.
    dev_subsets = Service(config, store, RecordingEnqueuer()).public_file("varm", "dev_subsets.json")
    assert dev_subsets == (DEMO / "varm" / "public" / "dev_subsets.json").read_bytes()
    dev_ids = {json.loads(x)["id"] for x in (DEMO / "varm" / "dev.jsonl").read_bytes().splitlines() if x}
    assert all(set(ids) <= dev_ids for ids in json.loads(dev_subsets).values())
    assert store.read("results", "cold/public/dev_subsets.json") is None
    baseline = record(store, first_enqueuer.sent[0][2], first_enqueuer.sent[0][1])
    assert baseline["is_baseline"] and baseline["submitter"] == "baseline"


def test_variant_files_differ():
    assert variant(b"x", 1) != variant(b"x", 2)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_python_m_space_embedded_default(tmp_path):
    """The run command: seeds on first start, serves API + UI, scores with its own worker subprocess."""
    port, data = free_port(), tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if k not in ("CELERY_BROKER_URL", "STORE", "AUTH")}
    demo = tmp_path / "demo"  # one track with its baselines keeps the first start short
    shutil.copytree(DEMO / "cold", demo / "cold", ignore=shutil.ignore_patterns("train.jsonl"))
    env.update(
        DATA_DIR=str(data), PORT=str(port), HOST="127.0.0.1", STUCK_AFTER_SECONDS="60", DEMO_DIR=str(demo)
    )
    log = open(tmp_path / "space.log", "wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "space"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:

        def healthy():
            try:
                return httpx.get(f"{base}/api/v1/health", timeout=2).status_code == 200
            except httpx.HTTPError:
                return assert_alive(proc, tmp_path / "space.log")

        wait_for(healthy, 90, interval=0.3, what="python -m space to serve")
        token = next(iter(json.loads((data / "tokens.json").read_text())))
        assert token in (tmp_path / "space.log").read_text()  # printed once at start-up
        assert f"open http://127.0.0.1:{port}\n" in (tmp_path / "space.log").read_text()  # where to go
        assert httpx.get(f"{base}/", timeout=10).status_code == 200  # the UI is mounted at /
        board = wait_for(
            lambda: (
                (b := httpx.get(f"{base}/api/v1/leaderboard", params={"track": "cold"}).json())["rows"] and b
            ),
            60,
            what="seeded baselines to be published",
        )
        assert all(r["is_baseline"] for r in board["rows"])
        response = httpx.post(
            f"{base}/api/v1/submissions",
            headers={"Authorization": f"Bearer {token}"},
            data={"track": "cold", "model_name": "mine"},
            files={"file": ("p.jsonl", variant(baseline_file("cold"), 1))},
            timeout=30,
        )
        assert response.status_code == 202, response.text
        sid = response.json()["submission_id"]
        wait_for(
            lambda: httpx.get(f"{base}/api/v1/submissions/{sid}").json()["status"] == "published",
            60,
            what="the new submission to be published",
        )
        rows = httpx.get(f"{base}/api/v1/leaderboard", params={"track": "cold"}).json()["rows"]
        assert sid in {r["submission_id"] for r in rows}
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        log.close()
    assert "embedded Celery worker started" in (tmp_path / "space.log").read_text()


def assert_alive(proc: subprocess.Popen, log: Path) -> bool:
    if proc.poll() is not None:
        raise AssertionError(f"python -m space exited:\n{log.read_text()[-3000:]}")
    return False


def _explained_cntp_predictions() -> bytes:
    """The char-ngram baseline's cntp test predictions (char_scores, prob, masked probabilities) plus the
    masked-text hashes a submitter copies from `python -m scoring masked-inputs`."""
    from scoring.toxitrace.masking import masked_texts, text_sha256

    references = (DEMO / "cntp" / "test.jsonl").read_text().splitlines()
    texts = {r["id"]: r["text"] for r in map(json.loads, references)}
    rows = [json.loads(line) for line in baseline_file("cntp", "char-ngram").decode().splitlines()]
    for row in rows:
        row.update(
            {
                f"sha256_{v}": text_sha256(t)
                for v, t in masked_texts(texts[row["id"]], row["char_scores"], row["label"]).items()
            }
        )
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()


def test_explanations_validated_scored_and_published(tmp_path, redis_available, key_prefix, workers):
    """A REST submission with char_scores and masked probabilities on cntp: the real worker scores it and
    every §3 metric is published (result envelope, board row, parquet); a bad hash is refused at upload."""
    demo = tmp_path / "demo"
    shutil.copytree(DEMO / "cntp", demo / "cntp", ignore=shutil.ignore_patterns("baselines", "train.jsonl"))
    config = Config(
        data_dir=tmp_path / "data",
        celery_broker_url=redis_available,
        celery_key_prefix=key_prefix,
        stuck_after_seconds=300,
    )
    seed_store(config, demo)
    workers.append(WorkerProcess(worker_env(config), tmp_path / "worker.log").start())
    client = api(config)
    data = _explained_cntp_predictions()

    first, rest = data.split(b"\n", 1)
    bad = json.dumps({**json.loads(first), "sha256_kept_20": "0" * 64}).encode() + b"\n" + rest
    refused = client.post(
        "/api/v1/submissions",
        data={"track": "cntp", "model_name": "bad"},
        files={"file": ("p.jsonl", bad)},
        headers={"X-User": "bob"},
    )
    assert refused.status_code == 422, refused.text
    assert {(e["line"], e["field"]) for e in refused.json()["errors"]} == {(1, "sha256_kept_20")}

    sid = submit(client, data, track="cntp")["submission_id"]
    body = wait_status(client, sid, "published")
    result = body["result"]["result"]
    explanations = result["explanations"]
    assert set(explanations) == {
        "tau",
        "spans_source",
        "spans_per_item",
        "mean_span_length",
        "auprc",
        "comprehensiveness",
        "sufficiency",
        "comprehensiveness_k",
        "sufficiency_k",
        "decision_flip_20",
        "by_predicted",
    }
    assert set(explanations["by_predicted"]) == {"0", "1"}  # faithfulness per predicted label (§3)
    assert explanations["spans_source"] == "given"
    assert set(explanations["sufficiency_k"]) == {"10", "20", "50"}
    # the worker's numbers are the scorer's on the public slice, rounded by the disclosure gate
    expected = public_slice_result(open_store(config), "cntp", data)
    assert explanations == expected["explanations"]
    assert {k: v for k, v in result["ci"].items() if k.startswith("explanations.")} == {
        k: v for k, v in expected["ci"].items() if k.startswith("explanations.")
    }

    row = client.get("/api/v1/leaderboard", params={"track": "cntp"}).json()["rows"][0]
    assert row["explanations.comprehensiveness"] == explanations["comprehensiveness"]
    assert row["explanations.auprc"] == explanations["auprc"] and "ci.explanations.auprc.low" in row
    store = open_store(config)
    frame = pd.read_parquet(io.BytesIO(store.read("results", "cntp/leaderboard.parquet")))
    assert frame["explanations.sufficiency"].iloc[0] == explanations["sufficiency"]
    envelope = json.loads(store.read("results", f"cntp/results/{sid}/v1.json"))
    assert envelope["result"]["explanations"] == explanations
