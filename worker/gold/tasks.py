"""Celery tasks: thin wrappers that open the worker's store lazily (once per process) and call the
pipeline modules. Arguments are ids and track names only (JSON), never file contents."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from functools import cache

from celery.signals import beat_init, worker_init, worker_ready, worker_shutdown

from scoring.tracks import get_track
from worker import embedded_broker, head_signal
from worker.celery import app
from worker.config import Config
from worker.enqueue import CeleryEnqueuer
from worker.gold.batch import score as run_scoring
from worker.gold.compare import compare as compare_submissions
from worker.gold.publish import Publisher
from worker.gold.reconcile import reconcile as run_reconcile
from worker.gold.references import ReferenceCache
from worker.gold.rescore import chunks_done, finalize, plan, poll_delay, score_chunk, stamp
from worker.heartbeat import HOLDER_VARIABLE, Heartbeats, heartbeat_name
from worker.records import check_track
from worker.store import WORKER_AREAS, Store, StoreError, import_client, layout, open_store

log = logging.getLogger(__name__)


@cache
def config() -> Config:
    return Config.from_env()


@cache
def store() -> Store:
    return open_store(config(), areas=WORKER_AREAS)


@cache
def references() -> ReferenceCache:
    return ReferenceCache(store(), gold_match_hold=config().gold_match_hold)


@cache
def publisher() -> Publisher:
    return Publisher(store(), export_every=config().export_every_seconds)


enqueue = CeleryEnqueuer(app)
_heartbeats: dict[str, Callable[[], None]] = {}  # kind -> stops this process's heartbeat thread


@worker_init.connect
def _name_the_holder(**_) -> None:
    # Before the pool starts, so each child inherits it: a record being scored names the worker whose
    # heartbeat vouches for it, and the reconciler re-sends it as soon as that heartbeat stops.
    os.environ[HOLDER_VARIABLE] = heartbeat_name("worker", os.getpid())
    # A message a task sends while the disk is full waits for space (up to the soft time limit) instead of
    # failing the task (worker.embedded_broker); the web process keeps the default, no waiting.
    embedded_broker.send_patience["seconds"] = float(config().task_soft_time_limit)
    import_client(config())


@worker_ready.connect
def _worker_heartbeat(**_) -> None:
    _heartbeats["worker"] = Heartbeats(config()).start("worker")


@beat_init.connect
def _beat_heartbeat(**_) -> None:
    _heartbeats["beat"] = Heartbeats(config()).start("beat")


@worker_shutdown.connect
def _stop_heartbeat(**_) -> None:
    for stop in _heartbeats.values():
        stop()


@app.task(name="worker.tasks.score_submission")
def score_submission(track: str, submission_id: str) -> str:
    check_track(track)
    outcomes = run_scoring(
        store(),
        references().get,
        track,
        submission_id,
        time_limit=app.conf.task_soft_time_limit,
        lease=app.conf.task_time_limit,
    )
    outcome = outcomes[(track, submission_id)]
    log.info("score %s/%s: %s (%d in this task)", track, submission_id, outcome, len(outcomes))
    # A batch scores records of several tracks: each gets one publish request.
    for name in sorted({t for (t, _), o in outcomes.items() if o in ("scored", "already")}):
        enqueue.publish(name)
    return outcome


_publish_started: dict[str, float] = {}  # track -> when this process's last publish of it started
CLOCK_MARGIN = 1.0  # seconds: clocks of the machine that asked and of this one may differ a little


@app.task(name="worker.tasks.publish_track")
def publish_track(track: str, requested_at: float | None = None, marks: bool = False) -> dict:
    """Publish `track`. A request sent before a publish of the same track started in this process is
    covered by it (that publish read the records after the request's change had landed), so a burst of
    scored submissions costs one publish per publish duration, not one each. A missed one is not lost:
    the reconciler republishes a track with a scored, unpublished record. `marks` (the reconciler's, once
    a paced burst is over): commit the records' marks even though the commit budget is paced; never
    covered, since the publishes before it skipped theirs."""
    check_track(track)
    started = _publish_started.get(track)
    covered = requested_at is not None and started is not None and requested_at < started - CLOCK_MARGIN
    if covered and not marks:
        return {"changed": False, "covered": True}
    begun = time.time()
    summary = publisher().publish(track, marks=True) if marks else publisher().publish(track)
    _publish_started[track] = begun  # only a publish that committed covers the requests sent before it
    log.info("publish %s: changed=%s rows=%s", track, summary["changed"], summary.get("rows"))
    if summary.get("changed") and summary.get("revision"):
        head_signal.announce(config(), summary["revision"])  # web processes show it now, not at their poll
    return summary


@app.task(name="worker.tasks.reconcile", ignore_result=True)  # never read: no backend write
def reconcile() -> dict:
    # A scoring task may run until its hard time limit; only after that is "scoring" stuck.
    summary = run_reconcile(
        store(),
        enqueue,
        config().stuck_after_seconds,
        scoring_after=config().hard_time_limit + 30,
        holder_gone=Heartbeats(config()).gone,
    )
    if any(summary.values()):
        log.warning("reconciler: %s", summary)
    return summary


@app.task(name="worker.tasks.compare")
def compare(track: str, a_id: str, b_id: str) -> dict:
    """Paired bootstrap of two submissions on the board (uses private row outcomes; returns statistics)."""
    return compare_submissions(store(), track, a_id, b_id)


@app.task(name="worker.tasks.rescore_track")
def rescore_track(track: str, dry_run: bool, actor: str, force: bool = False) -> dict:
    """Fan out chunk tasks on the rescore queue, then a finalizer that waits for all of them. `force`:
    recompute the submissions whose current version exists too, and say whether each reproduced it."""
    check_track(track)
    run = stamp()
    chunks = plan(store(), track)
    for index, ids in enumerate(chunks):
        rescore_chunk.apply_async(args=[track, run, index, ids, dry_run, force])
    final = rescore_finalize.apply_async(args=[track, run, actor, dry_run, len(chunks), force], countdown=0.5)
    log.info(
        "rescore %s run %s: %d chunks by %s (dry_run=%s, force=%s)",
        track,
        run,
        len(chunks),
        actor,
        dry_run,
        force,
    )
    return {"run": run, "chunks": len(chunks), "finalize_task_id": final.id}


@app.task(name="worker.tasks.cut_release")
def cut_release(track: str, name: str, actor: str) -> dict:
    """`POST /api/v1/releases/{track}` (a maintainer): the same cut as `python -m worker release cut`."""
    from worker.gold.release import cut

    release = cut(store(), track, name, actor=actor)
    head_signal.announce(config(), store().head("results"))
    log.info("release %s of %s cut by %s: %d finals", name, track, actor, release["counts"]["finals"])
    return {"track": track, "name": name}


# A chunk that cannot be committed is retried: the finalizer waits until every chunk has reported.
@app.task(name="worker.tasks.rescore_chunk", autoretry_for=(StoreError,), retry_backoff=True, max_retries=8)
def rescore_chunk(
    track: str, run: str, index: int, ids: list[str], dry_run: bool, force: bool = False
) -> int:
    score_chunk(store(), references().get(track), track, run, index, ids, dry_run, force)
    return len(ids)


@app.task(name="worker.tasks.rescore_finalize", bind=True, max_retries=3600)
def rescore_finalize(
    self, track: str, run: str, actor: str, dry_run: bool, expected: int, force: bool = False
) -> dict:
    done = chunks_done(store(), track, run)
    if len(done) < expected:
        raise self.retry(countdown=poll_delay(run, len(done), expected))
    diff = finalize(store(), publisher(), track, run, actor, dry_run, done, force)
    log.info("rescore %s run %s finished: %s", track, run, diff["summary"])
    report = None if dry_run else layout.rescore_report(track, run)
    primary = get_track(track).primary_metric
    changes = [  # what the maintainer's `rescore` prints (a dry run has no published report to read)
        {k: row[k] for k in ("submission_id", "model_name", "old_rank", "new_rank", "skipped", "error")}
        | {k: row[k] for k in ("check", "compared_version", "differs", "new_version") if k in row}
        | {"metric": primary, "old": row["old"].get(primary), "new": row["new"].get(primary)}
        for row in diff["submissions"]
    ]
    return diff["summary"] | {"run": run, "report": report, "changes": changes}
