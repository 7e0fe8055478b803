"""Sending work to Celery by task name, so the web process never imports the task code."""

from __future__ import annotations

from celery import Celery

COMPARE_TIMEOUT = 60.0


class CeleryEnqueuer:
    """The Service's Enqueuer on top of a Celery app (routing comes from the app's task_routes)."""

    def __init__(self, app: Celery) -> None:
        self.app = app

    def score(self, track: str, submission_id: str) -> None:
        self.app.send_task("worker.tasks.score_submission", args=[track, submission_id])

    def publish(self, track: str) -> None:
        self.app.send_task("worker.tasks.publish_track", args=[track])

    def rescore(self, track: str, dry_run: bool, actor: str) -> str:
        return self.app.send_task("worker.tasks.rescore_track", args=[track, dry_run, actor]).id

    def compare(self, track: str, a_id: str, b_id: str) -> dict:
        result = self.app.send_task("worker.tasks.compare", args=[track, a_id, b_id])
        return result.get(timeout=COMPARE_TIMEOUT)

    def ping(self) -> bool:
        try:
            with self.app.connection_for_write() as conn:
                conn.ensure_connection(max_retries=1, timeout=2)
            return True
        except Exception:  # any failure means "not reachable" to a health check
            return False
