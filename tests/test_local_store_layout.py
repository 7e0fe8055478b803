"""LocalStore's on-disk shape: a revision is a root of small content-addressed nodes (worker/store/trie.py),
a commit writes only the nodes on the paths it changes, objects are compressed, and a store written before
nodes (flat manifests: checkpoints and deltas; before that plain objects) still reads the same and is
converted at its first commit."""

from __future__ import annotations

import hashlib
import json
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from worker.store import local, trie
from worker.store.local import LocalStore


def _forget() -> None:
    local.forget_decoded()  # a new process: nothing decoded yet


def _node_files(tmp_path: Path, area: str = "submissions") -> set[Path]:
    return set((tmp_path / "store" / area / "nodes").rglob("*.z"))


def test_commits_write_nodes_and_every_revision_reads_back(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    seen: dict[str, dict[str, bytes]] = {}  # revision -> its files
    committed: set[bytes] = set()
    files: dict[str, bytes] = {}
    for i in range(150):
        add = {f"t/{i:04d}/r.json": f'{{"i": {i}}}'.encode(), "t/head.json": str(i).encode()}
        delete = [f"t/{i - 7:04d}/r.json"] if i >= 7 and i % 3 == 0 else []
        revision = store.commit("submissions", add, delete, f"c{i}")
        committed |= set(add.values())
        files = {p: d for p, d in {**files, **add}.items() if p not in delete}
        seen[revision] = files
    trees = tmp_path / "store" / "submissions" / "trees"
    assert not list(trees.glob("*.json.z")) and not list(trees.glob("*.delta.z"))  # no flat manifests
    assert len(list(trees.glob("*.root"))) == 151  # one per revision, the initial commit's too
    _forget()
    for revision, expected in list(seen.items())[::7]:
        assert store.list("submissions", "t/", revision) == sorted(expected)
        assert all(store.read("submissions", p, revision) == d for p, d in expected.items())
    assert store.list("submissions", "t/") == sorted(files)
    assert store.list("submissions", "t/001") == sorted(p for p in files if p.startswith("t/001"))
    # Objects are compressed on disk, and read back as the bytes committed.
    objects = list((tmp_path / "store" / "submissions" / "objects").rglob("*.z"))
    assert {zlib.decompress(o.read_bytes()) for o in objects} == committed


@pytest.mark.parametrize("size", [100, 3000])
def test_a_commit_writes_a_bounded_number_of_nodes_whatever_the_folder_size(
    tmp_path: Path, size: int
) -> None:
    store = LocalStore(tmp_path)
    store.commit("submissions", {f"varm/{i:06x}/submission.json": b"%d" % i for i in range(size)}, [], "fill")
    before = _node_files(tmp_path)
    store.commit("submissions", {"varm/00002a/submission.json": b"changed"}, [], "one record")
    written = _node_files(tmp_path) - before
    # The root, the track folder's map (split in buckets when large), the record's folder: a handful of
    # nodes, the same at 100 and 3,000 records (a flat manifest rewrote all 3,000 paths).
    assert 3 <= len(written) <= 6
    assert sum(p.stat().st_size for p in written) < 6_000
    root = (tmp_path / "store" / "submissions" / "trees" / f"{store.head('submissions')}.root").read_text()
    nodes = local._AreaNodes(tmp_path / "store" / "submissions")
    track = trie._map_get(nodes, root.strip(), "varm/")
    assert track is not None
    split = "b" in nodes.get(track)
    assert split == (size > trie.LEAF_LIMIT)  # control: the large folder is really split into buckets
    assert store.read("submissions", "varm/00002a/submission.json") == b"changed"


def _old_store(tmp_path: Path, area: str) -> tuple[Path, str, str, bytes]:
    """A store as the flat-manifest code wrote it: a checkpoint (plain object) and a delta after it."""
    base = tmp_path / "store" / area
    data = b'{"old": true}\n'
    oid = hashlib.sha1(data).hexdigest()
    (base / "objects" / oid[:2]).mkdir(parents=True)
    (base / "objects" / oid[:2] / oid).write_bytes(data)  # a plain object, from before compression
    second = b"second"
    oid2 = hashlib.sha1(second).hexdigest()
    (base / "objects" / oid2[:2]).mkdir(parents=True, exist_ok=True)
    (base / "objects" / oid2[:2] / f"{oid2}.z").write_bytes(zlib.compress(second))
    first, delta = "a" * 40, "b" * 40
    (base / "trees").mkdir()
    (base / "trees" / f"{first}.json.z").write_bytes(zlib.compress(json.dumps({"x.json": oid}).encode()))
    change = {"parent": first, "add": {"d/z.json": oid2}, "delete": [], "chain": 1}
    (base / "trees" / f"{delta}.delta.z").write_bytes(zlib.compress(json.dumps(change).encode()))
    lines = [
        {"revision": first, "parent": None, "message": "old", "date": "2026-01-01T00:00:00Z"},
        {"revision": delta, "parent": first, "message": "delta", "date": "2026-01-02T00:00:00Z"},
    ]
    (base / "commits.jsonl").write_text(
        "".join(json.dumps(x | {"added": [], "deleted": []}) + "\n" for x in lines)
    )
    (base / "HEAD").write_text(delta + "\n")
    return base, first, delta, data


def test_a_store_written_before_nodes_still_reads_and_converts_at_its_first_commit(tmp_path: Path) -> None:
    base, first, delta, data = _old_store(tmp_path, "results")
    _forget()
    store = LocalStore(tmp_path, areas=["results"])
    assert store.read("results", "x.json") == data and store.read("results", "d/z.json") == b"second"
    assert store.list("results", "") == ["d/z.json", "x.json"]
    assert store.list("results", "", first) == ["x.json"]
    assert not (base / "nodes").exists()  # reading converts nothing
    new = store.commit("results", {"y.json": b"new"}, ["d/z.json"], "new")
    assert (base / "trees" / f"{delta}.root").exists()  # the old head, converted once
    _forget()
    assert store.list("results", "") == ["x.json", "y.json"]
    assert store.read("results", "x.json", new) == data and store.read("results", "y.json") == b"new"
    assert store.read("results", "d/z.json", delta) == b"second"  # old revisions read as before
    assert (store.local_snapshot("results") / "x.json").read_bytes() == data
    assert [h["message"] for h in store.history("results")] == ["new", "delta", "old"]


def test_a_missing_node_is_a_store_error_not_a_wrong_answer(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    store.commit("submissions", {"a/b.json": b"1"}, [], "one")
    _forget()
    for node in _node_files(tmp_path):
        node.unlink()
    with pytest.raises(local.StoreError, match="node"):
        store.read("submissions", "a/b.json")


class _Memory:
    def __init__(self) -> None:
        self.nodes: dict[str, trie.Node] = {}

    def get(self, ident: str) -> trie.Node:
        return trie.EMPTY if ident == trie.EMPTY_ID else self.nodes[ident]

    def put(self, node: trie.Node) -> str:
        ident = trie.node_id(trie.encode(node))
        self.nodes[ident] = node
        return ident


_name = st.sampled_from(["a", "ab", "b", "a.json", "c"])
_path = st.lists(_name, min_size=1, max_size=3).map("/".join)
_ops = st.lists(st.tuples(_path, st.one_of(st.none(), st.sampled_from(["o1", "o2", "o3"]))), max_size=30)
_prefix = st.one_of(st.just(""), _path, _path.map(lambda p: p + "/"), _path.map(lambda p: p[:-1]))


@settings(max_examples=300, deadline=None)
@given(_ops, st.lists(_prefix, min_size=1, max_size=4))
def test_the_node_tree_answers_like_a_flat_manifest(ops, prefixes) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(trie, "LEAF_LIMIT", 1)  # split at every chance: buckets on every level
        _replay(ops, prefixes)


def _replay(ops: list[tuple[str, str | None]], prefixes: list[str]) -> None:
    nodes, root, model = _Memory(), trie.EMPTY_ID, {}
    for path, value in ops:
        if value is None and path not in model:
            continue  # the store refuses to delete a missing file before it reaches the tree
        add = {} if value is None else {path: value}
        root = trie.apply(nodes, root, trie.changes(add, [] if value else [path]))
        if value is None:
            del model[path]
        else:
            model[path] = value
        for p, oid in model.items():
            assert trie.lookup(nodes, root, p) == oid
        for prefix in prefixes:
            expected = sorted((p, o) for p, o in model.items() if p.startswith(prefix))
            assert sorted(trie.items(nodes, root, prefix)) == expected
    assert (root == trie.EMPTY_ID) == (not model)  # emptied folders go


def test_a_commit_whose_writes_fail_changes_nothing_and_the_next_one_lands(
    tmp_path: Path, monkeypatch
) -> None:
    """Objects and nodes are written in parallel (`_write_all`); one failed write fails the commit after the
    others end, before any root or HEAD names them. Positive control: the same commit then lands."""
    store = LocalStore(tmp_path)
    head = store.commit("submissions", {"t/0.json": b"0"}, [], "first")
    add = {f"t/{i}/r.json": f"{i}".encode() for i in range(40)}
    real = local._write_atomic
    for failing in ("objects", "nodes"):

        def flaky(path: Path, data: bytes, failing: str = failing) -> None:
            if failing in path.parts and path.name.startswith("7"):
                raise OSError(28, "No space left on device")
            real(path, data)

        monkeypatch.setattr(local, "_write_atomic", flaky)
        _forget()
        with pytest.raises(OSError):
            store.commit("submissions", add, [], f"fails in {failing}")
        monkeypatch.setattr(local, "_write_atomic", real)
        _forget()
        assert store.head("submissions") == head
        assert store.list("submissions") == ["t/0.json"]
    revision = store.commit("submissions", add, [], "lands")
    _forget()
    assert {p: store.read("submissions", p, revision) for p in add} == add
