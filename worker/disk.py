"""A full data disk is an outage to wait out, not a crash (issue 27.3).

Everything the embedded default keeps (the local store, the SQLite broker, heartbeats) is on one disk. When
it fills, a write fails with ENOSPC (or SQLite's "database or disk is full"); the upload path already answers
507. Here the worker side waits instead: a task that hit a full disk runs again once a write can succeed, and
each process says so in one line when the disk fills and one when space is back, not a line per attempt.
"""

from __future__ import annotations

import errno
import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
log = logging.getLogger(__name__)

DISK_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)
SQLITE_FULL = "database or disk is full"  # sqlite3's message for SQLITE_FULL (extended codes vary)
FIRST_WAIT, MAX_WAIT = 0.5, 5.0  # seconds between attempts while the disk is full (doubling)


def is_disk_full(exc: BaseException | None) -> bool:
    """Did `exc` (or anything it was raised from) come from a full disk? Only the errors the OS and SQLite
    raise count: a message that merely contains SQLite's words (say, from a file's content) does not."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, OSError) and exc.errno in DISK_FULL_ERRNOS:
            return True
        sqlite_error = exc if isinstance(exc, sqlite3.Error) else getattr(exc, "orig", None)  # SQLAlchemy's
        if isinstance(sqlite_error, sqlite3.Error) and SQLITE_FULL in str(sqlite_error):
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


class FullDiskState:
    """Whether this process last found the disk full; logs only the changes (full -> free -> full)."""

    def __init__(self) -> None:
        self._full = False
        self._lock = threading.Lock()

    @property
    def full(self) -> bool:
        return self._full

    def saw_full(self, what: str) -> None:
        with self._lock:
            if not self._full:
                log.warning("the data disk is full (%s); waiting for space, retrying quietly", what)
            self._full = True

    def saw_free(self) -> None:
        with self._lock:
            if self._full:
                log.info("the data disk has space again; carrying on")
            self._full = False


STATE = FullDiskState()


def wait_out_full_disk(run: Callable[[], T], what: str, deadline: float | None = None) -> T:
    """`run()`, run again after a growing pause (0.5 s up to 5 s) for as long as it fails because the disk
    is full. `run` must be safe to repeat (every worker task is: records move by compare-and-swap and a
    repeated delivery finds its work done). Past the optional monotonic `deadline`, the error is raised."""
    wait = FIRST_WAIT
    while True:
        try:
            value = run()
        except Exception as exc:
            if not is_disk_full(exc) or (deadline is not None and time.monotonic() + wait > deadline):
                raise
            STATE.saw_full(what)
            time.sleep(wait)
            wait = min(MAX_WAIT, wait * 2)
            continue
        STATE.saw_free()
        return value
