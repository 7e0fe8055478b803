"""Worker and beat liveness for `/api/v1/health`: that the broker answers says nothing about whether anyone
consumes from it.

The main process of every Celery worker (and of beat) writes a heartbeat every HEARTBEAT_EVERY seconds from
a daemon thread, so a long task in a pool child does not delay it. Where it goes follows the broker: with
Redis, a sorted set `<CELERY_KEY_PREFIX>heartbeats` (name -> unix time), readable by a web process on
another machine; with the embedded SQLite broker, one file per process under `$DATA_DIR/heartbeats/`, which
the web process shares. A heartbeat older than HEARTBEAT_STALE seconds means that process is gone.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import cast

from worker.config import Config

HEARTBEAT_EVERY = 2.0
HEARTBEAT_STALE = 10.0
# The heartbeat name of the worker whose pool runs this process's tasks: set by the main process before its
# pool starts (worker/gold/tasks.py), inherited by every pool child, written on a record being scored.
HOLDER_VARIABLE = "VARM_WORKER_HEARTBEAT"
log = logging.getLogger(__name__)


def heartbeat_name(kind: str, pid: int) -> str:
    return f"{kind}:{socket.gethostname()}:{pid}"


def holder() -> str | None:
    """The heartbeat name of the worker this task runs under (None outside a worker)."""
    return os.environ.get(HOLDER_VARIABLE) or None


class Heartbeats:
    """Writes and reads the heartbeats of one deployment."""

    def __init__(self, config: Config) -> None:
        self.config = config
        url = config.celery_broker_url or ""
        self._redis = None
        if url.startswith(("redis://", "rediss://")):
            import redis

            self._redis = redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1)
        self._key = f"{config.celery_key_prefix}heartbeats"
        self._dir = Path(config.data_dir).resolve() / "heartbeats"

    def beat(self, name: str) -> None:
        now = time.time()
        if self._redis is not None:
            self._redis.zadd(self._key, {name: now})
            self._redis.zremrangebyscore(self._key, 0, now - 24 * 3600)  # forget long-gone processes
        else:
            self._dir.mkdir(parents=True, exist_ok=True)
            (self._dir / name).write_text(f"{now}\n")

    def ages(self) -> dict[str, float]:
        """Seconds since each known process's last heartbeat, by kind ("worker", "beat"): the freshest."""
        now = time.time()
        if self._redis is not None:
            pairs = cast(list[tuple[bytes, float]], self._redis.zrange(self._key, 0, -1, withscores=True))
            beats = {k.decode(): float(v) for k, v in pairs}
        else:
            beats = {}
            for path in self._dir.glob("*") if self._dir.is_dir() else ():
                try:
                    beats[path.name] = float(path.read_text())
                except (OSError, ValueError):
                    continue
        ages: dict[str, float] = {}
        for name, at in beats.items():
            kind = name.split(":", 1)[0]
            ages[kind] = min(ages.get(kind, float("inf")), max(0.0, now - at))
        return ages

    def gone(self, name: str) -> bool:
        """Has the process `name` stopped beating (no heartbeat for HEARTBEAT_STALE seconds, or none at all:
        a clean shutdown removes it)? False when the heartbeats cannot be read: unknown is not gone."""
        try:
            if self._redis is not None:
                at = self._redis.zscore(self._key, name)
            else:
                path = self._dir / name
                at = float(path.read_text()) if path.exists() else None
        except Exception:  # noqa: BLE001 - broker or disk trouble: leave the record to the time limit
            return False
        return at is None or time.time() - float(at) > HEARTBEAT_STALE

    def forget(self, name: str) -> None:
        """Remove a heartbeat at a clean shutdown, so health turns red at once, not after HEARTBEAT_STALE."""
        try:
            if self._redis is not None:
                self._redis.zrem(self._key, name)
            else:
                (self._dir / name).unlink(missing_ok=True)
        except Exception:  # noqa: BLE001 - best effort: staleness covers it anyway
            pass

    def start(self, kind: str) -> Callable[[], None]:
        """Beat as `<kind>:<host>:<pid>` from a daemon thread; returns the function that stops it (and
        removes the heartbeat)."""
        name = heartbeat_name(kind, os.getpid())
        stop = threading.Event()

        def loop() -> None:
            failing = False
            while not stop.is_set():
                try:
                    self.beat(name)
                    failing = False
                except Exception as exc:  # noqa: BLE001 - broker or disk down: say so once, keep trying
                    if not failing:
                        log.warning("heartbeat %s not written (%s)", name, type(exc).__name__)
                    failing = True
                stop.wait(HEARTBEAT_EVERY)
            self.forget(name)

        thread = threading.Thread(target=loop, name=f"heartbeat-{kind}", daemon=True)
        thread.start()

        def stop_beating() -> None:
            stop.set()
            thread.join(2)

        return stop_beating


RESTARTING_SHOWN = 120.0  # seconds health keeps saying "restarting" after a supervised worker last exited


def restarting_name(supervisor: str = "embedded") -> str:
    """The heartbeat a supervisor writes when the worker it runs exited and is being restarted (the
    embedded default's, space/__main__.py, or the image's entrypoint, `python -m worker.heartbeat
    restarting`): health then says "restarting" instead of only "no worker"."""
    return f"restarting:{socket.gethostname()}:{supervisor}"


def main(argv: list[str] | None = None) -> int:
    """`python -m worker.heartbeat restarting PID`: the entrypoint's supervisor announces that the worker
    whose main process was PID exited and is being restarted (its heartbeat goes now, so health turns from
    "ok" to "restarting" at once instead of after HEARTBEAT_STALE)."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] != "restarting" or not args[1].isdigit():
        print("usage: python -m worker.heartbeat restarting PID", file=sys.stderr)
        return 2
    heartbeats = Heartbeats(Config.from_env())
    heartbeats.forget(heartbeat_name("worker", int(args[1])))
    heartbeats.beat(restarting_name("entrypoint"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
