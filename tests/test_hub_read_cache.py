"""HubStore's read cache (worker/store/hub.py `ReadCache`): a read at a commit costs one GET (no HEAD), a
commit's known files and missing files cost none, bytes are answered only by the content id the Hub gave
for that commit and path (a changed file is never served stale), and nothing read lands on disk."""

from __future__ import annotations

from pathlib import Path

from tests.conftest_hub import HUB_TEST_OPTIONS
from worker.config import Config
from worker.store import open_store, read_many
from worker.store.hub import ReadCache, git_blob_oid


def _open(config: Config, tmp_path: Path, name: str, **options):
    return open_store(config, cache_dir=tmp_path / name, **(HUB_TEST_OPTIONS | options))


def _reads(stats: dict[str, int]) -> int:
    return sum(n for route, n in stats.items() if route.endswith("resolve"))


def test_a_read_at_a_new_commit_is_one_get_and_no_head(hub_config: Config, tmp_path: Path, fakehub) -> None:
    writer, reader = _open(hub_config, tmp_path, "w"), _open(hub_config, tmp_path, "r")
    first = writer.commit("submissions", {"t/a.json": b"a1", "t/b.json": b"b1"}, [], "one")
    assert reader.read("submissions", "t/a.json", first) == b"a1"
    second = writer.commit("submissions", {"t/b.json": b"b2"}, [], "two")  # another process's commit
    fakehub.reset()
    assert reader.read("submissions", "t/a.json", second) == b"a1"
    assert reader.read("submissions", "t/b.json", second) == b"b2"
    assert fakehub.stats() == {"GET resolve": 2}  # before: a HEAD per read, and a GET for b.json
    fakehub.reset()
    assert reader.read("submissions", "t/a.json", second) == b"a1"  # known: a commit never changes
    assert reader.read("submissions", "t/a.json", first) == b"a1"
    assert fakehub.stats() == {}


def test_a_missing_file_at_a_commit_is_asked_once(hub_store, fakehub) -> None:
    head = hub_store.commit("results", {"x.json": b"1"}, [], "x")
    fakehub.reset()
    assert hub_store.read("results", "nope.json", head) is None
    assert hub_store.read("results", "nope.json", head) is None
    assert _reads(fakehub.stats()) == 1  # before: a HEAD each time (.no_exist is not consulted)


def test_own_commits_are_read_back_without_a_request(hub_store, fakehub) -> None:
    hub_store.commit("submissions", {"r/gone.json": b"old"}, [], "seed")
    fakehub.reset()
    head = hub_store.commit("submissions", {"r/new.json": b"new"}, ["r/gone.json"], "change")
    stats = fakehub.stats()
    assert hub_store.read("submissions", "r/new.json", head) == b"new"
    assert hub_store.read("submissions", "r/gone.json", head) is None
    assert fakehub.stats() == stats  # nothing asked
    # A branch name is never a key: main is asked each time (it moves).
    assert hub_store.read("submissions", "r/new.json") == b"new"
    assert _reads(fakehub.stats()) == 1


def test_a_commit_on_a_named_parent_keeps_what_was_known_there(
    hub_config: Config, tmp_path: Path, fakehub
) -> None:
    """A read-modify-write commit (parent = the head it read) carries what this process knew at the parent
    to the new commit for every path it did not write or delete, so reading the same files back at the new
    head costs nothing; the written ones are the new bytes, a deleted one is gone. Positive controls: a
    commit without a parent carries nothing (the Hub may have put it on another head), and another
    process's commit on a named parent is asked about."""
    store, other = _open(hub_config, tmp_path, "s"), _open(hub_config, tmp_path, "o")
    base = store.commit("submissions", {"k/a.json": b"a", "k/b.json": b"b", "k/c.json": b"c"}, [], "abc")
    assert store.read("submissions", "k/a.json", base) == b"a"
    assert store.read("submissions", "k/x.json", base) is None  # known missing carries too
    fakehub.reset()
    child = store.commit("submissions", {"k/b.json": b"B"}, ["k/c.json"], "rmw", parent=base)
    assert store.read("submissions", "k/a.json", child) == b"a"
    assert store.read("submissions", "k/x.json", child) is None
    assert store.read("submissions", "k/b.json", child) == b"B"
    assert store.read("submissions", "k/c.json", child) is None
    assert _reads(fakehub.stats()) == 0
    # Not carried: a file this process never read at the parent is asked once.
    assert store.read("submissions", "k/b.json", base) == b"b"  # known: this process wrote it at base
    fakehub.reset()
    loose = store.commit("submissions", {"k/d.json": b"d"}, [], "no parent")
    assert store.read("submissions", "k/a.json", loose) == b"a"
    assert _reads(fakehub.stats()) == 1
    # Another process's commit on a named parent: `store` did not make it, so it asks.
    theirs = other.commit("submissions", {"k/e.json": b"e"}, [], "theirs", parent=loose)
    fakehub.reset()
    assert store.read("submissions", "k/a.json", theirs) == b"a"
    assert _reads(fakehub.stats()) == 1


def test_carried_links_answer_through_a_chain_and_stop_at_a_written_path() -> None:
    """`carry` records a link, not a copy: a lookup at a commit follows its own commits back to where the
    path was read (a chain of them too), stops at a commit that wrote the path (so its old bytes are never
    answered), and gives up past MAX_CARRY links; the links are bounded. A branch name never links."""
    from worker.store.hub import MAX_CARRY, MAX_LINKS

    cache, shas = ReadCache(), [f"{k:040x}" for k in range(MAX_CARRY + 3)]
    cache.learn("r", shas[0], "old", git_blob_oid(b"o"), b"o")
    cache.learn("r", shas[0], "kept", git_blob_oid(b"k"), b"k")
    cache.carry("r", shas[0], shas[1], {"old"})
    cache.learn("r", shas[1], "old", git_blob_oid(b"n"), b"n")  # the commit's own file, as HubStore does
    cache.carry("r", shas[1], shas[2], set())
    assert cache.lookup("r", shas[2], "kept") == (True, b"k")  # two links back
    assert cache.lookup("r", shas[2], "old") == (True, b"n")  # the newer bytes, not the parent's
    cache.files.pop(("r", shas[1], "old"))  # the written entry evicted: unknown, never the parent's bytes
    assert cache.lookup("r", shas[2], "old") == (False, None)
    assert cache.lookup("r", shas[2], "never read") == (False, None)
    for k in range(2, MAX_CARRY + 2):
        cache.carry("r", shas[k], shas[k + 1], set())
    assert cache.lookup("r", shas[MAX_CARRY], "kept") == (True, b"k")  # MAX_CARRY links back
    assert cache.lookup("r", shas[MAX_CARRY + 2], "kept") == (False, None)  # past it: asked again
    cache.carry("r", "main", shas[5], set())
    assert ("r", shas[5]) in cache.links and cache.links[("r", shas[5])][0] == shas[4]
    for k in range(MAX_LINKS + 10):
        cache.carry("r", f"{k:040x}", f"{k + 1:040x}", set())
    assert len(cache.links) == MAX_LINKS


def _changed_in_place(store_a, store_b, size: int) -> tuple[str, str, bytes, bytes]:
    """Two versions of one file of the same size, committed by `store_a` at two commits."""
    v1, v2 = b"1" * size, b"2" * size
    one = store_a.commit("results", {"big.bin.json": v1}, [], "v1")
    two = store_a.commit("results", {"big.bin.json": v2}, [], "v2")
    return one, two, v1, v2


def test_a_changed_file_is_never_answered_with_the_old_bytes(hub_config: Config, tmp_path: Path) -> None:
    """Reused bytes (a large file whose body is not downloaded again) are found by the content id the Hub
    names for that commit; positive control: a cache that ignored the id serves the old bytes."""
    writer = _open(hub_config, tmp_path, "w")
    one, two, v1, v2 = _changed_in_place(writer, writer, 4096)
    reader = _open(hub_config, tmp_path, "r", read_cache=ReadCache(reuse_over=1024))
    assert reader.read("results", "big.bin.json", one) == v1
    assert reader.read("results", "big.bin.json", two) == v2
    assert reader.read("results", "big.bin.json") == v2
    assert reader.read("results", "big.bin.json", one) == v1

    class IgnoresTheId(ReadCache):
        def blob(self, oid):  # any bytes it holds, whatever the content id
            with self.lock:
                return next(iter(self.blobs.values()), None)

    broken = _open(hub_config, tmp_path, "b", read_cache=IgnoresTheId(reuse_over=1024))
    assert broken.read("results", "big.bin.json", one) == v1
    assert broken.read("results", "big.bin.json", two) == v1  # stale: the check above would catch it


def test_bytes_that_do_not_match_their_id_are_not_kept() -> None:
    cache, sha = ReadCache(), "a" * 40
    cache.learn("r", sha, "p", git_blob_oid(b"right"), b"torn")
    assert cache.lookup("r", sha, "p") == (False, None)
    cache.learn("r", sha, "p", git_blob_oid(b"right"), b"right")
    assert cache.lookup("r", sha, "p") == (True, b"right")
    cache.learn("r", "main", "q", None, None)  # a branch is never a key
    assert cache.lookup("r", "main", "q") == (False, None)


def test_the_cache_is_bounded() -> None:
    cache = ReadCache(max_bytes=100, max_blob=60, max_files=3)
    for k in range(5):
        data = bytes([65 + k]) * 40
        cache.learn("r", f"{k:040x}", "p", git_blob_oid(data), data)
    assert cache.size <= 100 and len(cache.blobs) == 2 and len(cache.files) == 3
    big = b"x" * 61
    cache.learn("r", "f" * 40, "big", git_blob_oid(big), big)
    assert git_blob_oid(big) not in cache.blobs  # past max_blob: the entry only


def test_large_files_past_the_memory_cap_still_read_right(hub_config: Config, tmp_path: Path) -> None:
    writer = _open(hub_config, tmp_path, "w")
    one, two, v1, v2 = _changed_in_place(writer, writer, 5000)
    reader = _open(hub_config, tmp_path, "r", read_cache=ReadCache(max_blob=1000))
    assert reader.read("results", "big.bin.json", one) == v1
    assert reader.read("results", "big.bin.json", two) == v2


def test_reads_leave_nothing_on_disk(hub_config: Config, tmp_path: Path) -> None:
    """A worker's reads of the hidden references stay in its memory: no copy in its Hub cache folder (the
    web process may never open that folder, and now there is nothing in it to open)."""
    gold = b'{"id": "x", "label": "secret-gold"}\n'
    writer = _open(hub_config, tmp_path, "w")
    head = writer.commit("references", {"varm/test.jsonl": gold}, [], "gold")
    worker = _open(hub_config, tmp_path, "worker-cache")
    assert worker.read("references", "varm/test.jsonl", head) == gold
    assert worker.read("references", "varm/test.jsonl") == gold
    folder = tmp_path / "worker-cache"
    found = (
        [p for p in folder.rglob("*") if p.is_file() and gold in p.read_bytes()] if folder.exists() else []
    )
    assert found == []  # before: hf_hub_download kept a blob of it there


def test_many_reads_at_a_new_commit_cost_one_request_and_the_changed_files(
    hub_config: Config, tmp_path: Path, fakehub
) -> None:
    """`read_many` (a quota check reads every record its submitter sent today): the paths the cache cannot
    answer are named in one paths-info request and only the changed files are fetched; the answers equal
    one `read` each. Positive control: reading them one by one costs a GET each."""
    writer, reader = _open(hub_config, tmp_path, "w"), _open(hub_config, tmp_path, "r")
    files = {f"t/{k}/submission.json": f'{{"k": {k}}}'.encode() for k in range(12)}
    first = writer.commit("submissions", files, [], "twelve")
    assert read_many(reader, "submissions", files, first) == files
    second = writer.commit("submissions", {"t/3/submission.json": b"changed", "t/x.json": b"x"}, [], "two")
    wanted = [*files, "t/missing.json", "t"]  # a missing file and a folder read as None
    expected = {p: writer.read("submissions", p, second) for p in wanted}
    assert expected["t/3/submission.json"] == b"changed" and expected["t"] is None

    fakehub.reset()
    assert read_many(reader, "submissions", wanted, second) == expected
    assert fakehub.stats() == {"POST paths-info": 1, "GET resolve": 1}  # the changed file only
    fakehub.reset()
    assert read_many(reader, "submissions", wanted, second) == expected  # now known at this commit
    assert fakehub.stats() == {}

    third = writer.commit("submissions", {"t/5/submission.json": b"five"}, [], "three")
    control = _open(hub_config, tmp_path, "c", read_cache=ReadCache())
    assert read_many(control, "submissions", files, first) == files
    fakehub.reset()
    one_by_one = {p: control.read("submissions", p, third) for p in files}
    assert _reads(fakehub.stats()) == len(files)
    fakehub.reset()
    assert read_many(reader, "submissions", files, third) == one_by_one
    assert fakehub.stats() == {"POST paths-info": 1, "GET resolve": 1}


def test_many_reads_inside_a_group_commit_see_its_earlier_builds(hub_store) -> None:
    from worker.store.group import _Pending

    head = hub_store.commit("submissions", {"a.json": b"a", "b.json": b"b", "c.json": b"c"}, [], "abc")
    pending = _Pending(hub_store, "submissions")
    pending.add["a.json"] = b"a2"
    pending.delete.add("b.json")
    assert read_many(pending, "submissions", ["a.json", "b.json", "c.json"], head) == {
        "a.json": b"a2",
        "b.json": None,
        "c.json": b"c",
    }


def test_the_head_does_not_grow_with_the_files_of_the_repository(hub_config: Config, tmp_path: Path, fakehub):
    """`head` asks for the commit only (`expand=sha`): the Hub's repository info otherwise lists every file
    (`siblings`), megabytes of JSON per call at a board of thousands of submissions."""
    store = _open(hub_config, tmp_path, "s")
    store.commit("results", {f"r/{i:04d}/result.json": b"{}" for i in range(500)}, [], "500 files")
    fakehub.reset()
    head = store.head("results")
    sent = fakehub.sent()["GET revision"]
    assert sent < 300, sent
    info = store.api.repo_info(
        store._repo("results"), repo_type="dataset", revision="main"
    )  # positive control: in full
    assert info.sha == head and len(info.siblings or []) > 500
    assert fakehub.sent()["GET revision"] - sent > 500 * len('{"rfilename": "r/0000/result.json"}'), (
        fakehub.sent()
    )


def test_a_status_lookup_asks_every_track_in_one_request(hub_config: Config, tmp_path: Path, fakehub) -> None:
    """`find_record` (each status poll of `GET /api/v1/submissions/{id}`) names every track's record path in
    one paths-info request and GETs only bytes it does not hold: it asked the tracks one after another, a GET
    each up to the record's (four for the last track's), at every poll. A changed record is read anew (never
    answered stale), and an unknown id costs the one request."""
    from worker.records import new_record, transition
    from worker.submissions import find_record, record_files

    writer, reader = _open(hub_config, tmp_path, "w"), _open(hub_config, tmp_path, "r")
    record = new_record(
        submission_id="0123456789abcdef", track="cntp", sha256="0" * 64, submitter="u", metadata={}
    )
    writer.commit("submissions", record_files(writer, writer.head("submissions"), [record]), [], "queued")
    fakehub.reset()
    assert find_record(reader, "0123456789abcdef") == record
    assert fakehub.stats() == {"POST paths-info": 1, "GET resolve": 1}
    fakehub.reset()
    assert find_record(reader, "0123456789abcdef") == record  # the next poll: the same bytes
    assert fakehub.stats() == {"POST paths-info": 1}

    scored = transition(record, "scoring", "picked up")
    writer.commit("submissions", record_files(writer, writer.head("submissions"), [scored]), [], "scoring")
    fakehub.reset()
    assert find_record(reader, "0123456789abcdef") == scored  # positive control: a change is seen
    assert fakehub.stats() == {"POST paths-info": 1, "GET resolve": 1}
    fakehub.reset()
    assert find_record(reader, "fedcba9876543210") is None
    assert fakehub.stats() == {"POST paths-info": 1}


def test_a_repeated_status_poll_reads_the_record_only(hub_config: Config, tmp_path: Path, fakehub) -> None:
    """The status page (`Service.submission`) of a scored submission: the latest version's result and the
    format report never change once written, so the next poll asks only for the record (one paths-info,
    above) instead of a GET for each of the three. A new version's result is read (never a stale one).
    """
    from tests.conftest_pipeline import RecordingEnqueuer
    from worker.records import new_record, staged_result_path, transition
    from worker.service import Service
    from worker.submissions import dumps, record_files

    writer = _open(hub_config, tmp_path, "w")
    sid = "0123456789abcdef"
    record = transition(
        new_record(submission_id=sid, track="cold", sha256="0" * 64, submitter="u", metadata={}),
        "scored",
        "scored",
    )

    def attach(record: dict, number: int, macro_f1: float) -> dict:
        record = {**record, "versions": [*record.get("versions", []), {"version": number}]}
        files = record_files(writer, writer.head("submissions"), [record])
        files[staged_result_path("cold", sid, number)] = dumps({"metrics": {"macro_f1": macro_f1}})
        writer.commit("submissions", files, [], f"version {number}")
        return record

    record = attach(record, 1, 0.5)
    service = Service(hub_config, _open(hub_config, tmp_path, "web"), RecordingEnqueuer())
    fakehub.reset()
    first = service.submission(sid)
    assert first is not None and first["result"]["result"] == {"metrics": {"macro_f1": 0.5}}
    assert fakehub.stats() == {"POST paths-info": 1, "GET resolve": 2}  # the record, then the result
    fakehub.reset()
    assert service.submission(sid) == first
    assert fakehub.stats() == {"POST paths-info": 1}

    attach(record, 2, 0.75)  # positive control: a new version's result is read
    fakehub.reset()
    second = service.submission(sid)
    assert second is not None and second["result"] == {
        "version": 2,
        "result": {"metrics": {"macro_f1": 0.75}},
    }
    assert fakehub.stats() == {"POST paths-info": 1, "GET resolve": 2}
