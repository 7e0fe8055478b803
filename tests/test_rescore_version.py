"""Results of an older scorer reach the current SCORER_VERSION only through the maintainers' re-score
flow (`python -m worker rescore`, a real Celery worker on Redis), never by editing them (CHANGELOG 2.0.0)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scoring.version import SCORER_VERSION
from tests.conftest_pipeline import (
    ROOT,
    RecordingEnqueuer,
    WorkerProcess,
    baseline_file,
    seed_store,
    wait_for,
    worker_env,
)
from worker.config import Config
from worker.gold.publish import Publisher
from worker.gold.references import ReferenceCache
from worker.gold.scoring_job import score_submission
from worker.service import Service
from worker.store import open_store
from worker.submissions import record_files

pytestmark = pytest.mark.slow
OLD = "1.0.0"


def record(store, sid: str) -> dict:
    return json.loads(store.read("submissions", f"varm/{sid}/submission.json"))


def test_an_old_version_result_is_rescored_by_the_rescore_command(
    tmp_path: Path, demo_dir: Path, redis_available: str, key_prefix: str, workers: list
) -> None:
    assert SCORER_VERSION != OLD
    config = Config(data_dir=tmp_path / "data", celery_broker_url=redis_available)
    seed_store(config, demo_dir)
    store = open_store(config)
    service = Service(config, store, RecordingEnqueuer())
    sid = service.submit(
        identity="alice", track="varm", data=baseline_file("varm"), metadata={"model_name": "lexicon"}
    )["submission_id"]
    assert score_submission(store, ReferenceCache(store).get, "varm", sid, time_limit=300) == "scored"
    Publisher(store).publish("varm")
    # The state a store has after a scorer upgrade: the published result came from the old scorer.
    old = record(store, sid)
    old["versions"][0]["scorer_version"] = OLD
    store.commit("submissions", record_files(store, store.head("submissions"), [old]), [], "test: 1.0.0")

    workers.append(WorkerProcess(worker_env(config), tmp_path / "worker.log").start())
    done = subprocess.run(
        [sys.executable, "-m", "worker", "rescore", "--track", "varm", "--timeout", "120"],
        cwd=ROOT,
        env=worker_env(config),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["rescored"] == 1 and summary["errors"] == 0

    versions = wait_for(
        lambda: (v := record(store, sid)["versions"]) and "pending_rescore" not in v[-1] and v,
        30,
        what="the new version to be marked published",
    )
    assert [(v["version"], v["scorer_version"]) for v in versions] == [(1, OLD), (2, SCORER_VERSION)]
    board = json.loads(store.read("results", "varm/leaderboard.json"))
    assert [(r["submission_id"], r["version"], r["scorer_version"]) for r in board["rows"]] == [
        (sid, 2, SCORER_VERSION)
    ]
    envelope = json.loads(store.read("results", f"varm/results/{sid}/v2.json"))
    assert envelope["result"]["provenance"]["scorer_version"] == SCORER_VERSION
    report = json.loads(store.read("results", summary["report"]))
    assert report["scorer_version"] == SCORER_VERSION and report["submissions"][0]["old_version"] == 1
    # Issue 28.13: the submission's history tells the re-score, in order, after v1's publish.
    notes = [h["note"] for h in record(store, sid)["history"]]
    published_v1 = notes.index("on the leaderboard as version 1")
    rescored = next(i for i, n in enumerate(notes) if n.startswith("re-scored as version 2"))
    shown = next(i for i, n in enumerate(notes) if n.startswith("re-score ") and "version 2 is shown" in n)
    assert published_v1 < rescored < shown, notes
    assert f"scorer {SCORER_VERSION}" in notes[rescored]


def test_the_finalizer_looks_again_at_half_the_time_the_chunks_still_need() -> None:
    from datetime import UTC, datetime, timedelta

    from worker.gold.rescore import POLL_FIRST, POLL_MAX, POLL_MIN, STAMP, poll_delay

    start = datetime(2026, 1, 1, tzinfo=UTC)
    run = start.strftime(STAMP)
    at = start + timedelta(seconds=30)
    assert poll_delay(run, 0, 40, at) == POLL_FIRST  # no rate yet
    assert poll_delay(run, 30, 40, at) == 5.0  # 10 chunks at 1 s each still to go: look after half of it
    assert poll_delay(run, 20, 40, at) == POLL_MAX and poll_delay(run, 397, 400, at) == POLL_MIN
    assert poll_delay(run, 36, 40, at) == pytest.approx(4 * 30 / 36 / 2)
    assert poll_delay(run, 38, 40, at) == poll_delay(run, 0, 1, at) == POLL_MIN  # the last ones are running


def test_the_plan_comes_from_the_record_index_in_the_same_order_as_from_every_record(tmp_path) -> None:
    """`plan` reads the index summaries, not every record: the same chunks, oldest first (ties by id),
    without unscored, failed and retired submissions; a store without an index is planned from the records."""
    from worker.gold import rescore
    from worker.records import new_record, record_path, transition
    from worker.submissions import dumps

    records = []
    for i in range(60):  # created_at repeats every 7 records: ties ordered by id
        sid, at = f"{(i * 7919) % 65536:04x}{i:012x}", f"2026-01-01T00:00:{i % 7:02d}.000Z"
        rec = new_record(
            submission_id=sid,
            track="varm",
            sha256="0" * 64,
            submitter="u",
            metadata={"model_name": f"m{i}"},
            at=at,
        )
        if i % 5:
            rec = transition(rec, "published", "test")
            version = {"version": 1, "scorer_version": "0", "references_sha256": "", "scored_at": at}
            rec["versions"] = [version]
        if i % 11 == 0:
            rec = transition(rec, "failed", "test")
        if i % 13 == 0:
            rec["retired"] = {"at": "", "references_sha256": ""}
        records.append(rec)
    oldest_first = sorted(records, key=lambda r: (r["created_at"], r["submission_id"]))
    expected = [
        r["submission_id"]
        for r in oldest_first
        if r["versions"] and r["status"] != "failed" and not r.get("retired")
    ]
    without = open_store(Config(data_dir=tmp_path / "plain"))
    plain = {record_path("varm", r["submission_id"]): dumps(r) for r in records}
    without.commit("submissions", plain, [], "t")
    indexed = open_store(Config(data_dir=tmp_path / "indexed"))
    indexed.commit("submissions", record_files(indexed, indexed.head("submissions"), records), [], "t")
    assert indexed.list("submissions", "varm/index/") and not without.list("submissions", "varm/index/")
    for store in (without, indexed):
        chunks = rescore.plan(store, "varm")
        assert [sid for chunk in chunks for sid in chunk] == expected
        assert [len(c) for c in chunks] == [rescore.CHUNK] * (len(expected) // rescore.CHUNK) + (
            [len(expected) % rescore.CHUNK] if len(expected) % rescore.CHUNK else []
        )
