"""Tie groups stay cheap (issue 15 item 3): the published board's tie groups are recalled as paired-comparison
verdicts after a restart, so one new entry costs a few comparisons, and the board is the one a full
recomputation gives."""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.bootstrap import resample_count_table, resample_counts, resample_indices, resample_table
from scoring.tracks import get_track
from tests.conftest_ui import publish_demo_board
from tests.factories import mixed_predictions
from worker import live_board
from worker.config import Config
from worker.gold.publish import Publisher
from worker.gold.references import ReferenceCache
from worker.gold.scoring_job import score_submission
from worker.leaderboard import Entry, build_rows, known_verdicts
from worker.records import new_record, predictions_path, record_path
from worker.store import open_store
from worker.submissions import dumps

TRACK = "cold"


def entry(i: int, value: float) -> Entry:
    record = {
        "submission_id": f"{i:016x}",
        "created_at": f"2026-01-01T00:00:{i:02d}Z",
        "submitter": "u",
        "sha256": "0" * 64,
        "metadata": {},
    }
    version = {"version": 1, "scored_at": "", "scorer_version": "x", "references_sha256": ""}
    return Entry(record, version, {"metrics": {"f1": value}})


@given(st.lists(st.tuples(st.floats(0, 1), st.integers(0, 3)), min_size=1, max_size=30))
def test_known_verdicts_are_exactly_the_comparisons_made(spec) -> None:
    entries = [entry(i, value) for i, (value, _) in enumerate(spec)]
    gap = {e.key: g for e, (_, g) in zip(entries, spec, strict=True)}
    asked: dict = {}

    def below(leader: Entry, e: Entry) -> bool:  # an arbitrary but fixed answer per pair
        asked[(leader.key, e.key)] = verdict = (gap[e.key] + len(leader.key[0])) % 3 == 0
        return verdict

    rows = build_rows(entries, "f1", below)
    assert known_verdicts(rows) == asked


def test_resample_tables_are_shared_and_read_only() -> None:
    table = resample_table(50, 20, 7)
    assert table is resample_table(50, 20, 7) and not table.flags.writeable
    assert (table == resample_indices(50, 20, 7)).all()
    counts = resample_count_table(50, 20, 7)
    assert (counts == resample_counts(resample_indices(50, 20, 7), 50)).all() and not counts.flags.writeable
    with pytest.raises(ValueError):
        table[0, 0] = 1


@pytest.fixture
def counted(monkeypatch):
    """How many paired comparisons the COLD track runs (the real method, counted)."""
    track_cls = type(get_track(TRACK))
    real = track_cls.paired_compare
    calls = []

    def paired_compare(self, a, b, **kwargs):
        calls.append(1)
        return real(self, a, b, **kwargs)

    monkeypatch.setattr(track_cls, "paired_compare", paired_compare)
    return calls


def add_submission(store, i: int, quality: float) -> str:
    data = mixed_predictions(TRACK, quality, seed=1000 + i)
    sid = hashlib.sha256(f"extra-{i}".encode()).hexdigest()[:16]
    record = new_record(
        submission_id=sid,
        track=TRACK,
        sha256=hashlib.sha256(data).hexdigest(),
        submitter=f"late{i}",
        metadata={
            "model_name": f"late-{i}",
            "organisation": "",
            "model_type": "open",
            "setting": "zero-shot",
            "paper_url": "",
            "code_url": "",
            "description": "",
        },
        is_baseline=False,
        at=f"2026-12-01T00:00:{i:02d}.000Z",
    )
    store.commit(
        "submissions",
        {predictions_path(TRACK, sid): data, record_path(TRACK, sid): dumps(record)},
        [],
        f"test: late submission {i}",
    )
    assert score_submission(store, ReferenceCache(store).get, TRACK, sid, time_limit=120) == "scored"
    return sid


def test_a_restarted_publisher_compares_only_the_new_entry(tmp_path, counted) -> None:
    store = open_store(Config(data_dir=tmp_path / "data"))
    publish_demo_board(store, TRACK, 14)  # 17 rows
    full = len(counted)
    assert full >= 16  # positive control: building the board from nothing compares every row once

    sid = add_submission(store, 1, 0.6)
    restarted = Publisher(store)  # a new worker: nothing in memory
    counted.clear()
    out = restarted.publish(TRACK, note="one more")
    new_rows = len(counted)
    assert out["rows"] == 18 and sid in [a.split("/")[0] for a in out["added"]]
    assert new_rows <= 6, f"{new_rows} paired comparisons for one new entry"
    print(f"paired comparisons: {full} building 17 rows, {new_rows} for one new entry after a restart")

    # The board is the one a full recomputation (no recalled verdicts) gives.
    published = restarted.board(TRACK, restarted.entries(TRACK)[0])["rows"]
    scratch = Publisher(store)
    scratch.cache.recalled.add(TRACK)  # recall nothing: every verdict computed
    counted.clear()
    recomputed = scratch.board(TRACK, scratch.entries(TRACK)[0])["rows"]
    assert len(counted) >= 17 and recomputed == published
    stored = live_board.read(store, TRACK)[0]  # the live board (the exports may lag one entry)
    assert [(r["submission_id"], r["tie_group"]) for r in recomputed] == [
        (r["submission_id"], r["tie_group"]) for r in stored["rows"]
    ]


def test_a_board_from_another_scorer_version_is_not_recalled(tmp_path, monkeypatch) -> None:
    store = open_store(Config(data_dir=tmp_path / "data"))
    publish_demo_board(store, TRACK, 3)
    assert Publisher(store).recall_verdicts(TRACK) == 5  # positive control: 6 rows, 5 verdicts
    monkeypatch.setattr("worker.gold.publish.ranking.SCORER_VERSION", "0.0.0-other")
    assert Publisher(store).recall_verdicts(TRACK) == 0


def test_a_publish_reads_only_the_new_record(tmp_path, monkeypatch) -> None:
    """The board comes from the record index and the published rows; only the new record is read: for its
    envelope's public fields, then to mark it published."""
    store = open_store(Config(data_dir=tmp_path / "data"))
    publish_demo_board(store, TRACK, 5)  # 8 rows, all published
    sid = add_submission(store, 2, 0.4)
    reads: list[str] = []
    real_read = store.read

    def read(area, path, revision=None):
        if area == "submissions" and path.endswith("/submission.json"):
            reads.append(path)
        return real_read(area, path, revision)

    monkeypatch.setattr(store, "read", read)
    out = Publisher(store).publish(TRACK, note="one more")
    assert out["rows"] == 9 and reads == [record_path(TRACK, sid)] * 2, reads
    record = json.loads(real_read("submissions", record_path(TRACK, sid)))
    assert record["status"] == "published"  # positive control: the new one was marked
