"""The image's HEALTHCHECK, by ROLE (docs/deploy.md, "What healthy means").

- web:    GET http://127.0.0.1:$PORT/api/v1/health answers 200 (the web process is up and reaches the store
          and the broker).
- worker: this container's own Celery node answers a ping sent through the broker: the worker process is
          alive, consuming, and connected to the broker. A worker cut off from Redis, or hung, is silent;
          another container's worker cannot answer for it (the ping names this node, whose name is random per
          start).
- all:    both (the web's check alone would pass with a hung worker).
Exit 0 when healthy; else 1 with the reason on stderr, which the engine keeps in the container's health log.
"""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the app, for `worker`


# Written by docker/entrypoint.sh at every (re)start of the worker; tests point it elsewhere.
WORKER_NODE_FILE = Path(os.environ.get("WORKER_NODE_FILE", "/tmp/celery-worker-node"))


def worker_node() -> str | None:
    """This container's Celery node name: unique per start, so no other worker can answer in its place."""
    try:
        return WORKER_NODE_FILE.read_text().strip() or None
    except OSError:
        return None


def check_web() -> str | None:
    url = f"http://127.0.0.1:{os.environ.get('PORT', '7860')}/api/v1/health"
    try:
        with urllib.request.urlopen(url, timeout=4):
            return None
    except urllib.error.HTTPError as exc:
        return f"web: {url} answered {exc.code} {exc.read(300).decode(errors='replace')}"
    except OSError as exc:
        return f"web: {url} unreachable ({exc})"


def check_worker() -> str | None:
    if os.environ.get("ROLE", "all") == "all" and not os.environ.get("CELERY_BROKER_URL"):
        # the container's own redis-server, as docker/entrypoint.sh starts it
        os.environ["CELERY_BROKER_URL"] = f"redis://127.0.0.1:{os.environ.get('REDIS_PORT', '6379')}/0"
    from worker.celery import make_app
    from worker.config import Config

    node = worker_node()
    if node is None:
        return f"worker: no worker was started in this container ({WORKER_NODE_FILE} is missing)"
    try:
        replies = make_app(Config.from_env()).control.ping(destination=[node], timeout=4, limit=1)
    except Exception as exc:  # the broker itself is unreachable
        return f"worker: cannot reach the broker ({type(exc).__name__}: {exc})"
    if not any(node in reply for reply in replies):
        return f"worker: {node} did not answer a ping through the broker within 4 s"
    return None


def main() -> int:
    role = os.environ.get("ROLE", "all")
    checks = {"all": (check_web, check_worker), "web": (check_web,), "worker": (check_worker,)}.get(role)
    if checks is None:
        print(f"ROLE must be all, web or worker (got {role!r})", file=sys.stderr)
        return 1
    problems = [p for p in (check() for check in checks) if p]
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
