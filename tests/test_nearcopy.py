"""The near-copy probe guard (issue 11, item 3): a file that differs from an earlier submission on the same
track in only a few rows is held for review, unscored, with a reason that names nobody; a maintainer
releases (scored as usual) or rejects it. Real LocalStore; a recording enqueuer stands in for Celery except
in the end-to-end test, which runs a real worker subprocess.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from space.auth import Auth
from space.server import create_app
from tests import conftest_pipeline as pipeline
from tests.conftest_pipeline import RecordingEnqueuer, baseline_file, seed_store
from worker import nearcopy
from worker.config import Config
from worker.errors import NotHeld
from worker.gold.reconcile import reconcile
from worker.gold.scoring_job import score_submission
from worker.service import Service
from worker.store import WEB_AREAS, open_store

COLD = baseline_file("cold", "lexicon")  # 200 rows: a near-copy differs in fewer than 10
VARM = baseline_file("varm", "char-ngram")


def flipped(data: bytes, rows: list[int]) -> bytes:
    """The COLD predictions with the labels of `rows` (0-based) flipped."""
    lines = [json.loads(line) for line in data.decode().splitlines() if line.strip()]
    for k in rows:
        lines[k]["label"] = 1 - lines[k]["label"]
    return "".join(json.dumps(obj) + "\n" for obj in lines).encode()


@pytest.fixture
def service(tmp_path: Path, demo_dir: Path) -> Service:
    """A web-process Service over a seeded LocalStore; its enqueuer records instead of sending."""
    config = Config(data_dir=tmp_path / "data", quota_per_day=20, attempts_per_day=50, maintainers=("boss",))
    seed_store(config, demo_dir)
    return Service(config, open_store(config, areas=WEB_AREAS), RecordingEnqueuer())


@pytest.fixture
def enqueuer(service: Service) -> RecordingEnqueuer:
    return service.enqueue  # type: ignore[return-value]


@pytest.fixture
def client(service: Service) -> TestClient:
    return TestClient(
        create_app(service.config, service=service, auth=Auth(service.config, "open"), with_ui=False)
    )


def post(client: TestClient, data: bytes, user: str, track: str = "cold", name: str = "m"):
    return client.post(
        "/api/v1/submissions",
        data={"track": track, "model_name": name},
        files={"file": ("p.jsonl", data)},
        headers={"X-User": user},
    )


def scored_ids(enqueuer: RecordingEnqueuer) -> list[str]:
    return [sid for kind, _track, sid in enqueuer.sent if kind == "score"]


def test_one_row_flip_of_another_identity_is_held_unscored_and_names_nobody(client, service, enqueuer):
    original = post(client, COLD, "bob-the-first", name="bob's model").json()
    assert original["status"] == "queued"
    response = post(client, flipped(COLD, [17]), "mallory")
    assert response.status_code == 202
    body = response.json()
    assert body["status"] == "held"
    assert body["reason"].startswith(
        "differs from an earlier submission in only a few rows; near-copies reveal "
        "hidden labels, so they are held for review"
    )
    assert not any(ch.isdigit() for ch in body["reason"])  # no count of the differing rows (spec §3)
    sid = body["submission_id"]
    assert sid not in scored_ids(enqueuer) and original["submission_id"] in scored_ids(enqueuer)
    page = client.get(f"/api/v1/submissions/{sid}")
    shown = page.json()
    assert shown["status"] == "held" and shown["result"] is None and shown["versions"] == []
    assert shown["error"] == body["reason"]
    # Nothing the submitter can read names the other submission or submitter.
    for text in (response.text, page.text):
        assert "bob" not in text and original["submission_id"] not in text and "near_copy" not in text
    # A stray scoring message (e.g. redelivered) does not score it either: held is not pending.
    assert score_submission(service.store, None, "cold", sid, time_limit=10) == "final"


def test_one_row_flip_of_ones_own_submission_is_held(client, enqueuer):
    first = post(client, COLD, "alice").json()
    held = post(client, flipped(COLD, [3]), "alice").json()
    assert (first["status"], held["status"]) == ("queued", "held")
    assert held["submission_id"] not in scored_ids(enqueuer)
    nine = post(client, flipped(COLD, list(range(100, 109))), "alice").json()
    assert nine["status"] == "held" and "in only a few rows" in nine["reason"]


def test_a_file_differing_in_a_third_of_its_rows_publishes_as_usual(client, enqueuer):
    post(client, COLD, "bob")
    third = post(client, flipped(COLD, list(range(0, 200, 3))), "alice").json()  # 67 of 200 rows
    assert third["status"] == "queued" and third["submission_id"] in scored_ids(enqueuer)
    # The limit is max(10, 1 % of rows): 10 differing rows are no longer a near-copy (the positive control
    # of the 9-row case above).
    ten = post(client, flipped(COLD, list(range(150, 160))), "carol").json()
    assert ten["status"] == "queued"


def test_identical_files_keep_the_duplicate_behaviour(client, enqueuer):
    first = post(client, COLD, "alice").json()
    again = post(client, COLD, "ALICE")
    assert again.status_code == 200 and again.json()["duplicate"] is True
    assert again.json()["submission_id"] == first["submission_id"]
    # The same predictions in another file from the same submitter differ in no row: scored.
    same = post(client, pipeline.variant(COLD, 3), "alice").json()
    assert same["status"] == "queued" and same["submission_id"] in scored_ids(enqueuer)
    # From someone else: a copy of another submitter's file is held (issue 23), naming nobody.
    copy = post(client, pipeline.variant(COLD, 5), "bob").json()
    # (held as a copy, or as a near-copy of an earlier test's flipped file on this shared service)
    assert copy["status"] == "held" and copy["reason"] in (nearcopy.COPY_OF_ANOTHER, nearcopy.held_reason(0))
    assert copy["submission_id"] not in scored_ids(enqueuer) and "alice" not in copy["reason"]


def flip_first_harmful(lines: list[dict]) -> None:
    """One VARM label changed: the first output (of the first 20) that says harmful says harmless."""
    k = next(i for i, obj in enumerate(lines[:20]) if "[L:有害]" in obj["output"])
    lines[k]["output"] = lines[k]["output"].replace("[L:有害]", "[L:无害]")


def test_near_copies_of_baselines_and_on_varm_are_held(service, client):
    service.submit(
        identity="baseline", track="varm", data=VARM, metadata={"model_name": "baseline-x"}, is_baseline=True
    )
    lines = [json.loads(line) for line in VARM.decode().splitlines() if line.strip()]
    flip_first_harmful(lines)
    changed = "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in lines).encode()
    assert changed != VARM
    body = post(client, changed, "mallory", track="varm").json()
    assert body["status"] == "held" and "in only a few rows" in body["reason"]
    # Whitespace around an output changes nothing the scorer reads: identical predictions, so a copy of the
    # baseline's file, held as a copy of another submitter's rather than as a near-copy.
    lines = [json.loads(line) for line in VARM.decode().splitlines() if line.strip()]
    lines[9]["output"] = "  " + lines[9]["output"] + "  "
    padded = "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in lines).encode()
    copy = post(client, padded, "carol", track="varm").json()
    # (a copy of a baseline's file is scored like it; here a near-copy of mallory's probe is around)
    assert copy["status"] in ("queued", "held")


def test_maintainer_release_and_reject_through_rest(client, service, enqueuer):
    post(client, COLD, "bob")
    a = post(client, flipped(COLD, [1]), "mallory").json()["submission_id"]
    b = post(client, flipped(COLD, [2]), "mallory").json()["submission_id"]
    assert client.get("/api/v1/held", headers={"X-User": "mallory"}).status_code == 403
    assert client.post(f"/api/v1/submissions/{a}/release", headers={"X-User": "mallory"}).status_code == 403
    held = client.get("/api/v1/held", params={"track": "cold"}, headers={"X-User": "boss"}).json()["held"]
    assert {h["submission_id"] for h in held} == {a, b}
    assert all(h["rows_differing"] in (1, 2) and h["near_copy_of"] for h in held)

    released = client.post(
        f"/api/v1/submissions/{a}/release", json={"reason": "a real model"}, headers={"X-User": "boss"}
    )
    assert released.status_code == 200 and released.json()["status"] == "queued"
    assert a in scored_ids(enqueuer)
    assert client.get(f"/api/v1/submissions/{a}").json()["error"] is None
    again = client.post(f"/api/v1/submissions/{a}/release", headers={"X-User": "boss"})
    assert again.status_code == 409

    assert (
        client.post(
            f"/api/v1/submissions/{b}/reject", json={"reason": ""}, headers={"X-User": "boss"}
        ).status_code
        == 422
    )
    rejected = client.post(
        f"/api/v1/submissions/{b}/reject", json={"reason": "label probe"}, headers={"X-User": "boss"}
    )
    assert rejected.status_code == 200 and rejected.json()["status"] == "rejected"
    assert b not in scored_ids(enqueuer)
    assert client.get(f"/api/v1/submissions/{b}").json()["error"] == "rejected after review: label probe"
    assert (
        client.post("/api/v1/submissions/0123456789abcdef/release", headers={"X-User": "boss"}).status_code
        == 404
    )
    assert service.held("cold") == []
    with pytest.raises(NotHeld):
        service.reject(a, actor="boss", reason="late")


def test_reconciler_leaves_held_submissions_alone(service):
    service.submit(identity="bob", track="cold", data=COLD, metadata={"model_name": "m"})
    held = service.submit(identity="eve", track="cold", data=flipped(COLD, [0]), metadata={"model_name": "m"})
    assert held["status"] == "held"
    lost = RecordingEnqueuer()
    summary = reconcile(service.store, lost, stuck_after=0)
    assert held["submission_id"] not in summary["requeued"] + summary["failed"]
    assert ("score", "cold", held["submission_id"]) not in lost.sent
    assert service.submission(held["submission_id"])["status"] == "held"


def test_held_submissions_use_a_quota_slot(tmp_path, demo_dir):
    config = Config(data_dir=tmp_path / "data", quota_per_day=2, attempts_per_day=50)
    seed_store(config, demo_dir)
    service = Service(config, open_store(config, areas=WEB_AREAS), RecordingEnqueuer())
    service.submit(identity="eve", track="cold", data=COLD, metadata={"model_name": "m"})
    held = service.submit(identity="eve", track="cold", data=flipped(COLD, [0]), metadata={"model_name": "m"})
    assert held["status"] == "held"
    assert service.quota("eve", "cold")["remaining"] == 0
    service.reject(held["submission_id"], actor="boss", reason="label probe")
    assert service.quota("eve", "cold")["remaining"] == 0  # a rejected probe still cost its slot


def test_index_candidates_and_band_rule() -> None:
    """The band filter never misses a near-copy (pigeonhole) and keeps unrelated files out."""
    import numpy as np

    rows = 5323
    d = nearcopy.max_differing(rows)
    assert d == 53 and nearcopy.is_near_copy(53, rows) and not nearcopy.is_near_copy(54, rows)
    assert nearcopy.max_differing(200) == 9 and not nearcopy.is_near_copy(0, 200)
    rng = np.random.default_rng(0)
    base = rng.integers(0, 2, rows)
    keys = [str(v) for v in base]
    bands = nearcopy.band_count(rows)
    sig = nearcopy.band_signature(nearcopy.row_hashes(keys), bands)
    worst = base.copy()
    worst[np.linspace(0, rows - 1, d).astype(int)] ^= 1  # d differences spread over d different bands
    worst_sig = nearcopy.band_signature(nearcopy.row_hashes([str(v) for v in worst]), bands)
    assert np.count_nonzero(sig == worst_sig) >= bands - d
    other = rng.integers(0, 2, rows)
    other_sig = nearcopy.band_signature(nearcopy.row_hashes([str(v) for v in other]), bands)
    assert np.count_nonzero(sig == other_sig) < bands - d


@pytest.mark.slow
def test_released_near_copy_is_scored_and_published_by_a_real_worker(tmp_path, demo_dir, workers):
    config = Config(data_dir=tmp_path / "data", maintainers=("boss",))  # embedded SQLite broker
    seed_store(config, demo_dir)
    workers.append(pipeline.WorkerProcess(pipeline.worker_env(config), tmp_path / "worker.log").start())
    client = TestClient(create_app(config, auth=Auth(config, "open"), with_ui=False))

    def status(sid: str) -> dict:
        return client.get(f"/api/v1/submissions/{sid}").json()

    first = post(client, COLD, "bob").json()["submission_id"]
    pipeline.wait_for(lambda: status(first)["status"] == "published", 60, what="the original to publish")
    probe = post(client, flipped(COLD, [42]), "mallory").json()
    assert probe["status"] == "held"
    third = post(client, flipped(COLD, list(range(1, 200, 3))), "carol").json()["submission_id"]
    pipeline.wait_for(lambda: status(third)["status"] == "published", 60, what="the 1/3-different file")
    held = status(probe["submission_id"])
    assert held["status"] == "held" and held["result"] is None  # the worker never scored it
    board = {r["submission_id"] for r in client.get("/api/v1/leaderboard?track=cold").json()["rows"]}
    assert board == {first, third}

    client.post(f"/api/v1/submissions/{probe['submission_id']}/release", headers={"X-User": "boss"})
    pipeline.wait_for(lambda: status(probe["submission_id"])["status"] == "published", 60, what="the release")
    assert status(probe["submission_id"])["result"]["result"]["metrics"]["f1"] is not None
    board = {r["submission_id"] for r in client.get("/api/v1/leaderboard?track=cold").json()["rows"]}
    assert probe["submission_id"] in board


def test_submit_tab_and_submission_page_show_held_with_its_reason() -> None:
    from space.ui.submission import TERMINAL, status_line

    reason = nearcopy.held_reason(3)
    line = status_line({"status": "held", "error": reason}, "en")
    assert line.startswith("**held**") and "differs from an earlier submission in only a few rows" in line
    assert status_line({"status": "held", "error": reason}, "zh").startswith("**待审**")
    # The submit answer carries "reason".
    assert status_line({"status": "held", "reason": reason}, "en") == line
    assert "held" in TERMINAL  # the status timer stops: a maintainer, not a worker, moves it on


def test_reindex_covers_submissions_stored_before_the_guard(service, client):
    """An upgraded store: a submission written without a fingerprint is invisible to the guard until
    `index_earlier_submissions` (python -m worker reindex) adds it; then its near-copies are held."""
    service.submit(identity="bob", track="cold", data=COLD, metadata={"model_name": "m"})
    guard_files = [
        p
        for p in service.store.list("submissions")
        if p.endswith("/fingerprint.bin") or p.startswith("nearcopy/")
    ]
    service.store.commit("submissions", {}, guard_files, "as stored before the near-copy guard")
    service = Service(service.config, service.store, service.enqueue)  # a fresh process: no cached index
    assert (
        service.submit(identity="eve", track="cold", data=flipped(COLD, [11]), metadata={"model_name": "m"})[
            "status"
        ]
        == "queued"
    )  # the control: unseen
    assert service.index_earlier_submissions("cold") == 1  # bob's; eve's upload indexed itself
    assert service.index_earlier_submissions("cold") == 0  # idempotent
    held = service.submit(
        identity="mallory", track="cold", data=flipped(COLD, [22]), metadata={"model_name": "m"}
    )
    assert held["status"] == "held" and "in only a few rows" in held["reason"]


def test_score_neutral_edits_do_not_make_a_probe_look_new(client):
    """Padding a one-row probe with edits that change no score (target spelling that target F1 cannot see,
    spans on a track whose references have none) must not get it past the guard."""
    post(client, VARM, "bob", track="varm")
    lines = [json.loads(line) for line in VARM.decode().splitlines() if line.strip()]
    flip_first_harmful(lines)  # the probe: one label
    padded = 0
    for obj in lines[20:80]:
        target = obj["output"].split("[T:", 1)[1].split("]", 1)[0] if "[T:" in obj["output"] else ""
        if len(target) >= 2 and target != "无明确对象":  # same characters, another order: same target F1
            swapped = f"[T:{target[1]} {target[0]}{target[2:]}]"  # also a space: normalised away
            obj["output"] = obj["output"].replace(f"[T:{target}]", swapped, 1)
            padded += 1
    assert padded > 16
    probe = "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in lines).encode()
    body = post(client, probe, "mallory", track="varm").json()
    assert body["status"] == "held" and "in only a few rows" in body["reason"]

    post(client, COLD, "bob")
    rows = [json.loads(line) for line in flipped(COLD, [9]).decode().splitlines()]
    for obj in rows[100:180]:
        obj["spans"] = [[0, 1]]  # COLD scores no spans
    spanned = "".join(json.dumps(o) + "\n" for o in rows).encode()
    assert post(client, spanned, "mallory").json()["status"] == "held"


def test_a_held_probe_sent_again_is_held_again(client, service, enqueuer):
    """Issue 22: the guard stopped at the first identical earlier file and let a held probe through when it
    was sent again. Now an exact copy inherits the hold of a held, rejected, private or hidden twin."""
    post(client, COLD, "bob")
    probe = flipped(COLD, [41])
    first = post(client, probe, "mallory").json()
    assert first["status"] == "held"
    # the same probe by another identity: a copy of another submitter's (held) file
    assert post(client, pipeline.variant(probe, 2), "mallory2").json()["status"] == "held"
    # by the same identity with other separators (other bytes, the same predictions)
    spaced = probe.replace(b'":', b'": ').replace(b",", b", ")
    assert spaced != probe
    again = post(client, spaced, "mallory").json()
    assert again["status"] == "held" and again["reason"] in (
        nearcopy.COPY_OF_CONCEALED,
        nearcopy.held_reason(0),
    )
    # after a maintainer rejected it
    service.reject(first["submission_id"], actor="maud", reason="a probe")
    after = post(client, pipeline.variant(probe, 7), "mallory").json()
    assert after["status"] == "held" and after["submission_id"] not in scored_ids(enqueuer)
    # positive control: mallory's own copy of her own scored file is scored
    own = post(client, flipped(COLD, list(range(0, 200, 2))), "mallory").json()
    assert own["status"] == "queued"
    assert (
        post(client, pipeline.variant(flipped(COLD, list(range(0, 200, 2))), 1), "mallory").json()["status"]
        == "queued"
    )


def test_copies_are_held_for_what_their_twin_is(client, service, enqueuer):
    """Without any near-copy around: a copy of another submitter's file is held as such; a copy of one's
    own private file is held like it; one's own copy of a public, scored file is scored."""
    mine = post(client, COLD, "alice").json()
    assert post(client, pipeline.variant(COLD, 1), "bob").json()["reason"] == nearcopy.COPY_OF_ANOTHER
    private = flipped(COLD, list(range(0, 1000, 3)))
    response = client.post(
        "/api/v1/submissions",
        data={"track": "cold", "model_name": "p", "private": "true"},
        files={"file": ("p.jsonl", private)},
        headers={"X-User": "carol"},
    )
    assert response.json()["status"] == "queued"
    again = post(client, pipeline.variant(private, 2), "carol").json()
    assert again["status"] == "held" and again["reason"] == nearcopy.COPY_OF_CONCEALED
    own = post(client, pipeline.variant(COLD, 4), "alice").json()  # positive control
    assert own["status"] == "queued" and mine["status"] == "queued"


def test_a_copy_of_a_baseline_is_scored(service, client, enqueuer):
    """The project's baselines are public files, there to be tried: a copy of one is no copy of another
    submitter's (positive control: a copy of a user's file is held)."""
    service.submit(
        identity="baseline", track="cold", data=COLD, metadata={"model_name": "b"}, is_baseline=True
    )
    tried = post(client, pipeline.variant(COLD, 2), "newcomer").json()
    assert tried["status"] == "queued" and tried["submission_id"] in scored_ids(enqueuer)
    other = flipped(COLD, list(range(0, 1000, 4)))
    post(client, other, "alice")
    assert post(client, pipeline.variant(other, 1), "bob").json()["reason"] == nearcopy.COPY_OF_ANOTHER


def test_char_scores_padding_below_the_quantum_does_not_hide_a_probe(service, client, enqueuer):
    """Issue 22: on CNTP, adding 1e-9 to other rows' `char_scores` (or writing -0.0 for 0) made a one-label
    probe look new at no cost. The guard keys rows on the quantised scores the scorer reads, so it is held;
    a real change of the scores (positive control) is a new file and scored."""
    from worker.gold.install import install

    install(open_store(service.config), "cntp", pipeline.DEMO / "cntp", kind="demo")
    cntp = baseline_file("cntp", "char-ngram")
    post(client, cntp, "bob", track="cntp")
    rows = [json.loads(line) for line in cntp.decode().splitlines() if line.strip()]
    rows[3]["label"] = 1 - rows[3]["label"]  # the probe

    def with_scores(change) -> bytes:
        edited = [{**row, "char_scores": [change(v) for v in row["char_scores"]]} for row in rows]
        return "".join(json.dumps(row) + "\n" for row in edited).encode()

    padded = with_scores(lambda v: -0.0 if v == 0 else v + 1e-9)
    assert padded.count(b"-0.0") + padded.count(b"e-09") > 100  # the padding is really there
    held = post(client, padded, "mallory", track="cntp").json()
    assert held.get("status") == "held" and "in only a few rows" in held["reason"], held
    assert held["status"] == "held" and "in only a few rows" in held["reason"], held
    assert held["submission_id"] not in scored_ids(enqueuer)

    moved = with_scores(lambda v: round(v + 0.05, 3))  # every score moves by 50 quanta: another file
    assert post(client, moved, "mallory", track="cntp").json()["status"] == "queued"


@pytest.mark.parametrize("track", ["varm", "cold", "cntp"])
def test_one_parse_gives_the_report_and_the_keys_the_two_calls_give(track):
    """An upload is parsed once (`check_with_keys`); the report and the near-copy keys are exactly what
    `check_predictions` and `prediction_keys` give, and an invalid file has a report and no keys."""
    from scoring.tracks import get_track
    from worker.gold.seed import DEMO_DIR

    scorer = get_track(track)
    refs_path, subsets = DEMO_DIR / track / "test.jsonl", DEMO_DIR / track / "subsets"
    inputs = scorer.public_inputs(scorer.load_references(refs_path, subsets if subsets.is_dir() else None))
    data = baseline_file(track, "char-ngram")
    report, keys = scorer.check_with_keys(data, inputs)
    assert report.as_dict() == scorer.check_predictions(data, inputs).as_dict() and report.valid
    assert keys == scorer.prediction_keys(data, inputs) and len(keys) == len(inputs)
    broken = data.replace(b"\n", b"\nnot json\n", 1)
    report, keys = scorer.check_with_keys(broken, inputs)
    assert keys is None and not report.valid
    assert report.as_dict() == scorer.check_predictions(broken, inputs).as_dict()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_held_upload_says_it_used_a_slot_and_why(tmp_path, demo_dir, lang):
    """Issue 28.14: a held upload keeps its quota slot (a probe must cost what a submission costs); the held
    message says so, and why, in the page's language: the submit answer's status line and the submission
    page's, for a near-copy and for an exact copy of another's file. A failed or rejected one does not."""
    from space.ui.i18n import t
    from space.ui.submission import status_line

    config = Config(data_dir=tmp_path / "data", quota_per_day=3, attempts_per_day=50)
    seed_store(config, demo_dir)
    service = Service(config, open_store(config, areas=WEB_AREAS), RecordingEnqueuer())
    service.submit(identity="eve", track="cold", data=COLD, metadata={"model_name": "m"})
    near = service.submit(identity="eve", track="cold", data=flipped(COLD, [0]), metadata={"model_name": "m"})
    copy = service.submit(
        identity="mallory", track="cold", data=flipped(COLD, [0]), metadata={"model_name": "m"}
    )
    assert [near["status"], copy["status"]] == ["held", "held"]
    assert (
        service.quota("eve", "cold")["remaining"] == 1 and service.quota("mallory", "cold")["remaining"] == 2
    )
    said = t("held_slot", lang)
    assert said != "held_slot" and ("slot" in said) == (lang == "en") and ("名额" in said) == (lang == "zh")
    for answer in (near, copy):
        page = service.submission(answer["submission_id"])  # held: not hidden, anyone may read its page
        assert page is not None and answer["reason"]
        for line in (
            status_line({"status": "held", "reason": answer["reason"]}, lang),
            status_line(page, lang),
        ):
            assert line.startswith(f"**{t('st_held', lang)}**") and said in line, line
    for status in ("rejected", "failed"):
        assert said not in status_line({"status": status, "error": "rejected after review: spam"}, lang)
