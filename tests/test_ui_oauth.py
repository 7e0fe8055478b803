"""Sign-in: the OAuth mode (gr.LoginButton and Gradio's real OAuth routes, only on a Space: refused
anywhere else), the token and open modes, and the identity resolution rules. Always on the real Service
over a LocalStore in a tmp DATA_DIR; the fake Hub HTTP server is the only stand-in (for the Hub's OpenID
provider)."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest
from gradio_client import Client, handle_file

from space.ui.identity import Identity, Resolver, ui_auth_mode
from tests.conftest_ui import free_port, web_service
from worker.config import Config
from worker.submissions import find_record

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"


class Profile:
    def __init__(self, username: str) -> None:
        self.username = username


def test_ui_auth_mode_from_env(tmp_path: Path) -> None:
    svc = web_service(Config(data_dir=tmp_path))
    space = {**SPACE, "OPENID_PROVIDER_URL": "http://127.0.0.1:9"}
    assert ui_auth_mode(svc, space) == "oauth"
    assert ui_auth_mode(svc, {"SPACE_ID": "org/board"}) == "token"  # a Space without OAuth: tokens
    assert ui_auth_mode(svc, {"OAUTH_CLIENT_ID": "x"}) == "token"  # not a Space: never OAuth
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


SPACE = {
    "SYSTEM": "spaces",
    "SPACE_ID": "tester/board",
    "OAUTH_CLIENT_ID": "client-id-123",
    "OAUTH_CLIENT_SECRET": "the-space-oauth-secret",
    "OAUTH_SCOPES": "openid profile",
}


def session_cookie(secret: str, username: str) -> str:
    """A Starlette session cookie holding Gradio's `oauth_info` for `username`, signed as Gradio's
    SessionMiddleware signs it: with sha256(OAUTH_CLIENT_SECRET + "-v4")."""
    import base64
    import hashlib
    import json
    import time

    from itsdangerous import TimestampSigner

    info = {
        "access_token": "hf_oauth_token",
        "scope": "openid profile",
        "expires_at": int(time.time()) + 3600,
        "userinfo": {"preferred_username": username, "name": username, "profile": "", "picture": ""},
    }
    payload = base64.b64encode(json.dumps({"oauth_info": info}).encode())
    key = hashlib.sha256((secret + "-v4").encode()).hexdigest()
    return TimestampSigner(key).sign(payload).decode()


def test_oauth_outside_a_space_refuses_to_start(tmp_path: Path) -> None:
    """Issue 23: with OAUTH_CLIENT_ID set outside a Space, Gradio attached its mocked OAuth routes (every
    visitor became HF_TOKEN's owner). Now start-up refuses with one line; the same settings on a Space
    start (the next test)."""
    import subprocess
    import sys

    from space.auth import oauth_enabled, oauth_problem

    env = {k: v for k, v in os.environ.items() if not k.startswith(("OAUTH_", "SPACE_", "SYSTEM"))}
    env.update(DATA_DIR=str(tmp_path), HOST="127.0.0.1", PORT=str(free_port()), OAUTH_CLIENT_ID="x")
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-m", "space"], cwd=root, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, (done.stdout[-500:], done.stderr[-500:])
    [line] = done.stderr.strip().splitlines()
    assert "outside a Hugging Face Space" in line and "Traceback" not in done.stderr
    on_space = {**SPACE, "OPENID_PROVIDER_URL": "http://127.0.0.1:9"}
    assert oauth_problem(on_space) is None and oauth_enabled(on_space)  # positive control
    assert oauth_problem({**on_space, "SYSTEM": ""}) and not oauth_enabled({**on_space, "SYSTEM": ""})
    assert oauth_problem({"SYSTEM": "spaces", "SPACE_ID": "a/b", "OAUTH_CLIENT_ID": "x"})  # no secret


def test_building_a_login_button_outside_a_space_is_refused(tmp_path: Path) -> None:
    from space.ui import build_demo

    with pytest.raises(RuntimeError, match="outside a Hugging Face Space|only available on"):
        build_demo(web_service(Config(data_dir=tmp_path)), auth_mode="oauth", warm=False)


@pytest.fixture(scope="module")
def space_app(tmp_path_factory: pytest.TempPathFactory, fakehub_url: str):
    """`python -m space` as on a Space with OAuth (SYSTEM=spaces, the Hub's OAuth variables; the fake Hub
    stands in for the OpenID provider): Gradio's real OAuth routes, never the mocked ones."""
    from tests.webproc import start_web, stop_web

    web = start_web(
        tmp_path_factory.mktemp("space-oauth"), **SPACE, OPENID_PROVIDER_URL=fakehub_url, MAINTAINERS="tester"
    )
    yield web
    stop_web(web)


@pytest.mark.slow
def test_on_a_space_oauth_is_real_and_a_forged_session_is_no_one(space_app, fakehub_url: str) -> None:
    url = space_app.url
    assert "Sign in with Hugging Face" in httpx.get(url, timeout=30).text  # the LoginButton is there
    with httpx.Client(base_url=url, timeout=30) as http:
        login = http.get("/login/huggingface")
    # the real route: off to the provider's authorize endpoint with the Space's client id, nobody signed in
    assert login.status_code in (302, 307), (login.status_code, login.text[:300])
    assert login.headers["location"].startswith(f"{fakehub_url}/oauth/authorize"), login.headers["location"]
    assert "client_id=client-id-123" in login.headers["location"]
    assert "Gradio does not support OAuth features outside of a Space" not in space_app.tail()

    forged = Client(url, headers={"Cookie": f"session={session_cookie('', 'tester')}"}, verbose=False)
    assert "tester" not in forged.predict("", "en", api_name="/sign_in")  # sha256("-v4"): public, refused
    forged.close()
    real = Client(
        url, headers={"Cookie": f"session={session_cookie(SPACE['OAUTH_CLIENT_SECRET'], 'tester')}"}
    )
    answer = real.predict("", "en", api_name="/sign_in")  # positive control: a session the Space signed
    assert "tester" in answer and "maintainer" in answer, answer
    f = handle_file(str(DEMO / "varm/baselines/lexicon.test.jsonl"))
    msg, _, sid, *_ = real.predict(
        "varm", f, "oauth-model", "", "", "", "", "", "", "", "en", api_name="/submit"
    )
    record = find_record(space_app_store(space_app), sid)
    assert record["submitter"] == "tester" and record["metadata"]["model_name"] == "oauth-model", msg
    real.close()


def space_app_store(web):
    from worker.store.local import LocalStore

    return LocalStore(web.data_dir)
