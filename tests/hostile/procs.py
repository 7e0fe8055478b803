"""Processes the reliability tests start and stop themselves: a private redis-server, Celery workers and
the web process (`python -m space`). Every process is ours, started with Popen and ended by its pid
(never by name); the shared Redis at 6379 is never restarted.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(check: Callable[[], bool], timeout: float, what: str, step: float = 0.05) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except Exception:  # noqa: BLE001 - not up yet
            pass
        time.sleep(step)
    raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")


def _stop(proc: subprocess.Popen | None, sig: int = signal.SIGTERM, timeout: float = 15) -> None:
    """`sig` to the process, SIGKILL after `timeout`; then SIGKILL to whatever of its process group is left
    (it was started in a session of its own): a prefork child busy in a task outlived its killed parent and
    ran on after the test, orphaned, still taking tasks from its queues."""
    if proc is None:
        return
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # nothing left of the group


class RedisServer:
    """A private, non-persistent redis-server on a free port (restart() keeps the port, loses the data)."""

    def __init__(self, workdir: Path) -> None:
        self.dir = workdir
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        self.proc = subprocess.Popen(
            [
                "redis-server",
                "--bind",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.dir),
                "--logfile",
                str(self.dir / "redis.log"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        import redis

        wait_for(
            lambda: redis.Redis.from_url(self.url, socket_connect_timeout=0.5).ping(), 15, "redis-server"
        )
        return self

    def stop(self, sig: int = signal.SIGTERM) -> None:
        _stop(self.proc, sig)

    def restart(self, down_seconds: float = 0.0) -> None:
        self.stop(signal.SIGKILL)
        time.sleep(down_seconds)
        self.start()


def base_env(data_dir: Path, broker_url: str | None, **extra: str) -> dict[str, str]:
    """Environment of a web or worker process of one test deployment (local store under `data_dir`)."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("CELERY_", "STORE", "HF_RESULTS", "AUTH"))
    }
    env.update(
        DATA_DIR=str(data_dir),
        STORE="local",
        PYTHONUNBUFFERED="1",
        HOST="127.0.0.1",
        GRADIO_ANALYTICS_ENABLED="False",
        CELERY_KEY_PREFIX=f"t{uuid.uuid4().hex[:8]}:",
    )
    if broker_url:
        env["CELERY_BROKER_URL"] = broker_url
    env.update(extra)
    return env


class Worker:
    """`celery -A worker worker` with `concurrency` prefork children; logs to `log`."""

    def __init__(
        self,
        env: dict[str, str],
        log: Path,
        *,
        concurrency: int = 1,
        name: str | None = None,
        queues: str = "submissions,publish,rescore",
        beat: bool = False,
        as_deployed: bool = False,
    ) -> None:
        self.env, self.log, self.concurrency, self.queues, self.beat = env, log, concurrency, queues, beat
        self.as_deployed = as_deployed  # gossip and mingle on, as docker/entrypoint.sh starts it
        self.name = name or f"w{uuid.uuid4().hex[:6]}@%h"
        self.proc: subprocess.Popen | None = None

    def start(self) -> Worker:
        cmd = [
            PYTHON,
            "-m",
            "celery",
            "-A",
            "worker",
            "worker",
            "-l",
            "INFO",
            "-P",
            "prefork",
            "-c",
            str(self.concurrency),
            "-Q",
            self.queues,
            "-n",
            self.name,
        ]
        if not self.as_deployed:
            cmd += ["--without-gossip", "--without-mingle"]
        if self.beat:  # the schedule file goes next to the log, never into the working tree
            cmd += ["-B", "--schedule", str(self.log.with_suffix(".beat-schedule"))]
        self.proc = subprocess.Popen(
            cmd,
            cwd=ROOT,
            env=self.env,
            stdout=open(self.log, "ab"),  # noqa: SIM115
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: `stop` reaps the pool children too
        )
        wait_for(lambda: b"ready." in self.log.read_bytes(), 60, f"celery worker ({self.log.name})")
        return self

    def children(self) -> list[int]:
        """Pids of the prefork pool children (the processes that run tasks)."""
        if self.proc is None:
            return []
        try:
            out = subprocess.run(
                ["ps", "-o", "pid=", "--ppid", str(self.proc.pid)], capture_output=True, text=True, timeout=5
            ).stdout
        except (OSError, subprocess.TimeoutExpired):
            return []
        return [int(x) for x in out.split()]

    def stop(self) -> None:
        _stop(self.proc, signal.SIGTERM, timeout=20)


class Space:
    """The web process `python -m space` on a free port, logs to `log`."""

    def __init__(self, env: dict[str, str], log: Path, port: int | None = None) -> None:
        self.env, self.log = env, log
        self.port = port or free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 90) -> Space:
        env = {**self.env, "PORT": str(self.port)}
        self.proc = subprocess.Popen(  # its own process group: `stop` reaps the embedded worker too
            [PYTHON, "-m", "space"],
            cwd=ROOT,
            env=env,
            stdout=open(self.log, "ab"),  # noqa: SIM115
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

        def up() -> bool:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(
                    f"python -m space exited ({self.proc.returncode}): "
                    f"{self.log.read_text(errors='replace')[-1500:]}"
                )
            # 503 is an answer too: health is red until a worker's heartbeat arrives.
            return httpx.get(self.url + "/api/v1/health", timeout=2).status_code in (200, 503)

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if up():
                    return self
            except RuntimeError:
                raise
            except Exception:  # noqa: BLE001
                pass
            time.sleep(0.2)
        raise TimeoutError("python -m space did not answer /api/v1/health")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        _stop(self.proc, sig)


class Deployment:
    """A whole private service: redis-server, seeded local store, `workers` Celery workers, the web process.

    Use as a context manager; everything started is stopped (by pid) on exit. `logs()` returns every log
    line the processes wrote (for the leakage scan).
    """

    def __init__(
        self,
        tmp: Path,
        *,
        workers: int = 1,
        concurrency: int = 1,
        beat: bool = False,
        seed: bool = True,
        demo_dir: Path | None = None,
        **env: str,
    ) -> None:
        self.demo_dir = demo_dir
        self.tmp = tmp
        self.data_dir = tmp / "data"
        self.redis = RedisServer(tmp / "redis")
        self.n_workers, self.concurrency, self.beat, self.seed = workers, concurrency, beat, seed
        self.extra_env = {"AUTH": "open", "ATTEMPTS_PER_DAY": "100000", "QUOTA_PER_DAY": "100000", **env}
        self.workers: list[Worker] = []
        self.space: Space | None = None
        self.env: dict[str, str] = {}

    def __enter__(self) -> Deployment:
        try:
            self.redis.start()
            self.env = base_env(self.data_dir, self.redis.url, **self.extra_env)
            if self.seed:
                cmd = [PYTHON, "-m", "worker", "seed"]
                if self.demo_dir is not None:
                    cmd += ["--demo-dir", str(self.demo_dir)]
                with open(self.tmp / "seed.log", "ab") as log:
                    subprocess.run(
                        cmd, cwd=ROOT, env=self.env, check=True, stdout=log, stderr=subprocess.STDOUT
                    )
            for i in range(self.n_workers):
                self.add_worker(beat=self.beat and i == 0)
            self.space = Space(self.env, self.tmp / "space.log").start()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def add_worker(self, *, beat: bool = False, concurrency: int | None = None) -> Worker:
        worker = Worker(
            self.env,
            self.tmp / f"worker{len(self.workers)}.log",
            beat=beat,
            concurrency=concurrency or self.concurrency,
        )
        self.workers.append(worker.start())
        return worker

    @property
    def url(self) -> str:
        assert self.space is not None
        return self.space.url

    def logs(self) -> dict[str, str]:
        return {p.name: p.read_text(errors="replace") for p in sorted(self.tmp.glob("*.log"))}

    def __exit__(self, *exc: object) -> None:
        if self.space is not None:
            self.space.stop()
        for worker in self.workers:
            worker.stop()
        self.redis.stop()
