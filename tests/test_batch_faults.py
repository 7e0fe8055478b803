"""A scoring worker killed in the middle of a batch (worker/gold/batch.py) loses nothing: real Redis, a real
Celery worker (prefork child SIGKILLed), the real HubStore against tests/fakehub.py, and a commit budget
that is paced throughout (its Redis ledger filled beforehand), so every first attempt goes to a batch.

Nothing of the killed batch was written (all records still queued right after the kill); its leases run out
after the hard time limit, the reconciler re-sends, and every submission ends published exactly once, the
batch's records alone (with their 'scoring' commit), the others in a new batch. Positive controls: the
kill hit a busy child in a batch, and batches did commit."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import time
from pathlib import Path

import pytest
import redis

from tests.hostile import procs
from tests.test_faults import (
    assert_published_exactly_once,
    baseline,
    records,
    seed,
    small_demo,
    submit,
    wait_for,
)
from worker.celery import make_app
from worker.config import Config
from worker.enqueue import CeleryEnqueuer
from worker.service import Service
from worker.store import open_store

pytestmark = pytest.mark.slow
LIMIT, WINDOW = 10_000, 600.0  # cap 9,000, paced above 4,500 in the window: slots 0.07 s apart


def fill_ledger(url: str, prefix: str, repo: str) -> None:
    """4,600 commits 'just made' to `repo`: the budget is paced (tight) for the whole test."""
    now = time.time()
    redis.Redis.from_url(url).set(f"{prefix}hub-budget:{repo}", json.dumps([now - 1] * 4600), ex=3600)


def leases(url: str, prefix: str) -> int:
    """Leases held now (worker/store/claims.py keeps them in the budget's Redis ledger)."""
    client = redis.Redis.from_url(url)
    keys = client.keys(f"{prefix}hub-budget:claim:*")
    return sum(bool(json.loads(client.get(key) or b"[]")) for key in keys)


def test_worker_killed_mid_batch_loses_nothing(tmp_path: Path, hub_config: Config, hub_env: dict, fakehub):
    from tests.conftest_hub import HUB_TEST_OPTIONS

    server = procs.RedisServer(tmp_path / "redis").start()
    workers: list[procs.Worker] = []
    try:
        env = {
            **procs.base_env(hub_config.data_dir, server.url, STUCK_AFTER_SECONDS="3"),
            **hub_env,
            "STORE": "hub",
            "HF_HOME": str(tmp_path / "hf-home"),
            "HF_COMMITS_PER_HOUR": str(LIMIT),
            "HF_COMMIT_WINDOW": str(WINDOW),
            "TASK_SOFT_TIME_LIMIT": "20",  # a batch scores for at most 5 s: two files at 3 s each
            "TASK_TIME_LIMIT": "25",  # ...and a lease lasts 25 s
            "VARM_TEST_SCORE_DELAY": "3",
        }
        config = dataclasses.replace(
            hub_config,
            celery_broker_url=server.url,
            celery_key_prefix=env["CELERY_KEY_PREFIX"],
            stuck_after_seconds=3,
            hf_commits_per_hour=LIMIT,
            hf_commit_window=WINDOW,
        )
        seed(config, small_demo(tmp_path, ("varm",)), cache_dir=tmp_path / "seed-cache", **HUB_TEST_OPTIONS)
        fill_ledger(server.url, env["CELERY_KEY_PREFIX"], config.hf_submissions_repo)
        store = open_store(config, cache_dir=tmp_path / "test-cache", **HUB_TEST_OPTIONS)
        assert store.budget_tight("submissions")
        service = Service(config, store, CeleryEnqueuer(make_app(config)))
        sids = {submit(service, baseline("varm", "lexicon", i), f"user{i}") for i in range(4)}

        # The scoring worker's only child runs the batch; beat and the publisher live in another worker.
        worker = procs.Worker(env, tmp_path / "worker.log", concurrency=1, queues="submissions").start()
        workers += [worker, procs.Worker(env, tmp_path / "beat.log", queues="publish", beat=True).start()]
        # Two leases taken: the batch is scoring its second file (3 s), nothing of it committed yet.
        wait_for(lambda: leases(server.url, env["CELERY_KEY_PREFIX"]) >= 2, 60, "a batch of two")
        children = worker.children()
        assert children, "no pool children found"
        os.kill(children[0], signal.SIGKILL)
        assert {r["status"] for r in records(store, "varm").values() if r["submission_id"] in sids} == {
            "queued"
        }, "the killed batch wrote something"

        wait_for(
            lambda: all(records(store, "varm")[s]["status"] == "published" for s in sids),
            180,
            "every submission published after the kill",
        )
        assert_published_exactly_once(store, "varm", sids)
        log = worker.log.read_text(errors="replace")
        assert "WorkerLostError" in log or "signal 9" in log, "the kill did not hit a busy child"
        assert "records in one commit" in log, "no batch committed after the kill"
        alone = [s for s in sids if "scoring" in [h["status"] for h in records(store, "varm")[s]["history"]]]
        assert 1 <= len(alone) <= 2, alone  # the killed batch's records (leased) were scored alone
        assert store.budget_tight("submissions")  # paced all along (positive control of the set-up)
    finally:
        for running in workers:
            running.stop()
        server.stop()
