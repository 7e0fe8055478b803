"""docker/entrypoint.sh's supervisor (issue 27 item 1), run as the image runs it, outside a container:
a worker that exits (SIGKILL stands for a crash after a broker outage) is restarted by itself with a new
node, health names it "restarting" meanwhile, and SIGTERM still stops everything.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.hostile import figures, procs
from worker.config import Config
from worker.heartbeat import Heartbeats

pytestmark = pytest.mark.slow
ENTRYPOINT = procs.ROOT / "docker" / "entrypoint.sh"


def test_entrypoint_restarts_a_dead_worker_and_health_says_restarting(tmp_path: Path) -> None:
    redis = procs.RedisServer(tmp_path / "redis").start()
    node_file = tmp_path / "node"
    env = procs.base_env(tmp_path / "data", redis.url, ROLE="worker", WORKER_BEAT="0")
    env.update(WORKER_NODE_FILE=str(node_file), PATH=f"{Path(procs.PYTHON).parent}:{env['PATH']}")
    log = tmp_path / "entrypoint.log"
    proc = subprocess.Popen(
        ["bash", str(ENTRYPOINT)], cwd=procs.ROOT, env=env, stdout=open(log, "ab"), stderr=subprocess.STDOUT
    )  # noqa: SIM115
    try:
        procs.wait_for(lambda: b"ready." in log.read_bytes(), 60, "the first worker")
        first_node = node_file.read_text().strip()
        worker_pid = int(
            subprocess.run(["pgrep", "-f", first_node], capture_output=True, text=True).stdout.split()[0]
        )
        os.kill(worker_pid, signal.SIGKILL)  # its pool children follow (they watch their parent)
        killed = time.monotonic()
        procs.wait_for(lambda: b"restarting in 1 s" in log.read_bytes(), 20, "the restart line")
        config = Config(
            data_dir=tmp_path / "data",
            celery_broker_url=redis.url,
            celery_key_prefix=env["CELERY_KEY_PREFIX"],
        )
        procs.wait_for(lambda: "restarting" in Heartbeats(config).ages(), 20, "the restarting heartbeat")
        procs.wait_for(lambda: log.read_bytes().count(b"ready.") == 2, 60, "the restarted worker")
        back_after = time.monotonic() - killed
        assert node_file.read_text().strip() != first_node, "the restarted worker reuses the dead node's name"
        assert proc.poll() is None, "the entrypoint exited instead of restarting its worker"
        began = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 143
        text = log.read_text(errors="replace")
        assert text.count("restarting in") == 1, text[-2000:]  # the SIGTERM stop is not a crash to restart
        figures.record(
            "entrypoint_supervisor",
            worker_ready_again_after_sigkill_s=round(back_after, 1),
            entrypoint_exit_after_sigterm_s=round(time.monotonic() - began, 1),
        )
    finally:
        procs._stop(proc, signal.SIGKILL)
        redis.stop()
