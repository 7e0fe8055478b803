"""Identities (issue 11, item 5): one normal form for every user name, open mode only on loopback, and
model names that cannot pose as baselines or hide characters.

A zero-width or case variant of a user name is the same user (same quota, same display); a different user
keeps their own quota (positive control). `python -m space` with AUTH=open refuses to start unless it binds
to loopback only, and never with STORE=hub or inside a Space.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import gradio as gr
import httpx
import pytest

from space.auth import Auth, open_auth_problem
from space.ui.identity import Identity, Resolver
from tests.conftest_ui import ROOT, free_port, web_service
from tests.webproc import WebProcess, distinct_predictions, web_process
from worker.config import Config
from worker.quotas import normalise_identity
from worker.records import is_reserved_model_name, validate_metadata

VARIANTS = {"tok-mallory": "mallory", "tok-mallory-zw": "mallory\u200b", "tok-mallory-up": "MALLORY"}
RESERVED = (
    "baseline",
    "Baseline: lexicon",
    "BASELINE-x",
    "ＢＡＳＥＬＩＮＥ",
    "base\u200bline v2",
    "\u200bbaseline",
)


def test_normal_form() -> None:
    for name in (
        "mallory",
        "MALLORY",
        "mallory\u200b",
        "mal\u200dlory",
        "\ufeffMallory",
        "ＭＡＬＬＯＲＹ",
        " mallory ",
    ):
        assert normalise_identity(name) == "mallory", repr(name)
    assert normalise_identity("alice") != normalise_identity("mallory")
    assert normalise_identity("\u200b\u200c") == ""


def test_token_and_open_identities_are_normalised(tmp_path: Path) -> None:
    import json

    (tmp_path / "tokens.json").write_text(
        json.dumps({**VARIANTS, "tok-alice": "alice", "tok-empty": "\u200b"})
    )
    auth = Auth(Config(data_dir=tmp_path), "token")
    assert {auth.identify(f"Bearer {t}") for t in VARIANTS} == {"mallory"}
    assert auth.identify("Bearer tok-alice") == "alice"  # positive control
    assert auth.identify("Bearer tok-empty") is None  # a name that is nothing is no identity
    open_auth = Auth(Config(data_dir=tmp_path), "open")
    assert open_auth.identify(None, "MALLORY\u200b") == "mallory"
    assert open_auth.identify(None, "alice") == "alice"


def test_oauth_profile_is_normalised(tmp_path: Path) -> None:
    svc = web_service(Config(data_dir=tmp_path, maintainers=("Boss",)))
    resolve = Resolver(svc, "oauth")
    profile = gr.OAuthProfile(
        {"name": "M", "preferred_username": "Mallory\u200b", "profile": "", "picture": ""}
    )
    assert resolve("", profile) == Identity("mallory", False)
    boss = gr.OAuthProfile({"name": "B", "preferred_username": "BOSS\u2060", "profile": "", "picture": ""})
    assert resolve("", boss) == Identity("boss", True)


def test_model_names() -> None:
    for name in RESERVED:
        assert is_reserved_model_name(name), name
        meta, problems = validate_metadata({"model_name": name})
        assert [p.field for p in problems] == ["model_name"], (name, problems)
        assert "reserved" in problems[0].message
        assert validate_metadata({"model_name": name}, baseline=True)[1] == []  # the project's baselines
    for name in ("my baseline", "lexicon", "base line", "basel"):  # positive control
        assert not is_reserved_model_name(name) and validate_metadata({"model_name": name})[1] == [], name
    meta, problems = validate_metadata({"model_name": "GPT\u200b-4\u202e"})
    assert problems == [] and meta["model_name"] == "GPT-4"


def test_open_auth_exposure_rules() -> None:
    local, hub = Config(), Config(store="hub")
    for host in ("127.0.0.1", "::1", "[::1]", "localhost", "127.0.0.2"):
        assert open_auth_problem("open", host, local, {}) is None, host
    for host in ("0.0.0.0", "::", "192.168.1.4", "example.org", ""):
        assert "loopback" in (open_auth_problem("open", host, local, {}) or ""), host
    assert "STORE=hub" in open_auth_problem("open", "127.0.0.1", hub, {})
    assert "SPACE_ID" in open_auth_problem("open", "127.0.0.1", local, {"SPACE_ID": "org/board"})
    assert open_auth_problem("token", "0.0.0.0", hub, {"SPACE_ID": "x"}) is None


@pytest.mark.parametrize(
    "env",
    [
        {"HOST": "0.0.0.0"},
        {"HOST": "127.0.0.1", "STORE": "hub"},
        {"HOST": "127.0.0.1", "SPACE_ID": "org/board"},
    ],
    ids=["public-host", "hub-store", "space"],
)
def test_open_auth_refused_at_start(env: dict[str, str], tmp_path: Path) -> None:
    clean = {
        k: v for k, v in os.environ.items() if not k.startswith(("AUTH", "STORE", "SPACE_ID", "HF_RESULTS"))
    }
    run = subprocess.run(
        [sys.executable, "-m", "space"],
        cwd=ROOT,
        env={**clean, "AUTH": "open", "DATA_DIR": str(tmp_path), "PORT": str(free_port()), **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode != 0
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("AUTH=open is refused"), run.stderr[-2000:]
    assert not (tmp_path / "tokens.json").exists()  # nothing was started


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebProcess]:
    yield from web_process(tmp_path_factory.mktemp("identities"), VARIANTS, QUOTA_PER_DAY="2")


def post(
    web: WebProcess, token: str, data: bytes, model_name: str = "probe", track: str = "cold"
) -> httpx.Response:
    return httpx.post(
        f"{web.url}/api/v1/submissions",
        data={"track": track, "model_name": model_name},
        files={"file": ("p.jsonl", data)},
        headers={"Authorization": f"Bearer {token}"},
        timeout=60,
    )


def test_variants_share_one_quota(web: WebProcess) -> None:
    files = distinct_predictions("cold", 6)
    first = post(web, "tok-mallory", files[0])
    assert first.status_code == 202, first.text
    assert post(web, "tok-mallory-up", files[1]).status_code == 202
    for token, data in (
        ("tok-mallory-zw", files[2]),
        ("tok-mallory-up", files[3]),
        ("tok-mallory", files[4]),
    ):
        r = post(web, token, data)
        assert r.status_code == 429, (token, r.status_code, r.text[:200])
    assert post(web, "tok-alice-0123456789", files[5]).status_code == 202  # another user: own quota
    shown = httpx.get(f"{web.url}/api/v1/submissions/{first.json()['submission_id']}").json()
    assert shown["submitter"] == "mallory"


def test_reserved_and_hidden_characters_in_model_names(web: WebProcess) -> None:
    files = distinct_predictions("toxicn", 3)
    r = post(web, "tok-carol-0123456789", files[0], "ＢＡＳＥＬＩＮＥ: majority", "toxicn")
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "model_name", r.text
    r = post(web, "tok-carol-0123456789", files[1], "my\u200b model\u2066", "toxicn")
    assert r.status_code == 202, r.text
    shown = httpx.get(f"{web.url}/api/v1/submissions/{r.json()['submission_id']}").json()
    assert shown["metadata"]["model_name"] == "my model"


# -- look-alikes (issue 23, item 5) -------------------------------------------------------------------------

LOOK_ALIKE_BASELINES = (
    "Baseline",
    "ｂａｓｅｌｉｎｅ",
    "b\u0430seline",  # Cyrillic а
    "bas\u0435line",  # Cyrillic е
    "basel\u0456ne",  # Cyrillic і
    "baseIine",  # capital I
    "base\ufe0fline",  # variation selector: default-ignorable, not Cf
    "base\u034fline",  # combining grapheme joiner
    "base\u3164line",  # Hangul filler
    "base\u200bline",
)
ORDINARY = ("alice", "Bob_Smith", "张三", "李四zhang", "山田たろう", "김민준", "lily", "ilya-1")


def test_look_alike_names_of_the_baselines_cannot_sign_in_nor_name_a_model(tmp_path: Path) -> None:
    import json

    tokens = {f"tok-{i}": name for i, name in enumerate(LOOK_ALIKE_BASELINES)}
    tokens |= {f"tok-ok-{i}": name for i, name in enumerate(ORDINARY)}
    (tmp_path / "tokens.json").write_text(json.dumps(tokens))
    auth = Auth(Config(data_dir=tmp_path), "token")
    for i, name in enumerate(LOOK_ALIKE_BASELINES):
        assert auth.identify(f"Bearer tok-{i}") is None, name
        assert is_reserved_model_name(f"{name}: my model"), name
    for i, name in enumerate(ORDINARY):  # positive control: ordinary Chinese, Japanese, Korean, English
        assert auth.identify(f"Bearer tok-ok-{i}") == normalise_identity(name), name
        assert not is_reserved_model_name(f"{name} model"), name
    assert Auth(Config(data_dir=tmp_path), "open").identify(None, "Baseline") is None
    assert Auth(Config(data_dir=tmp_path), "open").identify(None, "alice") == "alice"
    svc = web_service(Config(data_dir=tmp_path))
    oauth = Resolver(svc, "oauth")
    assert oauth("", _Profile("Baseline")).name is None  # a Hub user named so is no one here
    assert oauth("", _Profile("alice")).name == "alice"


def test_a_look_alike_user_in_the_token_file_gets_no_identity_of_its_own(tmp_path: Path) -> None:
    """`аlice` (Cyrillic а) next to `alice` would get its own quota and pass for her: mixed-script names are
    refused, and so are two users of the file whose names look alike (either may be the impostor)."""
    import json

    (tmp_path / "tokens.json").write_text(
        json.dumps(
            {
                "tok-alice": "alice",
                "tok-mixed": "\u0430lice",  # Cyrillic а + Latin: mixed script
                "tok-coe": "coe",
                "tok-whole": "\u0441\u043e\u0435",  # all Cyrillic: one script, but looks like "coe"
                "tok-bob": "bob",
            }
        )
    )
    auth = Auth(Config(data_dir=tmp_path), "token")
    assert auth.identify("Bearer tok-mixed") is None
    assert auth.identify("Bearer tok-whole") is None and auth.identify("Bearer tok-coe") is None
    assert auth.identify("Bearer tok-alice") == "alice"  # positive controls
    assert auth.identify("Bearer tok-bob") == "bob"


class _Profile:
    def __init__(self, username: str) -> None:
        self.username = username
