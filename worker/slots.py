"""A small bound on the heavy work of one web process (validating and storing uploads).

Each upload or validation holds one of `slots` while its bytes are in memory; a request that cannot get
one within `queue_seconds`, or arrives when `slots * WAITERS_PER_SLOT` requests already wait, is refused
with `Busy` (HTTP 503 + Retry-After), so memory stays bounded whatever the number of concurrent uploads.
The same slots serve the REST routes (async) and the Gradio handlers (threads).
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

WAITERS_PER_SLOT = 4
POLL_SECONDS = 0.05


class Busy(Exception):
    """Every slot is taken: try again in `retry_after` seconds."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"the server is busy validating other uploads; retry in {retry_after} s")
        self.retry_after = retry_after


class WorkSlots:
    def __init__(self, slots: int, queue_seconds: float) -> None:
        self.slots = slots
        self.queue_seconds = queue_seconds
        self._free = threading.BoundedSemaphore(slots)
        self._lock = threading.Lock()
        self._waiting = 0

    def _busy(self) -> Busy:
        return Busy(max(1, math.ceil(self.queue_seconds)))

    def _enter_queue(self) -> None:
        with self._lock:
            if self._waiting >= self.slots * WAITERS_PER_SLOT:
                raise self._busy()
            self._waiting += 1

    def _leave_queue(self) -> None:
        with self._lock:
            self._waiting -= 1

    @contextmanager
    def hold(self) -> Iterator[None]:
        """Hold a slot in a worker thread (blocks up to `queue_seconds`)."""
        self._enter_queue()
        try:
            acquired = self._free.acquire(timeout=self.queue_seconds)
        finally:
            self._leave_queue()
        if not acquired:
            raise self._busy()
        try:
            yield
        finally:
            self._free.release()

    @asynccontextmanager
    async def hold_async(self) -> AsyncIterator[None]:
        """Hold a slot from the event loop without tying up a thread while waiting."""
        self._enter_queue()
        try:
            deadline = time.monotonic() + self.queue_seconds
            while not self._free.acquire(blocking=False):
                if time.monotonic() >= deadline:
                    raise self._busy()
                await asyncio.sleep(POLL_SECONDS)
        finally:
            self._leave_queue()
        try:
            yield
        finally:
            self._free.release()
