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
