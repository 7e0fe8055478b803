"""LocalStore objects: ciphertext-like data (a sealed part) is stored as a zlib stream of stored blocks
(level 0) instead of being deflated for nothing; everything else at level 1. Both read back byte for byte,
and a torn level-0 object is an unreadable object like any other."""

from __future__ import annotations

import hashlib
import os
import zlib
from pathlib import Path

import pytest

from worker.store import local
from worker.store.base import UnreadableObject
from worker.store.local import LocalStore


def _stored(tmp_path: Path, data: bytes) -> bytes:
    oid = hashlib.sha1(data).hexdigest()
    return (tmp_path / "store" / "submissions" / "objects" / oid[:2] / f"{oid}.z").read_bytes()


def test_incompressible_objects_are_stored_not_deflated(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    sealed = os.urandom(110_000)
    text = b'{"jrem": 0.5, "rows": [1, 2, 3]}' * 4000
    small_random = os.urandom(5000)  # under two samples: deflated as before
    store.commit(
        "submissions", {"a/sealed.bin": sealed, "a/rows.json": text, "a/s.bin": small_random}, [], "m"
    )
    assert _stored(tmp_path, sealed) == zlib.compress(sealed, 0)
    assert _stored(tmp_path, text) == zlib.compress(text, 1)
    assert _stored(tmp_path, small_random) == zlib.compress(small_random, 1)
    local.forget_decoded()
    fresh = LocalStore(tmp_path)
    assert fresh.read("submissions", "a/sealed.bin") == sealed
    assert fresh.read("submissions", "a/rows.json") == text
    assert fresh.read("submissions", "a/s.bin") == small_random


def test_a_torn_stored_object_is_unreadable(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    sealed = os.urandom(50_000)
    store.commit("submissions", {"a/sealed.bin": sealed}, [], "m")
    oid = hashlib.sha1(sealed).hexdigest()
    path = tmp_path / "store" / "submissions" / "objects" / oid[:2] / f"{oid}.z"
    path.write_bytes(path.read_bytes()[:20_000])
    with pytest.raises(UnreadableObject):
        store.read("submissions", "a/sealed.bin")


def _batch(tmp_path: Path, n: int) -> dict[Path, bytes]:
    return {tmp_path / "objects" / f"{i % 7:02x}" / f"{i}.z": b"%d" % i * 50 for i in range(n)}


def _leftovers(tmp_path: Path) -> list[Path]:
    return list(tmp_path.rglob(".tmp-*"))


@pytest.mark.parametrize("syncfs_works", [True, False])
def test_a_large_batch_is_written_whole_with_the_umask_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, syncfs_works: bool
) -> None:
    """From SYNCED_FROM files on, one syncfs (or, where it fails, an fsync of each temp file) before the
    renames: every file whole under its name, with the mode the umask allows, no temp file left."""
    assert local._SYNCFS is not None  # Linux
    synced, fsynced = [], []
    real_fsync = os.fsync
    monkeypatch.setattr(local, "_SYNCFS", lambda fd: synced.append(fd) or (0 if syncfs_works else -1))
    monkeypatch.setattr(os, "fsync", lambda fd: fsynced.append(fd) or real_fsync(fd))
    files = _batch(tmp_path, local.SYNCED_FROM + 5)
    local._write_all(files)
    assert {path: path.read_bytes() for path in files} == files
    assert {path.stat().st_mode & 0o777 for path in files} == {local._FILE_MODE}
    assert len(synced) == 1 and len(fsynced) == (0 if syncfs_works else len(files))
    assert not _leftovers(tmp_path)


def test_a_failed_write_in_a_batch_names_no_file_and_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = _batch(tmp_path, local.SYNCED_FROM + 5)
    bad = list(files)[10]
    bad.parent.mkdir(parents=True)
    bad.mkdir()  # a folder where the file should go: its rename fails
    with pytest.raises(OSError):
        local._write_all(files)
    assert not _leftovers(tmp_path)
    assert all(path.read_bytes() == files[path] for path in files if path.is_file())  # whole, or absent
