"""The production web process alone: `python -m space` (FastAPI + the Gradio UI mounted with
`gr.mount_gradio_app`, exactly as deployed) on a free loopback port, with Redis as broker and no worker.

The store (a tmp DATA_DIR) is seeded with every demo track's references and public files, so the
references area really is on the disk next to the web process — what an attacker would aim at. Submits are
enqueued to Redis under a private key prefix that nothing consumes (removed at the end). Start-up costs a
few seconds (importing Gradio), not a seed and a worker.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.conftest_pipeline import redis_url
from tests.conftest_ui import ROOT, TOKENS, free_port, seed_public, spawn_space

TRACKS = ("varm", "cold", "toxicn", "cntp")


@dataclass
class WebProcess:
    url: str
    data_dir: Path
    upload_dir: Path
    log: Path
    process: subprocess.Popen
    prefix: str

    def tail(self, n: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-n:]

    def references(self, track: str) -> Path:
        """The track's hidden test references as the store keeps them on disk once a worker has read them
        (`LocalStore.local_snapshot`: `store/references/snapshots/<revision>/<track>/test.jsonl`)."""
        from worker.store.local import LocalStore

        path = LocalStore(self.data_dir).local_snapshot("references") / track / "test.jsonl"
        assert path.is_file(), path
        return path


def start_web(tmp: Path, tokens: dict[str, str] | None = None, **env_extra: str) -> WebProcess:
    from worker.config import Config
    from worker.store.local import LocalStore

    data_dir = tmp / "data"
    upload_dir = tmp / "gradio-uploads"
    data_dir.mkdir(parents=True)
    (data_dir / "tokens.json").write_text(json.dumps({**TOKENS, **(tokens or {})}))
    store = LocalStore(Config(data_dir=data_dir).data_dir)
    for track in TRACKS:
        seed_public(store, track)
    prefix = f"web{uuid.uuid4().hex[:8]}:"
    port = free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CELERY_", "STORE", "HF_", "AUTH", "SPACE_ID", "OAUTH_", "GRADIO_"))
    }
    env.update(
        DATA_DIR=str(data_dir),
        PORT=str(port),
        HOST="127.0.0.1",
        AUTH="token",
        MAINTAINERS="boss",
        CELERY_BROKER_URL=redis_url(),
        CELERY_KEY_PREFIX=prefix,
        GRADIO_ANALYTICS_ENABLED="False",
        GRADIO_TEMP_DIR=str(upload_dir),
        PYTHONUNBUFFERED="1",
        QUOTA_PER_DAY="50",
        ATTEMPTS_PER_DAY="500",
    )
    env.update(env_extra)
    log = tmp / "space.log"
    process = spawn_space(env, log)
    web = WebProcess(f"http://127.0.0.1:{port}", data_dir, upload_dir, log, process, prefix)
    deadline = time.monotonic() + 120
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"python -m space exited:\n{web.tail()}")
        try:
            if httpx.get(f"{web.url}/api/v1/health", timeout=2).status_code in (200, 503):
                return web
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            stop_web(web)
            raise RuntimeError(f"python -m space did not answer in 120 s:\n{web.tail()}")
        time.sleep(0.3)


def distinct_predictions(track: str, n: int) -> list[bytes]:
    """n valid, byte-distinct prediction files for `track` (the majority baseline, an unknown key added
    to the first row)."""
    lines = (ROOT / "data" / "demo" / track / "baselines" / "majority.test.jsonl").read_bytes().splitlines()
    out = []
    for i in range(n):
        first = {**json.loads(lines[0]), "run": i}
        out.append(b"\n".join([json.dumps(first).encode(), *lines[1:]]) + b"\n")
    return out


def stop_web(web: WebProcess) -> None:
    if web.process.poll() is None:
        os.killpg(web.process.pid, signal.SIGTERM)
        try:
            web.process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(web.process.pid, signal.SIGKILL)
            web.process.wait()
    import redis

    client = redis.Redis.from_url(redis_url())
    keys = list(client.scan_iter(f"{web.prefix}*"))
    if keys:
        client.delete(*keys)


def web_process(tmp: Path, tokens: dict[str, str] | None = None, **env_extra: str) -> Iterator[WebProcess]:
    """Generator body for a fixture: start, yield, stop."""
    web = start_web(tmp, tokens, **env_extra)
    try:
        yield web
    finally:
        stop_web(web)
