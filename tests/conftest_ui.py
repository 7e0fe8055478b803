"""pytest plugin for the UI tests. No service doubles: every fixture runs the real Service over a real store.

- `ui_app`: `build_demo(Service)` launched in-process, the Service being the web process's own
  (`space.server.build_service`: LocalStore in a tmp DATA_DIR without the references area, Celery
  enqueuer), plus a real `celery worker` subprocess on Redis (`$REDIS_URL`, own key prefix) or, without
  Redis, on the embedded SQLite broker. Its boards are filled through the real pipeline code
  (`publish_demo_board`): records, the scoring job, the paired-bootstrap tie groups and the publisher.
- `live_space`: the real thing, `python -m space` in a subprocess (embedded Celery worker, seeded demo
  store, tmp DATA_DIR, free port), for the browser tests. Stopped by process group at teardown.
- `browser_page`: a Playwright page on Debian's chromium (never `playwright install`).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.conftest_pipeline import WorkerProcess, redis_url, worker_env

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo"
SCREENSHOTS = ROOT / "test-output" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
# dana submits only in tests/test_cli.py, erin and frank only in tests/test_browser_releases.py: their
# uploads make Ladder steps (a better released best), which must not change what another test's upload to
# the shared live service gets (a first upload is always released). gina submits only in test_browser_ux.py,
# hank, ivy and kate only in test_browser_submitters.py (kate on CNTP, which no other browser test reads),
# jill only in test_browser_layout.py (privately); lena only in test_browser_maintainers.py (a copy of dana's
# CNTP file, held and never scored).
TOKENS = {
    "tok-lena-0123456789": "lena",
    "tok-gina-0123456789": "gina",
    "tok-hank-0123456789": "hank",
    "tok-ivy-0123456789": "ivy",
    "tok-jill-0123456789": "jill",
    "tok-kate-0123456789": "kate",
    "tok-alice-0123456789": "alice",
    "tok-boss-0123456789": "boss",
    "tok-carol-0123456789": "carol",
    "tok-dana-0123456789": "dana",
    "tok-erin-0123456789": "erin",
    "tok-frank-0123456789": "frank",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Boards of the `ui_app` fixture: 3 demo baselines + this many synthetic systems per track.
UI_BOARDS = {"varm": 9, "cold": 9, "toxicn": 5, "cntp": 5}
BASELINES = ("majority", "lexicon", "char-ngram")
ORGS = ("THU", "NUAA", "DUT", "Acme AI", "OpenLab", "")


def seed_public(store, track: str) -> None:
    """References and public files of a demo track, with the seeder's own file builders, and the workers'
    signing key as an install makes it. No slice key: these boards show full-test results, as a store
    installed before slices existed does."""
    from worker.gold.bundle_files import public_files, reference_files
    from worker.gold.signing import signing_key

    signing_key(store)
    bundle = DEMO / track
    for area, files in (
        ("references", reference_files(track, bundle)),
        ("results", public_files(track, bundle)),
    ):
        missing = {p: d for p, d in files.items() if store.read(area, p) is None}
        if missing:
            store.commit(area, missing, [], f"seed {track} {area}")


def publish_demo_board(
    store,
    track: str,
    n_models: int,
    *,
    xss: bool = False,
    names: tuple[str, ...] = (),
    baselines: tuple[str, ...] = BASELINES,
) -> list[str]:
    """Put the 3 demo baselines and `n_models` systems of varied skill on `track`'s board, through the
    pipeline's own code: records (`new_record`), the worker's scoring job (real scorer, private row
    outcomes), then `Publisher.publish` (paired-bootstrap tie groups, envelopes, parquet, changelog).

    `store` must hold every area (a maintainer/worker view). Returns the submission ids, baselines first
    (`baselines`: the demo baselines' names, each with a file under data/demo/<track>/baselines/); with
    `xss`, the first system's model name is factories.XSS_NAME; `names` name the systems in turn.
    """
    from tests.factories import XSS_NAME, mixed_predictions
    from worker.gold.publish import Publisher
    from worker.gold.references import ReferenceCache
    from worker.gold.scoring_job import score_submission
    from worker.records import new_record, predictions_path, record_path
    from worker.submissions import dumps

    seed_public(store, track)
    base = datetime(2026, 11, 1, tzinfo=UTC)
    rng = random.Random(f"ui-{track}")
    add: dict[str, bytes] = {}
    ids = []
    for i in range(len(baselines) + n_models):
        is_baseline = i < len(baselines)
        if is_baseline:
            data = (DEMO / track / "baselines" / f"{baselines[i]}.test.jsonl").read_bytes()
            name, org, model_type, setting = f"baseline: {baselines[i]}", "demo", "", ""
        else:
            data = mixed_predictions(track, round(rng.uniform(0.05, 0.95), 3), seed=i)
            name = XSS_NAME if xss and i == len(baselines) else f"model-{i:05d}"
            name = names[(i - len(baselines)) % len(names)] if names and name != XSS_NAME else name
            org = ORGS[i % len(ORGS)]
            model_type, setting = ("open", "closed")[i % 2], ("zero-shot", "taxonomy", "fine-tuned")[i % 3]
        sid = hashlib.sha256(f"{track}-{i}".encode()).hexdigest()[:16]
        record = new_record(
            submission_id=sid,
            track=track,
            sha256=hashlib.sha256(data).hexdigest(),
            submitter="baseline" if is_baseline else f"user{i}",
            metadata={
                "model_name": name,
                "organisation": org,
                "model_type": model_type,
                "setting": setting,
                "paper_url": "" if is_baseline else f"https://example.org/papers/{i}",
                "code_url": "",
                "description": "",
            },
            is_baseline=is_baseline,
            at=(base + timedelta(minutes=i)).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        )
        record["verified"] = i % 7 == 0
        add[predictions_path(track, sid)] = data
        add[record_path(track, sid)] = dumps(record)
        ids.append(sid)
    store.commit("submissions", add, [], f"test: {len(ids)} {track} submissions")
    references = ReferenceCache(store)
    for sid in ids:
        outcome = score_submission(store, references.get, track, sid, time_limit=120)
        assert outcome == "scored", (track, sid, outcome)
    Publisher(store).publish(track, note="test boards")
    return ids


def redis_or_none() -> str | None:
    """The test Redis URL when one answers, else None (the embedded SQLite broker is used)."""
    import redis

    url = redis_url()
    try:
        redis.Redis.from_url(url, socket_connect_timeout=1).ping()
    except Exception:  # noqa: BLE001 - no Redis: fall back to the embedded broker
        return None
    return url


def web_service(config):
    """The web process's Service, built exactly as `space.server` builds it (the Redis key prefix, if
    any, comes from `config.celery_key_prefix`)."""
    from space.server import build_service

    return build_service(config)


@dataclass
class UIApp:
    url: str
    service: object  # worker.service.Service (web view: no references area)
    demo: object
    config: object
    store: object  # a LocalStore on the same DATA_DIR with every area (test-side inspection)
    ids: dict[str, list[str]]
    worker: object  # tests.conftest_pipeline.WorkerProcess


@pytest.fixture(scope="session")
def ui_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UIApp]:
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    from space.ui import build_demo
    from worker.config import Config
    from worker.store.local import LocalStore

    data_dir = tmp_path_factory.mktemp("ui-data")
    (data_dir / "tokens.json").write_text(json.dumps(TOKENS))
    broker = redis_or_none()
    prefix = f"varmui-{uuid.uuid4().hex[:10]}:" if broker else None
    config = Config(
        data_dir=data_dir,
        celery_broker_url=broker,
        celery_key_prefix=prefix or "",
        maintainers=("boss",),
        quota_per_day=3,
        attempts_per_day=200,
    )
    store = LocalStore(data_dir)
    worker = WorkerProcess(
        worker_env(config, {"CELERY_KEY_PREFIX": prefix} if prefix else None), data_dir / "worker.log"
    )
    demo = None
    try:  # the worker is stopped whatever fails below, board filling included
        with ThreadPoolExecutor(1) as pool:
            started = pool.submit(worker.start, 60)  # boots while the boards are filled (no work yet)
            try:
                ids = {t: publish_demo_board(store, t, n, xss=t == "varm") for t, n in UI_BOARDS.items()}
            finally:
                started.result()
        service = web_service(config)
        demo = build_demo(service, auth_mode="token", refresh_seconds=1.0, status_seconds=0.5)
        service.head_ttl = 0.0  # tests publish and expect to see it at once (the UI asks the Service)
        _, url, _ = demo.launch(
            prevent_thread_lock=True, server_name="127.0.0.1", server_port=free_port(), quiet=True
        )
        yield UIApp(url=url, service=service, demo=demo, config=config, store=store, ids=ids, worker=worker)
    finally:
        if demo is not None:
            demo.close()
        worker.stop()
        if prefix:
            import redis

            client = redis.Redis.from_url(broker)
            keys = list(client.scan_iter(f"{prefix}*"))
            if keys:
                client.delete(*keys)


@pytest.fixture(scope="session")
def ui_client(ui_app: UIApp):
    from gradio_client import Client

    client = Client(ui_app.url, verbose=False)
    yield client
    client.close()


@dataclass
class LiveSpace:
    url: str
    data_dir: Path
    log: Path
    process: subprocess.Popen

    def tail(self, n: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-n:]


def spawn_space(env: dict[str, str], log: Path) -> subprocess.Popen:
    """`python -m space` as a real subprocess in its own session (killable as a group), output to `log`."""
    with open(log, "wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "space"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


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
    process = spawn_space(env, log)
    url = f"http://127.0.0.1:{port}/"
    try:
        _wait_http(f"{url}api/v1/health", process, log, timeout=180)
        _published(url, ("varm", "cold"), timeout=120)
        yield LiveSpace(url=url, data_dir=data_dir, log=log, process=process)
    finally:
        stop_group(process)


def stop_group(process: subprocess.Popen, grace: float = 20) -> None:
    """SIGTERM a process started in its own session and everything it started; SIGKILL after `grace` s."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(grace)
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


VIEWPORTS = {"1440": {"width": 1440, "height": 900}, "390": {"width": 390, "height": 844}}


def screen_page(chromium, width: str) -> tuple[object, object, list[str]]:
    """(context, page, page errors) at one of VIEWPORTS; "390" is a phone (mobile, touch, 2x pixels).
    Close the context when done."""
    phone = width == "390"
    context = chromium.new_context(
        viewport=VIEWPORTS[width],
        is_mobile=phone,
        has_touch=phone,
        device_scale_factor=2 if phone else 1,
        locale="zh-CN",
    )
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return context, page, errors


@pytest.fixture(
    params=[(size, lang) for size in VIEWPORTS for lang in ("en", "zh")], ids=lambda p: "-".join(p)
)
def view(request, chromium) -> Iterator[tuple[object, str, str]]:
    """(page, size, lang) at each of VIEWPORTS ("1440", "390": a phone) in each language, for the browser
    tests of issue 28; the page's errors are collected in `page.errors`."""
    size, lang = request.param
    context, page, errors = screen_page(chromium, size)
    page.errors = errors
    yield page, size, lang
    context.close()


def open_tab(page, name: str, timeout: float = 60.0) -> None:
    """Click the UI tab called `name` (exactly); on a narrow screen it may sit in Gradio's "More tabs" menu.

    The tab bar lays itself out again when the language relabels it, so a tab can move between the bar and
    the menu while we look: look again (both places) until one of them has it."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    deadline = time.monotonic() + timeout
    exact = re.compile(f"^{re.escape(name)}$")
    while True:
        tab = page.get_by_role("tab", name=exact)
        if tab.count() and tab.first.is_visible():
            tab.first.click()
            return
        more = page.get_by_role("button", name="More tabs")
        if more.count() and more.first.is_visible():
            more.first.click()
            try:
                page.locator(".overflow-dropdown button", has_text=name).first.click(timeout=2000)
                return
            except PlaywrightTimeout:
                more.first.click()  # close the menu; the bar may have changed under it
        if time.monotonic() > deadline:
            raise AssertionError(f"no tab {name!r} in the tab bar or its More tabs menu")
        page.wait_for_timeout(300)


def shot(page, name: str) -> Path:
    """Save a full-page screenshot under test-output/screenshots/."""
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
