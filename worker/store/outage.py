"""What one process last learned about the Hub's availability: the gate every Hub request passes first.

During a storm of 429s or 5xx answers, retrying each call on its own multiplies the traffic (every thread
and every call backs off separately) and holds every caller for minutes. Here a refused request closes the
gate for a window: the Hub's own (`Retry-After`, `RateLimit`) for a 429, else an exponential back-off that
grows with consecutive failures, across all calls of the process (1 s doubling to 60 s, jittered). While it
is closed no request is sent; a caller either waits for it (a worker, within its budget) or is told at once
that the store is unavailable and when to come back (the web process: a 503 with `Retry-After` in well
under 2 s). The first request after the window is the probe; its answer opens or closes the gate again.
"""

from __future__ import annotations

import datetime as dt
import logging
import random
import threading
import time

from worker.store.base import StoreError

log = logging.getLogger(__name__)
MAX_BACKOFF = 60.0


class StoreUnavailable(StoreError):
    """The Hub refused recently and its window is still open: nothing was sent. `retry_after` in seconds."""

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class HubGate:
    def __init__(self, base_delay: float = 1.0) -> None:
        self.base_delay = base_delay
        self._lock = threading.Lock()
        self._until = 0.0  # monotonic
        self._until_wall = 0.0
        self._kind: str | None = None  # "rate-limited" | "unavailable"
        self._failures = 0

    def remaining(self) -> float:
        return max(0.0, self._until - time.monotonic())

    def refused(self, kind: str, window: float | None) -> float:
        """The Hub refused (429 with `window`, or a 5xx / network failure with none): close the gate for the
        window, or for a back-off that doubles with each consecutive failure. Returns the seconds closed."""
        with self._lock:
            self._failures += 1
            if window is None:
                step = self.base_delay * 2 ** min(self._failures - 1, 16)
                window = min(MAX_BACKOFF, step) * random.uniform(0.5, 1.0)
            now = time.monotonic()
            if now + window > self._until:
                self._until, self._until_wall = now + window, time.time() + window
            if self._kind is None:
                log.warning("the Hub is %s; holding requests for %.0f s", kind, window)
            self._kind = kind
            return window

    def answered(self) -> None:
        """The Hub answered (success, or a definite answer such as 404 or 412): open the gate."""
        if self._kind is None and not self._failures:
            return
        with self._lock:
            if self._kind is not None:
                log.info("the Hub answers again after %d refused request(s)", self._failures)
            self._kind, self._failures, self._until = None, 0, 0.0

    def state(self) -> str | None:
        """For health: None when the Hub answered last, else what it said and until when."""
        kind = self._kind
        if kind is None:
            return None
        until = dt.datetime.fromtimestamp(self._until_wall, dt.UTC).strftime("%H:%M:%S UTC")
        if kind == "rate-limited":
            return f"degraded (rate-limited until {until})"
        return f"unavailable (next try at {until})"

    def closed_error(self, what: str) -> StoreUnavailable:
        state = self.state() or "refusing requests"
        return StoreUnavailable(f"{what}: not sent, the Hub is {state}", retry_after=self.remaining())
