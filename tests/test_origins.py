"""Cross-origin requests (issue 23, item 4), against the production web process (`python -m space`).

With a non-local `Host`, Gradio answered any `Origin` with `Access-Control-Allow-Credentials: true`, preflight
and POST to `maint_moderate` alike, so a page on another site could drive a signed-in maintainer's browser.
Now the parent app's CORS allow-list (the Space's own origin and `CORS_ORIGINS`) is the only CORS policy,
and a state-changing request from a foreign origin is refused before it runs. Positive controls: the same
requests from the page's own origin and from an allowed origin work.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from space.origins import REFUSED
from tests.conftest_ui import TOKENS
from tests.webproc import WebProcess, web_process

BOSS = next(t for t, u in TOKENS.items() if u == "boss")
HOST = "leaderboard.example.org"  # not local: where Gradio's own CORS reflected every origin
FRIEND = "https://friend.example"
EVIL = "https://evil.example"


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebProcess]:
    yield from web_process(tmp_path_factory.mktemp("origins"), CORS_ORIGINS=FRIEND, SPACE_HOST="")


@pytest.fixture(scope="module")
def client(web: WebProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=web.url, timeout=60, headers={"Host": HOST}) as c:
        yield c


def preflight(client: httpx.Client, path: str, origin: str) -> httpx.Response:
    headers = {
        "Origin": origin,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type",
    }
    return client.options(path, headers=headers)


def moderate(client: httpx.Client, origin: str | None) -> httpx.Response:
    headers = {"Origin": origin} if origin else {}
    data = {"data": ["0123456789abcdef", "hide", "from another site", BOSS, "en"]}
    return client.post("/gradio_api/call/maint_moderate", json=data, headers=headers)


@pytest.mark.parametrize(
    "path", ["/gradio_api/call/maint_moderate", "/gradio_api/queue/join", "/api/v1/submissions"]
)
def test_a_foreign_origin_gets_no_cors_grant(client, path) -> None:
    refused = preflight(client, path, EVIL)
    assert refused.headers.get("access-control-allow-origin") not in (EVIL, "*"), refused.headers
    allowed = preflight(client, path, FRIEND)  # positive control: the allow-list is what decides
    assert allowed.status_code == 200 and allowed.headers["access-control-allow-origin"] == FRIEND
    assert allowed.headers["access-control-allow-credentials"] == "true"
    page = client.get("/api/v1/tracks", headers={"Origin": EVIL})
    assert page.status_code == 200 and "access-control-allow-origin" not in page.headers


def test_a_foreign_origin_cannot_change_anything(client, web) -> None:
    attack = moderate(client, EVIL)
    assert attack.status_code == 403 and REFUSED in attack.text, attack.text
    upload = client.post(
        "/api/v1/submissions",
        data={"track": "cold", "model_name": "x"},
        files={"file": ("p.jsonl", b"{}\n")},
        headers={"Origin": EVIL, "Authorization": f"Bearer {BOSS}"},
    )
    assert upload.status_code == 403, upload.text
    join = client.post("/gradio_api/queue/join", json={}, headers={"Origin": "null"})  # a sandboxed page
    assert join.status_code == 403
    # positive controls: the page's own origin, an allowed one and a script without Origin get through
    for origin in (f"https://{HOST}", FRIEND, None):
        answer = moderate(client, origin)
        assert answer.status_code == 200 and "event_id" in answer.json(), (origin, answer.text)
    assert "Traceback" not in web.tail()
