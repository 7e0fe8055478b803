"""Publishing a track: leaderboard files, dataset card, changelog and new result envelopes in ONE commit.

A reader of the results area therefore sees either the old leaderboard or the new one, never a mix.
Only the publish queue's single worker runs this, and the commit is optimistic (parent = head) anyway.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

from cachetools import LRUCache

from scoring.tracks import get_track
from scoring.version import SCORER_VERSION
from worker.gold.outcomes import unpack
from worker.leaderboard import Entry, board_json, build_rows, dataset_card, known_verdicts, to_parquet
from worker.records import (
    FINAL_BAD,
    PUBLISHED,
    SCORED,
    now_iso,
    public_view,
    published_result_path,
    record_path,
    rows_path,
    staged_result_path,
    transition,
)
from worker.store import Store, commit_with_retry
from worker.submissions import AREA, dumps, list_records, load_record, read_json

RESULTS = "results"
log = logging.getLogger(__name__)
TIE_BOOTSTRAP = 1000
TIE_SEED = 0
ROWS_CACHED = 256  # decoded row-outcome files kept by a Publisher (~46 MB)
COMPARISONS_CACHED = 200_000  # paired-comparison verdicts kept by a Publisher (a few dozen bytes each)


def dumps_pretty(obj) -> bytes:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, indent=2).encode() + b"\n"


def _report_names(store: Store, track: str, revision: str | None) -> list[str]:
    """File names of the published re-score reports of `track` (`rescore/<track>/<run>.json`)."""
    prefix = f"rescore/{track}/"
    return [
        p[len(prefix) :]
        for p in store.list(RESULTS, prefix, revision)
        if p.endswith(".json") and "/" not in p[len(prefix) :]
    ]


def published_runs(store: Store, track: str, revision: str | None = None) -> frozenset[str]:
    """Stamps of the re-score runs of `track` whose results commit has landed.

    A run's diff report `rescore/<track>/<run>.json` is written to the results area in the SAME commit as
    its new versions' envelopes and leaderboard, so its presence proves that the run was published, even
    when the process died before clearing the `pending_rescore` flags in the submissions area.
    """
    return frozenset(name.removesuffix(".json") for name in _report_names(store, track, revision))


def version_for(
    record: dict, rescore_stamp: str | None = None, published: frozenset[str] = frozenset()
) -> dict | None:
    """The version to show: the latest one, skipping versions of a re-score that is not published yet
    (`published`: stamps of runs already published, see `published_runs`; `rescore_stamp`: the run
    being published now)."""
    ready = [
        v
        for v in record.get("versions", [])
        if not v.get("pending_rescore")
        or v["pending_rescore"] == rescore_stamp
        or v["pending_rescore"] in published
    ]
    return ready[-1] if ready else None


def scrub_hidden(path: str, data: bytes, hidden: frozenset[str]) -> bytes:
    """A public history file (`changelog.jsonl`, a re-score report) without any mention of the `hidden`
    submission ids, so the results head shows a hidden submission nowhere. Other files: unchanged."""
    if not hidden:
        return data
    if path == "changelog.jsonl":
        lines = []
        for raw in data.splitlines():
            line = json.loads(raw)
            line["added"] = [a for a in line.get("added") or [] if a.split("/")[0] not in hidden]
            if isinstance(line.get("removed"), list):  # older lines listed ids; new ones count
                line["removed"] = [r for r in line["removed"] if r not in hidden]
            lines.append(json.dumps(line, ensure_ascii=False, sort_keys=True).encode() + b"\n")
        return b"".join(lines)
    if path.startswith("rescore/") and path.endswith(".json"):
        report = json.loads(data)
        rows = report.get("submissions") or []
        kept = [r for r in rows if r.get("submission_id") not in hidden]
        if len(kept) == len(rows):
            return data
        return dumps_pretty({**report, "submissions": kept})
    return data


class Publisher:
    """Builds and commits a track's public files. Keeps immutable per-version files in memory."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._results: dict[tuple[str, int], dict] = {}
        # Decoded row outcomes are ~180 kB a submission: a long-lived worker keeps the recently used ones.
        self._rows: LRUCache[tuple[str, int], dict] = LRUCache(maxsize=ROWS_CACHED)
        self._below: LRUCache[tuple, bool] = LRUCache(maxsize=COMPARISONS_CACHED)
        self._recalled: set[str] = set()  # tracks whose published verdicts are in `_below`

    def entries(self, track: str, rescore_stamp: str | None = None) -> tuple[list[Entry], list[dict]]:
        """(visible entries, hidden records) of a track as of the submissions head."""
        entries, hidden = [], []
        published = published_runs(self.store, track)
        for record in list_records(self.store, track):
            version = version_for(record, rescore_stamp, published)
            if version is None or record["status"] in FINAL_BAD:
                continue
            if record.get("hidden"):
                hidden.append(record)
                continue
            try:
                result = self.result(track, record["submission_id"], version["version"])
            except ValueError:  # a corrupt staged result: leave this one off, publish the others
                result = None
            if result is None:
                log.warning("not publishing %s/%s v%s: its staged result is missing or unreadable", track,
                            record["submission_id"], version["version"])
                continue
            entries.append(Entry(record, version, result))
        return entries, hidden

    def result(self, track: str, submission_id: str, version: int) -> dict:
        key = (submission_id, version)
        if key not in self._results:
            self._results[key] = read_json(
                self.store, AREA, staged_result_path(track, submission_id, version)
            )
        return self._results[key]

    def _row_outcomes(self, track: str, entry: Entry) -> dict:
        if entry.key not in self._rows:
            self._rows[entry.key] = unpack(read_json(self.store, AREA, rows_path(track, *entry.key)))
        return self._rows[entry.key]

    def significance(self, track: str) -> Callable[[Entry, Entry], bool]:
        """`below(leader, entry)`: is `entry` significantly worse than `leader` on the primary metric?"""
        track_obj = get_track(track)
        primary = track_obj.primary_metric

        def below(leader: Entry, entry: Entry) -> bool:
            key = (track, leader.key, entry.key)
            if key not in self._below:
                cmp = track_obj.paired_compare(
                    self._row_outcomes(track, leader),
                    self._row_outcomes(track, entry),
                    bootstrap=TIE_BOOTSTRAP,
                    seed=TIE_SEED,
                    metrics=[primary],  # tie groups only need the primary metric
                ).get(primary, {})
                self._below[key] = bool(cmp.get("significant")) and cmp.get("diff", 0) > 0
            return self._below[key]

        return below

    def recall_verdicts(self, track: str) -> int:
        """Seed the comparison cache from the published board (once per track and Publisher), so a worker
        that restarts does not recompute every paired bootstrap: the board's tie groups ARE the verdicts
        it was built from (`known_verdicts`). A board from another scorer version is not used. Returns how
        many verdicts were recalled."""
        if track in self._recalled:
            return 0
        self._recalled.add(track)
        board = read_json(self.store, RESULTS, f"{track}/leaderboard.json")
        if not board or board.get("scorer_version") != SCORER_VERSION:
            return 0
        if board.get("primary_metric") != get_track(track).primary_metric:
            return 0
        recalled = 0
        for (leader, entry), verdict in known_verdicts(board.get("rows") or []).items():
            key = (track, leader, entry)
            if key not in self._below:
                self._below[key] = verdict
                recalled += 1
        return recalled

    def board(self, track: str, entries: list[Entry]) -> dict:
        track_obj = get_track(track)
        self.recall_verdicts(track)
        rows = build_rows(entries, track_obj.primary_metric, self.significance(track))
        return {
            "track": track,
            "title": track_obj.title,
            "primary_metric": track_obj.primary_metric,
            "headline_metrics": list(track_obj.headline_metrics),
            "scorer_version": SCORER_VERSION,
            "generated_at": now_iso(),
            "rows": rows,
        }

    def publish(
        self,
        track: str,
        *,
        rescore_stamp: str | None = None,
        extra: dict[str, bytes] | None = None,
        note: str = "",
    ) -> dict:
        """Commit the track's public state; then mark its scored submissions published.

        Returns {"revision", "changed", "added", "removed", "rows"}; "changed" is False when the results
        area already showed exactly this state (so a burst of publish tasks costs one real publish).
        """
        entries, hidden = self.entries(track, rescore_stamp)
        board = self.board(track, entries)
        summary: dict = {}

        def build(store: Store, head: str) -> tuple[dict[str, bytes], list[str]]:
            existing = set(store.list(RESULTS, f"{track}/results/", head))
            add: dict[str, bytes] = {}
            added = []
            for e in entries:
                path = published_result_path(track, *e.key)
                if path not in existing:
                    add[path] = dumps_pretty(
                        {"submission": public_view(e.record), "version": e.key[1], "result": e.result}
                    )
                    added.append(f"{e.key[0]}/v{e.key[1]}")
            hidden_dirs = tuple(f"{track}/results/{r['submission_id']}/" for r in hidden)
            delete = sorted(p for p in existing if p.startswith(hidden_dirs)) if hidden_dirs else []
            old = read_json(store, RESULTS, f"{track}/leaderboard.json", head)
            summary.update(
                added=added, removed=sorted({p.split("/")[2] for p in delete}), rows=len(board["rows"])
            )
            # Hidden means hidden at the head: history files that name a hidden submission are rewritten.
            hidden_ids = frozenset(r["submission_id"] for r in hidden)
            names = _report_names(store, track, head) if hidden_ids else []
            for path in [f"rescore/{track}/{name}" for name in names]:
                before = store.read(RESULTS, path, head) or b""
                after = scrub_hidden(path, before, hidden_ids)
                if after != before:
                    add[path] = after
            if not add and not delete and not extra and old is not None and old["rows"] == board["rows"]:
                log = store.read(RESULTS, "changelog.jsonl", head) or b""
                if scrub_hidden("changelog.jsonl", log, hidden_ids) == log:
                    return {}, []
            add[f"{track}/leaderboard.json"] = board_json(board)
            add[f"{track}/leaderboard.parquet"] = to_parquet(board["rows"])
            boards = {
                p.split("/")[0] for p in store.list(RESULTS, "", head) if p.endswith("/leaderboard.json")
            }
            add["README.md"] = dataset_card({t: get_track(t).title for t in boards | {track}})
            log = store.read(RESULTS, "changelog.jsonl", head) or b""
            line = {
                "at": board["generated_at"],
                "track": track,
                "scorer_version": SCORER_VERSION,
                "added": added,
                "removed": len(summary["removed"]),  # a count: removed entries are hidden ones
                "rows": len(board["rows"]),
                "note": note,
            }
            add["changelog.jsonl"] = scrub_hidden(
                "changelog.jsonl",
                log + json.dumps(line, ensure_ascii=False, sort_keys=True).encode() + b"\n",
                hidden_ids,
            )
            add.update({p: scrub_hidden(p, d, hidden_ids) for p, d in (extra or {}).items()})
            return add, delete

        before = self.store.head(RESULTS)
        revision = commit_with_retry(self.store, RESULTS, build, f"publish {track}", attempts=10)
        # Flags of runs that are published (this one, or an earlier one whose publisher died before this
        # step) are cleared; until then `published_runs` keeps their versions on the board anyway.
        done = published_runs(self.store, track, revision) | ({rescore_stamp} if rescore_stamp else set())
        self._mark_published(track, entries, done)
        return {"revision": revision, "changed": revision != before, **summary}

    def _mark_published(self, track: str, entries: list[Entry], done: frozenset[str] | set[str]) -> None:
        # Only records that were scored or flagged when listed can need a change: re-reading the others
        # (every published submission) made each publish read N records twice.
        waiting = [
            e for e in entries
            if e.record["status"] == SCORED
            or any(v.get("pending_rescore") in done for v in e.record["versions"])
        ]
        if not waiting:
            return
        tight = getattr(self.store, "budget_tight", None)
        if tight is not None and tight(AREA):
            # The Hub's commit budget is being paced (worker/store/budget.py): the board already shows these,
            # so their records wait for a quieter publish (the reconciler republishes scored records).
            return

        def build(store: Store, head: str) -> tuple[dict[str, bytes], list[str]]:
            add = {}
            for e in waiting:
                record = load_record(store, track, e.key[0], head)
                if record is None:
                    continue
                pending = any(v.get("pending_rescore") in done for v in record["versions"])
                if record["status"] != SCORED and not pending:
                    continue
                if pending:
                    record = {
                        **record,
                        "versions": [
                            {
                                k: v
                                for k, v in ver.items()
                                if not (k == "pending_rescore" and v in done)
                            }
                            for ver in record["versions"]
                        ],
                    }
                if record["status"] == SCORED:
                    record = transition(record, PUBLISHED, f"on the leaderboard as version {e.key[1]}")
                add[record_path(track, e.key[0])] = dumps(record)
            return add, []

        commit_with_retry(self.store, AREA, build, f"mark {track} submissions published", attempts=20)
