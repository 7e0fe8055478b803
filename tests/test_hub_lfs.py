"""Files the Hub keeps in LFS (tests/fakehub.py emulates the legacy LFS protocol): `*.bin` files (the
near-copy fingerprints, sealed results) by the default .gitattributes, and any file over 10 MB (a large
predictions file, the export of a board of ~3,000 rows or more). They are written through the LFS batch API
and read from the CDN the Hub redirects to, checked against their sha256 and kept in the read cache like any
other file: a second read costs nothing, a file read at another commit whose bytes did not change costs one
request (the redirect), and what the Hub lists for them names them by sha256 (read_many)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from tests.conftest_hub import HUB_TEST_OPTIONS
from worker.config import Config
from worker.store import open_store, read_many

BIG = b'{"row": "' + b"x" * 100 + b'"}\n'  # one line; repeated past the Hub's 10 MB below
FINGERPRINT = bytes(range(256)) * 16


def _open(config: Config, tmp_path: Path, name: str):
    return open_store(config, cache_dir=tmp_path / name, **HUB_TEST_OPTIONS)


def _lfs_requests(stats: dict[str, int]) -> dict[str, int]:
    return {route: n for route, n in stats.items() if "lfs" in route}


def test_lfs_files_are_written_over_the_lfs_api_and_read_from_the_cdn(
    hub_config: Config, tmp_path: Path, fakehub
) -> None:
    big = BIG * 100_000  # 11.2 MB
    files = {"t/fingerprint.bin": FINGERPRINT, "t/big.jsonl": big, "t/small.json": b"{}"}
    writer = _open(hub_config, tmp_path, "writer")
    fakehub.reset()
    head = writer.commit("submissions", files, [], "one regular file, two LFS files")
    # Positive control: the fake sends these two through LFS (or this test would prove nothing).
    assert _lfs_requests(fakehub.stats()) == {"POST lfs-batch": 1, "PUT lfs-upload": 2, "POST lfs-verify": 2}

    reader = _open(hub_config, tmp_path, "reader")  # another process: nothing cached
    fakehub.reset()
    assert {p: reader.read("submissions", p, head) for p in files} == files
    stats = fakehub.stats()
    assert stats == {"GET resolve": 3, "GET lfs-cdn": 2}, stats  # no HEAD, no hf_hub_download
    fakehub.reset()
    assert {p: reader.read("submissions", p, head) for p in files} == files
    assert fakehub.stats() == {}  # all three known at that commit

    # The small LFS file changes, the large one does not: at the new commit the unchanged one is the
    # redirect only (its sha256 is cached), the changed one is fetched.
    changed = FINGERPRINT[::-1]
    second = writer.commit("submissions", {"t/fingerprint.bin": changed}, [], "another fingerprint")
    fakehub.reset()
    assert reader.read("submissions", "t/big.jsonl", second) == big
    assert reader.read("submissions", "t/fingerprint.bin", second) == changed
    assert reader.read("submissions", "t/fingerprint.bin", head) == FINGERPRINT  # the old commit's, still
    assert fakehub.stats() == {"GET resolve": 2, "GET lfs-cdn": 1}, fakehub.stats()

    # read_many: paths-info names LFS files by sha256, so bytes held under it are not fetched again.
    third = writer.commit("submissions", {"t/other.json": b"1"}, [], "nothing else changes")
    fakehub.reset()
    got = read_many(reader, "submissions", [*files, "t/other.json", "t/none.json"], third)
    assert got == {**files, "t/fingerprint.bin": changed, "t/other.json": b"1", "t/none.json": None}
    assert fakehub.stats() == {"POST paths-info": 1, "GET resolve": 1}, fakehub.stats()  # other.json only
    assert sorted(reader.list("submissions", "t", third)) == sorted([*files, "t/other.json"])


def test_an_lfs_file_replaced_by_a_regular_one_and_deleted(
    hub_config: Config, tmp_path: Path, fakehub
) -> None:
    writer = _open(hub_config, tmp_path, "writer")
    first = writer.commit("results", {"r/a.bin": FINGERPRINT, "r/b.bin": FINGERPRINT}, [], "two LFS files")
    second = writer.commit("results", {"r/a.bin": b""}, ["r/b.bin"], "a emptied (regular), b deleted")
    reader = _open(hub_config, tmp_path, "reader")
    assert reader.read("results", "r/a.bin", second) == b""
    assert reader.read("results", "r/b.bin", second) is None
    assert reader.read("results", "r/b.bin", first) == FINGERPRINT
    assert (
        hashlib.sha256(reader.read("results", "r/a.bin", first) or b"").digest()
        == hashlib.sha256(FINGERPRINT).digest()
    )


def test_an_lfs_file_past_the_read_cache_is_read_from_the_cdn_into_memory_only(
    hub_config: Config, tmp_path: Path, fakehub
) -> None:
    """Past the read cache's 16 MB (a board's export at ~5,000 rows): the redirect and the CDN, each time,
    and nothing on disk (huggingface_hub's download would ask the Hub again and keep a copy in its cache)."""
    huge = BIG * 160_000  # 17.9 MB
    writer = _open(hub_config, tmp_path, "writer")
    head = writer.commit("results", {"varm/leaderboard.json": huge}, [], "an export")
    reader = _open(hub_config, tmp_path, "reader")
    fakehub.reset()
    assert reader.read("results", "varm/leaderboard.json", head) == huge
    assert reader.read("results", "varm/leaderboard.json", head) == huge
    assert fakehub.stats() == {"GET resolve": 2, "GET lfs-cdn": 2}, fakehub.stats()
    assert not [p for p in (tmp_path / "reader").rglob("*") if p.is_file()]


def test_the_cdn_and_the_lfs_upload_failing_once_lose_nothing(
    hub_config: Config, tmp_path: Path, fakehub
) -> None:
    """A 503 from the CDN on a read, and from the storage on an LFS upload, are retried like the Hub's own:
    the read answers the bytes, the commit lands once."""
    data = os.urandom(4096)  # bytes the fake Hub's LFS storage does not hold yet
    writer = _open(hub_config, tmp_path, "writer")
    fakehub.reset()
    fakehub.fault(r"^/_lfs/upload/", status=503, method="PUT")
    head = writer.commit("submissions", {"t/f.bin": data}, [], "an LFS file, its upload refused once")
    stats = fakehub.stats()
    assert stats["PUT lfs-upload"] == 2 and stats["POST commit"] == 1, stats  # the fault was met, then passed
    reader = _open(hub_config, tmp_path, "reader")
    fakehub.reset()
    fakehub.fault(r"^/_lfs/objects/", status=503, method="GET")
    assert reader.read("submissions", "t/f.bin", head) == data
    assert fakehub.stats()["GET lfs-cdn"] == 2, fakehub.stats()
