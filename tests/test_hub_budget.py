"""The Hub commit budget (worker/store/budget.py): commits are paced below the Hub's per-repo hourly limit.

Against a fake Hub that enforces the limit (429 + Retry-After past N commits per window), a paced HubStore
makes more commits than the limit allows in one window without a single 429; the positive control, the same
commits unpaced, is refused."""

from __future__ import annotations

import multiprocessing
import secrets
import socket
import threading
import time
from pathlib import Path

import pytest

from tests.conftest_hub import FakeHubControl, make_hub_config, start_fakehub, stop_fakehub
from tests.conftest_pipeline import redis_url
from worker.store import open_store
from worker.store.budget import CommitBudget, FileLedger, MemoryLedger, Policy, RedisLedger


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_policy_is_free_when_quiet_then_paced_then_capped() -> None:
    policy = Policy(limit=10, window=100.0, share=0.9, free=0.5)  # cap 9, spacing 100/9 s
    assert policy.cap == 9 and policy.next_slot([], 0.0) == 0.0
    assert policy.next_slot([1.0, 2.0, 3.0, 4.0], 5.0) == 5.0  # 4 < 4.5: free
    paced = policy.next_slot([1.0, 2.0, 3.0, 4.0, 5.0], 6.0)
    assert paced == pytest.approx(5.0 + 100 / 9)
    full = [float(t) for t in range(1, 10)]  # 9 commits in the window: wait for the oldest to leave it
    assert policy.next_slot(full, 10.0) == pytest.approx(101.0)
    assert policy.next_slot([t - 200 for t in full], 10.0) == 10.0  # old commits do not count


def test_budget_never_exceeds_the_cap_in_any_window() -> None:
    clock = Clock()
    budget = CommitBudget(MemoryLedger(), Policy(limit=20, window=60.0), clock=clock, sleep=clock.sleep)
    times = []
    for _ in range(100):
        budget.take("org/repo")
        times.append(clock.now)
    cap = budget.policy.cap
    assert max(sum(1 for t in times if start <= t < start + 60.0) for start in times) <= cap
    assert clock.slept, "positive control: 100 commits at once must have been paced"
    status = budget.status("org/repo")
    assert status["paced"] and status["commits_last_window"] <= cap and status["cap"] == cap


def test_file_ledger_is_shared_and_atomic(tmp_path: Path) -> None:
    ledger = FileLedger(tmp_path / "budget")
    policy = Policy(limit=1000, window=3600.0)

    def take_many() -> None:
        budget = CommitBudget(ledger, policy)  # each thread its own budget, like separate processes
        for _ in range(25):
            budget.take("org/repo")

    threads = [threading.Thread(target=take_many) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    status = CommitBudget(FileLedger(tmp_path / "budget"), policy).status("org/repo")
    assert status["commits_last_window"] == 100


@pytest.fixture
def limited_hub():
    """A fake Hub of its own that refuses more than 6 commits per repo within 4 s (the Hub's rule, faster)."""
    proc, url = start_fakehub({"FAKEHUB_COMMITS_PER_HOUR": "6", "FAKEHUB_COMMIT_WINDOW": "4"})
    try:
        yield url, FakeHubControl(url)
    finally:
        stop_fakehub(proc)


@pytest.mark.slow
def test_paced_hub_store_commits_past_the_limit_without_a_429(limited_hub, tmp_path: Path) -> None:
    url, control = limited_hub
    config = make_hub_config(url, tmp_path / "data")
    paced = open_store(
        config,
        cache_dir=tmp_path / "c",
        base_delay=0.01,
        budget=CommitBudget(FileLedger(tmp_path / "ledger"), Policy(limit=6, window=4.0)),
    )
    control.reset()
    started = time.monotonic()
    for i in range(12):
        paced.commit("results", {f"f{i}.json": b"%d" % i}, [], f"c{i}")
    assert "429 commit" not in control.stats()
    assert len(control.commits()[config.hf_results_repo]) == 12
    assert time.monotonic() - started >= 4.0  # 12 commits at 5 per 4 s: it waited for slots
    assert paced.budget_status()["results"]["cap"] == 5

    # Positive control: the same commits without pacing meet the limit (and then wait out its Retry-After).
    unpaced = open_store(
        make_hub_config(url, tmp_path / "data2"),
        cache_dir=tmp_path / "c2",
        base_delay=0.01,
        budget=CommitBudget(policy=Policy(limit=1_000_000)),
    )
    control.reset()
    for i in range(8):
        unpaced.commit("results", {f"f{i}.json": b"%d" % i}, [], f"c{i}")
    assert control.stats().get("429 commit", 0) >= 1


def test_health_shows_the_commit_budget_by_area(hub_config, tmp_path: Path) -> None:
    from tests.conftest_pipeline import RecordingEnqueuer
    from worker.service import Service
    from worker.store import WEB_AREAS

    store = open_store(hub_config, areas=WEB_AREAS, cache_dir=tmp_path / "c", base_delay=0.01)
    store.commit("results", {"a.json": b"1"}, [], "a")
    health = Service(hub_config, store, RecordingEnqueuer()).health()
    budget = health["hub_commits"]
    assert set(budget) == {"submissions", "results"}
    assert budget["results"]["commits_last_window"] == 1 and budget["results"]["paced"] is False
    assert hub_config.hf_results_repo not in str(health)  # areas, not repo names


def test_group_commit_puts_concurrent_changes_in_one_commit(tmp_path: Path) -> None:
    """Changes queued while a commit is under way share the next commit; each build sees the files of the
    builds before it; a failing build fails only its caller. Positive control: alone, one commit each."""
    from worker.store.group import GroupCommit
    from worker.store.local import LocalStore

    store = LocalStore(tmp_path / "data")
    gate, entered = threading.Event(), threading.Event()
    slow_read = store.read

    def read(area, path, revision=None):  # the first build waits: the others queue behind its commit
        if path == "first.json":
            entered.set()
            gate.wait(10)
        return slow_read(area, path, revision)

    store.read = read  # type: ignore[method-assign]
    group = GroupCommit(store, "results")

    def append(name: str):
        def build(view, head):
            counter = int(view.read("results", "counter.txt", head) or b"0")
            if name == "bad":
                raise ValueError("refused")
            return {"counter.txt": b"%d" % (counter + 1), f"{name}.json": b"1"}, []

        return build

    errors: dict[str, BaseException] = {}

    def run(name: str) -> None:
        try:
            group.commit(append(name), name)
        except ValueError as exc:
            errors[name] = exc

    def first_build(view, head):
        view.read("results", "first.json", head)
        return {"first.json": b"1"}, []

    first = threading.Thread(target=lambda: group.commit(first_build, "first"))
    first.start()
    assert entered.wait(10)
    others = [threading.Thread(target=run, args=(name,)) for name in ("a", "b", "bad", "c")]
    for t in others:
        t.start()
    time.sleep(0.3)  # all four queued behind the first commit
    gate.set()
    for t in [first, *others]:
        t.join(10)
    assert set(errors) == {"bad"}
    assert store.read("results", "counter.txt") == b"3"  # a, b, c each saw the one before
    assert group.commits == 2 and group.changes == 4  # first alone, then a + b + c together
    for name in ("a", "b", "c"):
        group.commit(append(name), name)
    assert group.commits == 5  # positive control: one at a time, one commit each


class Budgeted:
    """A LocalStore that says its budget is paced (as HubStore does under load) and counts commits."""

    def __init__(self, store, tight: bool) -> None:
        self._store, self._tight, self.commits = store, tight, 0

    def budget_tight(self, area: str) -> bool:
        return self._tight

    def commit(self, *args, **kwargs):
        self.commits += 1
        return self._store.commit(*args, **kwargs)

    def __getattr__(self, name: str):
        return getattr(self._store, name)


@pytest.mark.parametrize("tight", [True, False])
def test_a_paced_first_scoring_attempt_costs_one_commit(tmp_path: Path, tight: bool) -> None:
    """Paced: queued -> scored in ONE commit that records the attempt (a batch of one); the published marks
    wait for the next batch or the reconciler. Positive control (not paced): the 'scoring' commit, then the
    result, then the mark."""
    from tests.conftest_ui import seed_public
    from tests.factories import mixed_predictions
    from worker.gold.batch import score
    from worker.gold.publish import Publisher
    from worker.gold.references import ReferenceCache
    from worker.records import new_record, predictions_path, record_path
    from worker.store.local import LocalStore
    from worker.submissions import dumps, load_record

    local = LocalStore(tmp_path / "data")
    seed_public(local, "varm")
    sid = "0123456789abcdef"
    record = new_record(
        submission_id=sid, track="varm", sha256="0" * 64, submitter="u", metadata={"model_name": "m"}
    )
    local.commit(
        "submissions",
        {
            predictions_path("varm", sid): mixed_predictions("varm", 0.5),
            record_path("varm", sid): dumps(record),
        },
        [],
        "upload",
    )
    store = Budgeted(local, tight)
    assert score(store, ReferenceCache(local).get, "varm", sid, time_limit=60) == {("varm", sid): "scored"}
    scored = load_record(local, "varm", sid)
    assert scored["status"] == "scored" and scored["attempts"] == 1
    assert ("scoring" in [h["status"] for h in scored["history"]]) is not tight
    assert store.commits == (1 if tight else 2)
    Publisher(store).publish("varm")
    assert load_record(local, "varm", sid)["status"] == ("scored" if tight else "published")
    assert store.commits == (2 if tight else 4)  # + the results commit (+ the mark when not paced)


def test_a_publish_request_covered_by_a_later_publish_is_skipped(monkeypatch) -> None:
    from worker.gold import tasks

    calls = []

    class Counting:
        def publish(self, track: str) -> dict:
            calls.append(track)
            return {"changed": True, "rows": 1}

    monkeypatch.setattr(tasks, "publisher", lambda: Counting())
    monkeypatch.setattr(tasks, "_publish_started", {})
    asked = time.time() - 10  # sent before the publish below started
    assert tasks.publish_track("varm", time.time())["changed"]
    assert tasks.publish_track("varm", asked) == {"changed": False, "covered": True}
    assert tasks.publish_track("varm", time.time() + 5)["changed"]  # sent after it: published again
    assert tasks.publish_track("varm")["changed"]  # no request time (older senders): always published
    assert tasks.publish_track("cold", asked)["changed"]  # other tracks are their own
    assert calls == ["varm", "varm", "varm", "cold"]


def _take_in_a_process(url: str, prefix: str, count: int) -> None:
    budget = CommitBudget(RedisLedger(url, prefix), Policy(limit=1000, window=3600.0))
    for _ in range(count):
        budget.take("org/repo")


def test_redis_ledger_is_shared_by_processes_and_isolated_by_prefix() -> None:
    """Four real processes take 25 slots each through one Redis ledger: all 100 are counted (the Redis lock
    serialises the read-modify-write). Another key prefix (another deployment on the same Redis) sees none
    of them, and a prefix that took slots of its own is the positive control that the count is live."""
    url, prefix, other = redis_url(), f"t{secrets.token_hex(4)}:", f"t{secrets.token_hex(4)}:"
    policy = Policy(limit=1000, window=3600.0)
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_take_in_a_process, args=(url, prefix, 25)) for _ in range(4)]
    procs.append(ctx.Process(target=_take_in_a_process, args=(url, other, 3)))
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    ledger = RedisLedger(url, prefix)
    try:
        assert CommitBudget(ledger, policy).status("org/repo")["commits_last_window"] == 100
        assert CommitBudget(RedisLedger(url, other), policy).status("org/repo")["commits_last_window"] == 3
        assert ledger.redis.ttl(f"{prefix}hub-budget:org/repo") > 0  # the key expires: no unbounded growth
    finally:
        for p in (prefix, other):
            ledger.redis.delete(f"{p}hub-budget:org/repo")


def test_a_redis_outage_does_not_stop_commits() -> None:
    """The ledger only paces: with its Redis unreachable a commit goes ahead at once (the Hub's own 429 is
    still honoured by HubStore), and the health status says the count is unknown instead of failing."""
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    clock = Clock()
    budget = CommitBudget(
        RedisLedger(f"redis://127.0.0.1:{port}/0"),
        Policy(limit=2, window=60.0),
        clock=clock,
        sleep=clock.sleep,
    )
    assert [budget.take("org/repo") for _ in range(5)] == [None] * 5 and not clock.slept
    assert budget.status("org/repo")["commits_last_window"] is None


@pytest.mark.parametrize("forget", [True, False])
def test_a_slot_that_no_commit_used_is_given_back(hub_config, tmp_path: Path, forget: bool) -> None:
    """A read-modify-write that finds nothing to change gives its slot back: the ledger counts commits,
    not attempts. Positive control (not given back): the unused slot counts until a later commit of the
    thread takes it over, as it is, without waiting for a slot of its own."""
    from worker.store import commit_with_retry

    budget = CommitBudget(MemoryLedger(), Policy(limit=1000, window=3600.0))
    store = open_store(hub_config, cache_dir=tmp_path / "c", base_delay=0.01, budget=budget)
    if not forget:
        store.unpace = lambda area: None
    repo = hub_config.hf_results_repo
    commit_with_retry(store, "results", lambda s, head: ({}, []), "nothing to change")
    assert budget.status(repo)["commits_last_window"] == (0 if forget else 1)
    store.commit("results", {"a.json": b"1"}, [], "a")
    assert budget.status(repo)["commits_last_window"] == 1


def test_a_commit_the_hub_refused_gives_its_slot_back(limited_hub, tmp_path: Path) -> None:
    """A 412 (the head moved) is not counted by the Hub, so not by the ledger either: a writer that loses
    races does not fill the window with ghosts. Positive control: the commit that landed is counted."""
    from worker.store import ConflictError

    url, _ = limited_hub
    budget = CommitBudget(MemoryLedger(), Policy(limit=1000, window=3600.0))
    store = open_store(
        make_hub_config(url, tmp_path / "data"), cache_dir=tmp_path / "c", base_delay=0.01, budget=budget
    )
    first = store.commit("results", {"a.json": b"1"}, [], "a")
    store.commit("results", {"b.json": b"1"}, [], "b", parent=first)
    with pytest.raises(ConflictError):
        store.commit("results", {"c.json": b"1"}, [], "c", parent=first)  # stale parent: 412
    assert budget.status(store.repos["results"])["commits_last_window"] == 2


def test_a_slot_is_counted_when_its_commit_lands() -> None:
    """The Hub counts a commit when it lands: a commit that lands after its slot moves the slot there, so
    the next slots are spaced from it. Positive control: a commit that lands before its slot keeps it."""
    clock = Clock()
    budget = CommitBudget(MemoryLedger(), Policy(limit=10, window=100.0), clock=clock, sleep=clock.sleep)
    slot = budget.take("org/repo")
    assert slot == clock.now
    clock.now += 7.5  # the change took 7.5 s to build and send
    budget.landed("org/repo", slot)
    assert budget.ledger.update("org/repo", lambda t: t) == [clock.now]
    budget.landed("org/repo", clock.now + 1)  # unknown or future slots change nothing
    assert budget.ledger.update("org/repo", lambda t: t) == [clock.now]
