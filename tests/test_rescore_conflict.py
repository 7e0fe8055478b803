"""A re-score chunk whose commit loses the race to another commit is built again on the new head: the
records found there as they were keep the version attached the first time (no second pack, dumps and seal
of their files), one whose record changed meanwhile gets a version attached to that record. Positive
control: the same chunk without the race attaches each version once too, with the same stored bytes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest_pipeline import RecordingEnqueuer, baseline_file, seed_store
from worker.config import Config
from worker.gold import rescore
from worker.gold.references import ReferenceCache
from worker.gold.scoring_job import score_submission
from worker.records import noted, rows_path, sealed_result_path, staged_result_path
from worker.service import Service
from worker.store import open_store
from worker.store.base import ConflictError
from worker.submissions import record_files

OLD = "1.0.0"


def _stored(tmp_path: Path, demo_dir: Path, name: str) -> tuple:
    config = Config(data_dir=tmp_path / name)
    seed_store(config, demo_dir)
    store = open_store(config)
    service = Service(config, store, RecordingEnqueuer())
    sids = []
    for i, base in enumerate(("lexicon", "majority", "char-ngram")):
        data = baseline_file("varm", base)
        sid = service.submit(identity=f"u{i}", track="varm", data=data, metadata={"model_name": base})
        sids.append(sid["submission_id"])
        assert (
            score_submission(store, ReferenceCache(store).get, "varm", sids[-1], time_limit=300) == "scored"
        )
    records = []
    for sid in sids:  # as after a scorer upgrade
        record = json.loads(store.read("submissions", f"varm/{sid}/submission.json"))
        record["versions"][0]["scorer_version"] = OLD
        records.append(record)
    store.commit("submissions", record_files(store, store.head("submissions"), records), [], "test: old")
    return store, sids


def _files(store, sids: list[str]) -> dict[str, bytes | None]:
    paths = [p("varm", sid, 2) for sid in sids for p in (staged_result_path, rows_path, sealed_result_path)]
    return {p: store.read("submissions", p) for p in paths}


@pytest.mark.parametrize("race", [False, True])
def test_a_chunk_built_again_after_a_conflict_attaches_each_version_once(
    tmp_path: Path, demo_dir: Path, monkeypatch: pytest.MonkeyPatch, race: bool
) -> None:
    store, sids = _stored(tmp_path, demo_dir, "race" if race else "plain")
    attached: list[str] = []
    real_attach = rescore.attach_version
    monkeypatch.setattr(
        rescore,
        "attach_version",
        lambda record, *a, **k: attached.append(record["submission_id"]) or real_attach(record, *a, **k),
    )
    real_commit = store.commit
    raced: list[str] = []

    def commit(area, add, delete, message, parent=None):
        if race and not raced and message.startswith("rescore"):
            # another writer lands first: it touches the third record (a note), nothing of the others
            record = json.loads(store.read("submissions", f"varm/{sids[2]}/submission.json"))
            other = noted(record, "another writer")
            real_commit(area, record_files(store, store.head(area), [other]), [], "another writer")
            raced.append(message)
            raise ConflictError("lost the race")
        return real_commit(area, add, delete, message, parent)

    monkeypatch.setattr(store, "commit", commit)
    pinned = ReferenceCache(store).get("varm")
    chunk = rescore.score_chunk(store, pinned, "varm", rescore.stamp(), 0, sids, False)
    assert [chunk[sid]["new_version"] for sid in sids] == [2, 2, 2]
    assert bool(raced) == race
    assert attached == (sids + [sids[2]] if race else sids)  # the changed record's version attached again
    for sid in sids:
        record = json.loads(store.read("submissions", f"varm/{sid}/submission.json"))
        assert [v["version"] for v in record["versions"]] == [1, 2]
    third = json.loads(store.read("submissions", f"varm/{sids[2]}/submission.json"))
    assert any(h["note"] == "another writer" for h in third["history"]) == race
    assert all(_files(store, sids).values())
