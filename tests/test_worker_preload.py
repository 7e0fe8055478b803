"""A Celery worker imports its store's client before it forks its pool (worker.gold.tasks at worker_init),
so each pool child does not import huggingface_hub on its first task (~0.5 s of CPU per child, measured in
bench/bench_burst.py's profiles); it opens no store and no connection there (a forked child must not share
the parent's sockets)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

AT_WORKER_INIT = """
import sys
from worker.gold import tasks
before = "huggingface_hub.hf_api" in sys.modules
tasks._name_the_holder()
print(before, "huggingface_hub.hf_api" in sys.modules, tasks.store.cache_info().currsize)
"""


def at_worker_init(store: str) -> str:
    env = {**os.environ, "STORE": store, "HF_ENDPOINT": "http://127.0.0.1:9", "BROKER_URL": "memory://"}
    out = subprocess.run(
        [sys.executable, "-c", AT_WORKER_INIT], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


def test_the_hub_client_is_imported_at_worker_init_without_opening_a_store() -> None:
    # Before the signal the package is not imported (positive control: the import is the signal's).
    assert at_worker_init("hub") == "False True 0"
    assert at_worker_init("local") == "False False 0"  # the local store needs no client
