"""LocalStore's on-disk shape: commits write deltas with a checkpoint now and then, objects are compressed,
and a store written before either (a full manifest per commit, plain objects) still reads the same."""

from __future__ import annotations

import hashlib
import json
import zlib
from pathlib import Path

from worker.store import local
from worker.store.local import LocalStore, chain_limit


def _forget_trees() -> None:
    local._TREES = local._Trees()  # a new process: nothing decoded yet


def test_commits_write_deltas_and_every_revision_reads_back(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    seen: dict[str, dict[str, bytes]] = {}  # revision -> its files
    committed: set[bytes] = set()
    files: dict[str, bytes] = {}
    for i in range(3 * chain_limit(0) + 5):
        add = {f"t/{i:04d}.json": f'{{"i": {i}}}'.encode(), "t/head.json": str(i).encode()}
        delete = [f"t/{i - 7:04d}.json"] if i >= 7 and i % 3 == 0 else []
        revision = store.commit("submissions", add, delete, f"c{i}")
        committed |= set(add.values())
        files = {p: d for p, d in {**files, **add}.items() if p not in delete}
        seen[revision] = files
    trees = tmp_path / "store" / "submissions" / "trees"
    checkpoints, deltas = list(trees.glob("*.json.z")), list(trees.glob("*.delta.z"))
    # Deltas are the rule; a checkpoint (the initial one, then one every chain_limit commits) is rare.
    assert len(deltas) > len(checkpoints) >= 3
    _forget_trees()
    for revision, expected in list(seen.items())[::7]:
        assert store.list("submissions", "t/", revision) == sorted(expected)
        assert all(store.read("submissions", p, revision) == d for p, d in expected.items())
    assert store.list("submissions", "t/") == sorted(files)
    # Objects are compressed on disk, and read back as the bytes committed.
    objects = list((tmp_path / "store" / "submissions" / "objects").rglob("*.z"))
    assert {zlib.decompress(o.read_bytes()) for o in objects} == committed


def test_a_store_written_before_deltas_and_compression_still_reads(tmp_path: Path) -> None:
    base = tmp_path / "store" / "results"
    data = b'{"old": true}\n'
    oid = hashlib.sha1(data).hexdigest()
    (base / "objects" / oid[:2]).mkdir(parents=True)
    (base / "objects" / oid[:2] / oid).write_bytes(data)  # a plain object
    revision = "a" * 40
    (base / "trees").mkdir()
    (base / "trees" / f"{revision}.json.z").write_bytes(zlib.compress(json.dumps({"x.json": oid}).encode()))
    line = {
        "revision": revision,
        "parent": None,
        "message": "old",
        "date": "2026-01-01T00:00:00Z",
        "added": [],
        "deleted": [],
    }
    (base / "commits.jsonl").write_text(json.dumps(line) + "\n")
    (base / "HEAD").write_text(revision + "\n")
    _forget_trees()
    store = LocalStore(tmp_path, areas=["results"])
    assert store.read("results", "x.json") == data
    new = store.commit("results", {"y.json": b"new"}, [], "new")
    _forget_trees()
    assert store.read("results", "x.json", new) == data and store.read("results", "y.json") == b"new"
    assert (store.local_snapshot("results") / "x.json").read_bytes() == data
    assert [h["message"] for h in store.history("results")] == ["new", "old"]
