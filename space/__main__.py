"""`python -m space`: run the leaderboard service on $PORT (default 7860), data under $DATA_DIR (./data).

Embedded default (no CELERY_BROKER_URL): seeds the store from data/demo on first start (SEED_DEMO=0
skips it: tracks without a reference set then say so; install real ones with `python -m worker install`),
then runs the web process plus one Celery worker subprocess (with beat, for the reconciler) on a SQLite
broker.
With CELERY_BROKER_URL set, only the web process starts; run workers separately, e.g.
`celery -A worker worker -Q submissions,publish,rescore` (and `celery -A worker beat` once).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import uvicorn

from space import http_limits, sandbox
from space.auth import auth_mode, oauth_problem, open_auth_problem
from space.uploads import make_private_folder
from worker.config import Config
from worker.heartbeat import Heartbeats, heartbeat_name, restarting_name
from worker.token_file import ensure_token_file, local_token

ROOT = Path(__file__).resolve().parents[1]
log = logging.getLogger("space")


# One prefork child: the embedded default has a single writer for every queue, publish included. Beat's
# schedule file goes to $DATA_DIR (worker.celery sets beat_schedule_filename).
WORKER_COMMAND = [
    sys.executable,
    "-m",
    "celery",
    "-A",
    "worker",
    "worker",
    "--beat",
    "--concurrency",
    "1",
    "--queues",
    "submissions,publish,rescore",
    "--loglevel",
    "INFO",
]


def _die_with_parent() -> None:
    """In the worker child: get SIGTERM when the web process dies, even by SIGKILL (Linux only)."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    except OSError:
        pass


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def stop(process: subprocess.Popen, timeout: float = 15) -> None:
    """Stop a subprocess started in its own session, with everything it forked.

    SIGTERM goes to the Celery main process only: its warm shutdown lets the pool child finish the task
    in hand (signalling the whole group would kill that child mid-task and force a redelivery). Whatever
    is left after `timeout` is killed as a group (the task's record stays in the store, and the next start
    re-sends it)."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            pass
    _kill_group(process.pid)
    process.wait()


class EmbeddedWorker:
    """The embedded Celery worker (with beat), restarted with back-off whenever it dies.

    Before each (re)start, submissions left in flight by a dead worker are re-sent at once
    (`python -m worker reconcile --stuck-after 0`): in the embedded mode this is the only worker, so
    nothing else can be working on them."""

    def __init__(self, env: dict[str, str], max_delay: float, heartbeats: Heartbeats) -> None:
        self.env, self.max_delay, self.heartbeats = env, max_delay, heartbeats
        self.process: subprocess.Popen | None = None
        self._stopping = threading.Event()
        self._lock = threading.Lock()  # start vs. stop
        self._thread = threading.Thread(target=self._supervise, name="embedded-worker", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _spawn(self) -> float:
        subprocess.run(
            [sys.executable, "-m", "worker", "reconcile", "--stuck-after", "0"],
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.DEVNULL,
            check=False,
            timeout=120,
        )
        with self._lock:
            if self._stopping.is_set():
                return time.monotonic()
            self.process = subprocess.Popen(
                WORKER_COMMAND, cwd=ROOT, env=self.env, start_new_session=True, preexec_fn=_die_with_parent
            )
            log.info("embedded Celery worker started (pid %d)", self.process.pid)
        return time.monotonic()

    def _supervise(self) -> None:
        delay = 1.0
        while not self._stopping.is_set():
            started = self._spawn()
            process = self.process
            if process is None:
                return
            code = process.wait()
            if self._stopping.is_set():
                return
            _kill_group(process.pid)  # a pool child or beat left behind by the dead main process
            # Health turns red now, not when the dead worker's last heartbeat goes stale.
            self.heartbeats.forget(heartbeat_name("worker", process.pid))
            with contextlib.suppress(Exception):  # best effort: health says "no worker" either way
                self.heartbeats.beat(restarting_name())
            if time.monotonic() - started > 60:
                delay = 1.0  # it had been running fine: a fresh failure, not a crash loop
            log.warning(
                "embedded Celery worker (pid %d) exited with code %s; restarting in %.0f s",
                process.pid,
                code,
                delay,
            )
            if self._stopping.wait(delay):
                return
            delay = min(delay * 2, self.max_delay)

    def begin_stop(self) -> None:
        """Start a warm shutdown now (it runs while the web server drains)."""
        with self._lock:
            self._stopping.set()
            if self.process is not None and self.process.poll() is None:
                self.process.terminate()

    def stop(self, timeout: float) -> None:
        self.begin_stop()
        with self._lock:
            process = self.process
        if process is not None:
            stop(process, timeout)


class _Server(uvicorn.Server):
    """uvicorn, telling the embedded worker to stop as soon as the signal arrives (in parallel), and
    printing where to open the service once it listens."""

    on_exit: list = []
    banner: str = ""

    async def startup(self, sockets=None) -> None:
        await super().startup(sockets)
        if self.started and self.banner:
            print(self.banner, flush=True)

    def handle_exit(self, sig: int, frame) -> None:
        for callback in self.on_exit:
            callback()
        super().handle_exit(sig, frame)


# SIGTERM to gone: the platform's grace period is 10 s (Docker); we aim for under 5 s in all.
GRACEFUL_WEB_SECONDS = 2
SHUTDOWN_SECONDS = 3.0


def banner(config: Config, data_dir: Path, show_token: bool) -> str:
    """What a person needs once the service listens: the address to open and how to sign in."""
    host = "127.0.0.1" if config.host in ("0.0.0.0", "::", "") else config.host
    lines = [f"open http://{host}:{config.port}"]
    if auth_mode(config) == "token":
        token = local_token(data_dir) if show_token else None
        lines.append(
            f"API token (user 'local'): {token}" if token else f"API tokens: {data_dir / 'tokens.json'}"
        )
    width = max(len(line) for line in lines) + 4
    return "\n".join(["", "=" * width, *(f"  {line}" for line in lines), "=" * width, ""])


def enter_sandbox(config: Config, data_dir: Path) -> tuple[Path, str | None]:
    """The Gradio upload folder, made before the web process gives up every private path (WEB_SANDBOX,
    space/sandbox.py); and the line that stops start-up when WEB_SANDBOX=require cannot be met. Runs before
    any thread starts: a thread that exists when Landlock is entered stays unrestricted."""
    private: list[Path] = []
    problem = None
    if config.web_sandbox == "off":
        sandbox.not_entered("WEB_SANDBOX=off")
    elif config.celery_broker_url is None:
        problem = "the embedded worker is started by the web process and would be restricted with it"
    else:
        private = sandbox.prepare(data_dir, ROOT / "data", config.store, os.environ)
    uploads = make_private_folder()
    if private:
        try:
            log.info("web process sandbox: %s", sandbox.enter(private))
        except sandbox.SandboxUnavailable as exc:
            problem = str(exc)
    if problem is None:
        return uploads, None
    if config.web_sandbox == "require":
        shutil.rmtree(uploads, ignore_errors=True)
        return uploads, f"WEB_SANDBOX=require, but no sandbox: {problem}"
    log.warning("web process sandbox off: %s", problem)
    sandbox.not_entered(problem)
    return uploads, None


def main(argv: list[str] | None = None) -> int:  # noqa: C901
    args = argparse.ArgumentParser(
        prog="python -m space",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Configuration is by environment variable only: see README.md (Configuration).",
    )
    args.add_argument(
        "--show-token",
        action="store_true",
        help="print the local user's API token with the address at every start (scripts/serve)",
    )
    show_token = args.parse_args(argv).show_token
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        config = Config.from_env()
    except ValueError as exc:  # a bad variable stops start-up with one line naming it
        print(f"configuration error: {exc}", file=sys.stderr)
        return 2
    problem = oauth_problem() or open_auth_problem(auth_mode(config), config.host, config)
    if problem:
        print(problem, file=sys.stderr, flush=True)
        return 2
    data_dir = Path(config.data_dir).resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "DATA_DIR": str(data_dir)}
    if auth_mode(config) == "token":
        token = ensure_token_file(data_dir)
        if token:
            print(
                f"\nCreated {data_dir / 'tokens.json'}. API token for 'local' (shown once):\n  {token}\n",
                flush=True,
            )
    uploads, problem = enter_sandbox(config, data_dir)
    if problem:
        print(problem, file=sys.stderr, flush=True)
        return 2
    from space.server import create_app  # imports worker.celery, which creates $DATA_DIR: not for --help

    worker = None
    if config.celery_broker_url is None:
        if config.seed_demo:  # SEED_DEMO=0 starts without the synthetic demo, as the Docker entrypoint does
            subprocess.run([sys.executable, "-m", "worker", "seed"], check=True, cwd=ROOT, env=env)
        else:
            log.info("SEED_DEMO=0: no demo seeded; tracks without a reference set take no submissions")
        worker = EmbeddedWorker(env, config.worker_restart_max_delay, Heartbeats(config))
        worker.start()
    stopping_at: list[float] = []

    def on_exit() -> None:
        stopping_at.append(time.monotonic())
        if worker is not None:
            worker.begin_stop()

    # uvicorn re-raises SIGTERM after its graceful shutdown; turning it into SystemExit lets the
    # `finally` below stop the worker instead of the default handler killing us first.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    log.info("Gradio upload folder: %s", uploads)
    server = _Server(
        uvicorn.Config(
            create_app(config),
            host=config.host,
            port=config.port,
            log_level="info",
            # Open Gradio connections (a browser tab, a client) must not hold a shutdown.
            timeout_graceful_shutdown=GRACEFUL_WEB_SECONDS,
            # A slowloris must not hold the process (space/http_limits.py).
            http=http_limits.HeaderDeadline,
            limit_concurrency=http_limits.MAX_CONNECTIONS,
        )
    )
    server.on_exit = [on_exit]
    server.banner = banner(config, data_dir, show_token)
    try:
        server.run()
    finally:
        shutil.rmtree(uploads, ignore_errors=True)
        if worker is not None:
            began = stopping_at[0] if stopping_at else time.monotonic()
            worker.stop(max(0.5, SHUTDOWN_SECONDS - (time.monotonic() - began)))
            log.info("embedded Celery worker stopped")
    return 0


if __name__ == "__main__":
    try:
        code = main()
    except SystemExit as exc:  # SIGTERM (after the `finally` in main() stopped the worker), or --help
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
        code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    # Everything that matters is durable in the store by now; library threads (Gradio, Celery's pools)
    # winding down at interpreter exit took seconds more than the platform's grace period allows.
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
