"""Store contract: the same behaviour from LocalStore and from HubStore talking to tests/fakehub.py."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from worker.config import Config
from worker.store import (
    WEB_AREAS,
    ConflictError,
    LocalStore,
    Store,
    StoreError,
    commit_with_retry,
    open_store,
    read_many,
)

# Fallback for running this file before tests/conftest.py registers the plugin (pytest dedups it).
pytest_plugins = ["tests.conftest_hub"]

ROOT = Path(__file__).resolve().parents[1]


def files_in(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


# -- the shared contract ------------------------------------------------------------------------------


def test_round_trip(store: Store) -> None:
    head = store.head("results")
    assert len(head) == 40 and int(head, 16) >= 0
    rev = store.commit("results", {"varm/abc.json": b'{"jrem": 0.5}\n'}, [], "add abc", parent=head)
    assert rev != head and store.head("results") == rev
    assert store.read("results", "varm/abc.json") == b'{"jrem": 0.5}\n'
    assert store.read("results", "varm/abc.json", revision=rev) == b'{"jrem": 0.5}\n'
    assert store.read("results", "varm/missing.json") is None
    assert store.history("results", limit=1)[0]["revision"] == rev


def test_read_many_answers_as_read_does(store: Store, open_test_store) -> None:
    first = store.commit("submissions", {"a/1.json": b"1", "a/2.json": b"2", "b.json": b"b"}, [], "seed")
    second = store.commit("submissions", {"a/2.json": b"two"}, ["b.json"], "change")
    other = open_test_store()  # another process: nothing of these commits known to it
    paths = ["a/1.json", "a/2.json", "b.json", "a", "none.json", "a/1.json"]
    for revision in (first, second, None):
        expected = {path: store.read("submissions", path, revision) for path in paths}
        assert read_many(other, "submissions", paths, revision) == expected
    assert read_many(other, "submissions", [], second) == {}


def test_list_is_sorted_and_filtered(store: Store) -> None:
    first = store.commit("submissions", {"b/2.json": b"2", "a/1.json": b"1", "c.json": b"c"}, [], "seed")
    store.commit("submissions", {"a/0.json": b"0"}, [], "more")
    assert store.list("submissions") == ["a/0.json", "a/1.json", "b/2.json", "c.json"]
    assert store.list("submissions", "a/") == ["a/0.json", "a/1.json"]
    assert store.list("submissions", "zzz") == []
    assert store.list("submissions", "zzz/") == []  # no such folder
    assert store.list("submissions", revision=first) == ["a/1.json", "b/2.json", "c.json"]
    store.commit("submissions", {"a/deep/x.json": b"x", "ab/y.json": b"y"}, [], "nested")
    assert store.list("submissions", "a/") == ["a/0.json", "a/1.json", "a/deep/x.json"]  # recursive
    assert store.list("submissions", "a") == ["a/0.json", "a/1.json", "a/deep/x.json", "ab/y.json"]
    assert store.list("submissions", "a/deep/x") == ["a/deep/x.json"]  # a name's beginning
    assert store.list("submissions", "a/1") == ["a/1.json"]


def test_multi_file_commit_is_one_revision(store: Store) -> None:
    before = store.history("results")
    files = {f"cold/{i:02d}.json": json.dumps({"i": i}).encode() for i in range(7)}
    rev = store.commit("results", files, [], "publish 7")
    after = store.history("results")
    assert len(after) == len(before) + 1
    assert after[0] == {"revision": rev, "message": "publish 7", "date": after[0]["date"]}
    assert files_in(store.local_snapshot("results", rev)) == files


def test_delete(store: Store) -> None:
    store.commit("submissions", {"x/a.json": b"a", "x/b.json": b"b"}, [], "two")
    rev = store.commit("submissions", {"x/c.json": b"c"}, ["x/a.json"], "swap")
    assert store.list("submissions") == ["x/b.json", "x/c.json"]
    assert store.read("submissions", "x/a.json") is None
    with pytest.raises(StoreError, match="missing"):
        store.commit("submissions", {"x/d.json": b"d"}, ["x/nope.json"], "bad delete")
    assert store.head("submissions") == rev  # the failed commit left nothing behind
    assert store.read("submissions", "x/d.json") is None


def test_historical_revisions(store: Store) -> None:
    v1 = store.commit("results", {"r.json": b"v1", "keep.json": b"k"}, [], "v1")
    v2 = store.commit("results", {"r.json": b"v2"}, ["keep.json"], "v2")
    assert store.read("results", "r.json", revision=v1) == b"v1"
    assert store.read("results", "keep.json", revision=v1) == b"k"
    assert store.read("results", "keep.json", revision=v2) is None
    assert files_in(store.local_snapshot("results", v1)) == {"keep.json": b"k", "r.json": b"v1"}
    assert files_in(store.local_snapshot("results")) == {"r.json": b"v2"}
    assert [h["message"] for h in store.history("results")][:2] == ["v2", "v1"]
    with pytest.raises(StoreError):
        store.read("results", "r.json", revision="0" * 40)


def test_a_tag_names_a_revision_for_good(store: Store) -> None:
    v1 = store.commit("results", {"release/r.json": b"frozen"}, [], "a release")
    assert store.tags("results") == {}
    store.tag("results", "cold-2027-03", v1, "release 2027-03 of cold")
    store.commit("results", {"release/r.json": b"changed later"}, [], "a later publish")
    assert store.tags("results") == {"cold-2027-03": v1}
    assert store.read("results", "release/r.json", revision="cold-2027-03") == b"frozen"  # read by name
    store.tag("results", "cold-2027-03", v1, "the same again")  # idempotent
    with pytest.raises(ConflictError):  # a tag never moves
        store.tag("results", "cold-2027-03", store.head("results"), "moved")
    assert store.tags("results") == {"cold-2027-03": v1}


def test_stale_parent_raises_conflict(store: Store) -> None:
    base = store.head("results")
    winner = store.commit("results", {"n.json": b"1"}, [], "first", parent=base)
    with pytest.raises(ConflictError):
        store.commit("results", {"n.json": b"2"}, [], "second", parent=base)
    assert store.head("results") == winner and store.read("results", "n.json") == b"1"
    assert store.commit("results", {"n.json": b"2"}, [], "second", parent=winner) != winner


def test_noop_commit_returns_head(store: Store) -> None:
    rev = store.commit("results", {"same.json": b"s"}, [], "one")
    assert store.commit("results", {"same.json": b"s"}, [], "again") == rev
    assert store.history("results", limit=1)[0]["revision"] == rev


def test_commit_with_retry_rebuilds_after_conflict(store: Store, open_test_store) -> None:
    other = open_test_store()  # a second writer (another process, in production)
    store.commit("results", {"counter.json": b"0"}, [], "init")
    calls = []

    def increment(s: Store, head: str):
        value = int(s.read("results", "counter.json", revision=head))
        if not calls:  # another writer lands between our read and our commit
            other.commit("results", {"counter.json": str(value + 10).encode()}, [], "interloper")
        calls.append(head)
        return {"counter.json": str(value + 1).encode()}, []

    rev = commit_with_retry(store, "results", increment, "increment")
    assert len(calls) == 2 and calls[0] != calls[1]
    assert store.read("results", "counter.json", revision=rev) == b"11"


def test_commit_with_retry_gives_up(store: Store, open_test_store) -> None:
    other = open_test_store()

    def always_overtaken(s: Store, head: str):
        other.commit("results", {"noise.json": os.urandom(4).hex().encode()}, [], "noise")
        return {"mine.json": b"x"}, []

    with pytest.raises(ConflictError):
        commit_with_retry(store, "results", always_overtaken, "doomed", attempts=2, backoff=0.001)
    assert store.read("results", "mine.json") is None


BAD_PATHS = [
    "../x.json",
    "/etc/passwd",
    "a/../b.json",
    "a\\b.json",
    "a//b.json",
    "a/./b.json",
    ".hidden",
    "a/.git/config",
    "a\x00b",
    "a\nb",
    "a b.json",
    "报告.json",
    "",
    "a/",
    "C:/x.json",
    "x" * 500,
]


@pytest.mark.parametrize("bad", BAD_PATHS, ids=[repr(p)[:20] for p in BAD_PATHS])
def test_unsafe_paths_are_rejected(local_store: Store, bad: str) -> None:
    head = local_store.head("results")
    with pytest.raises(StoreError, match="invalid path"):
        local_store.read("results", bad)
    with pytest.raises(StoreError, match="invalid path"):
        local_store.commit("results", {bad: b"x"}, [], "evil")
    with pytest.raises(StoreError, match="invalid path"):
        local_store.commit("results", {}, [bad], "evil")
    assert local_store.head("results") == head


def test_unsafe_paths_are_rejected_by_hub_store(store: Store) -> None:
    head = store.head("submissions")
    for bad in ("../../x.json", "/abs.json", "a\\b.json", ".gitattributes"):
        with pytest.raises(StoreError, match="invalid path"):
            store.read("submissions", bad)
        with pytest.raises(StoreError, match="invalid path"):
            store.commit("submissions", {"ok.json": b"1", bad: b"x"}, [], "evil")
    with pytest.raises(StoreError, match="invalid revision"):
        store.read("submissions", "ok.json", revision="../main")
    assert store.head("submissions") == head


def test_web_process_store_cannot_touch_references(store: Store, open_test_store) -> None:
    store.commit("references", {"varm/test.jsonl": b'{"id": "1"}\n'}, [], "gold")
    web = open_test_store(areas=WEB_AREAS)
    for call in (
        lambda: web.read("references", "varm/test.jsonl"),
        lambda: web.list("references"),
        lambda: web.head("references"),
        lambda: web.local_snapshot("references"),
        lambda: web.history("references"),
        lambda: web.commit("references", {"x.json": b"x"}, [], "nope"),
    ):
        with pytest.raises(StoreError, match="not available to this process"):
            call()
    web.commit("results", {"ok.json": b"1"}, [], "web may write results")
    assert store.read("results", "ok.json") == b"1"
    with pytest.raises(StoreError, match="unknown area"):
        store.read("secrets", "x.json")


def test_concurrent_writers_lose_no_update(store: Store, open_test_store) -> None:
    n = 8
    store.commit("results", {"counter.json": b"0"}, [], "init")
    errors: list[BaseException] = []

    def writer(name: str) -> None:
        own = open_test_store()
        for i in range(n):

            def build(s: Store, head: str, i=i):
                value = int(s.read("results", "counter.json", revision=head))
                return {"counter.json": str(value + 1).encode(), f"log/{name}-{i}.json": b"{}"}, []

            try:
                commit_with_retry(own, "results", build, f"{name} #{i}", attempts=100, backoff=0.01)
            except BaseException as exc:  # surfaced by the main thread
                errors.append(exc)

    threads = [threading.Thread(target=writer, args=(name,)) for name in ("w1", "w2")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors
    assert store.read("results", "counter.json") == str(2 * n).encode()
    assert len(store.list("results", "log/")) == 2 * n
    assert len(store.history("results", limit=1000)) >= 2 * n + 2


# -- HubStore only --------------------------------------------------------------------------------------


def test_hub_retries_429_and_500_and_commits_once(hub_store: Store, fakehub) -> None:
    head = hub_store.head("results")
    fakehub.fault(r"/commit/", status=429, method="POST")
    fakehub.fault(r"/commit/", status=500, method="POST")
    rev = hub_store.commit("results", {"a.json": b"1"}, [], "flaky", parent=head)
    assert fakehub.stats()["POST commit"] == 3
    history = hub_store.history("results")
    assert [h["message"] for h in history].count("flaky") == 1 and history[0]["revision"] == rev


def test_hub_lost_response_after_commit_is_not_applied_twice(hub_store: Store, fakehub) -> None:
    hub_store.commit("results", {"counter.json": b"0"}, [], "init")
    fakehub.reset()
    fakehub.fault(r"/commit/", status=502, method="POST", after=True)  # applied, but the answer is lost

    def increment(s: Store, head: str):
        return {"counter.json": str(int(s.read("results", "counter.json", revision=head)) + 1).encode()}, []

    rev = commit_with_retry(hub_store, "results", increment, "increment")
    assert fakehub.stats()["POST commit"] == 1  # the retry found the landed commit instead of resending
    assert hub_store.head("results") == rev and hub_store.read("results", "counter.json") == b"1"
    assert [h["message"] for h in hub_store.history("results")].count("increment") == 1


def test_hub_timeout_is_retried_without_double_apply(hub_config: Config, tmp_path: Path, fakehub) -> None:
    from worker.store.hub import set_http_timeout

    store = open_store(hub_config, cache_dir=tmp_path / "c", base_delay=0.01, timeout=0.5)
    try:
        head = store.head("results")
        fakehub.reset()
        fakehub.fault(r"/commit/", delay=1.2, method="POST")  # the first attempt hangs, then lands late
        rev = store.commit("results", {"slow.json": b"1"}, [], "slow", parent=head)
        time.sleep(1.2)  # let the hung request finish: parent_commit makes it a 412, not a second commit
        assert fakehub.stats()["POST commit"] >= 2
        assert [h["revision"] for h in store.history("results")][:2] == [rev, head]
    finally:
        set_http_timeout(60.0)


def test_hub_store_commits_a_dataset_card(hub_store: Store) -> None:
    # huggingface_hub validates README.md through POST /api/validate-yaml before committing it.
    card = b"---\nlicense: cc-by-4.0\npretty_name: Leaderboard results\n---\n# Results\n"
    hub_store.commit("results", {"README.md": card}, [], "card")
    assert hub_store.read("results", "README.md") == card
    with pytest.raises(StoreError, match="front matter"):
        hub_store.commit("results", {"README.md": b"---\nlicense: x\n"}, [], "broken card")


def test_hub_injected_412_is_a_conflict(hub_store: Store, fakehub) -> None:
    head = hub_store.head("results")
    fakehub.fault(r"/commit/", status=412, method="POST")
    with pytest.raises(ConflictError):
        hub_store.commit("results", {"a.json": b"1"}, [], "x", parent=head)
    assert fakehub.stats()["POST commit"] == 1  # conflicts are the caller's to retry, not ours
    assert hub_store.head("results") == head


def test_hub_gives_up_after_bounded_retries(hub_config: Config, tmp_path: Path, fakehub) -> None:
    store = open_store(hub_config, cache_dir=tmp_path / "c", attempts=3, base_delay=0.001)
    head = store.head("results")
    fakehub.fault(r"/commit/", status=503, method="POST", count=10)
    with pytest.raises(StoreError, match="503|Service Unavailable"):
        store.commit("results", {"a.json": b"1"}, [], "never")
    assert fakehub.stats()["POST commit"] == 3
    fakehub.reset()
    assert store.head("results") == head


def test_hub_list_pages_through_the_prefix_folder_only(hub_store: Store, fakehub) -> None:
    """A listing costs requests by the size of its folder, not of the repository (the fake Hub pages tree
    listings by 1,000 entries, as the Hub does): a publish's small listings stay flat as the board grows."""
    big = {f"big/{i:04d}.json": b"1" for i in range(2100)}
    hub_store.commit("results", {**big, "small/a.json": b"a", "small/b/c.json": b"c"}, [], "seed")
    fakehub.reset()
    assert hub_store.list("results", "small/") == ["small/a.json", "small/b/c.json"]
    assert fakehub.stats().get("GET tree") == 1
    fakehub.reset()
    assert len(hub_store.list("results", "big/")) == 2100  # positive control: a big folder takes pages
    assert fakehub.stats().get("GET tree") == 3
    assert len(hub_store.list("results")) == 2102


def test_hub_private_repos_need_the_right_token(hub_store: Store, hub_config: Config, tmp_path: Path) -> None:
    hub_store.commit("references", {"gold.jsonl": b"{}\n"}, [], "gold")
    hub_store.commit("results", {"board.json": b"[]"}, [], "board")
    for token in (None, "hf_test_other"):
        config = dataclasses.replace(hub_config, hf_token=token)
        outsider = open_store(
            config,
            areas={"references", "results"},
            create_repos=False,
            cache_dir=tmp_path / f"c-{token}",
            base_delay=0.001,
        )
        with pytest.raises(StoreError, match="not found or not accessible"):
            outsider.read("references", "gold.jsonl")
        with pytest.raises(StoreError, match="not found or not accessible"):
            outsider.head("references")
        assert outsider.read("results", "board.json") == b"[]"  # results are public


def test_hub_repo_visibility(hub_store, hub_config: Config, fakehub_url: str, tmp_path: Path) -> None:
    from huggingface_hub import HfApi

    api = HfApi(endpoint=fakehub_url, token="hf_test_write_token")
    privacy = {
        area: api.repo_info(hub_store.repos[area], repo_type="dataset").private
        for area in ("references", "submissions", "results")
    }
    assert privacy == {"references": True, "submissions": True, "results": False}
    # A references repo that somebody made public is refused, not silently used.
    public = f"tester/public-refs-{tmp_path.name[-8:]}"
    api.create_repo(public, repo_type="dataset", private=False)
    config = dataclasses.replace(hub_config, hf_references_repo=public)
    with pytest.raises(StoreError, match="public repo"):
        open_store(config, cache_dir=tmp_path / "c")


def test_hub_store_pages_through_trees_and_commits(tmp_path: Path) -> None:
    from tests.conftest_hub import FakeHubControl, make_hub_config, start_fakehub, stop_fakehub

    proc, url = start_fakehub({"FAKEHUB_PAGE_SIZE": "3"})
    try:
        store = open_store(make_hub_config(url, tmp_path / "data"), cache_dir=tmp_path / "c", base_delay=0.01)
        files = {f"d{i % 3}/sub/f{i}.json": b"%d" % i for i in range(10)} | {"top.json": b"t"}
        for i in range(4):
            store.commit("submissions", {f"extra{i}.json": b"e"}, [], f"c{i}")
        rev = store.commit("submissions", files, [], "many")
        control = FakeHubControl(url)
        control.reset()
        assert store.list("submissions") == sorted(files | {f"extra{i}.json": b"" for i in range(4)})
        # 16 files (with .gitattributes) + 6 folders = 22 entries, in pages of 3
        assert control.stats()["GET tree"] == 8
        assert store.list("submissions", "d1/") == sorted(p for p in files if p.startswith("d1/"))
        assert len(files_in(store.local_snapshot("submissions", rev))) == 15
        assert [h["message"] for h in store.history("submissions")] == [
            "many",
            "c3",
            "c2",
            "c1",
            "c0",
            "initial commit",
        ]
    finally:
        stop_fakehub(proc)


# -- LocalStore only ------------------------------------------------------------------------------------

_WRITER = """
import sys
from worker.store import LocalStore, commit_with_retry
store, name, n = LocalStore(sys.argv[1]), sys.argv[2], int(sys.argv[3])
def build(s, head):
    value = int(s.read("results", "counter.json", revision=head))
    return {"counter.json": str(value + 1).encode(), "log/%s-%d.json" % (name, i): b"{}"}, []
for i in range(n):
    commit_with_retry(store, "results", build, name, attempts=200, backoff=0.002)
"""


def test_local_store_is_safe_across_processes(tmp_path: Path) -> None:
    n = 25
    store = LocalStore(tmp_path)
    store.commit("results", {"counter.json": b"0"}, [], "init")
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path), name, str(n)], cwd=ROOT)
        for name in ("p1", "p2", "p3")
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    assert store.read("results", "counter.json") == b"75"
    assert len(store.list("results", "log/")) == 75
    lines = (tmp_path / "store" / "results" / "commits.jsonl").read_text().splitlines()
    assert len(lines) == 77  # initial + init + 75, each a complete JSON record
    assert all(json.loads(line)["revision"] for line in lines)


def test_local_readers_never_see_half_a_commit(local_store: Store) -> None:
    local_store.commit("results", {"a.json": b"0", "b.json": b"0"}, [], "init")
    stop = threading.Event()

    def write() -> None:
        for i in range(1, 60):
            v = str(i).encode()
            local_store.commit("results", {"a.json": v, "b.json": v}, [], f"pair {i}")
        stop.set()

    thread = threading.Thread(target=write)
    thread.start()
    checked = 0
    while not stop.is_set() or checked == 0:
        head = local_store.head("results")
        assert local_store.read("results", "a.json", head) == local_store.read("results", "b.json", head)
        snapshot = local_store.local_snapshot("results", head)
        assert (snapshot / "a.json").read_bytes() == (snapshot / "b.json").read_bytes()
        checked += 1
    thread.join()


def test_local_layout_and_read_only_snapshots(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    rev = store.commit("submissions", {"s/1/meta.json": b"{}"}, [], "meta")
    area = tmp_path / "store" / "submissions"
    assert (area / "HEAD").read_text().strip() == rev
    assert (area / "commits.jsonl").exists()
    snapshot = store.local_snapshot("submissions")
    assert snapshot.is_relative_to(area)
    assert (snapshot / "s/1/meta.json").stat().st_mode & 0o222 == 0  # read-only files
    assert store.local_snapshot("submissions", rev) == snapshot  # built once, then reused


GROUP_SHARED_STORE = """
import os, stat, sys
from pathlib import Path
from worker.store import LocalStore
from worker.token_file import ensure_token_file
root = Path(sys.argv[1])
store = LocalStore(root)
store.commit("submissions", {"s/1/meta.json": b"{}"}, [], "meta")
store.local_snapshot("submissions")
ensure_token_file(root)
modes = {}
for folder, dirs, files in os.walk(root):
    for name in dirs + files:
        path = os.path.join(folder, name)
        modes[path] = stat.S_IMODE(os.stat(path).st_mode) | (0o40000 if name in dirs else 0)
print(repr(modes))
"""


@pytest.mark.parametrize("umask", [0o007, 0o077])
def test_store_files_get_the_mode_the_umask_allows(tmp_path: Path, umask: int) -> None:
    """The image's two-user mode shares the store between the web user and the workers' user through their
    group with umask 007 (docker/two_users.py): a file made through mkstemp (0600 whatever the umask) would
    lock the other user out. With umask 077 (the control) the same files stay the owner's alone."""
    root = tmp_path / "data"
    out = subprocess.run(
        [sys.executable, "-c", GROUP_SHARED_STORE, str(root)],
        capture_output=True,
        text=True,
        check=True,
        preexec_fn=lambda: os.umask(umask),
        cwd=Path(__file__).resolve().parent.parent,
    ).stdout
    modes = eval(out)  # noqa: S307  (our own script's repr of a dict of ints)
    files = {path: mode for path, mode in modes.items() if not mode & 0o40000}
    assert any(path.endswith("tokens.json") for path in files) and len(files) >= 5
    for path, mode in files.items():
        if "/snapshots/" in path:
            assert mode == 0o444, path  # read-only use
            continue
        assert mode == 0o666 & ~umask & ~0o111, (path, oct(mode))
    for path, mode in modes.items():
        if mode & 0o40000:
            assert mode & 0o777 == 0o777 & ~umask, (path, oct(mode))


# -- configuration ---------------------------------------------------------------------------------------


def test_config_from_env_defaults_and_overrides() -> None:
    config = Config.from_env({})
    assert (config.store, config.data_dir, config.hf_revision) == ("local", Path("data"), "main")
    assert config.port == 7860 and config.celery_broker_url is None
    assert (config.quota_per_day, config.attempts_per_day, config.stuck_after_seconds) == (5, 30, 30)
    assert config.maintainers == () and config.hf_token is None
    hub = Config.from_env(
        {
            "HF_RESULTS_REPO": "org/results",
            "MAINTAINERS": "alice, bob,",
            "PORT": "8000",
            "HF_ENDPOINT": "http://127.0.0.1:9/",
        }
    )
    assert (hub.store, hub.maintainers, hub.port, hub.hf_endpoint) == (
        "hub",
        ("alice", "bob"),
        8000,
        "http://127.0.0.1:9",
    )
    assert Config.from_env({"HF_RESULTS_REPO": "org/r", "STORE": "local"}).store == "local"
    with pytest.raises(ValueError, match="STORE"):
        Config.from_env({"STORE": "s3"})
    with pytest.raises(ValueError, match="QUOTA_PER_DAY"):
        Config.from_env({"QUOTA_PER_DAY": "many"})


@pytest.mark.parametrize(
    "name, value",
    [
        ("PORT", "70000"),
        ("STUCK_AFTER_SECONDS", "0"),
        ("TASK_SOFT_TIME_LIMIT", "x"),
        ("TASK_TIME_LIMIT", "10"),
        ("CELERY_VISIBILITY_TIMEOUT", "-1"),
        ("WORK_SLOTS", "0"),
        ("WORK_QUEUE_SECONDS", "soon"),
        ("AUTH", "bogus"),
        ("MIN_FREE_DISK_MB", "-5"),
    ],
)
def test_config_names_the_bad_variable(name: str, value: str) -> None:
    with pytest.raises(ValueError, match=name):
        Config.from_env({name: value})


def test_config_reads_every_pipeline_variable() -> None:
    config = Config.from_env(
        {
            "HOST": "127.0.0.1",
            "AUTH": "Open",
            "TASK_SOFT_TIME_LIMIT": "20",
            "CELERY_KEY_PREFIX": "p:",
            "CELERY_VISIBILITY_TIMEOUT": "500",
            "WORK_SLOTS": "3",
            "WORK_QUEUE_SECONDS": "2.5",
            "MIN_FREE_DISK_MB": "0",
            "WORKER_RESTART_MAX_DELAY": "5",
        }
    )
    assert (config.host, config.auth, config.task_soft_time_limit, config.hard_time_limit) == (
        "127.0.0.1",
        "open",
        20,
        80,
    )
    assert (config.celery_key_prefix, config.celery_visibility_timeout) == ("p:", 500)
    assert (config.work_slots, config.work_queue_seconds, config.min_free_disk_mb) == (3, 2.5, 0)
    assert config.worker_restart_max_delay == 5.0


def test_bad_variable_stops_start_up_with_one_line(tmp_path: Path) -> None:
    for module in ("space", "worker.celery"):
        env = {**os.environ, "DATA_DIR": str(tmp_path), "STUCK_AFTER_SECONDS": "soon"}
        out = subprocess.run(
            [sys.executable, "-c", f"import runpy; runpy.run_module('{module}', run_name='__main__')"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            cwd=Path(__file__).resolve().parents[1],
        )
        assert out.returncode != 0
        assert "STUCK_AFTER_SECONDS must be an integer" in out.stderr, out.stderr[-500:]
        assert "Traceback" not in out.stderr, out.stderr[-2000:]


def test_hub_store_needs_repo_ids(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="HF_REFERENCES_REPO"):
        open_store(
            Config(data_dir=tmp_path, store="hub", hf_results_repo="tester/r", hf_submissions_repo="tester/s")
        )


# -- the fake itself speaks the real client's protocol (other suites rely on these calls) -----------------


def test_fakehub_serves_the_real_client(fakehub_url: str, tmp_path: Path) -> None:
    from huggingface_hub import HfApi, HfFileSystem, hf_hub_download
    from huggingface_hub.errors import HfHubHTTPError, RemoteEntryNotFoundError, RevisionNotFoundError

    api = HfApi(endpoint=fakehub_url, token="hf_test_write_token")
    assert api.whoami()["name"] == "tester"
    assert HfApi(endpoint=fakehub_url, token="hf_test_other").whoami()["name"] == "other"
    repo = f"tester/fidelity-{tmp_path.name[-6:]}"
    api.create_repo(repo, repo_type="dataset", private=True)
    with pytest.raises(HfHubHTTPError) as err:
        api.create_repo(repo, repo_type="dataset")
    assert err.value.response.status_code == 409
    api.create_repo(repo, repo_type="dataset", exist_ok=True)
    first = api.upload_file(
        path_or_fileobj=b"one", path_in_repo="a/one.txt", repo_id=repo, repo_type="dataset"
    )
    (tmp_path / "up" / "sub").mkdir(parents=True)
    (tmp_path / "up" / "sub" / "two.txt").write_text("two")
    api.upload_folder(folder_path=tmp_path / "up", repo_id=repo, repo_type="dataset")
    top = {e.path: type(e).__name__ for e in api.list_repo_tree(repo, repo_type="dataset")}
    assert top == {".gitattributes": "RepoFile", "a": "RepoFolder", "sub": "RepoFolder"}
    infos = api.get_paths_info(repo, ["a/one.txt", "nope"], repo_type="dataset")
    assert [p.path for p in infos] == ["a/one.txt"]
    assert api.file_exists(repo, "sub/two.txt", repo_type="dataset")
    assert api.revision_exists(repo, first.oid, repo_type="dataset")
    assert api.list_repo_refs(repo, repo_type="dataset").branches[0].name == "main"
    old = hf_hub_download(
        repo,
        "a/one.txt",
        repo_type="dataset",
        revision=first.oid,
        endpoint=fakehub_url,
        cache_dir=tmp_path / "c",
        token="hf_test_write_token",
    )
    assert Path(old).read_bytes() == b"one"
    with pytest.raises(RemoteEntryNotFoundError):
        api.hf_hub_download(repo, "missing.txt", repo_type="dataset", cache_dir=tmp_path / "c")
    with pytest.raises(RevisionNotFoundError):
        api.hf_hub_download(
            repo, "a/one.txt", repo_type="dataset", revision="f" * 40, cache_dir=tmp_path / "c"
        )
    fs = HfFileSystem(endpoint=fakehub_url, token="hf_test_write_token")
    assert fs.read_text(f"datasets/{repo}/sub/two.txt") == "two"
    with fs.open(f"datasets/{repo}/a/one.txt", "rb", block_size=2) as f:  # Range requests
        f.seek(1)
        assert f.read(2) == b"ne"
    api.delete_repo(repo, repo_type="dataset")
    assert not api.repo_exists(repo, repo_type="dataset")


@pytest.mark.parametrize(
    "headers",
    [
        {"Retry-After": "1"},
        {"RateLimit": '"api";r=0;t=1', "RateLimit-Policy": '"fixed window";"api";q=500;w=300'},
    ],
)
@pytest.mark.slow
def test_hub_waits_out_a_rate_limit_window(hub_config: Config, tmp_path: Path, fakehub, headers) -> None:
    """A 429 naming its window is waited out (without using an attempt); one that names none, or a window
    longer than the budget, still fails after the bounded retries."""
    store = open_store(hub_config, cache_dir=tmp_path / "c", attempts=2, base_delay=0.001)
    store.commit("results", {"a.json": b"1"}, [], "a")
    fakehub.reset()
    fakehub.fault(r"/api/datasets/", status=429, method="GET", count=3, headers=headers)
    started = time.monotonic()
    assert store.head("results")  # 3 windows of 1 s with only 2 attempts: it waited
    assert time.monotonic() - started >= 3 * 0.9
    assert sum(n for route, n in fakehub.stats().items() if route.startswith("GET")) == 4
    # Positive controls: a bare 429 uses the attempts; a window beyond the budget is not waited for.
    fakehub.fault(r"/api/datasets/", status=429, method="GET", count=3)
    with pytest.raises(StoreError, match="429|Too Many"):
        store.head("results")
    fakehub.reset()
    impatient = open_store(
        hub_config, cache_dir=tmp_path / "d", attempts=2, base_delay=0.001, rate_limit_wait=0.5
    )
    fakehub.fault(r"/api/datasets/", status=429, method="GET", count=3, headers=headers)
    with pytest.raises(StoreError, match="429|Too Many"):
        impatient.head("results")
    fakehub.reset()
