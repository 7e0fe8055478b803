"""The Celery app (`celery -A worker worker` finds `worker.celery:app`).

Broker: `CELERY_BROKER_URL` (Redis in production and tests), else an embedded default needing no server:
kombu's SQLAlchemy transport on `<DATA_DIR>/broker.sqlite` with a SQLite result backend.
Pipeline-only knobs (read by worker.config.Config): CELERY_KEY_PREFIX (Redis key prefix, so test sessions
don't clash), CELERY_VISIBILITY_TIMEOUT (seconds before an unacknowledged Redis message is redelivered; must
exceed the hard time limit), TASK_SOFT_TIME_LIMIT / TASK_TIME_LIMIT (seconds).
"""

from __future__ import annotations

import sys
from pathlib import Path

import kombu.transport.sqlalchemy
from celery import Celery, Task
from kombu import Exchange, Queue

from worker import embedded_broker
from worker.config import Config
from worker.disk import wait_out_full_disk

QUEUES = ("submissions", "publish", "rescore")
ROUTES = {
    "worker.tasks.score_submission": {"queue": "submissions"},
    "worker.tasks.compare": {"queue": "submissions"},
    "worker.tasks.reconcile": {"queue": "submissions"},
    "worker.tasks.publish_track": {"queue": "publish"},
    "worker.tasks.rescore_track": {"queue": "rescore"},
    "worker.tasks.rescore_chunk": {"queue": "rescore"},
    "worker.tasks.rescore_finalize": {"queue": "rescore"},
    "worker.tasks.cut_release": {"queue": "rescore"},
}

# The SQLAlchemy transport hands every transport option to create_engine(), so its polling interval
# (1 s by default, which would add seconds to every hop) can only be set on the class. 0.1 s keeps an
# idle embedded worker at a few percent of a core.
kombu.transport.sqlalchemy.Transport.polling_interval = 0.1
embedded_broker.install()  # waits out a full disk instead of a reconnect storm


class DiskPatientTask(Task):
    """Every task waits out a full data disk (worker.disk) instead of failing with ENOSPC: it runs again
    once a write succeeds, and the worker logs the outage once, not a traceback per attempt."""

    def __call__(self, *args, **kwargs):
        return wait_out_full_disk(lambda: super(DiskPatientTask, self).__call__(*args, **kwargs), self.name)


def broker_urls(config: Config) -> tuple[str, str]:
    """(broker URL, result backend URL) for this deployment."""
    if config.celery_broker_url:
        return config.celery_broker_url, config.celery_broker_url
    data_dir = Path(config.data_dir).resolve()
    return f"sqla+sqlite:///{data_dir}/broker.sqlite", f"db+sqlite:///{data_dir}/results.sqlite"


def reconcile_every(config: Config) -> float:
    """Run the reconciler a few times per stuck period, at most once a minute apart."""
    return float(max(1, min(60, config.stuck_after_seconds // 2)))


def make_app(config: Config) -> Celery:
    Path(config.data_dir).mkdir(parents=True, exist_ok=True)  # SQLite broker and beat schedule live here
    broker, backend = broker_urls(config)
    soft, hard = config.task_soft_time_limit, config.hard_time_limit
    transport_options: dict = {}
    backend_options: dict = {}
    if broker.startswith(("redis://", "rediss://")):
        prefix = config.celery_key_prefix
        visibility = config.celery_visibility_timeout or hard * 2
        transport_options = {
            "visibility_timeout": visibility,
            # kombu sweeps for expired unacknowledged messages only every interval x throttle seconds
            # (100 s by default); sweep a few times per visibility timeout instead.
            "unacked_restore_interval": max(1, min(10, visibility // 3)),
            "unacked_restore_throttle": 1,
            # Drain the queues in this order: new submissions first, re-scoring last.
            "queue_order_strategy": "priority",
            # A Redis that does not answer must not hold an upload: fail the connect fast (see enqueue.py).
            "socket_connect_timeout": 1,
        }
        if prefix:
            transport_options["global_keyprefix"] = prefix
            backend_options["global_keyprefix"] = prefix
    app = Celery(
        "worker", broker=broker, backend=backend, include=["worker.gold.tasks"], task_cls=DiskPatientTask
    )
    app.conf.update(
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],  # a pickled message is refused, never deserialized
        result_accept_content=["json"],
        task_acks_late=True,  # a message is acknowledged only after its task finished
        task_reject_on_worker_lost=True,  # ...and requeued when the worker process died under it
        worker_prefetch_multiplier=1,
        task_soft_time_limit=soft,
        task_time_limit=hard,
        # Each queue on its own direct exchange and routing key: with Celery's defaults every Queue would be
        # bound to the default exchange under the same key, and a message would land in all three.
        task_queues=[Queue(name, Exchange(name, type="direct"), routing_key=name) for name in QUEUES],
        task_default_queue="submissions",
        task_routes=ROUTES,
        broker_transport_options=transport_options,
        result_backend_transport_options=backend_options,
        result_expires=3600,
        # Celery 5.5's soft shutdown: with REMAP_SIGTERM=SIGQUIT (docker/entrypoint.sh, the embedded worker)
        # SIGTERM starts a cold shutdown that first gives running tasks this long, then cancels them and
        # requeues their (late-acked) messages: a stopped worker hands its work back at once.
        worker_soft_shutdown_timeout=config.worker_soft_shutdown_timeout,
        broker_connection_retry_on_startup=True,
        broker_connection_timeout=1,
        # Under DATA_DIR, not the working directory (where a bare `celery beat` would leave it).
        beat_schedule_filename=str(Path(config.data_dir).resolve() / "celerybeat-schedule"),
        beat_schedule={
            "reconcile": {"task": "worker.tasks.reconcile", "schedule": reconcile_every(config)},
        },
        timezone="UTC",
    )
    return app


def _config_or_exit() -> Config:
    try:
        return Config.from_env()
    except ValueError as exc:  # a bad variable stops the worker with one line naming it
        sys.exit(f"configuration error: {exc}")


app = make_app(_config_or_exit())
