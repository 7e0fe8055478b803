"""A publish reaches the web process without waiting for its head poll (issue 29.3): the Hub's repository
webhook (secret checked in constant time) and the workers' announcement over Redis each make the next read
go to the store; a forged webhook, one for another repo, or nothing at all leaves the cached head alone.

Real parts: `python -m space` with STORE=hub over the real `huggingface_hub` client and the fake Hub, the
shared test Redis; HEAD_POLL_SECONDS=600 so only the signal under test can refresh the board.
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from tests.conftest_hub import HUB_TEST_OPTIONS
from tests.conftest_pipeline import redis_url
from tests.test_faults import seed, small_demo
from tests.webproc import start_web, stop_web
from worker import head_signal
from worker.config import Config
from worker.store import open_store

SECRET = "s3cret-webhook-value"


def _etag(url: str) -> str:
    answer = httpx.get(f"{url}/api/v1/leaderboard", params={"track": "varm"}, timeout=30)
    assert answer.status_code == 200, answer.text
    return answer.headers["etag"]


def _payload(repo: str, scope: str = "repo.content") -> dict:
    """What the Hub sends on a repo update (its documented shape, v3)."""
    return {
        "event": {"action": "update", "scope": scope},
        "repo": {
            "type": "dataset",
            "name": repo,
            "id": "6564a1b2c3d4e5f6a7b8c9d0",
            "private": False,
            "url": {
                "web": f"https://huggingface.co/datasets/{repo}",
                "api": f"https://huggingface.co/api/datasets/{repo}",
            },
            "owner": {"id": "6564a1b2c3d4e5f6a7b8c9d1"},
            "headSha": "0" * 40,
        },
        "webhook": {"id": "6564a1b2c3d4e5f6a7b8c9d2", "version": 3},
    }


def _hook(url: str, payload: dict, secret: str | None) -> httpx.Response:
    headers = {"X-Webhook-Secret": secret} if secret is not None else {}
    return httpx.post(f"{url}/api/v1/hooks/hub", json=payload, headers=headers, timeout=30)


@pytest.fixture
def hub_web(tmp_path: Path, hub_config: Config, hub_env: dict):
    seed(hub_config, small_demo(tmp_path, ("varm",)), cache_dir=tmp_path / "seed-cache", **HUB_TEST_OPTIONS)
    hub = {k: v for k, v in hub_env.items() if k != "DATA_DIR"}
    web = start_web(
        tmp_path / "web",
        **hub,
        HF_HOME=str(tmp_path / "hf-web"),
        HEAD_POLL_SECONDS="600",
        WEBHOOK_SECRET=SECRET,
    )
    results = open_store(hub_config, areas=("results",), cache_dir=tmp_path / "c", **HUB_TEST_OPTIONS)
    yield web, results, hub_config
    stop_web(web)


def _move_head(results, note: str) -> str:
    return results.commit("results", {f"notes/{note}.txt": note.encode()}, [], f"test: {note}")


def test_only_a_genuine_webhook_refreshes_the_board(hub_web) -> None:
    web, results, config = hub_web
    before = _etag(web.url)
    _move_head(results, "webhook")
    assert _etag(web.url) == before, "the head poll refreshed by itself (HEAD_POLL_SECONDS ignored?)"

    assert _hook(web.url, _payload(config.hf_results_repo), None).status_code == 401
    assert _hook(web.url, _payload(config.hf_results_repo), SECRET + "x").status_code == 401
    assert _hook(web.url, _payload(config.hf_results_repo), SECRET[:-1]).status_code == 401
    other = _hook(web.url, _payload(config.hf_submissions_repo), SECRET)
    assert other.status_code == 200 and other.json()["refreshed"] is False
    bad = httpx.post(
        f"{web.url}/api/v1/hooks/hub", content=b"{}", headers={"X-Webhook-Secret": SECRET}, timeout=30
    )
    assert bad.status_code == 422
    assert _etag(web.url) == before, "a forged or foreign webhook refreshed the board"
    assert "webhook refused" in web.tail()

    genuine = _hook(web.url, _payload(config.hf_results_repo), SECRET)
    assert genuine.status_code == 200 and genuine.json() == {"refreshed": True}
    after = _etag(web.url)
    assert after != before, "a genuine webhook did not refresh the board"


@pytest.mark.slow
def test_a_workers_announcement_refreshes_the_board_at_once(hub_web) -> None:
    web, results, config = hub_web
    before = _etag(web.url)
    head = _move_head(results, "announced")
    time.sleep(1.5)
    assert _etag(web.url) == before  # positive control: nothing announced, nothing refreshed
    signal = Config(celery_broker_url=redis_url(), celery_key_prefix=web.prefix)
    other = Config(celery_broker_url=redis_url(), celery_key_prefix="another-deployment:")
    head_signal.announce(other, head)  # another deployment's channel: not ours
    time.sleep(1.5)
    assert _etag(web.url) == before
    started = time.monotonic()
    head_signal.announce(signal, head)
    while _etag(web.url) == before:
        assert time.monotonic() - started < 5, "the announcement did not refresh the board"
        time.sleep(0.05)
    print(f"\nannounced head visible after {time.monotonic() - started:.2f} s")


def test_no_secret_no_webhook(tmp_path: Path) -> None:
    web = start_web(tmp_path / "web")
    try:
        answer = _hook(web.url, _payload("x/y"), "anything")
        assert answer.status_code == 404 and "WEBHOOK_SECRET" in answer.json()["detail"]
    finally:
        stop_web(web)


@pytest.mark.slow
def test_a_move_announced_during_a_head_read_is_not_lost(tmp_path: Path) -> None:
    """The read that was in flight when the announcement came may have seen the old head: it must not be
    cached for HEAD_POLL_SECONDS (positive control: without an announcement the read is cached)."""
    import threading

    from worker.service import Service
    from worker.store.local import LocalStore

    class SlowHead(LocalStore):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            self.reading, self.release, self.reads = threading.Event(), threading.Event(), 0

        def head(self, area: str) -> str:
            self.reads += 1
            self.reading.set()
            self.release.wait(5)
            return super().head(area)

    store = SlowHead(tmp_path / "data")
    store.commit("results", {"a.txt": b"a"}, [], "a")
    service = Service(Config(data_dir=tmp_path / "data"), store, None, head_ttl=600)
    store.release.set()
    service.results_head()
    service.results_head()
    assert store.reads == 1  # cached
    service.head_moved()
    store.release.clear()
    reader = threading.Thread(target=service.results_head)
    reader.start()
    assert store.reading.wait(5)
    service.head_moved()  # announced while the read is in flight
    store.release.set()
    reader.join(5)
    service.results_head()
    assert store.reads == 3, "the overlapping read was cached"
