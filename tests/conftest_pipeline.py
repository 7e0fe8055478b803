"""pytest plugin for the pipeline tests: real Redis, real `celery worker` subprocesses, seeded stores.

Every test gets its own Redis key prefix (CELERY_KEY_PREFIX), so tests and parallel sessions never see
each other's queues; its keys are deleted at teardown. Worker subprocesses run in their own session and
are stopped by process group at teardown.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from worker.config import Config

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo"
ALL_QUEUES = "submissions,publish,rescore"


def redis_url() -> str:
    return os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"


class WorkerProcess:
    """One `celery -A worker worker` subprocess with its log in a file."""

    def __init__(
        self,
        env: dict[str, str],
        log_path: Path,
        *,
        queues: str = ALL_QUEUES,
        concurrency: int = 1,
        beat: bool = False,
    ) -> None:
        self.env, self.log_path = env, log_path
        self.command = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "worker",
            "worker",
            "--queues",
            queues,
            "--concurrency",
            str(concurrency),
            "--loglevel",
            "INFO",
            "--hostname",
            f"w{uuid.uuid4().hex[:8]}@%h",
            "--without-gossip",
            "--without-mingle",
        ]
        if beat:
            self.command += ["--beat", "--schedule", str(log_path.with_suffix(".beat"))]
        self.process: subprocess.Popen | None = None
        self._offset = 0

    def start(self, timeout: float = 30) -> WorkerProcess:
        self._offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            self.command, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        log.close()
        deadline = time.monotonic() + timeout
        while "ready." not in self.log()[self._offset :]:
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"celery worker did not start:\n{self.log()[-3000:]}")
            time.sleep(0.1)
        return self

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def kill(self) -> None:
        """SIGKILL the whole worker (main process and pool children): a crashed machine."""
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGQUIT)  # cold shutdown: tests need no graceful drain
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.kill()


@pytest.fixture(scope="session")
def redis_available() -> str:
    import redis

    url = redis_url()
    try:
        redis.Redis.from_url(url, socket_connect_timeout=1).ping()
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"no Redis at {url} ({exc}); scripts/test provides one")
    return url


@pytest.fixture
def key_prefix(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A per-test Redis key prefix, exported for worker subprocesses (pass it to an in-process app as
    `Config(celery_key_prefix=...)`); its keys are deleted after."""
    prefix = f"varmtest-{uuid.uuid4().hex[:10]}:"
    monkeypatch.setenv("CELERY_KEY_PREFIX", prefix)
    yield prefix
    import redis

    client = redis.Redis.from_url(redis_url())
    keys = list(client.scan_iter(f"{prefix}*"))
    if keys:
        client.delete(*keys)


@pytest.fixture
def demo_dir(tmp_path: Path) -> Path:
    """A small demo bundle (varm and cold, references and public files, no baselines): fast seeding."""
    out = tmp_path / "demo"
    for track in ("varm", "cold"):
        shutil.copytree(DEMO / track, out / track, ignore=shutil.ignore_patterns("baselines", "train.jsonl"))
    return out


def baseline_file(track: str, name: str = "lexicon") -> bytes:
    return (DEMO / track / "baselines" / f"{name}.test.jsonl").read_bytes()


def variant(data: bytes, n: int) -> bytes:
    """The same predictions with `n` trailing blank lines: a different file (sha256) scoring the same."""
    return data + b"\n" * n


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[list[WorkerProcess]]:
    """Collects WorkerProcess objects to stop at teardown: `workers.append(WorkerProcess(...).start())`."""
    started: list[WorkerProcess] = []
    yield started
    for worker in started:
        worker.stop()


def worker_env(config: Config, extra: dict[str, str] | None = None) -> dict[str, str]:
    """Environment for a worker subprocess using `config` (plus the test's CELERY_KEY_PREFIX)."""
    env = {
        **os.environ,
        "DATA_DIR": str(config.data_dir),
        "STORE": config.store,
        "STUCK_AFTER_SECONDS": str(config.stuck_after_seconds),
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("CELERY_BROKER_URL", None)
    if config.celery_broker_url:
        env["CELERY_BROKER_URL"] = config.celery_broker_url
    if config.store == "hub":
        env.update(
            HF_TOKEN=config.hf_token or "",
            HF_ENDPOINT=config.hf_endpoint,
            HF_REFERENCES_REPO=config.hf_references_repo or "",
            HF_SUBMISSIONS_REPO=config.hf_submissions_repo or "",
            HF_RESULTS_REPO=config.hf_results_repo or "",
            HF_COMMITS_PER_HOUR=str(config.hf_commits_per_hour),
        )
    return {**env, **(extra or {})}


class Paced:
    """A store whose submissions budget says paced (as HubStore's under a burst) while `tight` is set."""

    def __init__(self, store) -> None:
        self._store, self.tight = store, True

    def budget_tight(self, area: str) -> bool:
        return self.tight

    def __getattr__(self, name: str):
        return getattr(self._store, name)


class RecordingEnqueuer:
    """An Enqueuer that only records what would have been sent (web-process tests without workers)."""

    def __init__(self) -> None:
        self.sent: list[tuple] = []

    def score(self, track: str, submission_id: str) -> None:
        self.sent.append(("score", track, submission_id))

    def publish(self, track: str, marks: bool = False) -> None:
        self.sent.append(("publish", track, "marks") if marks else ("publish", track))

    def rescore(self, track: str, dry_run: bool, actor: str) -> str:
        self.sent.append(("rescore", track, dry_run, actor))
        return "task-id"

    def release(self, track: str, name: str, actor: str) -> str:
        self.sent.append(("release", track, name, actor))
        return "task-id"

    def compare(self, track: str, a_id: str, b_id: str) -> dict:
        raise NotImplementedError

    def ping(self) -> bool:
        return True


def seed_store(config: Config, demo: Path, **store_options) -> None:
    """Seed references and public files (as the embedded start-up does), from a maintainer process."""
    from worker.gold.seed import seed
    from worker.service import Service
    from worker.store import open_store

    store = open_store(config, **store_options)
    seed(store, Service(config, store, RecordingEnqueuer()), demo)


def wait_for(predicate, timeout: float = 30, interval: float = 0.1, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")
