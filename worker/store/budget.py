"""The Hub's commit budget: pace commits per repository so the Hub's hourly limit is never reached.

The Hub refuses a repository's commits past 128 in an hour (429: "the rate limit for repository commits
(128 per hour)"), and a refused commit stalls every writer of that repo until the window moves. So each
commit first takes a slot from a ledger shared by every process that writes the repo:

- while fewer than `free` × `cap` commits landed in the last `window` seconds, a slot is immediate (a
  quiet service never waits);
- above that, slots are spaced `window / cap` seconds apart (commits queue up; callers that gather
  several changes per commit then coalesce, as the publisher does);
- and never more than `cap` (= `share` × the limit, headroom for a clock skew or a writer outside the
  ledger) in any window: the next slot waits until the oldest commit leaves it.

Ledgers: `MemoryLedger` (one process), `FileLedger` (processes of one machine: web + embedded worker,
under `$DATA_DIR/hub-budget/`), `RedisLedger` (a deployment sharing the Celery broker's Redis).
`HubStore.from_config` picks the widest the configuration allows.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

HUB_COMMITS_PER_HOUR = 128  # per repository (the Hub's 429 message); HF_COMMITS_PER_HOUR overrides


@dataclass(frozen=True)
class Policy:
    limit: int = HUB_COMMITS_PER_HOUR
    window: float = 3600.0
    share: float = 0.9  # of the limit this service may use
    free: float = 0.5  # of that, used without pacing

    @property
    def cap(self) -> int:
        return max(1, int(self.limit * self.share))

    @property
    def spacing(self) -> float:
        return self.window / self.cap

    def next_slot(self, times: list[float], now: float) -> float:
        """When the next commit may go, given the sorted slot times of the window (pure)."""
        recent = [t for t in times if t > now - self.window]
        if len(recent) < self.free * self.cap:
            return now
        slot = max(now, recent[-1] + self.spacing)
        if len(recent) >= self.cap:  # wait until enough of the window's commits have left it
            slot = max(slot, recent[len(recent) - self.cap] + self.window)
        return slot

    def tight(self, times: list[float], now: float) -> bool:
        """Is the repo being paced (more than `free` × `cap` commits in the window)?"""
        return sum(t > now - self.window for t in times) >= self.free * self.cap


class Ledger(Protocol):
    """Slot times per repo, shared by the processes that write it. `update(repo, change)` applies
    `change(times) -> times` atomically and returns the new list."""

    def update(self, repo: str, change: Callable[[list[float]], list[float]]) -> list[float]: ...


class MemoryLedger:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._times: dict[str, list[float]] = {}

    def update(self, repo: str, change: Callable[[list[float]], list[float]]) -> list[float]:
        with self._lock:
            self._times[repo] = sorted(change(list(self._times.get(repo, []))))
            return list(self._times[repo])


class FileLedger:
    """One small JSON file per repo under `folder`, changed under an exclusive flock."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)

    def update(self, repo: str, change: Callable[[list[float]], list[float]]) -> list[float]:
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{hashlib.sha256(repo.encode()).hexdigest()[:16]}.json"
        with open(path, "a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                handle.seek(0)
                try:
                    times = [float(t) for t in json.loads(handle.read() or "[]")]
                except ValueError:  # a torn file: forget it (the ledger only paces)
                    times = []
                times = sorted(change(times))
                handle.seek(0)
                handle.truncate()
                handle.write(json.dumps(times))
                handle.flush()
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
        return times


class RedisLedger:
    """A JSON list per repo in Redis (`<prefix>hub-budget:<repo>`), changed under a Redis lock."""

    def __init__(self, url: str, prefix: str = "") -> None:
        import redis

        self.redis = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=5)
        self.prefix = prefix

    def update(self, repo: str, change: Callable[[list[float]], list[float]]) -> list[float]:
        key = f"{self.prefix}hub-budget:{repo}"
        with self.redis.lock(f"{key}:lock", timeout=10, blocking_timeout=10):
            raw = self.redis.get(key)
            times = sorted(change([float(t) for t in json.loads(raw or b"[]")]))
            self.redis.set(key, json.dumps(times), ex=7 * 24 * 3600)
        return times


class CommitBudget:
    """Slots for commits per repo (see the module docstring). Thread-safe; shared through its ledger."""

    def __init__(
        self,
        ledger: Ledger | None = None,
        policy: Policy | None = None,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.ledger = ledger or MemoryLedger()
        self.policy = policy or Policy()
        self.clock, self.sleep = clock, sleep
        self.waited = 0.0  # seconds this process spent waiting for slots

    def _keep(self, times: list[float], now: float) -> list[float]:
        return [t for t in times if t > now - self.policy.window]

    def take(self, repo: str) -> float | None:
        """Reserve the next slot for a commit to `repo` and wait for it; returns the slot's time (None when
        the ledger could not be reached), for `landed`."""
        now = self.clock()
        taken: list[float] = []

        def reserve(times: list[float]) -> list[float]:
            times = self._keep(times, now)
            taken.append(self.policy.next_slot(times, now))
            return [*times, taken[-1]]

        try:
            self.ledger.update(repo, reserve)
        except Exception:  # noqa: BLE001 - a ledger outage must not stop commits (the Hub still answers 429)
            return None
        wait = max(0.0, taken[-1] - now)
        if wait:
            self.sleep(wait)
            self.waited += wait
        return taken[-1]

    def landed(self, repo: str, slot: float | None) -> None:
        """The commit of `slot` reached the Hub now: the ledger keeps the later of the two times. (The Hub
        counts commits when they land; a commit that built its change for seconds after its slot would
        otherwise count in a later window than the ledger thinks, and bunched slots, as the free ones at the
        start of a burst, could then overfill that window.)"""
        if slot is None:
            return
        now = self.clock()
        if now <= slot:
            return

        def move(times: list[float]) -> list[float]:
            if slot in times:
                times = list(times)
                times[times.index(slot)] = now
            return times

        with contextlib.suppress(Exception):  # a ledger outage: the headroom of `share` covers the lag
            self.ledger.update(repo, move)

    def refund(self, repo: str, slot: float | None) -> None:
        """The commit of `slot` was never made, or the Hub refused it before applying it (412, 429): the
        slot no longer counts. (Kept, such ghosts filled the ledger's window while the Hub's was half
        empty, and every writer then waited for them to leave it.)"""
        if slot is None:
            return

        def drop(times: list[float]) -> list[float]:
            if slot in times:
                times = list(times)
                times.remove(slot)
            return times

        with contextlib.suppress(Exception):  # a ledger outage: the slot stays counted (conservative)
            self.ledger.update(repo, drop)

    def status(self, repo: str) -> dict:
        """{"commits_last_window", "cap", "limit", "window_s", "paced", "next_slot_in_s"} for `repo`."""
        now = self.clock()
        with contextlib.suppress(Exception):  # a ledger outage: report what is known
            times = self.ledger.update(repo, lambda t: self._keep(t, now))
            recent = [t for t in times if t <= now]
            return {
                "commits_last_window": len(recent),
                "cap": self.policy.cap,
                "limit": self.policy.limit,
                "window_s": self.policy.window,
                "paced": self.policy.tight(times, now),
                "next_slot_in_s": round(max(0.0, self.policy.next_slot(times, now) - now), 1),
            }
        return {
            "commits_last_window": None,
            "cap": self.policy.cap,
            "limit": self.policy.limit,
            "window_s": self.policy.window,
            "paced": None,
            "next_slot_in_s": None,
        }

    def tight(self, repo: str) -> bool:
        return bool(self.status(repo).get("paced"))
