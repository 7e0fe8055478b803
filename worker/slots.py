"""A bound on the heavy work of one web process (validating and storing uploads).

Each upload or validation holds a slot while its bytes are in memory. A slot costs an estimate of the
memory its validation needs (MEMORY_PER_UPLOAD_BYTE x the upload's size: the scorer parses every line into
Python objects), and the slots in use may not cost more than `budget_bytes` together (one upload may always
run alone) nor number more than `slots`. So many small uploads run side by side while large ones take
turns. A request that cannot get a slot within `queue_seconds`, or arrives when `slots * WAITERS_PER_SLOT`
requests already wait, is refused with `Busy` (HTTP 503 + Retry-After). The same slots serve the REST
routes (async) and the Gradio handlers (threads).

An upload whose validation is done and that only waits for its store commit (which the Hub's commit budget
may pace for seconds, worker/store/budget.py) can `park` its slot: the slot goes to the next upload while
this one keeps only its raw bytes in memory, so the uploads arriving during a paced commit share the next
one (worker/store/group.py) instead of being refused. Parked uploads are bounded too: at most
`slots * WAITERS_PER_SLOT` of them and `budget_bytes` of raw bytes; past that, `park` keeps the slot.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

from worker.errors import Busy

# Measured: validating a 63 MB VARM predictions file peaks at ~5x its size above the bytes themselves.
MEMORY_PER_UPLOAD_BYTE = 6
WAITERS_PER_SLOT = 8
POLL_SECONDS = 0.05


class Held:
    """One taken slot; `park()` gives it to the next request while this one waits for its commit."""

    def __init__(self, slots: WorkSlots, size: int) -> None:
        self._slots, self.size, self.cost = slots, max(0, size), slots.cost(size)
        self.parked = False

    def park(self) -> bool:
        """Park this upload (see the module docstring); False when the parking bound is reached."""
        return self._slots._park(self)


class WorkSlots:
    def __init__(self, slots: int, queue_seconds: float, budget_bytes: int) -> None:
        self.slots = slots
        self.queue_seconds = queue_seconds
        self.budget_bytes = budget_bytes
        self._cond = threading.Condition()
        self._running = 0
        self._used = 0
        self._waiting = 0
        self._parked = 0
        self._parked_bytes = 0

    def cost(self, size: int) -> int:
        return max(0, size) * MEMORY_PER_UPLOAD_BYTE

    def _busy(self) -> Busy:
        return Busy(max(1, math.ceil(self.queue_seconds)))

    def _enter_queue(self) -> None:
        with self._cond:
            if self._waiting >= self.slots * WAITERS_PER_SLOT:
                raise self._busy()
            self._waiting += 1

    def _leave_queue(self) -> None:
        with self._cond:
            self._waiting -= 1

    def _take(self, cost: int) -> bool:
        """Take a slot if free (call with the condition held)."""
        if self._running >= self.slots:
            return False
        if self._running and self._used + cost > self.budget_bytes:
            return False
        self._running += 1
        self._used += cost
        return True

    def _give_back(self, held: Held) -> None:
        with self._cond:
            if held.parked:
                self._parked -= 1
                self._parked_bytes -= held.size
            else:
                self._running -= 1
                self._used -= held.cost
                self._cond.notify_all()

    def _park(self, held: Held) -> bool:
        with self._cond:
            if held.parked:
                return True
            full = self._parked >= self.slots * WAITERS_PER_SLOT
            if full or self._parked_bytes + held.size > self.budget_bytes:
                return False
            held.parked = True
            self._parked += 1
            self._parked_bytes += held.size
            self._running -= 1
            self._used -= held.cost
            self._cond.notify_all()
            return True

    @contextmanager
    def hold(self, size: int) -> Iterator[Held]:
        """Hold a slot for an upload of `size` bytes in a worker thread (waits up to `queue_seconds`)."""
        held = Held(self, size)
        cost = held.cost
        self._enter_queue()
        deadline = time.monotonic() + self.queue_seconds
        try:
            with self._cond:
                while not self._take(cost):
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise self._busy()
                    self._cond.wait(remaining)
        finally:
            self._leave_queue()
        try:
            yield held
        finally:
            self._give_back(held)

    @asynccontextmanager
    async def hold_async(self, size: int) -> AsyncIterator[Held]:
        """Hold a slot from the event loop without tying up a thread while waiting."""
        held = Held(self, size)
        cost = held.cost
        self._enter_queue()
        try:
            deadline = time.monotonic() + self.queue_seconds
            while True:
                with self._cond:
                    if self._take(cost):
                        break
                if time.monotonic() >= deadline:
                    raise self._busy()
                await asyncio.sleep(POLL_SECONDS)
        finally:
            self._leave_queue()
        try:
            yield held
        finally:
            self._give_back(held)
