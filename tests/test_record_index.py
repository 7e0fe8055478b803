"""The record index (`<track>/index.json` + shards) follows the records it describes: built from every record
on first use in an older store, updated in the same commit as each record change, read shard by shard."""

from __future__ import annotations

from pathlib import Path

from worker import submissions
from worker.records import SCORED, new_record, record_path, transition
from worker.store.local import LocalStore
from worker.submissions import dumps, list_records, read_index, record_files, summary, update_record

TRACK = "varm"


def _record(i: int) -> dict:
    return new_record(
        submission_id=f"{i:02x}" + "0" * 14,
        track=TRACK,
        sha256="0" * 64,
        submitter=f"u{i}",
        metadata={"model_name": f"m{i}", "description": "long text " * 50},
        at=f"2026-01-01T00:00:{i:02d}.000Z",
    )


def test_an_older_store_gets_its_index_with_the_first_record_change(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    records = [_record(i) for i in range(5)]
    # A store from before the index: records only.
    old = {record_path(TRACK, r["submission_id"]): dumps(r) for r in records}
    store.commit("submissions", old, [], "old")
    assert read_index(store, TRACK) is None  # positive control: nothing to read yet
    sid = records[2]["submission_id"]
    update_record(store, TRACK, sid, lambda s, h, r: (transition(r, SCORED, "test"), {}), "scored")
    index = read_index(store, TRACK)
    assert index == {r["submission_id"]: summary(r) for r in list_records(store, TRACK)}
    assert index[sid]["status"] == SCORED and "description" not in index[sid]["metadata"]
    assert "history" not in index[sid]


def test_a_reader_reads_only_the_shards_that_changed(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    records = [_record(i) for i in range(0, 40, 4)]  # ten shards (ids 00.., 04.., ...)
    store.commit("submissions", record_files(store, store.head("submissions"), records), [], "ten")
    known: dict = {}
    assert len(read_index(store, TRACK, known=known)) == 10 and len(known) == 10
    reads = _counting(store)
    changed = transition(records[3], SCORED, "test")
    store.commit("submissions", record_files(store, store.head("submissions"), [changed]), [], "one")
    reads.clear()
    submissions._shards.clear()  # as if another process had made the change: its shard is new here
    index = read_index(store, TRACK, known=known)
    assert index[changed["submission_id"]]["status"] == SCORED
    assert reads == [f"{TRACK}/index.json", f"{TRACK}/index/{changed['submission_id'][:2]}.json"]


def _counting(store: LocalStore) -> list[str]:
    reads: list[str] = []
    real_read = store.read

    def read(area, path, revision=None):
        reads.append(path)
        return real_read(area, path, revision)

    store.read = read  # type: ignore[method-assign]
    return reads


def test_a_process_reads_no_shard_it_wrote_or_read_again(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    records = [_record(i) for i in range(0, 40, 4)]
    store.commit("submissions", record_files(store, store.head("submissions"), records), [], "ten")
    reads = _counting(store)
    shard = f"{TRACK}/index/{records[3]['submission_id'][:2]}.json"
    # Positive control first: a process that never saw the shards reads each once, and only once.
    for forget in (True, False):
        if forget:
            submissions._shards.clear()
        reads.clear()
        known: dict = {}
        read_index(store, TRACK, known=known)  # a reader (batch.waiting, the publisher's listing)
        changed = transition(records[3], SCORED, f"test {forget}")
        head = store.head("submissions")
        store.commit("submissions", record_files(store, head, [changed]), [], "one")  # read-modify-write
        index = read_index(store, TRACK, known=known)  # the reader after this process's own commit
        assert index[changed["submission_id"]] == summary(changed)
        assert reads.count(shard) == (1 if forget else 0), reads
        assert len([p for p in reads if p.startswith(f"{TRACK}/index/")]) == (10 if forget else 0)


def test_a_shard_is_remembered_under_the_stamp_of_the_bytes_read(tmp_path: Path) -> None:
    """A read without a revision can see a newer shard than its table names: remembering it under the
    table's stamp would give the newer shard to every later reader of the older table."""
    store = LocalStore(tmp_path)
    records = [_record(i) for i in range(0, 40, 4)]
    store.commit("submissions", record_files(store, store.head("submissions"), records), [], "ten")
    sid = records[3]["submission_id"]
    shard = f"{TRACK}/index/{sid[:2]}.json"
    newer = submissions._shard_bytes({sid: summary(transition(records[3], SCORED, "newer"))})
    real_read = store.read
    store.read = lambda area, path, revision=None: newer if path == shard else real_read(area, path, revision)  # type: ignore[method-assign]
    submissions._shards.clear()
    assert read_index(store, TRACK)[sid]["status"] == SCORED  # what it read, as before
    store.read = real_read  # type: ignore[method-assign]
    assert read_index(store, TRACK)[sid]["status"] == records[3]["status"]  # the table's shard, read again
