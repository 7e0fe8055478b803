"""pytest plugin for the UI tests.

- `fake_ui`: the Blocks app on an in-memory Service double (tests/ui_fakes.py), launched in-process;
  fast and deterministic, for API-level tests of every callback.
- `live_space`: the real thing, `python -m space` in a subprocess (embedded Celery worker, seeded demo
  store, tmp DATA_DIR, free port), for the browser tests. Stopped by process group at teardown.
- `browser_page`: a Playwright page on Debian's chromium (never `playwright install`).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOTS = ROOT / "test-output" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
TOKENS = {"tok-alice-0123456789": "alice", "tok-boss-0123456789": "boss"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class FakeUI:
    url: str
    service: object
    demo: object


@pytest.fixture(scope="session")
def fake_ui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeUI]:
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    from space.ui import build_demo
    from tests.ui_fakes import FakeConfig, FakeService

    data_dir = tmp_path_factory.mktemp("ui-data")
    (data_dir / "tokens.json").write_text(json.dumps(TOKENS))
    service = FakeService(n=12, config=FakeConfig(maintainers=("boss",), data_dir=data_dir))
    demo = build_demo(service, auth_mode="token", refresh_seconds=1.0, status_seconds=0.5)
    demo.ui.cache.head_ttl = 0.0  # tests publish and expect to see it at once
    _, url, _ = demo.launch(
        prevent_thread_lock=True, server_name="127.0.0.1", server_port=free_port(), quiet=True
    )
    yield FakeUI(url=url, service=service, demo=demo)
    demo.close()


@pytest.fixture(scope="session")
def fake_client(fake_ui: FakeUI):
    from gradio_client import Client

    return Client(fake_ui.url, verbose=False)


@dataclass
class LiveSpace:
    url: str
    data_dir: Path
    log: Path
    process: subprocess.Popen

    def tail(self, n: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-n:]


def _wait_http(url: str, process: subprocess.Popen, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"python -m space exited:\n{log.read_text(errors='replace')[-4000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError(
        f"python -m space did not answer in {timeout}s:\n{log.read_text(errors='replace')[-4000:]}"
    )


def _published(url: str, tracks: tuple[str, ...], timeout: float) -> None:
    """Wait until the seeded baselines are on the boards (the embedded worker scores them at start)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            counts = []
            for track in tracks:
                with urllib.request.urlopen(f"{url}api/v1/leaderboard?track={track}", timeout=5) as resp:
                    counts.append(len(json.loads(resp.read()).get("rows", [])))
            if all(c >= 3 for c in counts):
                return
        except OSError:
            pass
        time.sleep(0.5)


@pytest.fixture(scope="session")
def live_space(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveSpace]:
    if not (ROOT / "space" / "__main__.py").exists():
        pytest.skip("space/__main__.py is not there yet")
    data_dir = tmp_path_factory.mktemp("space-data")
    (data_dir / "tokens.json").write_text(json.dumps(TOKENS))
    port = free_port()
    env = {
        **os.environ,
        "DATA_DIR": str(data_dir),
        "PORT": str(port),
        "HOST": "127.0.0.1",
        "AUTH": "token",
        "MAINTAINERS": "boss",
        "GRADIO_ANALYTICS_ENABLED": "False",
        "PYTHONUNBUFFERED": "1",
        "QUOTA_PER_DAY": "50",
        "ATTEMPTS_PER_DAY": "200",
    }
    for name in ("CELERY_BROKER_URL", "STORE", "HF_RESULTS_REPO", "SPACE_ID", "OAUTH_CLIENT_ID"):
        env.pop(name, None)  # the embedded default: local store, SQLite broker, one worker subprocess
    log = data_dir / "space.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "space"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}/"
    try:
        _wait_http(f"{url}api/v1/health", process, log, timeout=180)
        _published(url, ("varm", "cold"), timeout=120)
        yield LiveSpace(url=url, data_dir=data_dir, log=log, process=process)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


@pytest.fixture(scope="session")
def chromium() -> Iterator[object]:
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium is not installed (scripts/test installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def browser_page(chromium) -> Iterator[object]:
    """A fresh page; page errors and dialogs are collected (`page.errors`, `page.dialogs`)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    context = chromium.new_context(viewport={"width": 1400, "height": 1000}, locale="zh-CN")
    page = context.new_page()
    page.errors, page.dialogs = [], []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))

    def on_dialog(dialog) -> None:
        page.dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    yield page
    context.close()


def shot(page, name: str) -> Path:
    """Save a full-page screenshot under test-output/screenshots/."""
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
