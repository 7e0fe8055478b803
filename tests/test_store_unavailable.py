"""A store that fails after its own retries (the Hub down or refusing writes) gives the uploader a 503 they
can retry, names no store internals, and saves nothing; the same upload succeeds once the store is back.

Real parts: `python -m space` with STORE=hub over the real `huggingface_hub` client, the fake Hub server
refusing the submissions repo's commits (HTTP 500) through its fault injection.
"""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.conftest_hub import HUB_TEST_OPTIONS
from tests.conftest_ui import TOKENS
from tests.test_faults import seed, small_demo
from tests.webproc import distinct_predictions, start_web, stop_web
from worker.config import Config
from worker.store import open_store

ALICE = next(token for token, user in TOKENS.items() if user == "alice")


def _upload(url: str, data: bytes) -> httpx.Response:
    return httpx.post(
        f"{url}/api/v1/submissions",
        headers={"Authorization": f"Bearer {ALICE}"},
        data={"track": "varm", "model_name": "outage test"},
        files={"file": ("predictions.jsonl", data)},
        timeout=120,
    )


def test_hub_outage_on_submit_is_a_503_and_saves_nothing(
    tmp_path: Path, hub_config: Config, hub_env: dict, fakehub
) -> None:
    seed(hub_config, small_demo(tmp_path, ("varm",)), cache_dir=tmp_path / "seed-cache", **HUB_TEST_OPTIONS)
    store = open_store(hub_config, cache_dir=tmp_path / "test-cache", **HUB_TEST_OPTIONS)
    before = store.head("submissions")
    hub = {k: v for k, v in hub_env.items() if k != "DATA_DIR"}  # the web keeps its own (tokens.json)
    web = start_web(
        tmp_path / "web",
        **hub,
        HF_HOME=str(tmp_path / "hf-web"),
        HF_RETRY_ATTEMPTS="2",
        HF_RETRY_BASE_DELAY="0.01",
    )
    try:
        data = distinct_predictions("varm", 1)[0]
        commits = hub_config.hf_submissions_repo.split("/")[1] + r"/commit/"
        fakehub.fault(commits, status=500, count=1000, method="POST")

        refused = _upload(web.url, data)
        assert refused.status_code == 503, refused.text
        assert refused.headers["Retry-After"] == "30"
        body = refused.json()
        assert body["problem"] == "store_unavailable"
        assert "nothing was saved" in body["detail"]
        for internal in ("Traceback", "submissions", "commit", hub_config.hf_submissions_repo):
            assert internal not in refused.text, internal
        assert fakehub.stats().get("POST commit", 0) >= 2, "the fault was not exercised"
        assert store.head("submissions") == before, "a refused upload wrote to the store"
        assert "the store is unavailable" in web.tail()

        fakehub.reset()  # positive control: the same upload, the store back
        accepted = _upload(web.url, data)
        assert accepted.status_code == 202, accepted.text
        assert store.head("submissions") != before
    finally:
        stop_web(web)
