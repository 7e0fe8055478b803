"""Faults the service must survive without losing, duplicating or half-writing anything.

Complements tests/test_pipeline_e2e.py (which kills a whole worker process and drops one message on the
embedded broker) with:

- SIGKILL of a prefork *pool child* in the middle of scoring, under several submissions: each ends with
  exactly one version and one published result file;
- the (private) redis-server killed and restarted without persistence under load, so every queued message
  is lost: the reconciler re-sends them and every accepted submission is published exactly once;
- the fake Hub answering 412, 429, 500, a lost answer after a landed commit, and a slow commit, on the
  results repo while a track publishes: each result is published once, and at every revision of the results
  repo the leaderboard, its parquet twin and the result files agree (never half-written);
- the web process SIGKILLed in the middle of uploads (headers only, half a body, all but one byte, the
  whole body without reading the answer) and restarted: every upload is either fully stored (bytes and
  sha256 match) or cleanly absent, and an id was only ever promised for stored uploads;
- the embedded default's web process SIGKILLed: its Celery worker (own session) does not outlive it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import shutil
import signal
import socket
import time
from pathlib import Path

import httpx
import pandas as pd
import pytest

from tests.hostile import figures, procs
from worker.celery import make_app
from worker.config import Config
from worker.enqueue import CeleryEnqueuer
from worker.service import Service
from worker.store import Store, open_store

pytestmark = pytest.mark.slow
DEMO = procs.ROOT / "data" / "demo"


def small_demo(tmp: Path, tracks: tuple[str, ...] = ("varm", "cold")) -> Path:
    out = tmp / "demo"
    for track in tracks:
        shutil.copytree(DEMO / track, out / track, ignore=shutil.ignore_patterns("baselines", "train.jsonl"))
    return out


def baseline(track: str, name: str, n: int = 0) -> bytes:
    """A demo baseline's test predictions; `n` trailing newlines make byte-distinct files that score alike."""
    return (DEMO / track / "baselines" / f"{name}.test.jsonl").read_bytes() + b"\n" * n


def seed(config: Config, demo: Path, **options) -> None:
    from worker.seed import seed as run_seed

    store = open_store(config, **options)
    run_seed(store, Service(config, store, _NoSend()), demo)


class _NoSend:
    def score(self, *a) -> None: ...
    def publish(self, *a) -> None: ...
    def ping(self) -> bool:
        return True


def records(store: Store, track: str) -> dict[str, dict]:
    out = {}
    for path in store.list("submissions", f"{track}/"):
        if path.endswith("/submission.json"):
            rec = json.loads(store.read("submissions", path))
            out[rec["submission_id"]] = rec
    return out


def wait_for(check, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.3)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def assert_published_exactly_once(store: Store, track: str, sids: set[str]) -> None:
    recs = records(store, track)
    assert sids <= set(recs), f"lost submissions: {sorted(sids - set(recs))}"
    for sid in sids:
        rec = recs[sid]
        assert rec["status"] == "published", (sid, rec["status"], rec.get("error"))
        assert [v["version"] for v in rec["versions"]] == [1], (sid, rec["versions"])
        assert store.list("results", f"{track}/results/{sid}/") == [f"{track}/results/{sid}/v1.json"]
    board = json.loads(store.read("results", f"{track}/leaderboard.json"))
    ids = [r["submission_id"] for r in board["rows"]]
    assert len(ids) == len(set(ids)), "a submission appears twice on the leaderboard"
    assert sids <= set(ids), f"missing from the leaderboard: {sorted(sids - set(ids))}"


@pytest.fixture
def stack(tmp_path: Path):
    """Private redis-server, seeded LocalStore (varm, cold), in-process Service; tests add workers."""
    redis = procs.RedisServer(tmp_path / "redis").start()
    config = Config(data_dir=tmp_path / "data", celery_broker_url=redis.url, stuck_after_seconds=3)
    seed(config, small_demo(tmp_path))
    env = procs.base_env(config.data_dir, redis.url, STUCK_AFTER_SECONDS="3")
    os.environ["CELERY_KEY_PREFIX"] = env["CELERY_KEY_PREFIX"]  # the in-process Service's app uses it
    service = Service(config, open_store(config), CeleryEnqueuer(make_app(config)))
    workers: list[procs.Worker] = []
    ctx = {
        "config": config,
        "env": env,
        "service": service,
        "workers": workers,
        "redis": redis,
        "tmp": tmp_path,
    }
    yield ctx
    for worker in workers:
        worker.stop()
    redis.stop()
    os.environ.pop("CELERY_KEY_PREFIX", None)


def submit(service: Service, data: bytes, user: str, track: str = "varm") -> str:
    out = service.submit(identity=user, track=track, data=data, metadata={"model_name": f"m-{user}"})
    assert out["status"] == "queued", out
    return out["submission_id"]


def test_pool_child_sigkill_mid_scoring_scores_exactly_once(stack) -> None:
    env = {**stack["env"], "VARM_TEST_SCORE_DELAY": "2"}
    worker = procs.Worker(env, stack["tmp"] / "worker0.log", concurrency=2).start()
    stack["workers"].append(worker)
    service: Service = stack["service"]
    sids = {submit(service, baseline("varm", "lexicon", i), f"user{i}") for i in range(4)}
    store = service.store
    wait_for(lambda: any(r["status"] == "scoring" for r in records(store, "varm").values()), 30, "scoring")
    children = worker.children()
    assert children, "no pool children found"
    os.kill(children[0], signal.SIGKILL)  # a pool child dies holding a task; the main process lives
    killed_at = time.monotonic()
    wait_for(
        lambda: all(records(store, "varm")[s]["status"] == "published" for s in sids), 90, "all published"
    )
    assert_published_exactly_once(store, "varm", sids)
    log = worker.log.read_text(errors="replace")
    assert "WorkerLostError" in log or "signal 9" in log, "the kill did not hit a busy child"
    figures.record(
        "faults_pool_child_sigkill",
        submissions=len(sids),
        published_once=len(sids),
        attempts=sorted(records(store, "varm")[s]["attempts"] for s in sids),
        seconds_to_all_published=round(time.monotonic() - killed_at, 1),
    )


def test_redis_restart_under_load_loses_nothing(stack) -> None:
    """Kill redis (no persistence: every queued message is gone) in the middle of a burst of submissions;
    the reconciler (beat, STUCK_AFTER_SECONDS=3) re-sends what was lost."""
    env = {**stack["env"], "VARM_TEST_SCORE_DELAY": "0.3"}
    for i in range(2):
        stack["workers"].append(
            procs.Worker(env, stack["tmp"] / f"worker{i}.log", concurrency=1, beat=i == 0).start()
        )
    service: Service = stack["service"]
    accepted: set[str] = set()
    failed_sends = 0
    for i in range(16):
        if i == 6:
            stack["redis"].restart(down_seconds=1.0)
        for _attempt in range(4):
            try:
                accepted.add(
                    submit(
                        service,
                        baseline("varm" if i % 2 else "cold", "lexicon", i),
                        f"u{i}",
                        track="varm" if i % 2 else "cold",
                    )
                )
                break
            except Exception:  # noqa: BLE001 - the broker was down while sending; the record is stored
                failed_sends += 1
                time.sleep(0.5)
    store = service.store
    stored = set(records(store, "varm")) | set(records(store, "cold"))
    assert accepted <= stored

    def done() -> bool:
        return all(r["status"] == "published" for t in ("varm", "cold") for r in records(store, t).values())

    restarted_at = time.monotonic()
    wait_for(done, 150, "every stored submission to be published after the redis restart")
    for track in ("varm", "cold"):
        assert_published_exactly_once(store, track, set(records(store, track)))
    assert stored == set(records(store, "varm")) | set(records(store, "cold"))
    notes = [h["note"] for t in ("varm", "cold") for r in records(store, t).values() for h in r["history"]]
    figures.record(
        "faults_redis_restart",
        submissions=len(stored),
        accepted=len(accepted),
        failed_sends_retried=failed_sends,
        lost=0,
        duplicated=0,
        resent_by_reconciler=sum("reconciler" in n for n in notes),
        seconds_to_all_published=round(time.monotonic() - restarted_at, 1),
    )


def test_web_process_killed_mid_upload_is_all_or_nothing(tmp_path: Path) -> None:
    redis = procs.RedisServer(tmp_path / "redis").start()
    try:
        config = Config(data_dir=tmp_path / "data", celery_broker_url=redis.url)
        seed(config, small_demo(tmp_path))
        env = procs.base_env(config.data_dir, redis.url, AUTH="open")
        space = procs.Space(env, tmp_path / "space.log").start()
        files = {
            name: baseline("varm", "char-ngram", n)
            for n, name in enumerate(
                ["headers_only", "half", "all_but_one", "whole_no_read", "whole_answered"]
            )
        }
        socks, promised = {}, {}
        for name, data in files.items():
            head, body = _multipart(data, user=name)
            cut = {"headers_only": 0, "half": len(body) // 2, "all_but_one": len(body) - 1}.get(
                name, len(body)
            )
            sock = socket.create_connection(("127.0.0.1", space.port), timeout=30)
            sock.sendall(head + body[:cut])
            socks[name] = sock
            if name == "whole_answered":
                promised[name] = json.loads(_read_response(sock).split(b"\r\n\r\n", 1)[1])["submission_id"]
        space.stop(signal.SIGKILL)
        for sock in socks.values():
            sock.close()
        space = procs.Space(env, tmp_path / "space2.log", port=space.port).start()
        assert httpx.get(space.url + "/api/v1/health").json()["store"] == "ok"  # no worker in this test
        store = open_store(config)
        recs = records(store, "varm")
        by_sha = {r["sha256"]: r for r in recs.values()}
        for name, data in files.items():
            sha = hashlib.sha256(data).hexdigest()
            rec = by_sha.get(sha)
            if name in promised:
                assert rec is not None and rec["submission_id"] == promised[name]
            if rec is not None:  # stored: completely, bytes identical
                stored = store.read("submissions", f"varm/{rec['submission_id']}/predictions.jsonl")
                assert stored == data, name
            elif name in ("headers_only", "half", "all_but_one"):
                pass  # cleanly absent, as it must be for an incomplete body
        for rec in recs.values():  # nothing else: no record for a truncated body
            assert rec["sha256"] in {hashlib.sha256(d).hexdigest() for d in files.values()}
        truncated = [
            n
            for n in ("headers_only", "half", "all_but_one")
            if hashlib.sha256(files[n]).hexdigest() in by_sha
        ]
        assert not truncated, f"incomplete uploads were stored: {truncated}"
        figures.record(
            "faults_web_killed_mid_upload",
            uploads=len(files),
            stored=sorted(n for n, d in files.items() if hashlib.sha256(d).hexdigest() in by_sha),
            partial_records=0,
        )
        space.stop()
    finally:
        redis.stop()


def _multipart(data: bytes, user: str) -> tuple[bytes, bytes]:
    boundary = "faultboundary7e1"
    parts = []
    for key, value in (("track", "varm"), ("model_name", f"upload-{user}")):
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n{value}\r\n'.encode()
        )
    parts.append(
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="p.jsonl"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n".encode()
        + data
        + b"\r\n"
    )
    parts.append(f"--{boundary}--\r\n".encode())
    body = b"".join(parts)
    head = (
        f"POST /api/v1/submissions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-User: {user.replace('_', '-')}\r\n"
        f"Content-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode()
    return head, body


def _read_response(sock: socket.socket) -> bytes:
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


# -- Hub faults ------------------------------------------------------------------------------------------


def _revision_consistent(store: Store, track: str, revision: str) -> str | None:
    """None when the results area at `revision` is self-consistent for `track`, else what is wrong."""
    raw = store.read("results", f"{track}/leaderboard.json", revision)
    if raw is None:
        return None
    board = json.loads(raw)
    files = set(store.list("results", f"{track}/", revision))
    for row in board["rows"]:
        want = f"{track}/results/{row['submission_id']}/v{row['version']}.json"
        if want not in files:
            return f"row {row['submission_id']} without its result file {want}"
    parquet = store.read("results", f"{track}/leaderboard.parquet", revision)
    if parquet is None:
        return "leaderboard.json without leaderboard.parquet"
    frame = pd.read_parquet(io.BytesIO(parquet))
    if sorted(frame["submission_id"]) != sorted(r["submission_id"] for r in board["rows"]):
        return "leaderboard.parquet and leaderboard.json disagree"
    return None


def test_hub_faults_publish_once_and_never_half_written(
    tmp_path: Path, hub_config: Config, hub_env: dict, fakehub
) -> None:
    from tests.conftest_hub import HUB_TEST_OPTIONS

    redis = procs.RedisServer(tmp_path / "redis").start()
    try:
        config = dataclasses.replace(hub_config, celery_broker_url=redis.url, stuck_after_seconds=5)
        seed(config, small_demo(tmp_path, ("varm",)), cache_dir=tmp_path / "seed-cache", **HUB_TEST_OPTIONS)
        env = {
            **procs.base_env(config.data_dir, redis.url, STUCK_AFTER_SECONDS="5"),
            **hub_env,
            "STORE": "hub",
            "HF_HOME": str(tmp_path / "hf-home"),
        }
        os.environ["CELERY_KEY_PREFIX"] = env["CELERY_KEY_PREFIX"]
        store = open_store(config, cache_dir=tmp_path / "test-cache", **HUB_TEST_OPTIONS)
        service = Service(config, store, CeleryEnqueuer(make_app(config)))
        results_commit = config.hf_results_repo.split("/")[1] + r"/commit/"
        for status, after in ((412, False), (429, False), (500, False), (502, True)):
            fakehub.fault(results_commit, status=status, method="POST", after=after)
        fakehub.fault(results_commit, delay=3.0, method="POST")
        worker = procs.Worker(env, tmp_path / "worker.log", concurrency=1, beat=True).start()
        try:
            sids = {
                submit(service, baseline("varm", name), f"hub-{name}") for name in ("lexicon", "majority")
            }
            wait_for(
                lambda: all(records(store, "varm")[s]["status"] == "published" for s in sids),
                180,
                "publication through the faulty Hub",
            )
        finally:
            worker.stop()
        assert_published_exactly_once(store, "varm", sids)
        history = store.history("results", limit=200)
        for entry in history:
            problem = _revision_consistent(store, "varm", entry["revision"])
            assert problem is None, f"revision {entry['revision']} ({entry['message']}): {problem}"
        stats = fakehub.stats()
        assert stats.get("POST commit", 0) >= 5, f"the faults were not exercised: {stats}"
        figures.record(
            "faults_hub",
            injected=["412", "429", "500", "502 after commit", "3 s delay"],
            submissions=len(sids),
            published_once=len(sids),
            revisions_checked=len(history),
            hub_commit_requests=stats.get("POST commit", 0),
        )
    finally:
        redis.stop()
        os.environ.pop("CELERY_KEY_PREFIX", None)


def _pids_mentioning(text: str) -> list[int]:
    """Pids whose command line or environment mentions `text` (a tmp path unique to this test).

    The embedded worker gets DATA_DIR through its environment, not its arguments."""
    out = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            seen = (proc / "cmdline").read_bytes() + b"\0" + (proc / "environ").read_bytes()
        except OSError:
            continue
        if text in seen.replace(b"\0", b" ").decode(errors="replace"):
            out.append(int(proc.name))
    return out


def test_embedded_worker_dies_with_web_process(tmp_path: Path) -> None:
    """Embedded default (no CELERY_BROKER_URL): SIGKILL of the web process (OOM killer, container stop)
    must not orphan its Celery worker, which runs in its own session (space/__main__.py: PR_SET_PDEATHSIG)."""
    env = procs.base_env(tmp_path / "data", None, AUTH="open")
    env.pop("CELERY_BROKER_URL", None)
    space = procs.Space(env, tmp_path / "space.log").start()
    marker = str(tmp_path / "data")
    try:
        wait_for(
            lambda: any(p != space.proc.pid for p in _pids_mentioning(marker)), 60, "the embedded worker"
        )
        space.stop(signal.SIGKILL)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and _pids_mentioning(marker):
            time.sleep(0.5)
        left = _pids_mentioning(marker)
        figures.record("faults_embedded_worker_orphaned", orphans_after_15_s=len(left))
        assert not left, f"orphaned embedded worker processes: {left}"
    finally:
        for pid in _pids_mentioning(marker):  # ours: started by the web process this test started
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
