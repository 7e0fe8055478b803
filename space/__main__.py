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
import ctypes
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path

import uvicorn

from space.auth import auth_mode, ensure_token_file
from worker.config import Config

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


def stop(process: subprocess.Popen, timeout: float = 15) -> None:
    """Stop a subprocess started in its own session, with everything it forked.

    SIGTERM goes to the Celery main process only: its warm shutdown lets the pool child finish the task
    in hand (signalling the whole group would kill that child mid-task and force a redelivery). Whatever
    is left after `timeout` is killed as a group."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def seed_demo_enabled() -> bool:
    """SEED_DEMO (default 1): 0 starts without the synthetic demo, as the Docker entrypoint does."""
    value = os.environ.get("SEED_DEMO", "1").strip()
    if value not in ("0", "1"):
        raise SystemExit(f"SEED_DEMO must be 0 or 1 (got {value!r})")
    return value == "1"


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(
        prog="python -m space", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Configuration is by environment variable only: see README.md (Configuration).",
    ).parse_args(argv)  # --help prints this and exits; there are no options
    from space.server import create_app  # imports worker.celery, which creates $DATA_DIR: not for --help

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    config = Config.from_env()
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
    worker = None
    if config.celery_broker_url is None:
        if seed_demo_enabled():
            subprocess.run([sys.executable, "-m", "worker", "seed"], check=True, cwd=ROOT, env=env)
        else:
            log.info("SEED_DEMO=0: no demo seeded; tracks without a reference set take no submissions")
        worker = subprocess.Popen(
            WORKER_COMMAND, cwd=ROOT, env=env, start_new_session=True, preexec_fn=_die_with_parent
        )
        log.info("embedded Celery worker started (pid %d)", worker.pid)
    # uvicorn re-raises SIGTERM after its graceful shutdown; turning it into SystemExit lets the
    # `finally` below stop the worker instead of the default handler killing us first.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        uvicorn.run(
            create_app(config), host=os.environ.get("HOST", "0.0.0.0"), port=config.port, log_level="info",
            # Open Gradio connections (a browser tab, a client) must not hold a shutdown forever.
            timeout_graceful_shutdown=5,
        )
    finally:
        if worker is not None:
            stop(worker)
    return 0


if __name__ == "__main__":
    sys.exit(main())
