"""Hidden means hidden (issue 11, item 6), and no references revision in public view (item 1).

A submission hidden by a maintainer answers 404 / "not found" to the public and to other signed-in users
in the REST API and on the UI's submission page and status line, while its submitter and the maintainers
still see it (positive controls). At the results head (board, result envelopes, changelog, re-score
reports) a hidden submission is named nowhere, while visible ones stay.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest_pipeline import RecordingEnqueuer
from tests.conftest_ui import TOKENS, publish_demo_board
from tests.webproc import WebProcess, distinct_predictions, web_process
from worker.config import Config

ALICE, BOSS, CAROL = (next(t for t, u in TOKENS.items() if u == name) for name in ("alice", "boss", "carol"))


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebProcess]:
    yield from web_process(tmp_path_factory.mktemp("hidden"))


@pytest.fixture(scope="module")
def ui(web: WebProcess):
    from gradio_client import Client

    client = Client(web.url + "/", verbose=False)
    yield client
    client.close()


def rest(web: WebProcess, sid: str, token: str | None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.get(f"{web.url}/api/v1/submissions/{sid}", headers=headers, timeout=30)


def page_header(ui, sid: str, token: str) -> str:
    return ui.predict(sid, token, "en", api_name="/submission")[0]


@pytest.fixture(scope="module")
def hidden_sid(web: WebProcess, ui) -> str:
    r = httpx.post(
        f"{web.url}/api/v1/submissions",
        data={"track": "cold", "model_name": "carolsmodel"},
        files={"file": ("p.jsonl", distinct_predictions("cold", 1)[0])},
        headers={"Authorization": f"Bearer {CAROL}"},
        timeout=60,
    )
    assert r.status_code == 202, r.text
    sid = r.json()["submission_id"]
    # Visible before it is hidden (the checks below are not vacuous).
    assert rest(web, sid, None).status_code == 200
    assert "carolsmodel" in page_header(ui, sid, "")
    out = ui.predict(sid, "hide", "copied predictions", BOSS, "en", api_name="/maint_moderate")
    assert "now hidden" in out, out
    return sid


@pytest.mark.parametrize("who", [None, ALICE, "not-a-token"], ids=["anonymous", "other-user", "bad-token"])
def test_rest_hidden_is_404_to_others(web, hidden_sid, who) -> None:
    r = rest(web, hidden_sid, who)
    assert r.status_code == 404, (r.status_code, r.text[:300])
    assert "carolsmodel" not in r.text and "copied predictions" not in r.text


@pytest.mark.parametrize("who", [CAROL, BOSS], ids=["owner", "maintainer"])
def test_rest_hidden_shown_to_owner_and_maintainers(web, hidden_sid, who) -> None:
    r = rest(web, hidden_sid, who)
    assert r.status_code == 200, r.text
    assert r.json()["hidden"] is True and r.json()["metadata"]["model_name"] == "carolsmodel"


def test_ui_submission_page_and_status(ui, hidden_sid) -> None:
    for token in ("", ALICE):
        out = ui.predict(hidden_sid, token, "en", api_name="/submission")
        text = json.dumps(out, ensure_ascii=False)
        assert "No such submission" in out[0] and "carolsmodel" not in text and "copied" not in text
        status = ui.predict(hidden_sid, token, "en", api_name="/poll_status")[0]
        assert "queued" not in json.dumps(status), status
    for token in (CAROL, BOSS):
        assert "carolsmodel" in page_header(ui, hidden_sid, token)
        assert "queued" in json.dumps(ui.predict(hidden_sid, token, "en", api_name="/poll_status")[0])


def test_results_head_names_no_hidden_submission(tmp_path: Path) -> None:
    """Board, envelopes, changelog and an earlier re-score report at the head: no trace of a hidden
    submission after the publish that hides it; the visible submissions are all still there."""
    from worker.gold.publish import Publisher
    from worker.gold.references import ReferenceCache
    from worker.gold.rescore import finalize, plan, score_chunk, stamp
    from worker.service import Service
    from worker.store.local import LocalStore

    store = LocalStore(tmp_path)
    ids = publish_demo_board(store, "cold", 3)
    pinned = ReferenceCache(store).get("cold")
    run = stamp()
    chunks = [score_chunk(store, pinned, "cold", run, i, c, False) for i, c in enumerate(plan(store, "cold"))]
    finalize(store, Publisher(store), "cold", run, "boss", False, chunks)
    target = ids[4]

    def head_files() -> dict[str, bytes]:
        return {p: store.read("results", p) or b"" for p in store.list("results", "")}

    assert any(target.encode() in data for data in head_files().values())  # published before hiding
    service = Service(Config(data_dir=tmp_path, maintainers=("boss",)), store, RecordingEnqueuer())
    service.moderate(target, actor="boss", hidden=True, reason="probe")
    Publisher(store).publish("cold", note="hide")
    files = head_files()
    naming = sorted(p for p, data in files.items() if target.encode() in data)
    assert naming == [], naming
    for sid in ids:  # positive control: the others are on the board and in their own envelopes
        if sid != target:
            assert sid.encode() in files["cold/leaderboard.json"]
            assert any(p.startswith(f"cold/results/{sid}/") for p in files)
    assert any(p.startswith("rescore/cold/") for p in files) and target not in json.dumps(
        [json.loads(files[p]) for p in files if p.startswith("rescore/")]
    )


def test_no_references_revision_in_public_view(tmp_path: Path) -> None:
    """A scored submission's versions, as the REST API and the submission page get them, carry the
    references sha256 but not the private references area's revision (a path on the store's disk)."""
    from worker.service import Service
    from worker.store.local import LocalStore
    from worker.submissions import find_record

    store = LocalStore(tmp_path)
    sid = publish_demo_board(store, "cold", 1)[-1]
    revision = store.head("references")
    private = find_record(store, sid)
    assert private["versions"][0]["references_revision"] == revision  # the worker keeps it
    view = Service(Config(data_dir=tmp_path), store, RecordingEnqueuer()).submission(sid)
    assert view["versions"] and all("references_revision" not in v for v in view["versions"])
    assert view["versions"][0]["references_sha256"] == private["versions"][0]["references_sha256"]
    assert revision not in json.dumps(view)


def test_cli_status_sends_the_token(web, hidden_sid, tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    from tests.conftest_ui import ROOT

    def status(*extra: str) -> subprocess.CompletedProcess:
        env = {**os.environ, "DATA_DIR": str(tmp_path)}  # no tokens.json there: no default token
        env.pop("VARM_TOKEN", None)
        return subprocess.run(
            [sys.executable, "-m", "worker", "status", hidden_sid, "--api", web.url, *extra],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    public = status()
    assert public.returncode == 1 and "carolsmodel" not in public.stdout
    owner = status("--token", CAROL)
    assert owner.returncode == 0 and "carolsmodel" in owner.stdout, owner.stdout + owner.stderr
