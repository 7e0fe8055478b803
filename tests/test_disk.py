"""worker.disk: a full disk is told apart from other failures, waited out, and logged once per change."""

from __future__ import annotations

import errno
import logging
import sqlite3

import pytest
from sqlalchemy.exc import OperationalError

from worker import disk


def _sqlite_full() -> OperationalError:
    return OperationalError("COMMIT", {}, sqlite3.OperationalError("database or disk is full"))


def test_full_disk_errors_are_recognised_through_their_causes() -> None:
    assert disk.is_disk_full(OSError(errno.ENOSPC, "No space left on device"))
    assert disk.is_disk_full(OSError(errno.EDQUOT, "Disk quota exceeded"))
    assert disk.is_disk_full(_sqlite_full())
    try:
        try:
            raise OSError(errno.ENOSPC, "No space left on device")
        except OSError as inner:
            raise RuntimeError("store write failed") from inner
    except RuntimeError as outer:
        assert disk.is_disk_full(outer)
    # positive controls: other failures are not a full disk
    assert not disk.is_disk_full(OSError(errno.EACCES, "Permission denied"))
    locked = OperationalError("SELECT", {}, sqlite3.OperationalError("database is locked"))
    assert not disk.is_disk_full(locked)
    assert not disk.is_disk_full(None)
    assert not disk.is_disk_full(ValueError("line 3: database or disk is full"))  # words are not the error


def test_a_full_disk_is_waited_out_and_logged_once_each_way(monkeypatch, caplog) -> None:
    monkeypatch.setattr(disk.time, "sleep", lambda s: None)
    monkeypatch.setattr(disk, "STATE", disk.FullDiskState())
    calls = []

    def run() -> str:
        calls.append(1)
        if len(calls) < 5:
            raise OSError(errno.ENOSPC, "No space left on device")
        return "done"

    with caplog.at_level(logging.INFO, logger="worker.disk"):
        assert disk.wait_out_full_disk(run, "a task") == "done"
    assert len(calls) == 5
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2, messages
    assert "full" in messages[0] and "a task" in messages[0] and "space again" in messages[1]


def test_other_errors_and_a_passed_deadline_are_raised(monkeypatch) -> None:
    monkeypatch.setattr(disk.time, "sleep", lambda s: None)

    def denied() -> None:
        raise OSError(errno.EACCES, "Permission denied")

    with pytest.raises(OSError, match="Permission"):
        disk.wait_out_full_disk(denied, "a task")

    def full() -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OSError, match="No space"):
        disk.wait_out_full_disk(full, "a send", deadline=disk.time.monotonic())
