"""LocalStore: the embedded default, a folder per area that behaves like a tiny git.

Layout of `<DATA_DIR>/store/<area>/`:

    objects/<aa>/<sha1>.z    file contents (zlib), content-addressed by the sha1 of the plain bytes,
                             immutable; stores written before compression hold plain `<sha1>` files
    nodes/<aa>/<sha1>.z      the folders of every revision as a tree of small nodes (zlib JSON,
                             `worker/store/trie.py`), content-addressed, immutable
    trees/<revision>.root    the id of a revision's root node
    trees/<revision>.delta.z / .json.z
                             revisions written before nodes: what a revision changed, or the full
                             {path: object id} manifest of a checkpoint (read-only; see below)
    commits.jsonl            one line per commit: revision, parent, message, date, added, deleted
    HEAD                     the current revision (replaced atomically)
    snapshots/<revision>/    materialized read-only folders for local_snapshot()
    .lock                    fcntl lock serializing writers (across processes and threads)

Readers take no lock: they read HEAD once, then only immutable files, so a multi-file commit becomes
visible all at once when HEAD is replaced (never half-applied). Revision ids are
sha1(parent, message, operations).

A commit writes the nodes on the paths it changes and the new root's id: a read or a commit touches a few
nodes per folder level whatever the number of files (a flat manifest per revision cost 5 s per publish at
10,000 submissions, in copying it). Stores written before nodes (flat manifests: a checkpoint now and then,
deltas between) stay readable at every revision; the first commit on such a head converts its manifest to
nodes once (the migration: O(files), then never again).
"""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import fcntl
import hashlib
import json
import os
import shutil
import tempfile
import threading
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from datetime import UTC, datetime
from pathlib import Path
from typing import Generic, TypeVar

from worker.config import AREAS
from worker.store import trie
from worker.store.base import (
    ConflictError,
    StoreError,
    UnreadableObject,
    check_area,
    check_ops,
    check_path,
    check_prefix,
    check_revision,
)

K = TypeVar("K")
V = TypeVar("V")
_HEX40 = frozenset("0123456789abcdef")


def _umask() -> int:
    """This process's umask, read without setting it (os.umask would change it for every thread at once)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# mkstemp/mkdtemp make 0600/0700 whatever the umask: in the image's two-user mode the web process and the
# workers share the store through their group (umask 007), so a file must get the mode the umask allows.
_UMASK = _umask()
_FILE_MODE = 0o666 & ~_UMASK
_DIR_MODE = 0o777 & ~_UMASK


def _write_atomic(path: Path, data: bytes) -> None:
    """Write via a temp file in the same folder, fsync, then os.replace (all-or-nothing)."""
    tmp, _ = _write_temp(path, data, durable=True)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


SAMPLE_BYTES = 4096  # what _deflate tries first, on an object at least twice as long


def _deflate(data: bytes) -> bytes:
    """An object's stored form: zlib level 1 (a 9 MB leaderboard.json shrinks ~10x in ~40 ms: store JSON
    repeats its keys), or level 0 (stored blocks, still a zlib stream) when its first SAMPLE_BYTES do not
    shrink by a tenth: a sealed part is ciphertext, and deflating its ~110 kB for nothing took ~4 ms of a
    re-score's ~60 ms per submission (level 0: ~0.1 ms). Either way zlib.decompress gives the bytes back."""
    if len(data) >= 2 * SAMPLE_BYTES and len(zlib.compress(data[:SAMPLE_BYTES], 1)) > SAMPLE_BYTES * 9 // 10:
        return zlib.compress(data, 0)
    return zlib.compress(data, 1)


PARALLEL_WRITES = 16  # fsyncs in flight at once: the disk flushes them together (500 files: 0.8 -> 0.22 s)


SYNCED_FROM = 64  # files in one batch from which one syncfs(2) replaces their fsyncs (a chunk commit: ~100)


def _load_syncfs() -> Callable[[int], int] | None:
    """libc's syncfs(fd) (Linux), or None where there is none."""
    try:
        return ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None


_SYNCFS = _load_syncfs()


def _write_all(files: dict[Path, bytes]) -> None:
    """`_write_atomic` of each file, durable when this returns. A commit of a thousand files (a re-score's
    publish) spent most of its time in one fsync after another; fsyncs issued together are flushed
    together: the publish of a re-score of 1,000 took 11.7-13.3 s one by one and 4.3-4.9 s so (the
    finalize of `bench/bench_pipeline.py --only rescore --test-rows 400`, in one process). From SYNCED_FROM
    files on, one syncfs does the same as all their fsyncs (`_write_synced`). The first error is raised
    once every write has ended."""
    if len(files) <= 2:
        for path, data in files.items():
            _write_atomic(path, data)
        return
    if len(files) >= SYNCED_FROM and _SYNCFS is not None:
        _write_synced(files)
        return
    futures = [_writers().submit(_write_atomic, path, data) for path, data in files.items()]
    wait(futures)
    for future in futures:
        future.result()


def _write_synced(files: dict[Path, bytes]) -> None:
    """`_write_atomic` of many files with one syncfs(2) instead of one fsync each: every file written to a
    temp file beside it (the mode the umask allows), then all of them made durable at once, then each
    renamed into place, so a file under its name is always whole, as with `_write_atomic`. Where syncfs
    fails (not allowed, not supported), each temp file is fsynced instead. The writes and renames go on the
    writer threads too (creating a file in a folder of thousands is the slow part now): the 2,600 files of
    a re-score's publish and marks, ~1 ms each with their fsyncs, take ~0.2 ms."""
    pool = _writers()
    written = [pool.submit(_write_temp, path, data) for path, data in files.items()]
    wait(written)
    temps = [future.result() for future in written if future.exception() is None]
    try:
        for future in written:
            future.result()  # the first error, once every write has ended
        devices = {device: tmp for tmp, device in temps}  # one file per filesystem, for its syncfs
        for tmp in devices.values():
            _sync_filesystem(tmp, [t for t, _ in temps])
        moved = [pool.submit(os.replace, tmp, path) for (tmp, _), path in zip(temps, files, strict=True)]
        wait(moved)
        for rename in moved:
            rename.result()
    except BaseException:
        for tmp, _ in temps:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        raise


def _write_temp(path: Path, data: bytes, durable: bool = False) -> tuple[str, int]:
    """`data` in a new temp file beside `path` (fsynced when `durable`), with the mode the umask allows:
    (its name, its filesystem's device)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(fd, _FILE_MODE)
            f.write(data)
            if durable:
                f.flush()
                os.fsync(fd)
            return tmp, os.fstat(fd).st_dev
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _sync_filesystem(one: str, every: list[str]) -> None:
    """syncfs on the filesystem of file `one`; where that fails, fsync of each file of `every`."""
    assert _SYNCFS is not None
    fd = os.open(one, os.O_RDONLY)
    try:
        if _SYNCFS(fd) == 0:
            return
    finally:
        os.close(fd)
    for tmp in every:
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


_pool: tuple[int, ThreadPoolExecutor] | None = None  # (the process that made it, the pool)
_pool_lock = threading.Lock()


def _writers() -> ThreadPoolExecutor:
    """This process's writer threads, made once: starting threads for every commit cost more than the
    fsyncs of a small one. A forked child (a Celery pool process) makes its own."""
    global _pool
    with _pool_lock:
        if _pool is None or _pool[0] != os.getpid():
            _pool = (os.getpid(), ThreadPoolExecutor(PARALLEL_WRITES, thread_name_prefix="store-write"))
        return _pool[1]


TREES_CACHED = 16  # decoded flat manifests (stores written before nodes) kept per process
NODES_CACHED = 16384  # decoded nodes kept per process (~3 kB of JSON each at most)


def _read_json_file(path: Path):
    data = path.read_bytes()
    return json.loads(zlib.decompress(data) if path.suffix == ".z" else data)


class _Lru(Generic[K, V]):
    """A thread-safe LRU map of immutable decoded things (manifests by revision, nodes by id): what they
    are keyed by never changes, so an entry is never stale."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._cache: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._cache.get(key)
            if value is not None:
                self._cache.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._cache[key] = value
            self._cache.move_to_end(key)
            while len(self._cache) > self.size:
                self._cache.popitem(last=False)


_TREES: _Lru[tuple[str, str], dict[str, str]] = _Lru(TREES_CACHED)  # by (area folder, revision)
_NODES: _Lru[str, trie.Node] = _Lru(NODES_CACHED)  # content-addressed: the same id in every area
# A revision's root node (its id is the hash of its parent and changes, so its tree never changes): a read
# opened the revision's .root file each time (a publish reads thousands of files at one revision).
ROOTS_CACHED = 4096
_ROOTS: _Lru[tuple[str, str], str] = _Lru(ROOTS_CACHED)  # by (area folder, revision)


def forget_decoded() -> None:
    """Drop what this process decoded (tests and benchmarks: as a new process would start)."""
    global _TREES, _NODES, _ROOTS
    _TREES, _NODES, _ROOTS = _Lru(TREES_CACHED), _Lru(NODES_CACHED), _Lru(ROOTS_CACHED)


class _AreaNodes:
    """trie.Nodes over one area's `nodes/` folder. Writes are durable (fsync) before a root names them."""

    def __init__(self, base: Path) -> None:
        self.folder = base / "nodes"
        self.pending: dict[str, bytes] = {}  # nodes `put` and not yet written (`flush`)

    def flush(self) -> None:
        """Write the nodes `put` since the last flush, all durable before a root may name them."""
        _write_all({self._file(ident): data for ident, data in self.pending.items()})
        self.pending.clear()

    def _file(self, ident: str) -> Path:
        return self.folder / ident[:2] / f"{ident}.z"

    def get(self, ident: str) -> trie.Node:
        if ident == trie.EMPTY_ID:
            return trie.EMPTY
        node = _NODES.get(ident)
        if node is None:
            try:
                data = self.pending.get(ident) or self._file(ident).read_bytes()
                node = json.loads(zlib.decompress(data))
            except (OSError, zlib.error, ValueError) as exc:
                raise StoreError(f"store node {ident} cannot be read ({exc})") from exc
            _NODES.put(ident, node)
        return node

    def put(self, node: trie.Node) -> str:
        data = trie.encode(node)
        ident = trie.node_id(data)
        if ident != trie.EMPTY_ID and ident not in self.pending and not self._file(ident).exists():
            self.pending[ident] = zlib.compress(data, 1)
        _NODES.put(ident, node)
        return ident


class LocalStore:
    """Store backed by `<data_dir>/store/<area>/`. Safe for several processes on one machine."""

    def __init__(self, data_dir: Path | str, areas: Iterable[str] = AREAS) -> None:
        self.root = Path(data_dir) / "store"
        self.areas = frozenset(areas)
        for area in self.areas:
            check_area(area, AREAS)

    # -- internals ---------------------------------------------------------------------------------

    def _dir(self, area: str) -> Path:
        check_area(area, self.areas)
        base = self.root / area
        if not (base / "HEAD").exists():
            self._init_area(base)
        return base

    def _init_area(self, base: Path) -> None:
        base.mkdir(parents=True, exist_ok=True)
        with self._locked(base):
            if (base / "HEAD").exists():
                return  # another process won the race
            self._write_commit(base, "", trie.EMPTY_ID, "initial commit", added={}, deleted=[])

    @contextlib.contextmanager
    def _locked(self, base: Path) -> Iterator[None]:
        # flock locks belong to the open file description, so each call opens its own: this excludes
        # other threads of this process as well as other processes.
        with open(base / ".lock", "a+b") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _head(self, base: Path) -> str:
        return (base / "HEAD").read_text().strip()

    def _checkpoint_file(self, base: Path, revision: str) -> Path | None:
        tree_file = base / "trees" / f"{revision}.json.z"
        if not tree_file.exists():
            tree_file = tree_file.with_suffix("")  # plain JSON, as written by the first version
        return tree_file if tree_file.exists() else None

    def _delta(self, base: Path, revision: str) -> dict:
        delta_file = base / "trees" / f"{revision}.delta.z"
        if not delta_file.exists():
            raise StoreError(f"unknown revision {revision!r} in area {base.name!r}")
        return _read_json_file(delta_file)

    def _root(self, base: Path, revision: str) -> str | None:
        """The root node of `revision`; None for a revision written before nodes (a flat manifest)."""
        if len(revision) != 40 or not set(revision) <= _HEX40:
            raise StoreError(f"unknown revision {revision!r} (LocalStore revisions are 40 hex digits)")
        key = (str(base), revision)
        root = _ROOTS.get(key)
        if root is None:
            try:
                root = (base / "trees" / f"{revision}.root").read_text().strip()
            except FileNotFoundError:
                return None  # not kept: converting the head writes its root (`_head_root`)
            _ROOTS.put(key, root)
        return root

    def _flat_tree(self, base: Path, revision: str) -> dict[str, str]:
        """The full manifest of a revision written before nodes: a cached one, a checkpoint, or the nearest
        of those with the deltas after it applied in order. Callers must not mutate it."""
        deltas: list[tuple[str, dict]] = []
        rev = revision
        while True:
            tree = _TREES.get((str(base), rev))
            if tree is not None:
                break
            checkpoint = self._checkpoint_file(base, rev)
            if checkpoint is not None:
                tree = _read_json_file(checkpoint)
                _TREES.put((str(base), rev), tree)
                break
            delta = self._delta(base, rev)
            deltas.append((rev, delta))
            rev = delta["parent"]
        for rev, delta in reversed(deltas):
            tree = {**tree, **delta["add"]}
            for path in delta["delete"]:
                del tree[path]
            _TREES.put((str(base), rev), tree)
        return tree

    def _files(self, base: Path, revision: str, prefix: str = "") -> Iterator[tuple[str, str]]:
        """(path, object id) of the revision's files under `prefix`, unordered."""
        root = self._root(base, revision)
        if root is not None:
            yield from trie.items(_AreaNodes(base), root, prefix)
        else:
            yield from ((p, o) for p, o in self._flat_tree(base, revision).items() if p.startswith(prefix))

    def _oid(self, base: Path, revision: str, path: str) -> str | None:
        root = self._root(base, revision)
        if root is None:
            return self._flat_tree(base, revision).get(path)
        return trie.lookup(_AreaNodes(base), root, path)

    def _head_root(self, base: Path, head: str) -> str:
        """The head's root node, converting a head written before nodes (once; caller holds the lock)."""
        root = self._root(base, head)
        if root is None:
            nodes = _AreaNodes(base)
            root = trie.build(nodes, self._flat_tree(base, head))
            nodes.flush()
            _write_atomic(base / "trees" / f"{head}.root", root.encode() + b"\n")
        return root

    def _resolve(self, base: Path, revision: str | None) -> str:
        """The commit id of `revision`: the head, a commit id, or a tag's (as on the Hub)."""
        if revision is None:
            return self._head(base)
        return self._tags(base).get(check_revision(revision), {}).get("revision", revision)

    def _object(self, base: Path, oid: str) -> Path:
        """The object's file: compressed (`.z`), or plain as written before compression."""
        packed = base / "objects" / oid[:2] / f"{oid}.z"
        return packed if packed.exists() else packed.with_suffix("")

    def _object_bytes(self, base: Path, oid: str) -> bytes:
        packed = base / "objects" / oid[:2] / f"{oid}.z"
        try:  # as `_object` finds it, without its stat first
            data = packed.read_bytes()
        except FileNotFoundError:
            return packed.with_suffix("").read_bytes()
        try:
            return zlib.decompress(data)
        except zlib.error as exc:  # torn or damaged on disk: this file's fault, not the store's
            raise UnreadableObject(f"stored object {oid} cannot be decompressed ({exc})") from exc

    def _write_commit(
        self,
        base: Path,
        parent: str,
        root: str,
        message: str,
        added: dict[str, str],
        deleted: list[str],
    ) -> str:
        """Write the root's id, log line and HEAD, in that order (caller holds the lock; the nodes are
        written)."""
        ops = json.dumps({"add": added, "delete": deleted}, sort_keys=True)
        revision = hashlib.sha1(f"{parent}\n{message}\n{ops}".encode()).hexdigest()
        _write_atomic(base / "trees" / f"{revision}.root", root.encode() + b"\n")
        record = {
            "revision": revision,
            "parent": parent or None,
            "message": message,
            "date": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
            "added": sorted(added),
            "deleted": sorted(deleted),
        }
        # One small O_APPEND write per commit; readers skip a torn last line and walk from HEAD anyway.
        with open(base / "commits.jsonl", "ab") as log:
            log.write(json.dumps(record, ensure_ascii=False).encode() + b"\n")
            log.flush()
            os.fsync(log.fileno())
        _write_atomic(base / "HEAD", revision.encode() + b"\n")
        return revision

    # -- Store interface ---------------------------------------------------------------------------

    def head(self, area: str) -> str:
        return self._head(self._dir(area))

    def read(self, area: str, path: str, revision: str | None = None) -> bytes | None:
        base = self._dir(area)
        check_path(path)
        oid = self._oid(base, self._resolve(base, revision), path)
        return None if oid is None else self._object_bytes(base, oid)

    def list(self, area: str, prefix: str = "", revision: str | None = None) -> list[str]:
        base = self._dir(area)
        check_prefix(prefix)
        return sorted(p for p, _ in self._files(base, self._resolve(base, revision), prefix))

    def commit(
        self,
        area: str,
        add: dict[str, bytes],
        delete: builtins.list[str],
        message: str,
        parent: str | None = None,
    ) -> str:
        base = self._dir(area)
        check_ops(add, delete)
        oids = {path: hashlib.sha1(bytes(data)).hexdigest() for path, data in add.items()}
        # Objects are content-addressed, so writing them before taking the lock is harmless.
        _write_all(
            {
                base / "objects" / oid[:2] / f"{oid}.z": _deflate(bytes(add[path]))
                for path, oid in oids.items()
                if not self._object(base, oid).exists()
            }
        )
        with self._locked(base):
            head = self._head(base)
            nodes, root = _AreaNodes(base), self._head_root(base, head)
            changed = {p: oid for p, oid in oids.items() if trie.lookup(nodes, root, p) != oid}
            if not changed and not delete:
                # No-op: return the head without checking `parent`, exactly like huggingface_hub, which
                # drops unchanged files and skips empty commits before the server sees parentCommit.
                return head
            if parent is not None and parent != head:
                raise ConflictError(f"area {area!r}: parent {parent[:12]} is stale, head is {head[:12]}")
            missing = [p for p in delete if trie.lookup(nodes, root, p) is None]
            if missing:
                raise StoreError(f"area {area!r}: cannot delete missing files {missing}")
            root = trie.apply(nodes, root, trie.changes(changed, delete))
            nodes.flush()
            added = dict(sorted(changed.items()))
            return self._write_commit(base, head, root, message, added, sorted(delete))

    def local_snapshot(self, area: str, revision: str | None = None) -> Path:
        base = self._dir(area)
        revision = self._resolve(base, revision)
        files = dict(self._files(base, revision))
        target = base / "snapshots" / revision
        if target.exists():
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=".tmp-"))
        try:
            tmp.chmod(_DIR_MODE)
            for path, oid in files.items():
                dest = tmp / path
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(self._object_bytes(base, oid))
                dest.chmod(0o444)  # read-only use: a stray write fails loudly
            os.rename(tmp, target)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
            if not target.exists():  # not just "another process built it first"
                raise
        return target

    def tag(self, area: str, name: str, revision: str, message: str) -> None:
        base = self._dir(area)
        check_revision(name)
        check_revision(revision)
        with self._locked(base):
            tags = self._tags(base)
            named = tags.get(name, {}).get("revision", revision)
            if named != revision:
                raise ConflictError(f"area {area!r}: tag {name!r} already names {named[:12]}")
            if name not in tags:
                date = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
                tags[name] = {"revision": revision, "message": message, "date": date}
                _write_atomic(base / "tags.json", json.dumps(tags, sort_keys=True, indent=1).encode())

    def tags(self, area: str) -> dict[str, str]:
        return {name: tag["revision"] for name, tag in self._tags(self._dir(area)).items()}

    def _tags(self, base: Path) -> dict[str, dict]:
        return _read_json_file(base / "tags.json") if (base / "tags.json").exists() else {}

    def history(self, area: str, limit: int = 50) -> builtins.list[dict]:
        base = self._dir(area)
        records: dict[str, dict] = {}
        for line in (base / "commits.jsonl").read_bytes().splitlines():
            with contextlib.suppress(ValueError):
                rec = json.loads(line)
                records[rec["revision"]] = rec
        out: list[dict] = []
        revision: str | None = self._head(base)
        while revision and len(out) < limit:
            rec = records[revision]
            out.append({"revision": rec["revision"], "message": rec["message"], "date": rec["date"]})
            revision = rec["parent"]
        return out
