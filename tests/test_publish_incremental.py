"""The incremental publish (worker/gold/publish/incremental.py, issue 26) commits exactly what the full build
commits: after every step of random sequences of submissions (newest and late ones, several at once),
moderation (hide, unhide, verified, baseline), private submissions made public and public ones made private,
new versions and Ladder changes, a warm Publisher's commit is compared file by file, in the results and the
submissions areas, with a fresh full-build Publisher's commit on a second store given the same changes.
The board model alone is checked against `live_board.encode` of the whole board after random insertions
(cascading tie groups, late rows that move later slots) and in-place changes. Positive controls: a row
changed in place that the incremental board does not rewrite, a tie walk that does not cascade and an
insertion that does not rewrite the segments after it are each caught.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from pathlib import Path

import pytest

from tests.conftest_pipeline import DEMO
from tests.factories import mixed_predictions
from worker.gold.install import install
from worker.gold.publish import Publisher, board_model, incremental
from worker.gold.publish.ranking import board_meta
from worker.gold.references import ReferenceCache
from worker.gold.scoring_job import score_submission
from worker.leaderboard import Entry
from worker.own import PRIVATE_REASON
from worker.records import SCORED, new_record, predictions_path, rows_path, staged_result_path
from worker.store import layout
from worker.store.local import LocalStore
from worker.submissions import load_record, record_files

TRACK = "cold"
POOL = 14
USERS = ("alice", "bob", "carol", "dave", "erin", "frank")


def _build_pool(root: Path, status: str) -> list[str]:
    store = LocalStore(root)
    install(store, TRACK, DEMO / TRACK, kind="demo", test_status=status)
    add, ids = {}, []
    for i in range(POOL):
        # close skills: tie groups chain, so a new system can move the rows after it into other groups
        data = mixed_predictions(TRACK, 0.5 + 0.3 * i / (POOL - 1), seed=f"pool-{i}")
        sid = hashlib.sha256(f"pool-{i}".encode()).hexdigest()[:16]
        record = new_record(
            submission_id=sid,
            track=TRACK,
            sha256=hashlib.sha256(data).hexdigest(),
            submitter=USERS[i % len(USERS)],
            metadata={"model_name": f"pool-{i}", "organisation": "", "model_type": "open", "setting": ""},
            is_baseline=False,
            at=f"2026-01-01T00:00:{i:02d}.000Z",
        )
        add[predictions_path(TRACK, sid)] = data
        ids.append(sid)
        add.update(record_files(store, store.head("submissions"), [record]))
    store.commit("submissions", add, [], "test: pool")
    refs = ReferenceCache(store)
    for sid in ids:
        assert score_submission(store, refs.get, TRACK, sid, time_limit=300) == "scored"
    return ids


@pytest.fixture(scope="module", params=["private", "public"])
def pool(request, tmp_path_factory) -> tuple[Path, list[str]]:
    """A store with the demo track installed (a private test: the Ladder applies; a public one: it does not)
    and POOL scored submissions, built once."""
    root = tmp_path_factory.mktemp(f"pool-{request.param}")
    return root, _build_pool(root, request.param)


class Clock:
    """A frozen clock that moves by `step` seconds when told (both publishers see the same times)."""

    def __init__(self) -> None:
        self.seconds = 0

    def __call__(self) -> str:
        s = self.seconds
        return f"2026-12-06T{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}.000Z"


class Sequence:
    """A random sequence of store changes, each committed to two stores alike and followed by a publish on
    each: warm (one Publisher throughout, incremental) on the first, a fresh Publisher's full build on the
    second."""

    def __init__(self, root: Path, pool_root: Path, pool: list[str], seed: int, clock: Clock) -> None:
        shutil.copytree(pool_root, root / "a")
        shutil.copytree(pool_root, root / "b")
        self.pool, self.rng, self.clock = pool, random.Random(seed), clock
        self.store, self.full = LocalStore(root / "a"), LocalStore(root / "b")
        self.export_every = 300.0
        self.warm = Publisher(self.store, export_every=self.export_every)
        self.n = 0
        self.latest = 0
        self.used = self.pool[:3]  # pool members copied so far: new ones join over time (new tie groups)

    # -- changes -------------------------------------------------------------------------------------

    def _commit(self, records: list[dict], extra: dict[str, bytes] | None = None) -> None:
        for store in (self.store, self.full):
            files = {**(extra or {}), **record_files(store, store.head("submissions"), records)}
            store.commit("submissions", files, [], "test: change")

    def _source(self) -> dict:
        fresh = [sid for sid in self.pool if sid not in self.used]
        if fresh and self.rng.random() < 0.3:
            self.used.append(fresh[0])
        return load_record(self.store, TRACK, self.rng.choice(self.used))

    def _records(self) -> list[dict]:
        listed = [load_record(self.store, TRACK, p.split("/")[1]) for p in self._ids()]
        return [r for r in listed if r is not None]

    def _ids(self) -> list[str]:
        return sorted(
            {p for p in self.store.list("submissions", f"{TRACK}/") if p.endswith("/submission.json")}
        )

    def submit(self, count: int = 1, late: bool = False) -> None:
        records, files = [], {}
        for _ in range(count):
            self.n += 1
            source = self._source()
            version = source["versions"][-1]["version"]
            sid = hashlib.sha256(f"copy-{self.n}-{self.rng.random()}".encode()).hexdigest()[:16]
            if late and self.latest > 10:
                minute = self.rng.randrange(1, self.latest)  # scored late: older than rows on the board
            else:
                self.latest += 1
                minute = self.latest
            baseline = self.rng.random() < 0.05
            record = {
                **source,
                "submission_id": sid,
                "submitter": self.rng.choice(USERS),
                "status": SCORED,
                "is_baseline": baseline,
                "created_at": f"2026-01-02T{minute // 60:02d}:{minute % 60:02d}:00.000Z",
                "metadata": {**source["metadata"], "model_name": f"model-{self.n}"},
                "history": [],
            }
            record.pop("ladder", None)
            records.append(record)
            for path in (staged_result_path, rows_path):
                files[path(TRACK, sid, version)] = self.store.read(
                    "submissions", path(TRACK, source["submission_id"], version)
                )
        self._commit(records, files)

    def moderate(self) -> None:
        records = self._records()
        if not records:
            return
        record = self.rng.choice(records)
        what = self.rng.choice(["hide", "unhide", "verified", "baseline", "private", "public", "version"])
        if what == "hide":
            record = {**record, "hidden": True, "hidden_reason": "moderation"}
        elif what == "unhide":
            hidden = [r for r in records if r.get("hidden")]
            if not hidden:
                return
            record = {**self.rng.choice(hidden), "hidden": False, "hidden_reason": None}
        elif what == "verified":
            record = {**record, "verified": not record.get("verified")}
        elif what == "baseline":
            record = {**record, "is_baseline": not record.get("is_baseline")}
        elif what == "private":
            record = {**record, "hidden": True, "hidden_reason": PRIVATE_REASON}
        elif what == "public":
            private = [r for r in records if r.get("hidden_reason") == PRIVATE_REASON]
            if not private:
                return
            record = {**self.rng.choice(private), "hidden": False, "hidden_reason": None}
        else:  # a new version (as a published re-score leaves it): another pool member's result
            source = self._source()
            old = record["versions"][-1]
            new = {**source["versions"][-1], "version": old["version"] + 1}
            files = {
                path(TRACK, record["submission_id"], new["version"]): self.store.read(
                    "submissions", path(TRACK, source["submission_id"], source["versions"][-1]["version"])
                )
                for path in (staged_result_path, rows_path)
            }
            self._commit([{**record, "versions": [*record["versions"], new]}], files)
            return
        self._commit([record])

    def step(self) -> None:
        roll = self.rng.random()
        if roll < 0.45:
            self.submit()
        elif roll < 0.55:
            self.submit(self.rng.randint(2, 5))
        elif roll < 0.65:
            self.submit(late=True)
        elif roll < 0.85:
            self.moderate()
        # else: nothing changed (a publish asked for again)
        self.clock.seconds += self.rng.choice([1, 5, 60, 400])

    # -- the comparison --------------------------------------------------------------------------------

    def publish(self, k: int) -> str | None:
        """Publish on both stores; the first difference between them, or None."""
        self.warm.publish(TRACK, note=f"step {k}")
        Publisher(self.full, export_every=self.export_every, incremental=False).publish(
            TRACK, note=f"step {k}"
        )
        for area in ("results", "submissions"):
            a, b = set(self.store.list(area, "")), set(self.full.list(area, ""))
            if a != b:
                return f"step {k}: {area} files differ: {sorted(a ^ b)[:5]}"
            for path in sorted(a):
                if area == "submissions" and "/index" not in path and not path.endswith("/submission.json"):
                    continue  # predictions and scoring files: written by the sequence alike
                if self.store.read(area, path) != self.full.read(area, path):
                    return f"step {k}: {area}/{path} differs"
        return None


def run(
    tmp_path: Path, pool: tuple[Path, list[str]], seed: int, steps: int, monkeypatch
) -> tuple[str | None, int]:
    """Run a sequence; (the first difference or None, how many publishes were incremental)."""
    clock = Clock()
    monkeypatch.setattr("worker.records.now_iso", clock)
    monkeypatch.setattr("worker.gold.publish.ranking.now_iso", clock)
    used = []
    real = incremental.build

    def counted(*args, **kwargs):
        out = real(*args, **kwargs)
        used.append(out is not None)
        return out

    monkeypatch.setattr(incremental, "build", counted)
    sequence = Sequence(tmp_path, pool[0], pool[1], seed, clock)
    sequence.submit(12)
    if (found := sequence.publish(0)) is not None:
        return found, sum(used)
    for k in range(1, steps + 1):
        sequence.step()
        if (found := sequence.publish(k)) is not None:
            return found, sum(used)
    return None, sum(used)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_incremental_publish_commits_what_the_full_build_does(tmp_path, pool, seed, monkeypatch) -> None:
    found, incremental_publishes = run(tmp_path, pool, seed, 40, monkeypatch)
    assert found is None, found
    assert incremental_publishes >= 15, f"only {incremental_publishes} publishes were incremental"


def test_a_row_changed_in_place_and_not_rewritten_is_caught(tmp_path, pool, monkeypatch) -> None:
    """Positive control: a maintainer's flag on a row of the board that the incremental board does not show
    (the comparison passes on the correct code, and catches the broken one)."""
    from worker import live_board

    def flag_a_shown_row(sequence: Sequence) -> None:
        shown = live_board.read(sequence.store, TRACK)[0]["rows"][0]["submission_id"]
        record = load_record(sequence.store, TRACK, shown)
        sequence._commit([{**record, "verified": not record.get("verified")}])

    for broken in (False, True):
        with monkeypatch.context() as patch:
            clock = Clock()
            patch.setattr("worker.records.now_iso", clock)
            patch.setattr("worker.gold.publish.ranking.now_iso", clock)
            if broken:
                patch.setattr(board_model.BoardModel, "replace", lambda self, e, content: None)
            sequence = Sequence(tmp_path / str(broken), pool[0], pool[1], 7, clock)
            sequence.submit(12)
            assert sequence.publish(0) is None
            sequence.submit()
            assert sequence.publish(1) is None  # the warm publisher has its state
            flag_a_shown_row(sequence)
            found = sequence.publish(2)
            assert (found is not None) == broken, found


# -- the board model alone: many random insertions against a whole encode, fast --------------------------


def _whole(entries, below) -> dict:
    from tests.factories import PRIMARY
    from worker.leaderboard import build_rows

    return {
        **board_meta("varm", "2026-12-06T00:00:00.000Z"),
        "rows": build_rows(entries, PRIMARY["varm"], below),
    }


def check_model(seed: int) -> str | None:
    """Insert (and change in place) random entries one batch at a time into a model built from a board,
    and compare the files at the head after each batch with `live_board.encode` of the whole board."""
    from tests.factories import PRIMARY, make_entries
    from worker import live_board
    from worker.leaderboard import metric, row_content, sort_key

    rng = random.Random(seed)
    primary = PRIMARY["varm"]
    threshold = rng.choice([0.003, 0.01, 0.03])

    def below(a, b) -> bool:
        return (metric(a.result, primary) or 0) - (metric(b.result, primary) or 0) > threshold

    pending = make_entries("varm", rng.choice([40, 150, 300]), seed=seed)
    rng.shuffle(pending)  # later insertions include older rows (late ones): slots move
    current = pending[: rng.randrange(1, 60)]
    pending = pending[len(current) :]
    export = {"generated_at": "2026-12-06T00:00:00.000Z", "changed": 0}
    board = _whole(current, below)
    head = live_board.encode(board, export)
    table = json.loads(head[layout.board_rank("varm")])
    model = board_model.BoardModel.from_board(
        "varm",
        board["rows"],
        {e.key[0]: e for e in current},
        {e.key[0]: sort_key(e, primary) for e in current},
        table,
    )
    assert model is not None
    step = 0
    while pending:
        step += 1
        batch = pending[: rng.randint(1, 6)]
        pending = pending[len(batch) :]
        for e in batch:
            model.insert(e, sort_key(e, primary), row_content(e), below)
            current.append(e)
        if rng.random() < 0.3:  # a row changed in place (a maintainer's flag)
            i = rng.randrange(len(current))
            old = current[i]
            changed = Entry(
                {**old.record, "verified": not old.record.get("verified")}, old.version, old.result
            )
            current[i] = changed
            model.replace(changed, row_content(changed))
        meta = board_meta("varm", "2026-12-06T00:00:00.000Z")
        files, new_table = model.files(meta, export, table, {})
        for path in live_board.stale_files("varm", table, files):
            del head[path]
        head.update(files)
        table = new_table
        expected = live_board.encode(_whole(current, below), export)
        if head != expected:
            wrong = sorted(p for p in head.keys() | expected.keys() if head.get(p) != expected.get(p))
            return f"seed {seed}, batch {step}: {wrong[:4]}"
    return None


@pytest.mark.parametrize("seed", range(12))
def test_the_board_model_gives_the_files_of_a_whole_encode(seed) -> None:
    assert check_model(seed) is None


def test_board_model_positive_controls(monkeypatch) -> None:
    """A tie walk that never moves the rows after a new one, and an insertion that rewrites only the segment
    it lands in, are both caught."""
    real_insert = board_model.BoardModel.insert

    def no_cascade(self, pi, j, below):
        old = self._leader_before(pi, j)
        part = self.parts[pi]
        part.starts[j] = old is None or below(self.entries[old], self.entries[part.ids[j]])

    def one_segment(self, entry, sort_key, content, below):
        count = self.segment_count()
        real_insert(self, entry, sort_key, content, below)
        s = self.slot_of[entry.key[0]] // board_model.SEGMENT_ROWS
        self.dirty_segments = {k for k in self.dirty_segments if k == s or k >= count}

    for name, broken in (("_rewalk", no_cascade), ("insert", one_segment)):
        with monkeypatch.context() as patch:
            patch.setattr(board_model.BoardModel, name, broken)
            assert any(check_model(seed) for seed in range(12)), f"a broken {name} went unnoticed"
