"""Sign-in: the OAuth mode (gr.LoginButton, Gradio's mocked routes against the fake Hub), the token and
open modes, and the identity resolution rules. Always on the real Service (`space.server.build_service`)
over a LocalStore in a tmp DATA_DIR; the fake Hub HTTP server is the only stand-in (for the public Hub)."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest
from gradio_client import Client, handle_file

from space.ui.identity import Identity, Resolver, ui_auth_mode
from tests.conftest_ui import free_port, seed_public, web_service
from worker.config import Config
from worker.submissions import find_record

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"


class Profile:
    def __init__(self, username: str) -> None:
        self.username = username


def test_ui_auth_mode_from_env(tmp_path: Path) -> None:
    svc = web_service(Config(data_dir=tmp_path))
    assert ui_auth_mode(svc, {"SPACE_ID": "org/board"}) == "oauth"
    assert ui_auth_mode(svc, {"OAUTH_CLIENT_ID": "x"}) == "oauth"
    assert ui_auth_mode(svc, {"AUTH": "open"}) == "open"
    assert ui_auth_mode(svc, {}) == "token"


def test_resolver_rules(tmp_path: Path) -> None:
    (tmp_path / "tokens.json").write_text('{"t-boss": "boss", "t-al": "alice"}')
    svc = web_service(Config(data_dir=tmp_path, maintainers=("Boss",)))
    token = Resolver(svc, "token")
    assert token("t-boss", None) == Identity("boss", True)
    assert token("t-al", None) == Identity("alice", False)
    assert token("nope", None).name is None and token("", None).name is None
    assert token("", Profile("carol")) == Identity("carol", False)  # a profile always wins
    assert Resolver(svc, "open")("", None) == Identity("anonymous", False)
    oauth = Resolver(svc, "oauth")
    assert oauth("t-boss", None).name is None  # tokens are not accepted in OAuth mode
    assert oauth("", Profile("boss")) == Identity("boss", True)


@pytest.fixture(scope="module")
def oauth_app(tmp_path_factory: pytest.TempPathFactory):
    if not os.environ.get("HF_ENDPOINT") or not os.environ.get("HF_TOKEN"):
        pytest.skip("needs the fake Hub from tests/conftest_hub.py")
    from space.ui import build_demo
    from worker.store.local import LocalStore

    data_dir = tmp_path_factory.mktemp("oauth-data")
    seed_public(LocalStore(data_dir), "varm")
    # The embedded SQLite broker with no worker: submissions stay queued, which is what this module checks.
    service = web_service(Config(data_dir=data_dir, maintainers=("tester",)))
    demo = build_demo(service, auth_mode="oauth")
    _, url, _ = demo.launch(
        prevent_thread_lock=True, server_name="127.0.0.1", server_port=free_port(), quiet=True
    )
    yield url, service
    demo.close()


def test_oauth_login_attributes_submissions(oauth_app) -> None:
    url, service = oauth_app
    page = httpx.get(url, timeout=30).text
    assert "Sign in with Hugging Face" in page  # the LoginButton is there, the token box is not shown
    f = handle_file(str(DEMO / "varm/baselines/lexicon.test.jsonl"))
    anonymous = Client(url, verbose=False)
    msg, *_ = anonymous.predict("varm", f, "m", "", "", "", "", "", "", "", "en", api_name="/submit")
    assert "sign in" in msg.lower()

    # Gradio's mocked OAuth (outside a Space) signs in as the HF_TOKEN's user: "tester" on the fake Hub.
    with httpx.Client(base_url=url, follow_redirects=True, timeout=30) as http:
        http.get("/login/huggingface")
        cookie = http.cookies.get("session")
    assert cookie
    signed = Client(url, headers={"Cookie": f"session={cookie}"}, verbose=False)
    assert "tester" in signed.predict("", "en", api_name="/sign_in")
    assert "maintainer" in signed.predict("", "en", api_name="/sign_in")
    msg, _, sid, *_ = signed.predict(
        "varm", f, "oauth-model", "", "", "", "", "", "", "", "en", api_name="/submit"
    )
    record = find_record(service.store, sid)  # persisted by the real Service, task sent to the broker
    assert record["submitter"] == "tester" and record["status"] == "queued"
    assert record["metadata"]["model_name"] == "oauth-model"
    anonymous.close()
    signed.close()
