"""A full data disk in the embedded default: the worker waits for space instead of crashing.

Issue 27.3. `DATA_DIR` lives on its own small tmpfs; a ballast file fills it for 20 s while uploads are
queued and being scored. Done when: no worker exit, fewer than 10 log lines for the whole outage, uploads
during it get their 507, and every upload accepted before it is published once after it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.hostile import figures, procs
from tests.test_faults import (
    _embedded_env,
    _embedded_worker_pid,
    _health,
    _kill_leftovers,
    _status,
    _upload,
    assert_published_exactly_once,
    baseline,
    wait_for,
)
from worker.config import Config
from worker.store import open_store

pytestmark = pytest.mark.slow
OUTAGE_SECONDS = 20
DISK_MB = 320  # MIN_FREE_DISK_MB (200 by default) below it, so uploads are refused only when it is full


@pytest.fixture
def small_disk(tmp_path: Path):
    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={DISK_MB}m", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root): {made.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(disk: Path) -> Path:
    """Fill the file system to the last byte (writes until ENOSPC)."""
    ballast = disk / "ballast"
    chunk = b"\0" * (1 << 20)
    with open(ballast, "wb", buffering=0) as out:
        try:
            while True:
                out.write(chunk)
        except OSError:
            pass
        try:
            while True:  # the last partial megabyte
                out.write(b"\0" * 4096)
        except OSError:
            pass
    return ballast


def _outage_lines(logged: str) -> list[str]:
    """The lines the outage caused: everything but the routine INFO lines of a working service (access
    log, task received/succeeded), and any line that mentions the disk."""
    routine = re.compile(r"^(INFO:|INFO |\[[^\]]*: INFO/)")
    lines = [line for line in logged.splitlines() if line.strip()]
    return [line for line in lines if not routine.match(line) or "disk" in line]


def test_a_full_disk_for_20_s_loses_nothing_and_the_worker_waits(tmp_path: Path, small_disk: Path) -> None:
    data = small_disk / "data"
    env = _embedded_env(tmp_path, VARM_TEST_SCORE_DELAY="3")
    env["DATA_DIR"] = str(data)
    space = procs.Space(env, tmp_path / "space.log")
    try:
        space.start()
        wait_for(lambda: _health(space.url)[0] == 200, 90, "a live embedded worker")
        first, _ = _upload(space.url, baseline("varm", "lexicon"), "warm")
        assert first.status_code == 202, first.text
        sids = {first.json()["submission_id"]}
        wait_for(lambda: _status(space.url, next(iter(sids))) == "published", 90, "the first publish")
        worker = _embedded_worker_pid(space)
        assert worker is not None
        for i in range(3):  # queued and in scoring when the disk fills
            answer, _ = _upload(space.url, baseline("varm", "lexicon", i + 1), f"queued{i}")
            assert answer.status_code == 202, answer.text
            sids.add(answer.json()["submission_id"])
        log_before = space.log.stat().st_size
        ballast = _fill(small_disk)
        assert shutil.disk_usage(small_disk).free < (1 << 20)
        filled = time.monotonic()
        refused, _ = _upload(space.url, baseline("varm", "lexicon", 9), "during")
        assert refused.status_code == 507, (refused.status_code, refused.text)
        assert refused.json()["problem"] == "disk_full"
        health = wait_for(lambda: (h := _health(space.url))[0] == 503 and h, 15, "health to name the disk")
        assert str(health[1].get("disk")).startswith("full"), health
        time.sleep(max(0.0, OUTAGE_SECONDS - (time.monotonic() - filled)))
        ballast.unlink()
        freed = time.monotonic()
        wait_for(lambda: all(_status(space.url, s) == "published" for s in sids), 120, "queued work")
        published_after = time.monotonic() - freed
        time.sleep(2)  # the lines that say it is over
        logged = space.log.read_bytes()[log_before:].decode(errors="replace")
        outage_lines = _outage_lines(logged)
        assert _embedded_worker_pid(space) == worker, "the embedded worker exited during the outage"
        assert "exited with code" not in logged
        assert "Traceback" not in logged, logged[:4000]
        assert len(outage_lines) < 10, "\n".join(outage_lines[:40])
        assert any("data disk is full" in line for line in outage_lines), "the outage went unreported"
        after, _ = _upload(space.url, baseline("varm", "lexicon", 10), "after")
        assert after.status_code == 202, after.text
        sids.add(after.json()["submission_id"])
        wait_for(lambda: all(_status(space.url, s) == "published" for s in sids), 90, "an upload after it")
        assert_published_exactly_once(open_store(Config(data_dir=data)), "varm", sids)
        figures.record(
            "faults_disk_full",
            outage_s=OUTAGE_SECONDS,
            log_lines=len(outage_lines),
            worker_exits=0,
            queued=len(sids) - 2,
            lost=0,
            published_after_free_s=round(published_after, 1),
        )
        print(
            f"\ndisk full {OUTAGE_SECONDS} s: {len(outage_lines)} log lines; queued work published "
            f"{published_after:.1f} s after space came back"
        )
    finally:
        space.stop()
        _kill_leftovers(str(data))
