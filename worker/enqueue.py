"""Sending work to Celery by task name, so the web process never imports the task code."""

from __future__ import annotations

import time

from celery import Celery

COMPARE_TIMEOUT = 60.0
# Give up on a down broker within about a second: whatever is sent here is already durable in the store,
# and the reconciler re-sends it. (Celery's default policy, with the Redis result backend's own reconnect
# loop, made an upload wait ~19 s.) Score/publish results are never read, so none is subscribed to.
FIRE_AND_FORGET = {
    "ignore_result": True,
    "retry_policy": {"max_retries": 2, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.2},
}


class CeleryEnqueuer:
    """The Service's Enqueuer on top of a Celery app (routing comes from the app's task_routes)."""

    def __init__(self, app: Celery) -> None:
        self.app = app

    def score(self, track: str, submission_id: str) -> None:
        self.app.send_task("worker.tasks.score_submission", args=[track, submission_id], **FIRE_AND_FORGET)

    def publish(self, track: str, marks: bool = False) -> None:
        # The request time lets a publish that starts later cover it (worker.gold.tasks.publish_track).
        args = [track, time.time(), True] if marks else [track, time.time()]
        self.app.send_task("worker.tasks.publish_track", args=args, **FIRE_AND_FORGET)

    def rescore(self, track: str, dry_run: bool, actor: str, force: bool = False) -> str:
        return self.app.send_task("worker.tasks.rescore_track", args=[track, dry_run, actor, force]).id

    def release(self, track: str, name: str, actor: str) -> str:
        return self.app.send_task("worker.tasks.cut_release", args=[track, name, actor]).id

    def compare(self, track: str, a_id: str, b_id: str) -> dict:
        result = self.app.send_task("worker.tasks.compare", args=[track, a_id, b_id])
        return result.get(timeout=COMPARE_TIMEOUT)

    def ping(self) -> bool:
        try:
            with self.app.connection_for_write() as conn:
                conn.ensure_connection(max_retries=1, interval_start=0, timeout=1)
            return True
        except Exception:  # any failure means "not reachable" to a health check
            return False
