"""Versioned file store with three areas: references (private, workers only), submissions (private),
results (public). `open_store(config)` picks LocalStore or HubStore; see base.Store for the contract.

The web process must open its store WITHOUT the references area::

    store = open_web_store(Config.from_env())   # store.read("references", ...) -> StoreError

(With STORE=hub, also give the web process a token that cannot read the references repo: HF_WEB_TOKEN,
which open_web_store uses instead of HF_TOKEN when it is set.)
"""

from __future__ import annotations

from collections.abc import Iterable

from worker.config import AREAS, Config
from worker.store.base import (
    ConflictError,
    Store,
    StoreError,
    check_path,
    commit_change,
    commit_with_retry,
    read_many,
)
from worker.store.local import LocalStore

WEB_AREAS = frozenset({"submissions", "results"})
WORKER_AREAS = frozenset(AREAS)

__all__ = [
    "AREAS",
    "WEB_AREAS",
    "WORKER_AREAS",
    "ConflictError",
    "LocalStore",
    "Store",
    "StoreError",
    "check_path",
    "commit_change",
    "commit_with_retry",
    "import_client",
    "open_store",
    "open_web_store",
    "read_many",
]


def open_store(config: Config, areas: Iterable[str] = AREAS, **hub_options) -> Store:
    """The configured store, restricted to `areas`. `hub_options` go to HubStore (cache_dir, attempts,
    base_delay, timeout, create_repos; the last three default to the config's HF_RETRY_ATTEMPTS,
    HF_RETRY_BASE_DELAY and HF_HTTP_TIMEOUT) and are ignored for the local store."""
    if config.store == "hub":
        from worker.store.hub import HubStore  # imports huggingface_hub only when needed

        return HubStore.from_config(config, areas=areas, **hub_options)
    return LocalStore(config.data_dir, areas=areas)


def import_client(config: Config) -> None:
    """Import the configured store's client library now. A Celery worker calls it before it forks its
    pool, so the children share the modules instead of each importing huggingface_hub on its first task
    (about half a second of CPU per child, measured in bench/bench_burst.py)."""
    if config.store == "hub":
        from worker.store.hub import import_client as import_hub_client

        import_hub_client()


# A request to the web process waits at most this long for the Hub to take requests again (summed over the
# windows of one store call); past it the caller gets 503 store_unavailable with Retry-After at once.
WEB_STORE_PATIENCE = 1.0


def open_web_store(config: Config, **hub_options) -> Store:
    """The web process's store: no references area, HF_WEB_TOKEN (when set) instead of HF_TOKEN, and no
    waiting out a Hub that refuses (a worker waits; a person at an upload form should not)."""
    hub_options.setdefault("rate_limit_wait", WEB_STORE_PATIENCE)
    return open_store(config.for_web(), areas=WEB_AREAS, **hub_options)
