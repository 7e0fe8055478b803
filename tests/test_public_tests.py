"""Public test sets (../shared/spec/disclosure.md §1, §5): test status, no slices, the gold-match hold."""

from __future__ import annotations

import json

import pytest

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


@pytest.mark.slow
def test_the_real_cold_installed_as_public_holds_its_own_gold_and_says_so(local_store, tmp_path):
    """Issue 23, "Done when": the real COLD release (5,323 test rows), imported by the importer (which
    records it as public) and installed; an upload of its gold labels ends `held` with the gold-match
    reason, and the board's banner says the test is public. A real model's upload (the char-ngram baseline
    fitted on COLD's train split) is published (positive control)."""
    from types import SimpleNamespace

    import pytest

    from baselines.run import run as run_baselines
    from scoring.toxitrace.importers import import_dataset
    from space.ui.pages.board import reference_banner
    from tests.realdata import cold_release
    from worker.config import Config
    from worker.gold.install import install
    from worker.gold.publish import Publisher
    from worker.gold.references import GOLD_MATCH_REASON, ReferenceCache
    from worker.gold.scoring_job import score_submission
    from worker.service import Service

    release = cold_release()
    if not release.is_dir():
        pytest.skip(f"real COLD release absent ({release}); it is not shipped with the project")
    bundle = tmp_path / "real" / "cold"
    import_dataset("cold", release, bundle)
    run_baselines(tmp_path / "real", tracks=("cold",), splits=("test",))
    installed = install(local_store, "cold", bundle, kind="real")
    assert installed.test_status == "public"
    service = Service(Config(data_dir=tmp_path / "data"), local_store, RecordingEnqueuer(), head_ttl=0)
    cache, publisher = ReferenceCache(local_store), Publisher(local_store)
    rows = [json.loads(line) for line in (bundle / "test.jsonl").read_text().splitlines() if line.strip()]
    assert len(rows) == 5323
    gold = "".join(json.dumps({"id": r["id"], "label": r["label"]}) + "\n" for r in rows).encode()
    model = (bundle / "baselines" / "char-ngram.test.jsonl").read_bytes()
    sids = {}
    for user, data in (("mallory", gold), ("alice", model)):
        sids[user] = service.submit(identity=user, track="cold", data=data, metadata={"model_name": user})[
            "submission_id"
        ]
        score_submission(local_store, cache.get, "cold", sids[user], time_limit=300)
    publisher.publish("cold")
    held = service.submission(sids["mallory"], viewer="mallory")
    assert held["status"] == "held" and held["error"] == GOLD_MATCH_REASON
    board = service.leaderboard("cold")
    assert [r["submission_id"] for r in board["rows"]] == [sids["alice"]]
    banner = reference_banner(SimpleNamespace(service=service), "cold", "en")
    assert "public" in banner and "self-reported" in banner, banner
