"""Public test sets (../shared/spec/disclosure.md §1, §5): test status, no slices, the gold-match hold."""

from __future__ import annotations

import json

from tests.conftest_pipeline import DEMO, RecordingEnqueuer, baseline_file


def _gold_labels(track: str) -> bytes:
    rows = [
        json.loads(line) for line in (DEMO / track / "test.jsonl").read_text().splitlines() if line.strip()
    ]
    return "".join(json.dumps({"id": r["id"], "label": r["label"]}) + "\n" for r in rows).encode()


def test_a_public_test_holds_gold_copies_until_a_maintainer_releases_them(local_store, tmp_path):
    from worker.config import Config
    from worker.gold.install import install
    from worker.gold.publish import Publisher
    from worker.gold.references import GOLD_MATCH_REASON, ReferenceCache
    from worker.gold.scoring_job import score_submission
    from worker.service import Service

    store = local_store
    installed = install(store, "cold", DEMO / "cold", kind="demo", test_status="public")
    assert installed.test_status == "public" and "  test status: public" in installed.lines()
    service = Service(Config(data_dir=tmp_path / "data"), store, RecordingEnqueuer(), head_ttl=0)
    assert service.reference_set("cold")["test_status"] == "public"
    cache, publisher = ReferenceCache(store), Publisher(store)

    def upload(user: str, data: bytes) -> str:
        sid = service.submit(identity=user, track="cold", data=data, metadata={"model_name": user})[
            "submission_id"
        ]
        score_submission(store, cache.get, "cold", sid, time_limit=300)
        publisher.publish("cold")
        return sid

    copy, honest = upload("mallory", _gold_labels("cold")), upload("alice", baseline_file("cold", "lexicon"))
    held = service.submission(copy, viewer="mallory")
    assert held["status"] == "held" and held["error"] == GOLD_MATCH_REASON and held["result"] is None
    assert not any(ch.isdigit() for ch in GOLD_MATCH_REASON)  # no count, no agreement figure
    board = {r["submission_id"]: r for r in service.leaderboard("cold")["rows"]}
    assert copy not in board and honest in board  # positive control: an honest upload is published
    # A public test: the full test, exact (no slice, no rounding, no Ladder)
    result = service.submission(honest)["result"]["result"]
    assert "slice" not in result and result["rows"] == 1000
    # a maintainer releases it: scored as it was, then published
    service.release(copy, actor="maud", reason="a known oracle submission, shown as such")
    assert score_submission(store, cache.get, "cold", copy, time_limit=300) == "already"
    publisher.publish("cold")
    assert copy in {r["submission_id"] for r in service.leaderboard("cold")["rows"]}


def test_a_private_test_has_no_gold_match_hold(local_store, tmp_path):
    """On a private test the gold is nobody's to copy: an upload is scored whatever it agrees with."""
    from worker.config import Config
    from worker.gold.install import install
    from worker.gold.references import ReferenceCache
    from worker.gold.scoring_job import score_submission
    from worker.service import Service

    store = local_store
    install(store, "cold", DEMO / "cold", kind="demo")
    service = Service(Config(data_dir=tmp_path / "data"), store, RecordingEnqueuer())
    assert service.reference_set("cold")["test_status"] == "private"
    sid = service.submit(identity="a", track="cold", data=_gold_labels("cold"), metadata={"model_name": "a"})[
        "submission_id"
    ]
    assert score_submission(store, ReferenceCache(store).get, "cold", sid, time_limit=300) == "scored"


def test_importers_record_the_test_status_and_install_follows_it(tmp_path):
    from scoring import bundle_info
    from scoring.toxitrace.importers import import_dataset

    src = tmp_path / "COLDataset"
    src.mkdir()
    (src / "test.csv").write_text(
        ",split,topic,label,fine-grained-label,TEXT\n1,test,race,1,2,外国人都一个样\n"
    )
    import_dataset("cold", src, tmp_path / "bundle")
    assert bundle_info.test_status(tmp_path / "bundle") == "public"
    assert bundle_info.test_status(DEMO / "cold") is None  # the demo records none: private
