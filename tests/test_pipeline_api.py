"""The web process's REST API over a real store (LocalStore), with a recording enqueuer instead of Celery."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from scoring.tracks import get_track
from space.auth import Auth
from space.server import create_app
from tests.conftest_pipeline import DEMO, RecordingEnqueuer, baseline_file, seed_store, variant
from worker.config import Config
from worker.service import Service
from worker.store import WEB_AREAS, StoreError, open_store
from worker.token_file import ensure_token_file

VALID = baseline_file("varm")


@pytest.fixture
def config(tmp_path: Path, demo_dir: Path) -> Config:
    cfg = Config(data_dir=tmp_path / "data", quota_per_day=2, attempts_per_day=4)
    seed_store(cfg, demo_dir)
    return cfg


@pytest.fixture
def enqueuer() -> RecordingEnqueuer:
    return RecordingEnqueuer()


@pytest.fixture
def service(config: Config, enqueuer: RecordingEnqueuer) -> Service:
    return Service(config, open_store(config, areas=WEB_AREAS), enqueuer)


def client_for(config: Config, service: Service, mode: str = "open", **options) -> TestClient:
    return TestClient(create_app(config, service=service, auth=Auth(config, mode), with_ui=False, **options))


@pytest.fixture
def client(config: Config, service: Service) -> TestClient:
    return client_for(config, service)


def submit(client: TestClient, data: bytes, user: str = "alice", track: str = "varm", **fields):
    form = {"track": track, "model_name": "m", **fields}
    return client.post(
        "/api/v1/submissions", data=form, files={"file": ("p.jsonl", data)}, headers={"X-User": user}
    )


def submission_files(service: Service) -> list[str]:
    return [p for p in service.store.list("submissions") if not p.startswith("identities/")]


def test_valid_upload_is_stored_queued_then_sent(client, service, enqueuer):
    response = submit(
        client,
        VALID,
        organisation="Lab",
        model_type="open",
        setting="zero-shot",
        paper_url="https://example.org/p",
    )
    assert response.status_code == 202, response.text
    sid = response.json()["submission_id"]
    assert response.json()["status"] == "queued" and len(sid) == 16
    assert enqueuer.sent == [("score", "varm", sid)]
    record = json.loads(service.store.read("submissions", f"varm/{sid}/submission.json"))
    assert record["status"] == "queued" and record["submitter"] == "alice"
    assert [h["status"] for h in record["history"]] == ["received", "queued"]
    assert record["metadata"]["paper_url"] == "https://example.org/p"
    assert service.store.read("submissions", f"varm/{sid}/predictions.jsonl") == VALID
    body = client.get(f"/api/v1/submissions/{sid}").json()
    assert body["status"] == "queued" and body["result"] is None


def test_malformed_upload_gives_line_numbers_and_stores_nothing(client, service, enqueuer):
    bad = VALID.split(b"\n", 1)[0] + b"\n{not json\n"
    response = submit(client, bad)
    assert response.status_code == 422
    body = response.json()
    assert body["errors_total"] >= 1 and any(e["line"] == 2 for e in body["errors"])
    assert {"line", "field", "message"} <= set(body["errors"][0]) and "advice" in body
    assert submission_files(service) == [] and enqueuer.sent == []
    quota = client.get("/api/v1/quota", params={"track": "varm"}, headers={"X-User": "alice"}).json()
    assert quota["attempts"]["used"] == 1 and quota["used"] == 0


def test_duplicate_upload_returns_existing_id_case_insensitively(client, enqueuer):
    first = submit(client, VALID, user="Alice").json()
    again = submit(client, VALID, user="alice")
    assert again.status_code == 200
    assert again.json()["submission_id"] == first["submission_id"] and again.json()["duplicate"] is True
    assert len(enqueuer.sent) == 1
    other = submit(client, VALID, user="bob")  # same file, another submitter: a new submission
    assert other.status_code == 202 and other.json()["submission_id"] != first["submission_id"]


def test_quota_gives_429_with_next_slot(client, service):
    first = submit(client, variant(VALID, 1))
    assert first.status_code == 202
    assert submit(client, variant(VALID, 2)).status_code == 202
    over = submit(client, variant(VALID, 3))
    assert over.status_code == 429
    body = over.json()
    created = json.loads(
        service.store.read("submissions", f"varm/{first.json()['submission_id']}/submission.json")
    )["created_at"]
    expected = datetime.fromisoformat(created.replace("Z", "+00:00")) + timedelta(hours=24)
    slot = datetime.fromisoformat(body["next_slot_at"].replace("Z", "+00:00"))
    assert body["kind"] == "quota" and abs((slot - expected).total_seconds()) <= 1
    assert 86000 < int(over.headers["Retry-After"]) <= 86400
    assert submit(client, baseline_file("cold"), track="cold").status_code == 202  # per-track quota
    assert submit(client, variant(VALID, 3), user="carol").status_code == 202  # per-submitter quota


def test_rejected_uploads_use_attempts_not_quota(client):
    for n in range(4):
        assert submit(client, b"{bad\n" * (n + 1)).status_code == 422
    capped = submit(client, VALID)
    assert capped.status_code == 429 and capped.json()["kind"] == "attempts"
    assert "Retry-After" in capped.headers


def test_upload_over_the_size_cap_is_413(config, service):
    client = client_for(config, service, max_file_bytes=1000)
    response = submit(client, VALID[:5000])
    assert response.status_code == 413
    assert submission_files(service) == []


def test_metadata_is_validated(client):
    bad_url = submit(client, VALID, paper_url="javascript:alert(1)")
    assert bad_url.status_code == 422 and bad_url.json()["errors"][0]["field"] == "paper_url"
    no_name = submit(client, VALID, model_name="")
    assert no_name.status_code == 422 and no_name.json()["errors"][0]["field"] == "model_name"
    long_name = submit(client, VALID, model_name="x" * 101)
    assert long_name.status_code == 422
    control = submit(client, VALID, model_name="a\x07b")
    assert control.status_code == 422
    unknown_track = submit(client, VALID, track="nope")
    assert unknown_track.status_code == 422 and unknown_track.json()["errors"][0]["field"] == "track"


def test_unknown_and_malformed_ids_are_404(client):
    assert client.get("/api/v1/submissions/0123456789abcdef").status_code == 404
    assert client.get("/api/v1/submissions/..%2F..%2Fetc").status_code == 404
    assert client.get("/api/v1/submissions/ZZZ").status_code == 404


def test_leaderboard_public_files_validate_health(client):
    board = client.get("/api/v1/leaderboard", params={"track": "varm"}).json()
    assert board["rows"] == [] and board["primary_metric"] == "jrem"
    assert client.get("/api/v1/leaderboard", params={"track": "nope"}).status_code == 404
    inputs = client.get("/api/v1/public/varm/test_inputs.jsonl")
    assert inputs.status_code == 200 and set(json.loads(inputs.text.splitlines()[0])) == {"id", "text"}
    assert client.get("/api/v1/public/varm/test.jsonl").status_code == 404
    assert client.get("/api/v1/public/varm/dev.jsonl").status_code == 200
    report = client.post("/api/v1/validate", data={"track": "varm"}, files={"file": ("p", VALID)}).json()
    assert report["valid"] is True and report["rows"] == 2000
    health = client.get("/api/v1/health").json()
    assert health == {"ok": True, "store": "ok", "broker": "ok", "disk": "ok", "sandbox": "off"}
    paths = client.get("/openapi.json").json()["paths"]
    assert {
        "/api/v1/submissions",
        "/api/v1/submissions/{submission_id}",
        "/api/v1/leaderboard",
        "/api/v1/health",
        "/api/v1/validate",
        "/api/v1/public/{track}/{name}",
    } <= set(paths)


def test_web_store_cannot_read_references(service):
    with pytest.raises(StoreError):
        service.store.read("references", "varm/test.jsonl")


def test_local_token_auth(config, service):
    token = ensure_token_file(config.data_dir)
    assert token and ensure_token_file(config.data_dir) is None  # created once
    client = client_for(config, service, mode="token")
    form = {"track": "varm", "model_name": "m"}
    anonymous = client.post("/api/v1/submissions", data=form, files={"file": ("p", VALID)})
    assert anonymous.status_code == 401
    wrong = client.post(
        "/api/v1/submissions",
        data=form,
        files={"file": ("p", VALID)},
        headers={"Authorization": "Bearer nope"},
    )
    assert wrong.status_code == 401
    ok = client.post(
        "/api/v1/submissions",
        data=form,
        files={"file": ("p", VALID)},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert ok.status_code == 202
    assert client.get(f"/api/v1/submissions/{ok.json()['submission_id']}").json()["submitter"] == "local"


def test_hub_auth_uses_whoami(fakehub_url, tmp_path):
    from tests.conftest_hub import WRITE_TOKEN

    auth = Auth(Config(data_dir=tmp_path, hf_endpoint=fakehub_url), "hub")
    assert auth.identify(f"Bearer {WRITE_TOKEN}") == "tester"
    assert auth.identify("Bearer not-a-token") is None
    assert auth.identify(None) is None


def test_quota_next_slot_is_iso(service):
    state = service.quota("alice", "varm")
    assert state["remaining"] == 2 and state["next_slot_at"] is None


def test_oversized_body_is_refused_while_streaming(config, service):
    client = client_for(config, service, max_file_bytes=1000)
    response = submit(client, b"x" * 200_000)  # beyond the cap plus form overhead: stopped by the middleware
    assert response.status_code == 413 and "limit" in response.json()["detail"]
    assert submission_files(service) == []


class BrokenBroker(RecordingEnqueuer):
    def score(self, track: str, submission_id: str) -> None:
        raise ConnectionError("broker down")

    def ping(self) -> bool:
        return False


def test_broker_down_still_accepts_and_health_says_so(config):
    service = Service(config, open_store(config, areas=WEB_AREAS), BrokenBroker())
    client = client_for(config, service)
    response = submit(client, VALID)
    assert response.status_code == 202  # stored as queued; the reconciler sends it once the broker is back
    sid = response.json()["submission_id"]
    assert client.get(f"/api/v1/submissions/{sid}").json()["status"] == "queued"
    health = client.get("/api/v1/health")
    assert health.status_code == 503 and health.json()["broker"] == "unreachable"


def test_a_failed_submission_can_be_sent_again(client, service):
    first = submit(client, VALID).json()["submission_id"]
    path = f"varm/{first}/submission.json"
    rec = json.loads(service.store.read("submissions", path))
    service.store.commit("submissions", {path: json.dumps({**rec, "status": "failed"}).encode()}, [], "test")
    again = submit(client, VALID)
    assert again.status_code == 202 and again.json()["submission_id"] != first
    assert submit(client, VALID).json()["submission_id"] == again.json()["submission_id"]  # now a duplicate


def test_accepted_upload_keeps_its_format_report(client, service):
    """Intake keeps the gold-independent format report (line, id, issues) and advice of an ACCEPTED upload,
    in the upload's own commit, and `Service.submission` / GET /submissions/{id} return it."""
    lines = VALID.decode().splitlines()
    bad = {3: "garbage", 7: None}  # line 7: the real output with full-width brackets (advice names it)
    ids = {}
    for line in bad:
        obj = json.loads(lines[line - 1])
        obj["output"] = bad[line] or obj["output"].replace("[", "【").replace("]", "】")
        ids[line] = obj["id"]
        lines[line - 1] = json.dumps(obj, ensure_ascii=False)
    data = ("\n".join(lines) + "\n").encode()
    head = service.store.head("submissions")
    response = submit(client, data)
    assert response.status_code == 202, response.text
    sid = response.json()["submission_id"]
    # One commit holds the upload, its record and its format report.
    assert service.store.read("submissions", f"varm/{sid}/format_report.json", head) is None
    commits = service.store.head("submissions")
    assert service.store.read("submissions", f"varm/{sid}/predictions.jsonl", commits) == data
    stored = json.loads(service.store.read("submissions", f"varm/{sid}/format_report.json", commits))
    expected = get_track("varm").check_predictions(data, service.public_inputs("varm"))
    assert [e["line"] for e in stored["entries"]] == [3, 7] and stored["total"] == 2
    assert [e["id"] for e in stored["entries"]] == [ids[3], ids[7]]
    assert stored["entries"] == expected.format_report
    assert "missing_analysis_prefix" in stored["entries"][0]["issues"]
    assert any("full-width brackets" in a for a in stored["advice"]) and stored["advice"] == expected.advice
    # Gold-independent: nothing from the references (gold outputs/labels) is in it.
    gold = [json.loads(r) for r in (DEMO / "varm" / "test.jsonl").read_text("utf-8").splitlines()]
    text = json.dumps(stored, ensure_ascii=False)
    assert not any(row["cot"] in text or row["target"] in text for row in gold if row["id"] in ids.values())
    # Exposed by the Service and the REST API.
    assert service.submission(sid)["format_report"] == stored
    assert client.get(f"/api/v1/submissions/{sid}").json()["format_report"] == stored
    # A clean VARM upload has an empty report; ToxiTrace (no format protocol) has none.
    clean = submit(client, VALID, user="bob").json()["submission_id"]
    assert service.submission(clean)["format_report"] == {"entries": [], "total": 0, "advice": []}
    tox = submit(client, baseline_file("cold"), user="bob", track="cold")
    assert tox.status_code == 202, tox.text
    tox_id = tox.json()["submission_id"]
    assert service.submission(tox_id)["format_report"] is None
    assert service.store.read("submissions", f"cold/{tox_id}/format_report.json") is None


def test_format_report_is_capped():
    from scoring.report import Report
    from worker.service import FORMAT_REPORT_MAX, format_report_of

    entries = [{"line": i + 1, "id": f"r{i}", "issues": ["x"]} for i in range(FORMAT_REPORT_MAX + 5)]
    out = format_report_of(Report(format_report=entries, advice=["a"]))
    assert len(out["entries"]) == FORMAT_REPORT_MAX and out["entries"][-1]["line"] == FORMAT_REPORT_MAX
    assert out["total"] == FORMAT_REPORT_MAX + 5 and out["advice"] == ["a"]
