"""Releases (../shared/spec/disclosure.md §4, §6): finals, the cut, the frozen signed snapshot, verify."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scoring.api import score_file
from scoring.tracks import get_track
from scoring.verify import check_numbers, derived_columns
from tests.conftest_pipeline import DEMO, ROOT, RecordingEnqueuer
from tests.factories import mixed_predictions

SUBMITTERS, EACH = 20, 6


@pytest.fixture
def pipeline(local_store, tmp_path):
    from worker.config import Config
    from worker.gold.install import install
    from worker.gold.publish import Publisher
    from worker.gold.references import ReferenceCache
    from worker.gold.scoring_job import score_submission
    from worker.service import Service

    store = local_store
    install(store, "cold", DEMO / "cold", kind="demo")
    config = Config(data_dir=tmp_path / "data", quota_per_day=100, attempts_per_day=100)
    service = Service(config, store, RecordingEnqueuer())
    cache, publisher = ReferenceCache(store), Publisher(store)

    def upload(user: str, data: bytes, name: str) -> str:
        out = service.submit(identity=user, track="cold", data=data, metadata={"model_name": name})
        assert out["status"] == "queued", out
        assert score_submission(store, cache.get, "cold", out["submission_id"], time_limit=300) == "scored"
        return out["submission_id"]

    return store, service, publisher, upload


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "scoring", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


@pytest.mark.slow
def test_a_release_reveals_at_most_two_finals_per_submitter(pipeline, tmp_path):
    """20 submitters x 6 submissions (increasing skill, so the Ladder releases several of each): a release
    holds at most 2 rows per submitter, exactly the chosen finals where there is a choice; a private-slice
    number appears nowhere else in the results area."""
    from worker.gold.release import cut

    store, service, publisher, upload = pipeline
    ids: dict[str, list[str]] = {}
    for k in range(SUBMITTERS):
        user = f"user{k:02d}"
        ids[user] = [
            upload(user, mixed_predictions("cold", 0.1 + 0.15 * j, seed=f"{user}-{j}"), f"{user} m{j}")
            for j in range(EACH)
        ]
    publisher.publish("cold")
    released = {
        user: [s for s in sids if service.submission(s, viewer=user)["released"]]
        for user, sids in ids.items()
    }
    assert all(len(r) >= 2 for r in released.values())
    for k, user in enumerate(ids):
        if k % 2 == 0:
            assert service.set_finals(user, "cold", released[user][:2]) == released[user][:2]

    release = cut(store, "cold", "2027-03", actor="maud")
    rows = json.loads(store.read("results", "releases/cold/2027-03/rows.json"))["rows"]
    by_user: dict[str, list[str]] = {}
    for row in rows:
        by_user.setdefault(row["submitter"], []).append(row["submission_id"])
    assert all(len(chosen) <= 2 for chosen in by_user.values()) and len(by_user) == SUBMITTERS
    for k, user in enumerate(ids):
        assert sorted(by_user[user]) == (sorted(released[user][:2]) if k % 2 == 0 else by_user[user])
    assert release["counts"] == {
        "submitters": SUBMITTERS,
        "finals": len(rows),
        "rows_scored": 700,
        "rows_full": 1000,
    }
    # ranks on the private slice, the live public rank beside them, and the Rank Delta
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    assert all(r["rank_delta"] == r["live_rank"] - r["rank"] for r in rows if r["live_rank"] is not None)
    # the full-test numbers beside them are exact: the scorer's, unrounded
    first = rows[0]
    data = store.read("submissions", f"cold/{first['submission_id']}/predictions.jsonl")
    full = score_file("cold", DEMO / "cold", data, bootstrap=0)["metrics"]
    assert first["full.f1"] == full["f1"] and first["full.accuracy"] == full["accuracy"]
    # private-slice numbers nowhere else: no other file at the results head carries a release row's value
    private_f1 = {json.dumps(r["f1"]) for r in rows if round(r["f1"], 3) != r["f1"]}  # unrounded ones
    assert len(private_f1) >= 10
    outside = [p for p in store.list("results", "") if not p.startswith("releases/")]
    for path in outside:
        text = (store.read("results", path) or b"").decode("utf-8", "replace")
        assert not any(f'"f1": {value}' in text or f'"f1":{value}' in text for value in private_f1), path


def test_a_release_is_frozen_signed_and_verifiable(pipeline, tmp_path):
    from worker.gold.release import ReleaseRefused, cut

    store, service, publisher, upload = pipeline
    alice = [
        upload("alice", (DEMO / "cold" / "baselines" / f"{n}.test.jsonl").read_bytes(), n)
        for n in ("lexicon", "char-ngram")
    ]
    bob = upload("bob", (DEMO / "cold" / "baselines" / "majority.test.jsonl").read_bytes(), "majority")
    publisher.publish("cold")
    with pytest.raises(ValueError):
        service.set_finals("alice", "cold", [alice[0], alice[1], bob])
    with pytest.raises(LookupError):
        service.set_finals("alice", "cold", [bob])  # not hers
    assert service.set_finals("alice", "cold", alice) == alice and service.finals("alice", "cold") == alice

    cut(store, "cold", "2027-03", actor="maud")
    folder = tmp_path / "release"
    folder.mkdir()
    for path in store.list("results", "releases/cold/2027-03/"):
        (folder / Path(path).name).write_bytes(store.read("results", path))
    key = store.read("results", "keys/ed25519.pub").decode()
    before = {p: store.read("results", p) for p in store.list("results", "releases/")}
    assert sorted(Path(p).name for p in before) == [
        "CITATION.cff",
        "citation.bib",
        "release.json",
        "rows.json",
        "rows.parquet",
    ]
    assert "@misc{varm-leaderboard-cold-2027-03" in before["releases/cold/2027-03/citation.bib"].decode()
    # tagged: the tag names the commit that holds the release, and reads it by name after later commits
    tagged = store.tags("results")["cold-2027-03"]
    assert (
        store.read("results", "releases/cold/2027-03/release.json", tagged)
        == before["releases/cold/2027-03/release.json"]
    )

    ok = _cli("verify", str(folder), "--public-key", key)
    assert ok.returncode == 0 and ok.stdout.strip().splitlines()[-1].startswith("OK: 3 row(s)"), ok.stdout
    # one byte of a row changed: refused, naming the row
    rows = json.loads((folder / "rows.json").read_text())
    tampered = {**rows["rows"][0], "full.f1": rows["rows"][0]["full.f1"] - 0.001}
    (tmp_path / "row.json").write_text(json.dumps(tampered))
    bad = _cli("verify", str(tmp_path / "row.json"), "--public-key", key)
    assert bad.returncode == 1 and "signature does not match" in bad.stdout
    # another key: refused
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from scoring.signatures import public_key_text

    other = _cli("verify", str(folder), "--public-key", public_key_text(Ed25519PrivateKey.generate()))
    assert other.returncode == 1
    # re-derived from the predictions and the (here: known) references: the field that differs is named
    sid = tampered["submission_id"]
    (tmp_path / "p.jsonl").write_bytes(store.read("submissions", f"cold/{sid}/predictions.jsonl"))
    derive = [
        "--track",
        "cold",
        "--predictions",
        str(tmp_path / "p.jsonl"),
        "--references",
        str(DEMO / "cold"),
    ]
    named = _cli("verify", str(tmp_path / "row.json"), "--public-key", key, *derive)
    assert named.returncode == 1 and "field full.f1 differs" in named.stdout
    (tmp_path / "good.json").write_text(json.dumps(rows["rows"][0]))
    assert _cli("verify", str(tmp_path / "good.json"), "--public-key", key, *derive).returncode == 0

    # frozen: the same name is refused; a later publish or re-score leaves every byte of it
    with pytest.raises(ReleaseRefused):
        cut(store, "cold", "2027-03", actor="maud")
    upload("carol", mixed_predictions("cold", 0.5, seed="carol"), "carol")
    publisher.publish("cold", export=True)
    assert {p: store.read("results", p) for p in store.list("results", "releases/")} == before
    assert get_track("cold").primary_metric == "f1"
    assert store.head("results") != tagged and store.tags("results")["cold-2027-03"] == tagged  # never moves
    assert store.list("results", "releases/", "cold-2027-03") == sorted(before)


def test_releases_over_rest(pipeline):
    from fastapi.testclient import TestClient

    from space.auth import Auth
    from space.server import create_app
    from worker.gold.release import cut

    store, service, publisher, upload = pipeline
    client = TestClient(
        create_app(service.config, service=service, auth=Auth(service.config, "open"), with_ui=False)
    )
    first_key = client.get("/api/v1/keys").json()["ed25519"]  # published with the first publish
    sid = upload("alice", (DEMO / "cold" / "baselines" / "lexicon.test.jsonl").read_bytes(), "lexicon")
    publisher.publish("cold")
    answer = client.put(
        "/api/v1/me/finals",
        params={"track": "cold"},
        json={"submission_ids": [sid]},
        headers={"X-User": "alice"},
    )
    assert answer.status_code == 200 and answer.json()["finals"] == [sid]
    refused = client.put(
        "/api/v1/me/finals",
        params={"track": "cold"},
        json={"submission_ids": [sid]},
        headers={"X-User": "bob"},
    )
    assert refused.status_code == 404
    cut(store, "cold", "2027-03", actor="maud")
    listed = client.get("/api/v1/releases").json()["releases"]
    assert [(r["track"], r["name"]) for r in listed] == [("cold", "2027-03")]
    body = client.get("/api/v1/releases/cold/2027-03").json()
    assert [r["submission_id"] for r in body["rows"]] == [sid] and body["release"]["counts"]["finals"] == 1
    assert client.get("/api/v1/releases/cold/2099-01").status_code == 404
    assert client.get("/api/v1/keys").json()["ed25519"] == body["release"]["public_key"] == first_key


def test_cli_cuts_a_release_and_refuses_a_taken_name(pipeline, tmp_path):
    import os

    store, service, publisher, upload = pipeline
    upload("alice", (DEMO / "cold" / "baselines" / "lexicon.test.jsonl").read_bytes(), "lexicon")
    publisher.publish("cold")
    env = {**os.environ, "DATA_DIR": str(tmp_path / "data")}

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "worker", *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    done = cli("release", "cut", "--track", "cold", "--name", "2027-04")
    assert done.returncode == 0 and "cold release 2027-04: 1 finals of 1 submitters" in done.stdout, (
        done.stderr
    )
    again = cli("release", "cut", "--track", "cold", "--name", "2027-04")
    assert again.returncode == 1 and "never changed" in again.stderr and "Traceback" not in again.stderr
    bad = cli("release", "cut", "--track", "cold", "--name", "March")
    assert bad.returncode == 1 and "named like 2027-03" in bad.stderr


def test_every_published_result_is_signed_and_verifies(pipeline, tmp_path):
    """Each result envelope at the results head verifies against the published key; one changed byte of the
    result, of the signature or of the key fails (positive control: the untouched one passes)."""
    store, service, publisher, upload = pipeline
    for name in ("lexicon", "char-ngram"):
        upload(name, (DEMO / "cold" / "baselines" / f"{name}.test.jsonl").read_bytes(), name)
    publisher.publish("cold")
    key = store.read("results", "keys/ed25519.pub").decode().strip()
    envelopes = [p for p in store.list("results", "cold/results/") if p.endswith(".json")]
    assert len(envelopes) == 2
    for k, path in enumerate(envelopes):
        (tmp_path / f"e{k}.json").write_bytes(store.read("results", path))
        ok = _cli("verify", str(tmp_path / f"e{k}.json"), "--public-key", key)
        assert ok.returncode == 0, ok.stdout
    envelope = json.loads((tmp_path / "e0.json").read_text())
    # Re-deriving a live (public-slice) envelope is refused with the reason, not a traceback; a full result's
    # envelope re-derives (its own numbers pass, another file's do not: positive control).
    sid = envelope["submission"]["submission_id"]
    (tmp_path / "own.jsonl").write_bytes(store.read("submissions", f"cold/{sid}/predictions.jsonl"))
    derive = [
        "--track",
        "cold",
        "--references",
        str(DEMO / "cold"),
        "--predictions",
        str(tmp_path / "own.jsonl"),
    ]
    live = _cli("verify", str(tmp_path / "e0.json"), "--public-key", key, *derive)
    assert envelope["result"]["slice"] == "public"
    assert live.returncode == 2 and "public slice" in live.stderr and "Traceback" not in live.stderr
    full = score_file("cold", DEMO / "cold", (tmp_path / "own.jsonl").read_bytes(), bootstrap=0)
    assert check_numbers({"result": full}, derived_columns(full)) == []
    other = (DEMO / "cold" / "baselines" / "majority.test.jsonl").read_bytes()
    assert check_numbers(
        {"result": full}, derived_columns(score_file("cold", DEMO / "cold", other, bootstrap=0))
    )
    changed = {**envelope, "result": {**envelope["result"], "rows": envelope["result"]["rows"] + 1}}
    (tmp_path / "changed.json").write_text(json.dumps(changed))
    assert _cli("verify", str(tmp_path / "changed.json"), "--public-key", key).returncode == 1
    signature = envelope["signature"]
    forged = {**envelope, "signature": ("A" if signature[0] != "A" else "B") + signature[1:]}
    (tmp_path / "forged.json").write_text(json.dumps(forged))
    assert _cli("verify", str(tmp_path / "forged.json"), "--public-key", key).returncode == 1
    other_key = ("A" if key[0] != "A" else "B") + key[1:]
    assert _cli("verify", str(tmp_path / "e0.json"), "--public-key", other_key).returncode != 0


def test_a_maintainer_cuts_over_rest_and_the_feed_carries_releases_and_rescores(
    pipeline, tmp_path, monkeypatch
):
    """Issue 24: `POST /api/v1/releases/{track}` (maintainers) sends the same cut as the CLI to a worker;
    the Atom feed of the track carries one entry per release and per published re-score and validates with
    a standard parser; a release cut under an older scorer offers an erratum and is never changed."""
    import feedparser
    from fastapi.testclient import TestClient

    import worker.service.reads
    from space.auth import Auth
    from space.server import create_app
    from worker.config import Config
    from worker.gold.references import ReferenceCache
    from worker.gold.release import cut
    from worker.gold.rescore import chunks_done, finalize, plan, score_chunk, stamp
    from worker.service import Service

    store, _, publisher, upload = pipeline
    upload("alice", (DEMO / "cold" / "baselines" / "lexicon.test.jsonl").read_bytes(), "lexicon")
    publisher.publish("cold")
    enqueue = RecordingEnqueuer()
    config = Config(data_dir=tmp_path / "data", maintainers=("maud",))
    service = Service(config, store, enqueue, head_ttl=0)
    client = TestClient(create_app(config, service=service, auth=Auth(config, "open"), with_ui=False))

    def post(name: str, user: str):
        return client.post("/api/v1/releases/cold", json={"name": name}, headers={"X-User": user})

    assert post("2027-05", "bob").status_code == 403
    assert post("May 2027", "maud").status_code == 422
    sent = post("2027-05", "maud")
    assert sent.status_code == 202 and enqueue.sent == [("release", "cold", "2027-05", "maud")], sent.text
    cut(store, *enqueue.sent[0][1:3], actor="maud")  # what the worker's task does with the message
    assert post("2027-05", "maud").status_code == 409  # a release never changes
    body = client.get("/api/v1/releases/cold/2027-05").json()
    assert body["erratum_due"] is False

    run = stamp()  # a published re-score
    for index, chunk in enumerate(plan(store, "cold")):
        score_chunk(store, ReferenceCache(store).get("cold"), "cold", run, index, chunk, False)
    finalize(store, publisher, "cold", run, "maud", False, chunks_done(store, "cold", run))
    answer = client.get("/api/v1/feeds/cold.atom")
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("application/atom+xml")
    feed = feedparser.parse(answer.content)
    assert not feed.bozo, feed.bozo_exception
    titles = [entry.title for entry in feed.entries]
    assert "Release 2027-05 of cold" in titles and any("re-scored" in t for t in titles), titles
    report = next(e for e in feed.entries if "re-scored" in e.title).link
    assert client.get(report.replace("http://testserver", "")).json()["run"] == run
    assert client.get("/api/v1/feeds/nope.atom").status_code == 404

    # the live board names the latest release; a row submitted after the cut is provisional
    time.sleep(1.1)  # dates have one-second resolution: the next upload is strictly after the cut
    later = upload("bob", (DEMO / "cold" / "baselines" / "majority.test.jsonl").read_bytes(), "majority")
    publisher.publish("cold")
    board = client.get("/api/v1/leaderboard", params={"track": "cold", "baselines": "false"}).json()
    assert board["latest_release"]["name"] == "2027-05"
    flags = {row["submission_id"]: row["provisional"] for row in board["rows"]}
    assert flags[later] is True and not any(v for sid, v in flags.items() if sid != later), flags
    from space.ui.state import load_board_frame
    from space.ui.tables import mark

    _, frame = load_board_frame(service, "cold")  # the UI's board: the same rows, marked in the Mark column
    marks = {row["submission_id"]: mark(row, "en") for _, row in frame.iterrows()}
    assert "provisional" in marks[later] and not any(
        "provisional" in m for s, m in marks.items() if s != later
    )

    monkeypatch.setattr(worker.service.reads, "SCORER_VERSION", "99.0.0")  # a metric fix since the cut
    assert client.get("/api/v1/releases/cold/2027-05").json()["erratum_due"] is True


def test_notices_say_what_a_rescore_and_a_release_changed_for_their_owner(pipeline, tmp_path):
    """Issue 24.6: My submissions' notices: the owner's rows of the latest published re-score (primary metric
    and rank, old -> new, with the report's link) and of the latest release; nobody else's."""
    from worker.gold.release import cut
    from worker.store import codec, layout

    store, service, publisher, upload = pipeline
    mine = upload("alice", (DEMO / "cold" / "baselines" / "lexicon.test.jsonl").read_bytes(), "lexicon")
    theirs = upload("bob", (DEMO / "cold" / "baselines" / "char-ngram.test.jsonl").read_bytes(), "char-ngram")
    publisher.publish("cold")
    cut(store, "cold", "2027-06", actor="maud")
    report = {
        "track": "cold",
        "run": "20990101T000000Z",
        "generated_at": "2099-01-01T00:00:00Z",
        "scorer_version": "9.0.0",
        "summary": {"submissions": 2, "rescored": 2, "rank_changes": 2},
        "submissions": [
            {
                "submission_id": mine,
                "model_name": "lexicon",
                "skipped": False,
                "old": {"f1": 0.5},
                "new": {"f1": 0.6},
                "delta": {"f1": 0.1},
                "old_rank": 2,
                "new_rank": 1,
            },
            {
                "submission_id": theirs,
                "model_name": "char-ngram",
                "skipped": False,
                "old": {"f1": 0.7},
                "new": {"f1": 0.55},
                "delta": {"f1": -0.15},
                "old_rank": 1,
                "new_rank": 2,
            },
        ],
    }
    store.commit(
        "results", {layout.rescore_report("cold", report["run"]): codec.pretty(report)}, [], "a report"
    )
    notices = service.notices("alice")
    rescore = next(n for n in notices if n["kind"] == "rescore")
    assert (rescore["old"], rescore["new"], rescore["old_rank"], rescore["new_rank"]) == (0.5, 0.6, 2, 1)
    assert rescore["link"] == f"/api/v1/rescore/cold/{report['run']}"
    release = next(n for n in notices if n["kind"] == "release")
    assert release["release"] == "2027-06" and release["submission_id"] == mine
    assert {n["submission_id"] for n in notices} == {mine}  # bob's rows are his notices, not alice's
    assert {n["submission_id"] for n in service.notices("bob")} == {theirs}


def test_an_owner_withdraws_a_published_entry_and_puts_it_back(pipeline):
    """Issue 28.6: no way to take a published entry back. `POST /api/v1/submissions/{id}/withdraw` (its
    submitter only) makes it private: off the board at the next publish; make-public puts it back."""
    from fastapi.testclient import TestClient

    from space.auth import Auth
    from space.server import create_app

    store, service, publisher, upload = pipeline
    client = TestClient(
        create_app(service.config, service=service, auth=Auth(service.config, "open"), with_ui=False)
    )
    sid = upload("alice", (DEMO / "cold" / "baselines" / "lexicon.test.jsonl").read_bytes(), "lexicon")
    publisher.publish("cold")

    service.head_ttl = 0.0  # every read sees the latest publish

    def on_board() -> bool:
        rows = client.get("/api/v1/leaderboard?track=cold").json()["rows"]
        return sid in {r["submission_id"] for r in rows}

    assert on_board()
    path = f"/api/v1/submissions/{sid}/withdraw"
    assert client.post(path, headers={"X-User": "bob"}).status_code in (403, 404)  # not his
    assert on_board()
    assert client.post(path, headers={"X-User": "alice"}).status_code == 200
    publisher.publish("cold")
    assert not on_board() and client.get(f"/api/v1/submissions/{sid}").status_code == 404  # private now
    assert client.get(f"/api/v1/submissions/{sid}", headers={"X-User": "alice"}).json()["private"] is True
    back = client.post(f"/api/v1/submissions/{sid}/make-public", headers={"X-User": "alice"})
    assert back.status_code == 200
    publisher.publish("cold")
    assert on_board()


def test_make_public_twice_says_the_second_time_it_already_was(pipeline, monkeypatch, capsys):
    """Issue 28.15a: `make-public` on an entry that is already public claimed a change. The service, the
    REST answer and the CLI say whether anything changed: the second call reads "already public"."""
    from fastapi.testclient import TestClient

    from space.auth import Auth
    from space.server import create_app
    from varm_client import cli

    store, service, publisher, upload = pipeline
    app = create_app(service.config, service=service, auth=Auth(service.config, "open"), with_ui=False)
    client = TestClient(app)
    alice = {"X-User": "alice"}
    first = upload("alice", (DEMO / "cold" / "baselines" / "lexicon.test.jsonl").read_bytes(), "lexicon")
    second = upload("alice", (DEMO / "cold" / "baselines" / "majority.test.jsonl").read_bytes(), "majority")
    for sid in (first, second):
        assert client.post(f"/api/v1/submissions/{sid}/withdraw", headers=alice).json()["changed"] is True

    # The service and the REST answer: made public once, then nothing to do.
    path = f"/api/v1/submissions/{first}/make-public"
    answers = [client.post(path, headers=alice) for _ in range(2)]
    assert [a.status_code for a in answers] == [200, 200]
    assert [a.json()["changed"] for a in answers] == [True, False]
    assert [a.json()["hidden"] for a in answers] == [False, False]
    assert service.make_public(first, identity="alice")["changed"] is False
    assert client.post(f"/api/v1/submissions/{first}/withdraw", headers=alice).json()["changed"] is True
    assert client.post(f"/api/v1/submissions/{first}/withdraw", headers=alice).json()["changed"] is False

    # The CLI (`varm make-public ID`) against the same app: the second run prints "already public".
    monkeypatch.setattr(cli, "_client", lambda args, timeout=30: TestClient(app, headers=alice))
    printed = []
    for _ in range(2):
        assert cli.main(["make-public", second]) == 0
        printed.append(capsys.readouterr().out.strip())
    assert printed == [f"{second}: {cli.MADE_PUBLIC}", f"{second}: {cli.ALREADY_PUBLIC}"], printed
    assert "already public" in printed[1] and "joins the board" not in printed[1]
