"""The embedded default's broker: kombu's SQLAlchemy transport on SQLite, made to wait out a full disk.

Taking a message marks it invisible, a write. On a full disk kombu's channel lets SQLite's "database or
disk is full" escape as a connection error: Celery then reconnects in a tight loop, leaks a pooled
connection each time (`QueuePool limit ... reached`), logs a traceback a few times a second and finally
exits. Here a full disk while taking a message means "nothing to take yet" (the message stays visible, so
nothing is lost), and a message sent while the disk is full is sent again once there is space (in workers;
the web process gives up at once: its uploads are refused with 507 and the reconciler re-sends what it
stored).
"""

from __future__ import annotations

import time
from queue import Empty

import kombu.transport.sqlalchemy as sqla
from sqlalchemy.exc import OperationalError

from worker.disk import STATE, is_disk_full, wait_out_full_disk

# Set in worker processes (worker.gold.tasks at worker_init): how long a send waits for space.
send_patience = {"seconds": 0.0}


class Channel(sqla.Channel):
    def _get(self, queue):
        try:
            return super()._get(queue)
        except OperationalError as exc:
            if not is_disk_full(exc):
                raise
            self.session.rollback()  # the message stays visible; the session stays usable
            STATE.saw_full("taking a message from the embedded broker")
            raise Empty() from None

    def _put(self, queue, payload, **kwargs):
        patience = send_patience["seconds"]
        deadline = time.monotonic() + patience if patience > 0 else time.monotonic()
        return wait_out_full_disk(
            lambda: super(Channel, self)._put(queue, payload, **kwargs),
            "sending a message on the embedded broker",
            deadline=deadline,
        )


def install() -> None:
    """Use this channel for every `sqla+` broker URL in this process."""
    sqla.Transport.Channel = Channel
