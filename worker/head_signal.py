"""Telling web processes at once that the results head moved, so a publish is visible in the pipeline's own
time instead of after the next poll of the head (issue 29.3).

With Redis as broker, a worker that committed a new results head publishes its revision on the channel
`<CELERY_KEY_PREFIX>results-head`; every web process listens and forgets its cached head. The Hub's repository
webhook (space/webhook.py) does the same for commits made elsewhere. Either may be lost (a web process
restarting, Redis down): the head poll (`HEAD_POLL_SECONDS`) stays as the fallback. With the embedded SQLite
broker there is nothing to send: the web process reads the local store's head file on every request.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from worker.config import Config

log = logging.getLogger(__name__)


def channel(config: Config) -> str:
    return f"{config.celery_key_prefix}results-head"


def _redis(config: Config):
    url = config.celery_broker_url or ""
    if not url.startswith(("redis://", "rediss://")):
        return None
    import redis

    return redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=2)


def announce(config: Config, revision: str) -> None:
    """Best effort: the poll covers a lost announcement."""
    client = _redis(config)
    if client is None:
        return
    try:
        client.publish(channel(config), revision)
    except Exception as exc:  # noqa: BLE001 - Redis down: the web processes' poll will see the head
        log.info("results head %s not announced (%s); the web poll will see it", revision[:12], exc)
    finally:
        client.close()


def listen(config: Config, on_moved: Callable[[str], None], stop: threading.Event) -> threading.Thread | None:
    """Call `on_moved(revision)` for every announcement, from a daemon thread that reconnects (1 s doubling
    to 30 s) while Redis is away. None when the broker is not Redis (nothing is ever announced)."""
    if _redis(config) is None:
        return None

    def loop() -> None:
        delay = 1.0
        while not stop.is_set():
            client = _redis(config)
            try:
                pubsub = client.pubsub(ignore_subscribe_messages=True)
                pubsub.subscribe(channel(config))
                delay = 1.0
                while not stop.is_set():
                    message = pubsub.get_message(timeout=1.0)
                    if message and message.get("type") == "message":
                        data = message["data"]
                        on_moved(data.decode() if isinstance(data, bytes) else str(data))
            except Exception:  # noqa: BLE001 - Redis away: the poll covers it; listen again later
                on_moved("")  # whatever happened meanwhile is unknown: read the head again
                stop.wait(delay)
                delay = min(30.0, delay * 2)
            finally:
                client.close()

    thread = threading.Thread(target=loop, name="results-head-listener", daemon=True)
    thread.start()
    return thread
