"""'My submissions' (issue 16 item 5): `Service.my_submissions` and `GET /api/v1/me/submissions` over a real
store, with submissions scored by the worker's own scoring job and published by the real Publisher."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from space.auth import Auth
from space.server import create_app
from tests.conftest_pipeline import RecordingEnqueuer, baseline_file, seed_store
from tests.factories import mixed_predictions
from worker.config import Config
from worker.own import OwnSubmission
from worker.service import Service
from worker.store import open_store


@pytest.fixture
def scored(tmp_path: Path, demo_dir: Path):
    """alice: a public and a private VARM upload (both scored, published) and a queued COLD one; bob: one."""
    from worker.gold.publish import Publisher
    from worker.gold.references import ReferenceCache
    from worker.gold.scoring_job import score_submission

    config = Config(data_dir=tmp_path / "data", quota_per_day=10, attempts_per_day=20)
    seed_store(config, demo_dir)
    store = open_store(config)  # every area: this test plays the worker too
    service = Service(config, store, RecordingEnqueuer())
    refs = ReferenceCache(store)

    def submit(user: str, track: str, data: bytes, name: str, private: bool = False) -> str:
        out = service.submit(
            identity=user, track=track, data=data, metadata={"model_name": name}, private=private
        )
        assert out["status"] == "queued", out
        return out["submission_id"]

    ids = {
        "public": submit("alice", "varm", baseline_file("varm", "lexicon"), "alice-public"),
        # better than her first by far: the Ladder releases it (to her: it stays private)
        "private": submit(
            "alice", "varm", baseline_file("varm", "char-ngram"), "alice-private", private=True
        ),
        # his own file (a copy of alice's would be held as a copy of another submitter's)
        "bob": submit("bob", "varm", mixed_predictions("varm", 0.3, seed="bob"), "bob-model"),
    }
    for key in ("public", "private", "bob"):
        assert score_submission(store, refs.get, "varm", ids[key], time_limit=300) == "scored"
    Publisher(store).publish("varm")
    ids["queued"] = submit("alice", "cold", baseline_file("cold", "lexicon"), "alice-cold")
    return service, ids


def test_my_submissions_lists_only_the_callers_own_newest_first(scored):
    service, ids = scored
    mine = service.my_submissions("alice")
    assert all(isinstance(s, OwnSubmission) for s in mine)
    assert [s.submission_id for s in mine] == [ids["queued"], ids["private"], ids["public"]]
    assert ids["bob"] not in {s.submission_id for s in mine}  # negative control: someone else's
    assert [s.submission_id for s in service.my_submissions("bob")] == [ids["bob"]]
    # The same identity in another form (case, width) is the same submitter.
    assert [s.submission_id for s in service.my_submissions("ＡＬＩＣＥ")] == [s.submission_id for s in mine]
    assert [s.submission_id for s in service.my_submissions("alice", "cold")] == [ids["queued"]]
    assert len(service.my_submissions("alice", limit=1)) == 1
    assert service.my_submissions("nobody") == []


def test_my_submissions_show_status_scores_privacy_and_format_report(scored):
    service, ids = scored
    by_id = {s.submission_id: s for s in service.my_submissions("alice")}
    public, private, queued = by_id[ids["public"]], by_id[ids["private"]], by_id[ids["queued"]]
    assert public.status == "published" and not public.private and not public.hidden
    # Private: scored like any other, but hidden (and not on the board).
    assert private.private and private.hidden and private.status in ("scored", "published")
    board = {r["submission_id"] for r in service.leaderboard("varm")["rows"]}
    assert ids["public"] in board and ids["private"] not in board
    for sub in (public, private):
        assert sub.primary_metric == "jrem" and 0.0 <= sub.scores["jrem"] <= 1.0
        assert set(sub.scores) >= {"jrem", "her_c", "macro_f1.label"} and sub.result_version == 1
        assert sub.format_issues is not None and sub.format_issues >= 0  # VARM keeps a format report
        assert sub.link == f"?submission={sub.submission_id}"
    # The scores are the submission's own result (the one its page shows).
    page = service.submission(ids["public"], "alice")["result"]["result"]["metrics"]
    assert public.scores["jrem"] == pytest.approx(page["jrem"])
    assert queued.status == "queued" and queued.scores == {} and queued.result_version is None
    assert queued.format_issues is None and queued.primary_metric == "f1"  # ToxiTrace: no format protocol
    assert public.model_name == "alice-public" and private.model_name == "alice-private"


def test_making_a_private_submission_public_shows_in_my_submissions(scored):
    service, ids = scored
    service.make_public(ids["private"], identity="alice")
    (after,) = [s for s in service.my_submissions("alice") if s.submission_id == ids["private"]]
    assert not after.private and not after.hidden


def test_rest_lists_the_callers_own_submissions(scored, tmp_path: Path):
    service, ids = scored
    client = TestClient(
        create_app(service.config, service=service, auth=Auth(service.config, "open"), with_ui=False)
    )
    body = client.get("/api/v1/me/submissions", headers={"X-User": "alice"}).json()
    assert body["submitter"] == "alice"
    listed = [s["submission_id"] for s in body["submissions"]]
    assert listed == [ids["queued"], ids["private"], ids["public"]]
    private = body["submissions"][1]
    assert private["private"] is True and "jrem" in private["scores"]
    assert "near_copy" not in private and "submitter" not in private  # nothing beyond the owner's view
    only_cold = client.get("/api/v1/me/submissions", params={"track": "cold"}, headers={"X-User": "alice"})
    assert [s["submission_id"] for s in only_cold.json()["submissions"]] == [ids["queued"]]
    assert (
        client.get(
            "/api/v1/me/submissions", params={"track": "nope"}, headers={"X-User": "alice"}
        ).status_code
        == 404
    )
    bob = client.get("/api/v1/me/submissions", headers={"X-User": "bob"}).json()["submissions"]
    assert [s["submission_id"] for s in bob] == [ids["bob"]]


def test_rest_my_submissions_needs_a_token(scored):
    service, _ = scored
    client = TestClient(
        create_app(service.config, service=service, auth=Auth(service.config, "token"), with_ui=False)
    )
    response = client.get("/api/v1/me/submissions")
    assert response.status_code == 401
    assert client.get("/api/v1/me/submissions", headers={"Authorization": "Bearer wrong"}).status_code == 401


def test_a_my_submissions_refresh_keeps_a_pick_made_while_it_ran(scored):
    """The list refreshes after status ticks; one that started before the reader picked a private submission
    (it was sent no pick) must not clear that pick: it sends the choices only (seen as a flaky make-public on
    a loaded machine). A pick that is no longer private is cleared."""
    from types import SimpleNamespace

    from space.ui.app import build_app

    service, ids = scored
    app = build_app(service, auth_mode="open", warm=False)
    alice = SimpleNamespace(username="alice")
    dropdown = app.submit.mine_private
    started_before_the_pick = app.submit.my_submissions(None, "en", None, alice)[dropdown]
    assert "value" not in started_before_the_pick.constructor_args  # the pick on screen stays
    assert [sid for _, sid in started_before_the_pick.constructor_args["choices"]] == [ids["private"]]
    kept = app.submit.my_submissions(None, "en", ids["private"], alice)[dropdown]
    assert kept.constructor_args["value"] == ids["private"]  # positive control: a current pick is sent back
    service.make_public(ids["private"], identity="alice")
    cleared = app.submit.my_submissions(None, "en", ids["private"], alice)[dropdown]
    assert cleared.constructor_args["value"] is None and cleared.constructor_args["choices"] == []


def test_the_language_relabel_writes_a_checked_files_report_again_and_never_drops_one_it_did_not_see(
    scored, tmp_path: Path, monkeypatch
):
    """The relabel chain also runs on a page opened with ?lang=: a file checked while it ran lost its message
    (CI, issue 28.9's follow-up). Before any outcome the relabel leaves message and report alone; after a
    check it writes both again in the new language; a message with no report behind it goes. Positive
    control: the check's own message, in English, before the relabel to Chinese."""
    import gradio as gr

    from space.ui.app import build_app

    service, _ = scored
    app = build_app(service, auth_mode="open", warm=False)
    page = app.submit
    untouched = page.relabel_outcome("", "varm", None, None, "en")
    assert untouched[page.message] == gr.skip() and untouched[page.report] == gr.skip()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 7, "output": 3}\n')
    monkeypatch.setattr(page.ctx, "checked_upload", Path)  # the upload rules have tests of their own
    checked = page.validate("varm", str(bad), "en")
    assert "not valid" in checked[page.message] and checked[page.shown_report]["valid"] is False
    again = page.relabel_outcome("", "varm", checked[page.shown_report], None, "zh")
    assert "文件无效" in again[page.message] and "not valid" not in again[page.message]
    assert len(again[page.report]) == len(checked[page.report]) > 0
    assert list(again[page.report].columns) != list(checked[page.report].columns)  # headers in Chinese
    gone = page.relabel_outcome("", "varm", {}, None, "zh")
    assert gone[page.message] == "" and gone[page.report].empty


def test_an_entry_a_maintainer_hid_reads_so_to_its_owner_with_the_reason() -> None:
    """Issue 28.5: a hidden submission still read "published" to its owner and the maintainer's reason
    never reached them. Positive control: the owner's own private entry reads private, not hidden."""
    from space.ui.pages.submit import own_row
    from worker.own import PRIVATE_REASON, own_submission

    record = {
        "submission_id": "ab" * 8,
        "track": "cold",
        "status": "published",
        "created_at": "2026-12-01T00:00:00Z",
        "metadata": {"model_name": "m"},
        "hidden": True,
        "hidden_reason": "duplicate of an earlier entry",
    }
    hidden = own_row(own_submission(record, None, None), "en")[2]
    assert "hidden by a maintainer" in hidden and "duplicate of an earlier entry" in hidden, hidden
    private = own_row(own_submission({**record, "hidden_reason": PRIVATE_REASON}, None, None), "en")[2]
    assert "private" in private and "maintainer" not in private, private
