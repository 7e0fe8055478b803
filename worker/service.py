"""The Service (ARCHITECTURE §6): the one API that the REST routes, the Gradio UI and the CLI call.

It runs in the web process, so it never opens the references area: uploads are validated against the
public test inputs, and anything that needs gold labels is sent to a worker.
"""

from __future__ import annotations

import hashlib
import logging
import re
import secrets
import shutil
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from scoring.api import read_public_inputs
from scoring.problems import InputError, Problem
from scoring.report import Report
from scoring.tracks import TRACK_NAMES, get_track
from scoring.version import SCORER_VERSION
from worker import live_board, quotas
from worker.config import Config
from worker.disk import DISK_FULL_ERRNOS
from worker.errors import (
    AlreadyExists,
    BadRequest,
    DiskFull,
    NotAllowed,
    NotHeld,
    NotReady,
    UnknownSubmission,
)
from worker.heartbeat import RESTARTING_SHOWN
from worker.nearcopy import (
    COPY_OF_ANOTHER,
    COPY_OF_CONCEALED,
    Fingerprint,
    Match,
    NearCopyIndex,
    fingerprint_path,
    held_reason,
)
from worker.own import PRIVATE_REASON, OwnSubmission, own_submission
from worker.records import (
    FINAL_BAD,
    HELD,
    PUBLISHED,
    QUEUED,
    REJECTED,
    check_track,
    format_report_path,
    held_record,
    is_submission_id,
    ladder_message,
    new_record,
    not_released,
    now_iso,
    on_board,
    predictions_path,
    public_version,
    public_view,
    shows_result,
    staged_result_path,
    transition,
    validate_metadata,
)
from worker.slots import WorkSlots
from worker.store import Store, commit_with_retry, layout
from worker.store.group import GroupCommit
from worker.submissions import (
    AREA,
    dumps,
    find_record,
    list_records,
    load_record,
    quarantined,
    read_json,
    record_files,
    update_record,
)

log = logging.getLogger(__name__)
RELEASE_NAME = re.compile(r"^\d{4}-\d{2}(\.\d{1,3})?$")
PUBLIC_FILES = ("test_inputs.jsonl", "dev.jsonl", "subsets.json", "dev_subsets.json", "reference_set.json")
BASELINE_SUBMITTER = "baseline"
FORMAT_REPORT_MAX = 1000  # entries kept in format_report.json (the total is counted)
FORMAT_REPORT_TRACKS = ("varm",)  # tracks whose outputs follow a format protocol (ToxiTrace has none)


@dataclass(frozen=True)
class RescoreReport:
    """The newest re-score diff report of a track: `data` is None when its file is unreadable."""

    run: str  # a UTC stamp: the lexically last run is the newest
    dry_run: bool  # dry runs stay in the private submissions area; real runs are published
    path: str
    data: dict | None


class Liveness(Protocol):
    """Seconds since the freshest heartbeat of each kind of process ("worker", "beat")."""

    def ages(self) -> dict[str, float]: ...


class Enqueuer(Protocol):
    """How the Service hands work to workers (Celery in production, anything in tests)."""

    def score(self, track: str, submission_id: str) -> None: ...

    def publish(self, track: str) -> None: ...

    def rescore(self, track: str, dry_run: bool, actor: str) -> str: ...

    def release(self, track: str, name: str, actor: str) -> str: ...

    def compare(self, track: str, a_id: str, b_id: str) -> dict: ...

    def ping(self) -> bool: ...


class Service:
    """`head_ttl`: how long (seconds) the results head read by `results_head` is trusted; leaderboards are
    cached per track on that head, so a publish shows up within `head_ttl` seconds."""

    def __init__(
        self,
        config: Config,
        store: Store,
        enqueue: Enqueuer,
        *,
        head_ttl: float = 1.0,
        liveness: Liveness | None = None,
        stale_after: float = 10.0,
    ) -> None:
        self.config = config
        self.store = store
        self.enqueue = enqueue
        self.head_ttl = head_ttl
        self.liveness = liveness  # None: health does not ask about workers (in-process tests)
        self.stale_after = stale_after
        self.slots = WorkSlots(config.work_slots, config.work_queue_seconds, config.work_memory_mb << 20)
        self._latest_releases: dict[str, tuple[str, dict | None]] = {}  # track -> (results head, release)
        self._inputs: dict[str, tuple[str, list[dict]]] = {}  # track -> (sha256 of the file, inputs)
        self._lock = threading.Lock()  # guards the fields below
        self._head: tuple[str, float] | None = None  # (results head, time.monotonic() when read)
        self._head_moves = 0  # head_moved calls so far: a read that overlapped one is not cached
        self._boards: dict[str, tuple[str, dict]] = {}  # track -> (results head, leaderboard)
        self._board_locks: dict[str, threading.Lock] = {}  # one loader per track at a time
        self._segments: dict = {}  # live board segments read so far (live_board.read), by path
        self._reference_sets: dict[str, tuple[str, dict]] = {}  # track -> (results head, reference_set())
        self._format_reports: OrderedDict[str, dict | None] = OrderedDict()  # written once: never stale
        self._near_copies = NearCopyIndex()  # the probe guard's index cache (worker/nearcopy.py)
        # Concurrent uploads share one commit (fewer Hub commits and no 412 storms; worker/store/group.py).
        self._uploads = GroupCommit(store, AREA)

    # -- validation ------------------------------------------------------------------------------------

    def public_inputs(self, track: str) -> list[dict]:
        """The public test inputs of `track`, re-parsed only when the published file changes."""
        raw = self.public_file(track, "test_inputs.jsonl")
        if raw is None:
            raise NotReady(
                f"track {track!r} has no reference set installed yet, so it cannot take "
                "submissions (a maintainer installs one: "
                f"`python -m worker install --track {track} DIR`)"
            )
        digest = hashlib.sha256(raw).hexdigest()
        cached = self._inputs.get(track)
        if cached is None or cached[0] != digest:
            cached = (digest, read_public_inputs(raw))
            self._inputs[track] = cached
        return cached[1]

    def validate(self, track: str, data: bytes) -> dict:
        check_track(track)
        return get_track(track).check_predictions(data, self.public_inputs(track)).as_dict()

    # -- submitting ------------------------------------------------------------------------------------

    def submit(
        self,
        *,
        identity: str,
        track: str,
        data: bytes,
        metadata: dict,
        is_baseline: bool = False,
        private: bool = False,
        park: Callable[[], object] | None = None,
    ) -> dict:
        """Validate, check quotas, store and enqueue one upload.

        `private`: scored like any other and counted in the quota and by the near-copy guard, but hidden
        (off the board, its result visible to its submitter and the maintainers only) until its submitter
        makes it public (`make_public`). `park`: called once the upload is validated and only waits for its
        store commit (worker/slots.py: the caller's work slot then serves the next upload).

        Returns {"submission_id", "status", "report", "duplicate", "quota"}; status "rejected" (with a
        line-numbered report, nothing stored) for invalid uploads. Raises QuotaExceeded, and DiskFull when
        the data disk is (nearly) full: then nothing is stored.
        """
        check_track(track)
        identity = quotas.normalise_identity(identity)
        if not identity:
            raise BadRequest("an identity is required")
        self._check_disk()
        try:
            return self._submit(identity, track, data, metadata, is_baseline, private, park)
        except OSError as exc:
            if exc.errno in DISK_FULL_ERRNOS:
                log.warning("upload to %s refused: the data disk is full", track)
                raise DiskFull() from None
            raise

    def _submit(  # noqa: C901
        self,
        identity: str,
        track: str,
        data: bytes,
        metadata: dict,
        is_baseline: bool,
        is_private: bool = False,
        park: Callable[[], object] | None = None,
    ) -> dict:
        now = datetime.now(UTC)
        sha = hashlib.sha256(data).hexdigest()
        index_path = quotas.index_path(identity, track)
        index = read_json(self.store, AREA, index_path) or quotas.empty_index()
        existing = self._duplicate(track, index, sha)
        if existing is not None:
            return {
                "submission_id": existing["submission_id"],
                "status": existing["status"],
                "report": None,
                "duplicate": True,
                "quota": self._quota_state(track, index, now, is_baseline),
            }
        if not is_baseline:
            quotas.check(index["attempts"], self.config.attempts_per_day, now, "attempts")

        meta, meta_problems = validate_metadata(metadata, baseline=is_baseline)
        inputs = self.public_inputs(track)
        report, keys = get_track(track).check_with_keys(data, inputs)
        if meta_problems:
            report = _with_problems(report, meta_problems)
        if not report.valid:
            if not is_baseline:
                self._count_attempt(index_path, now)
            return {
                "submission_id": None,
                "status": "rejected",
                "report": report.as_dict(),
                "duplicate": False,
                "quota": self._quota_state(track, index, now, is_baseline),
            }

        assert keys is not None  # a valid report
        fingerprint = Fingerprint.of(keys, inputs)
        submission_id = secrets.token_hex(8)
        outcome: dict = {}

        def build(store: Store, head: str) -> tuple[dict[str, bytes], list[str]]:
            # Re-checked at the head we commit on: two concurrent uploads cannot both take the last slot.
            index = read_json(store, AREA, index_path, head) or quotas.empty_index()
            existing = self._duplicate(track, index, sha, head, store)
            outcome["existing"] = existing
            if existing is not None:
                return {}, []
            if not is_baseline:
                counted = self._counted(track, index, head, store)
                quotas.check(counted, self.config.quota_per_day, now, "quota")
            index = quotas.prune_attempts(index, now)
            at = now_iso()
            index["accepted"].append({"submission_id": submission_id, "sha256": sha, "at": at})
            if not is_baseline:
                index["attempts"].append(at)
            record = new_record(
                submission_id=submission_id,
                track=track,
                sha256=sha,
                submitter=identity,
                metadata=meta,
                is_baseline=is_baseline,
                at=at,
            )
            if is_private:
                record.update(hidden=True, hidden_reason=PRIVATE_REASON)
            # The probe guard, at the head we commit on (the project's own baselines are indexed, not held).
            match, index_append = self._near_copies.find(store, track, fingerprint, head)
            hold = None if is_baseline else self._hold(store, head, track, identity, match)
            if hold is not None:
                reason, private = hold
                record = held_record(record, reason, private)
            outcome["index"], outcome["status"] = index, record["status"]
            outcome["error"] = record["error"]
            files = {
                predictions_path(track, submission_id): data,
                **record_files(store, head, [record]),
                index_path: dumps(index),
                **index_append.files(submission_id),
            }
            if track in FORMAT_REPORT_TRACKS:
                files[format_report_path(track, submission_id)] = dumps(format_report_of(report))
            return files, []

        if park is not None:
            park()
        self._uploads.commit(build, f"submit {track}/{submission_id}")
        if outcome["existing"] is not None:
            existing = outcome["existing"]
            return {
                "submission_id": existing["submission_id"],
                "status": existing["status"],
                "report": None,
                "duplicate": True,
                "quota": self._quota_state(track, index, now, is_baseline),
            }
        if outcome["status"] == HELD:  # not scored until a maintainer releases it; no score to show
            return {
                "submission_id": submission_id,
                "status": HELD,
                "reason": outcome["error"],
                "report": report.as_dict(),
                "duplicate": False,
                "quota": self._quota_state(track, outcome["index"], now, is_baseline),
            }
        # The record is durable before the message exists; if sending fails, the reconciler re-sends.
        try:
            self.enqueue.score(track, submission_id)
        except Exception as exc:  # broker down: the submission is safe in the store either way
            log.warning(
                "could not send %s/%s to the broker (%s); the reconciler will",
                track,
                submission_id,
                type(exc).__name__,
            )
        return {
            "submission_id": submission_id,
            "status": "queued",
            "report": report.as_dict(),
            "duplicate": False,
            "quota": self._quota_state(track, outcome["index"], now, is_baseline),
        }

    def disk_free_mb(self) -> int:
        return shutil.disk_usage(Path(self.config.data_dir).resolve()).free // (1024 * 1024)

    def _check_disk(self) -> None:
        """Refuse an upload before writing when the data disk is below MIN_FREE_DISK_MB (local store)."""
        if self.config.store == "local" and self.disk_free_mb() < self.config.min_free_disk_mb:
            log.warning("upload refused: %d MB free on the data disk", self.disk_free_mb())
            raise DiskFull()

    def _duplicate(
        self, track: str, index: dict, sha: str, revision: str | None = None, store: Store | None = None
    ) -> dict | None:
        """The submitter's live submission of this exact file; a failed, rejected or retired (scored on a
        replaced demo set) one may be sent again. (`store`: as a group commit's build sees it.)"""
        for submission_id in quotas.submissions_of(index, sha):
            record = load_record(store or self.store, track, submission_id, revision)
            if record is not None and record["status"] not in FINAL_BAD and not record.get("retired"):
                return record
        return None

    def _counted(
        self, track: str, index: dict, revision: str | None = None, store: Store | None = None
    ) -> list[str]:
        """Times of accepted uploads that use the scored quota (failed ones give the slot back; a held
        near-copy keeps it even when rejected, or probing would cost nothing)."""
        now = datetime.now(UTC)
        times = []
        for entry in index["accepted"]:
            if now - quotas.parse_iso(entry["at"]) >= quotas.WINDOW:
                continue
            record = load_record(store or self.store, track, entry["submission_id"], revision)
            if record is None or record.get("retired"):
                continue
            if record["status"] not in FINAL_BAD or record.get("near_copy"):
                times.append(entry["at"])
        return times

    def _count_attempt(self, index_path: str, now: datetime) -> None:
        def build(store: Store, head: str) -> tuple[dict[str, bytes], list[str]]:
            index = quotas.prune_attempts(
                read_json(store, AREA, index_path, head) or quotas.empty_index(), now
            )
            index["attempts"].append(now_iso())
            return {index_path: dumps(index)}, []

        self._uploads.commit(build, "count a rejected upload")

    def _quota_state(self, track: str, index: dict, now: datetime, is_baseline: bool = False) -> dict:
        if is_baseline:
            return {"limit": None, "used": 0, "remaining": None, "next_slot_at": None}
        return quotas.window_state(self._counted(track, index), self.config.quota_per_day, now)

    def quota(self, identity: str, track: str) -> dict:
        index = read_json(self.store, AREA, quotas.index_path(identity, track)) or quotas.empty_index()
        state = self._quota_state(track, index, datetime.now(UTC))
        attempts = quotas.window_state(index["attempts"], self.config.attempts_per_day, datetime.now(UTC))
        return {**state, "attempts": attempts}

    # -- reading ---------------------------------------------------------------------------------------

    def submission(self, submission_id: str, viewer: str | None = None) -> dict | None:
        """Public fields, status, error and (once scored) the latest result of one submission.

        None (404) when there is none, and for a hidden one unless `viewer` (the caller's identity, None
        when anonymous) is its submitter or a maintainer."""
        record = find_record(self.store, submission_id)
        if record is None or not self.may_see(record, viewer):
            return None
        if record["status"] == PUBLISHED:
            # Read-your-writes for "poll until published, then read the board": the results commit that
            # shows it is already in, so make the next leaderboard() re-check the head.
            with self._lock:
                self._head = None
        out = {
            **public_view(record),
            "status": record["status"],
            "error": record["error"],
            "report": record.get("report"),
            "hidden": record.get("hidden", False),
            # Hidden by its submitter (who may make it public), not by a maintainer.
            "private": bool(record.get("hidden")) and record.get("hidden_reason") == PRIVATE_REASON,
            "updated_at": record["updated_at"],
            "history": record["history"],
            "versions": [public_version(v) for v in record["versions"]],
            "format_report": self._format_report(record["track"], submission_id),
            "result": None,
        }
        if record["versions"]:
            version = record["versions"][-1]["version"]
            result = read_json(self.store, AREA, staged_result_path(record["track"], submission_id, version))
            if shows_result(record, result):
                out["result"] = {"version": version, "result": result}
        out["released"] = not not_released(record)
        out["not_released"] = ladder_message(record)
        return out

    def my_submissions(
        self, identity: str, track: str | None = None, limit: int = 200
    ) -> list[OwnSubmission]:
        """The caller's own submissions (private and held ones included), newest first, at most `limit`:
        status, headline scores of the latest result, format-report count and a link to each page.

        Found through the caller's quota index (one small file per track), so it costs one read per
        submission shown, never a scan of everyone's records."""
        identity = quotas.normalise_identity(identity)
        if not identity:
            return []
        tracks = [check_track(track)] if track else list(TRACK_NAMES)
        entries = []
        for name in tracks:
            index = read_json(self.store, AREA, quotas.index_path(identity, name)) or quotas.empty_index()
            entries += [(e["at"], name, e["submission_id"]) for e in index["accepted"]]
        out = []
        for _, name, submission_id in sorted(entries, reverse=True):
            record = load_record(self.store, name, submission_id)
            if record is None or not quotas.owned_by(record, identity):
                continue
            result = None
            if record["versions"]:
                version = record["versions"][-1]["version"]
                result = read_json(self.store, AREA, staged_result_path(name, submission_id, version))
                result = result if shows_result(record, result) else None
            out.append(own_submission(record, result, self._format_report(name, submission_id)))
            if len(out) >= limit:
                break
        return out

    def notices(self, identity: str) -> list[dict]:
        """What changed the caller's numbers or ranks since they looked (disclosure §4, issue 24.6): per
        track, their rows in the latest published re-score (primary metric old -> new, rank old -> new) and
        in the latest release (its rank and Rank Delta), each with a link to the report or the release."""
        own = {s.submission_id: s for s in self.my_submissions(identity)}
        out: list[dict] = []
        for track in sorted({s.track for s in own.values()}):
            primary = get_track(track).primary_metric
            for report in self.rescore_reports(track, limit=1):
                for row in report.get("submissions") or []:
                    changed = row.get("delta", {}).get(primary) or row.get("old_rank") != row.get("new_rank")
                    if row.get("submission_id") in own and changed and not row.get("skipped"):
                        out.append(
                            {
                                "kind": "rescore",
                                "track": track,
                                "submission_id": row["submission_id"],
                                "model_name": row.get("model_name"),
                                "metric": primary,
                                "old": (row.get("old") or {}).get(primary),
                                "new": (row.get("new") or {}).get(primary),
                                "old_rank": row.get("old_rank"),
                                "new_rank": row.get("new_rank"),
                                "at": report.get("generated_at"),
                                "link": f"/api/v1/rescore/{track}/{report['run']}",
                            }
                        )
            latest = self.latest_release(track)
            release = self.published_release(track, latest["name"]) if latest else None
            if latest is None or release is None:
                continue
            for row in release["rows"]:
                if row.get("submission_id") in own:
                    out.append(
                        {
                            "kind": "release",
                            "track": track,
                            "submission_id": row["submission_id"],
                            "model_name": row.get("model_name"),
                            "release": latest["name"],
                            "rank": row.get("rank"),
                            "live_rank": row.get("live_rank"),
                            "rank_delta": row.get("rank_delta"),
                            "at": latest["date"],
                            "link": latest["url"],
                        }
                    )
        return sorted(out, key=lambda n: n["at"] or "", reverse=True)

    def _format_report(self, track: str, submission_id: str) -> dict | None:
        """The intake format report (None for tracks without one and for older submissions).

        Written in the upload's commit and never changed, so it is cached (the status poll reads it often).
        """
        if track not in FORMAT_REPORT_TRACKS:
            return None
        with self._lock:
            if submission_id in self._format_reports:
                self._format_reports.move_to_end(submission_id)
                return self._format_reports[submission_id]
        report = read_json(self.store, AREA, format_report_path(track, submission_id))
        with self._lock:
            self._format_reports[submission_id] = report
            while len(self._format_reports) > 256:
                self._format_reports.popitem(last=False)
        return report

    def results_head(self) -> str:
        """The results area's head revision, read from the store at most once every `head_ttl` seconds (or
        sooner after `head_moved`)."""
        now = time.monotonic()
        with self._lock:
            if self._head is not None and now - self._head[1] < self.head_ttl:
                return self._head[0]
            moves = self._head_moves
        head = self.store.head("results")
        with self._lock:
            # A move announced while this read was in flight may be newer than what it read: keep nothing.
            self._head = (head, now) if moves == self._head_moves else None
        return head

    def head_moved(self, revision: str = "") -> None:
        """Something said the results head moved (a worker's announcement, the Hub's webhook): the next
        `results_head` reads it from the store instead of trusting the cached one."""
        with self._lock:
            self._head_moves += 1
            if not revision or self._head is None or self._head[0] != revision:
                self._head = None

    def leaderboard(self, track: str) -> dict:
        """The published leaderboard of `track` (cached per results head; treat the dict as read-only)."""
        return self.leaderboard_at(track)[1]

    def leaderboard_at(self, track: str) -> tuple[str, dict]:
        """(results head, the leaderboard at that head): the head names the board's revision (an ETag)."""
        check_track(track)
        head = self.results_head()
        with self._lock:
            cached = self._boards.get(track)
            if cached is not None and cached[0] == head:
                return cached
            track_lock = self._board_locks.setdefault(track, threading.Lock())
        with track_lock:  # concurrent viewers after a publish wait for one read instead of all reading
            with self._lock:
                cached = self._boards.get(track)
            if cached is not None and cached[0] == head:
                return cached
            board = self._read_leaderboard(track, head)
            with self._lock:
                self._boards[track] = (head, board)
        return head, board

    def _read_leaderboard(self, track: str, revision: str) -> dict:
        # The live board (rank table + segments; a reader after a publish reads the rank table and the
        # changed segments only), or leaderboard.json of a store published before it existed.
        board = live_board.read(self.store, track, revision, self._segments)[0]
        if board is None:
            track_obj = get_track(track)
            return {
                "track": track,
                "title": track_obj.title,
                "primary_metric": track_obj.primary_metric,
                "headline_metrics": list(track_obj.headline_metrics),
                "generated_at": None,
                "scorer_version": None,
                "rows": [],
            }
        return board

    def reference_set(self, track: str) -> dict:
        """What the track is scored on, from the published manifest (cached per results head):
        `{"track", "kind": "real"|"demo"|None, "ready": bool, "rows", "sha256", "installed_at"}`.
        `kind` None with `ready` False: no reference set installed; None with `ready` True: a set
        published before manifests existed."""
        check_track(track)
        head = self.results_head()
        with self._lock:
            cached = self._reference_sets.get(track)
        if cached is not None and cached[0] == head:
            return cached[1]
        manifest = read_json(self.store, "results", layout.public_file(track, layout.REFERENCE_SET), head)
        manifest = manifest or {}
        ready = self.store.read("results", layout.public_file(track, "test_inputs.jsonl"), head) is not None
        info = {
            "track": track,
            "kind": manifest.get("kind") if ready else None,
            "ready": ready,
            "rows": manifest.get("rows", {}) if ready else {},
            "sha256": manifest.get("sha256") if ready else None,
            "installed_at": manifest.get("installed_at") if ready else None,
            # ../shared/spec/disclosure.md §1; a manifest from before test statuses is private
            "test_status": manifest.get("test_status", "private") if ready else None,
        }
        with self._lock:
            self._reference_sets[track] = (head, info)
        return info

    def published_result(self, track: str, submission_id: str, version: int) -> dict | None:
        """The public envelope of one published result version (`<track>/results/<id>/v<N>.json`); versions
        never change once published."""
        if not is_submission_id(submission_id):
            return None
        return read_json(self.store, "results", layout.published_result_path(track, submission_id, version))

    def latest_rescore_report(self, track: str) -> RescoreReport | None:
        """The newest re-score diff report of `track`, dry run or published, for maintainers.

        Dry runs leave `rescore/<track>/<run>/report.json` in the private submissions area; real runs
        publish `rescore/<track>/<run>.json` in the results area."""
        prefix = layout.rescore_reports_dir(track)
        found: list[tuple[str, str, str]] = []  # (run, area, path)
        for area, suffix in ((AREA, "/report.json"), ("results", ".json")):
            for path in self.store.list(area, prefix):
                if path.endswith(suffix):
                    found.append((path[len(prefix) :].removesuffix(suffix), area, path))
        if not found:
            return None
        run, area, path = max(found)
        try:
            data = read_json(self.store, area, path) or {}
        except ValueError:
            data = None
        dry_run = area == AREA if data is None else bool(data.get("dry_run", area == AREA))
        return RescoreReport(run=run, dry_run=dry_run, path=path, data=data)

    def public_file(self, track: str, name: str) -> bytes | None:
        check_track(track)
        if name not in PUBLIC_FILES:
            return None
        return self.store.read("results", layout.public_file(track, name))

    # -- releases (../shared/spec/disclosure.md §4; written by worker/gold/release.py) ----------------------

    def releases(self, track: str | None = None) -> list[dict]:
        """The signed `release.json` of every release (of `track`), newest name first."""
        tracks = [check_track(track)] if track else list(TRACK_NAMES)
        found = []
        for name in tracks:
            prefix = f"releases/{name}/"
            for path in self.store.list("results", prefix):
                if path.endswith("/release.json") and path.count("/") == 3:
                    body = read_json(self.store, "results", path)
                    if body is not None:
                        found.append(body)
        return sorted(found, key=lambda r: (r["track"], r["name"]), reverse=True)

    def latest_release(self, track: str) -> dict | None:
        """The track's newest release as the board names it ({"name", "date", "url"}), or None (cached
        per results head: every board view asks)."""
        head = self.results_head()
        cached = self._latest_releases.get(track)
        if cached is not None and cached[0] == head:
            return cached[1]
        found = self.releases(track)
        newest = found[0] if found else None
        latest = None
        if newest is not None:
            url = f"/api/v1/releases/{track}/{newest['name']}"
            latest = {"name": newest["name"], "date": newest["date"], "url": url}
        self._latest_releases[track] = (head, latest)
        return latest

    def cut_release(self, track: str, name: str, actor: str) -> dict:
        """Send the cut of release `name` of `track` to a worker (the references are there); BadRequest
        for a malformed name, AlreadyExists for a name taken (a release never changes: cut an erratum)."""
        check_track(track)
        if not RELEASE_NAME.match(name):
            raise BadRequest(f"a release is named like 2027-03 (an erratum: 2027-03.1), not {name!r}")
        if self.store.list("results", f"releases/{track}/{name}/"):
            raise AlreadyExists(f"release {name} of {track} exists; a release is never changed")
        return {"track": track, "name": name, "task_id": self.enqueue.release(track, name, actor)}

    def rescore_reports(self, track: str, limit: int = 50) -> list[dict]:
        """The published re-score diff reports of `track`, newest first (at most `limit`)."""
        prefix = layout.rescore_reports_dir(check_track(track))
        names = sorted((p for p in self.store.list("results", prefix) if p.endswith(".json")), reverse=True)
        found = (read_json(self.store, "results", path) for path in names[:limit])
        return [report for report in found if report is not None]

    def rescore_report(self, track: str, run: str) -> dict | None:
        """One published re-score diff report; None when there is none (or the run is malformed)."""
        try:
            path = layout.rescore_report(check_track(track), run)
        except ValueError:
            return None
        return read_json(self.store, "results", path)

    def erratum_due(self, release: dict) -> bool:
        """Did a re-score come after `release` (published later, or a scorer other than the one it was
        cut with)? Then its numbers may differ from the live ones, and a maintainer may cut `<name>.1`
        next to it; the release itself never changes."""
        if release.get("scorer_version") != SCORER_VERSION:
            return True
        newest = self.rescore_reports(release["track"], limit=1)  # run stamps sort in time order
        return any(report.get("generated_at", "") > release["date"] for report in newest)

    def published_release(self, track: str, name: str) -> dict | None:
        """One release: its `release.json` and its signed rows; None when there is none."""
        if not RELEASE_NAME.match(name):
            return None
        folder = f"releases/{check_track(track)}/{name}/"
        meta = read_json(self.store, "results", folder + "release.json")
        rows = read_json(self.store, "results", folder + "rows.json")
        if meta is None or rows is None:
            return None
        citation = self.store.read("results", folder + "citation.bib")
        return {"release": meta, "rows": rows["rows"], "citation": citation.decode() if citation else ""}

    def public_key(self) -> str | None:
        """The workers' Ed25519 public key (base64), published with the first publish."""
        data = self.store.read("results", "keys/ed25519.pub")
        return data.decode().strip() if data else None

    def health(self) -> dict:
        checks = {"store": self._store_health()}
        checks["broker"] = "ok" if self.enqueue.ping() else "unreachable"
        if self.config.store == "local":
            try:
                free = self.disk_free_mb()
                checks["disk"] = "ok" if free >= self.config.min_free_disk_mb else f"full: {free} MB free"
            except OSError as exc:
                checks["disk"] = f"error: {type(exc).__name__}"
        info = {}
        if self.liveness is not None:
            try:
                ages = self.liveness.ages()
            except Exception as exc:  # the heartbeat store is the broker: reported above
                ages, checks["worker"] = {}, f"unknown: {type(exc).__name__}"
            else:
                worker = ages.get("worker")
                checks["worker"] = (
                    "ok"
                    if worker is not None and worker < self.stale_after
                    else "no worker alive"
                    if worker is None
                    else f"no heartbeat for {int(worker)} s"
                )
                restarting = ages.get("restarting", float("inf"))
                if checks["worker"] != "ok" and restarting < RESTARTING_SHOWN:  # the entrypoint restarts it
                    checks["worker"] = f"restarting (exited {int(restarting)} s ago)"
            # Beat may run elsewhere (or not yet): reported, not part of "ok".
            info["beat"] = "ok" if ages.get("beat", float("inf")) < self.stale_after else "no heartbeat"
        budget = getattr(self.store, "budget_status", None)
        if budget is not None:  # the Hub's commit budget per repo, as every process of the deployment used it
            info["hub_commits"] = budget()
        return {"ok": all(v == "ok" for v in checks.values()), **checks, **info}

    def _store_health(self) -> str:
        """ "ok", or what the Hub last said while it refuses ("degraded (rate-limited until ...)",
        "unavailable (next try at ...)"): read from the store's gate, so health sends nothing to a Hub
        that is refusing; else one head read."""
        gate = getattr(self.store, "gate", None)
        if gate is not None and (state := gate.state()):
            return state
        try:
            self.store.head("results")
            return "ok"
        except Exception as exc:  # health must answer, whatever broke
            state = gate.state() if gate is not None else None
            return state or f"error: {type(exc).__name__}"

    # -- work that needs a worker ----------------------------------------------------------------------

    def compare(self, a_id: str, b_id: str) -> dict:
        a, b = find_record(self.store, a_id), find_record(self.store, b_id)
        if a is None or b is None:
            raise UnknownSubmission()
        if a["track"] != b["track"]:
            raise BadRequest("submissions are on different tracks")
        if not (on_board(a) and on_board(b)):
            raise BadRequest("both submissions must be on the board (published and visible)")
        return self.enqueue.compare(a["track"], a_id, b_id)

    # -- maintainers -----------------------------------------------------------------------------------

    def may_see(self, record: dict, viewer: str | None) -> bool:
        """Everyone may see a visible submission; a hidden one, or one the Ladder did not release, only its
        submitter and the maintainers."""
        if not record.get("hidden") and not not_released(record):
            return True
        return viewer is not None and (quotas.owned_by(record, viewer) or self.is_maintainer(viewer))

    def make_public(self, submission_id: str, *, identity: str) -> dict:
        """The submitter turns their private submission public: it joins the board at the next publish.
        Only a submission hidden as private can be; one a maintainer hid stays hidden."""
        record = self._own_record(submission_id, identity, "make a submission public")
        if not record.get("hidden"):
            return public_view(record) | {"hidden": False}
        if record.get("hidden_reason") != PRIVATE_REASON:
            raise NotAllowed("this submission was hidden by a maintainer; it cannot be made public")
        return self.moderate(
            submission_id, actor=identity, hidden=False, reason="made public by its submitter"
        )

    def withdraw(self, submission_id: str, *, identity: str) -> dict:
        """The submitter takes their submission off the board: it becomes private (off every public page
        at the next publish; `make_public` puts it back). Its results stay, like any private one's."""
        record = self._own_record(submission_id, identity, "withdraw a submission")
        if record.get("hidden"):  # already off the board (private, or hidden by a maintainer)
            return public_view(record) | {"hidden": True}
        return self.moderate(submission_id, actor=identity, hidden=True, reason=PRIVATE_REASON)

    def _own_record(self, submission_id: str, identity: str, action: str) -> dict:
        """The caller's own record; UnknownSubmission (malformed, or unknown to them) or NotAllowed (not
        theirs) otherwise."""
        if not is_submission_id(submission_id):
            raise UnknownSubmission("malformed submission id")
        record = find_record(self.store, submission_id)
        if record is None or not self.may_see(record, identity):
            raise UnknownSubmission()
        if not quotas.owned_by(record, identity):
            raise NotAllowed(f"only its submitter can {action}")
        return record

    def is_maintainer(self, identity: str) -> bool:
        return quotas.normalise_identity(identity) in {
            quotas.normalise_identity(m) for m in self.config.maintainers
        }

    def quarantined(self, track: str) -> list[dict]:
        """Unreadable submission records of `track` (skipped by the pipeline), for maintainers."""
        return quarantined(self.store, check_track(track))

    def rescore(self, track: str, dry_run: bool, actor: str) -> dict:
        check_track(track)
        return {"task_id": self.enqueue.rescore(track, dry_run, actor), "track": track, "dry_run": dry_run}

    def moderate(
        self,
        submission_id: str,
        *,
        actor: str,
        hidden: bool | None = None,
        verified: bool | None = None,
        is_baseline: bool | None = None,
        reason: str,
    ) -> dict:
        if not is_submission_id(submission_id):
            raise UnknownSubmission("malformed submission id")
        record = find_record(self.store, submission_id)
        if record is None:
            raise UnknownSubmission()
        flags: dict[str, bool | str | None] = {
            k: v
            for k, v in (("hidden", hidden), ("verified", verified), ("is_baseline", is_baseline))
            if v is not None
        }
        if hidden is not None:
            flags["hidden_reason"] = reason if hidden else None

        def change(store: Store, head: str, rec: dict) -> tuple[dict | None, dict[str, bytes]]:
            new = transition(
                rec, rec["status"], f"moderated by {actor}: {reason}", error=rec["error"], **flags
            )
            return new, {}

        updated = update_record(
            self.store, record["track"], submission_id, change, f"moderate {submission_id}"
        )
        if updated is None:  # gone since it was found
            raise UnknownSubmission()
        try:
            self.enqueue.publish(record["track"])
        except Exception as exc:  # broker down: the reconciler republishes a board that disagrees
            log.warning(
                "could not send the publish of %s after moderating %s (%s); the reconciler will",
                record["track"],
                submission_id,
                type(exc).__name__,
            )
        return public_view(updated) | {"hidden": updated["hidden"], "hidden_reason": updated["hidden_reason"]}

    # -- finals (../shared/spec/disclosure.md §4: what a release reveals of each submitter) -------------

    def finals(self, identity: str, track: str) -> list[str]:
        """The caller's chosen finals on `track` (ids; empty: a release takes their best released one)."""
        return [r["submission_id"] for r in self._own_records(identity, track) if r.get("final")]

    def set_finals(self, identity: str, track: str, submission_ids: list[str]) -> list[str]:
        """Choose at most 2 of the caller's released, visible submissions on `track` as their finals (an
        empty list: back to the default, their best released one). ValueError naming what is wrong."""
        check_track(track)
        wanted = list(dict.fromkeys(submission_ids))
        if len(wanted) > 2:
            raise BadRequest("choose at most 2 finals per track")
        own = {r["submission_id"]: r for r in self._own_records(identity, track)}
        for sid in wanted:
            record = own.get(sid)
            if record is None:
                raise UnknownSubmission(f"{sid}: not one of your submissions on {track}")
            if not on_board(record):
                raise BadRequest(f"{sid}: only a released submission on the board can be a final")

        def build(store: Store, head: str) -> tuple[dict[str, bytes], list[str]]:
            changed = []
            for sid, summary in own.items():
                if bool(summary.get("final")) == (sid in wanted):
                    continue
                record = load_record(store, track, sid, head)
                if record is None:
                    continue
                record = {**record, "final": sid in wanted, "updated_at": now_iso()}
                changed.append(record)
            return record_files(store, head, changed), []

        commit_with_retry(self.store, AREA, build, f"finals of a submitter on {track}")
        return wanted

    def _own_records(self, identity: str, track: str) -> list[dict]:
        identity = quotas.normalise_identity(identity)
        index = read_json(self.store, AREA, quotas.index_path(identity, check_track(track))) or {}
        out = []
        for entry in index.get("accepted") or []:
            record = load_record(self.store, track, entry["submission_id"])
            if record is not None and quotas.owned_by(record, identity):
                out.append(record)
        return out

    # -- held near-copies (worker/nearcopy.py; maintainers only, the caller checks) -----------------------

    @staticmethod
    def _hold(store: Store, head: str, track: str, identity: str, match: Match) -> tuple[str, dict] | None:
        """Why an upload is held (its reason, and the private details for maintainers), or None: a near-copy
        of any earlier submission; an exact copy of another submitter's; an exact copy of the submitter's
        own held, rejected, private or hidden one, which would otherwise be scored in its place."""
        if match.near is not None:
            near = match.near
            return held_reason(near.differing), {"of": near.submission_id, "rows_differing": near.differing}
        twins = [t for t in (load_record(store, track, sid, head) for sid in match.exact) if t is not None]
        own = [t for t in twins if quotas.owned_by(t, identity)]
        for twin in own:
            if twin["status"] in (HELD, REJECTED) or twin.get("hidden"):
                return COPY_OF_CONCEALED, {"of": twin["submission_id"], "rows_differing": 0}
        # Someone else's file (a copy of one's own that someone copied is one's own). The project's baselines
        # are public files, there to be tried: a copy of one is scored like it (and teaches nothing new).
        others = [t for t in twins if not t.get("is_baseline")]
        if others and not own:
            return COPY_OF_ANOTHER, {"of": others[0]["submission_id"], "rows_differing": 0}
        return None

    def index_earlier_submissions(self, track: str) -> int:
        """Add submissions stored before the near-copy guard existed to its index, so later uploads are
        compared with them too. Idempotent; returns how many were added (`python -m worker reindex`)."""
        check_track(track)
        inputs = self.public_inputs(track)
        scorer = get_track(track)
        stored = set(self.store.list(AREA, layout.track_dir(track)))
        added = 0
        for record in list_records(self.store, track):
            sid = record["submission_id"]
            if fingerprint_path(track, sid) in stored:
                continue
            data = self.store.read(AREA, predictions_path(track, sid)) or b""
            try:
                keys = scorer.prediction_keys(data, inputs)
            except InputError:  # refused by the scorer, or made for other public inputs: nothing to compare
                continue
            fingerprint = Fingerprint.of(keys, inputs)

            def build(store: Store, head: str, sid: str = sid, fingerprint: Fingerprint = fingerprint):
                if store.read(AREA, fingerprint_path(track, sid), head) is not None:
                    return {}, []
                _, append = self._near_copies.find(store, track, fingerprint, head)
                return append.files(sid), []

            commit_with_retry(
                self.store, AREA, build, f"index {track}/{sid} for the near-copy guard", attempts=20
            )
            added += 1
        return added

    def held(self, track: str | None = None) -> list[dict]:
        """Held submissions (near-copies, and a public test's gold matches), oldest first, with what a
        reviewer needs (maintainers only: `near_copy_of` names the earlier submission)."""
        tracks = [check_track(track)] if track else list(TRACK_NAMES)
        out = []
        for name in tracks:
            for record in list_records(self.store, name):
                if record["status"] != HELD:
                    continue
                near = record.get("near_copy") or {}
                out.append(
                    public_view(record)
                    | {
                        "status": HELD,
                        "reason": record["error"],
                        "rows_differing": near.get("rows_differing"),
                        "near_copy_of": near.get("of"),
                        "held_for": record.get("held_for") or "near_copy",  # or gold_match (§5)
                    }
                )
        return out

    def release(self, submission_id: str, *, actor: str, reason: str = "") -> dict:
        """Score and publish a held submission as usual."""
        note = f"released by {actor}" + (f": {reason}" if reason else "")
        record = self._review(submission_id, QUEUED, note)
        try:
            self.enqueue.score(record["track"], submission_id)
        except Exception as exc:  # the record is queued in the store; the reconciler re-sends
            log.warning(
                "could not send %s to the broker (%s); the reconciler will", submission_id, type(exc).__name__
            )
        return {**public_view(record), "status": record["status"]}

    def reject(self, submission_id: str, *, actor: str, reason: str) -> dict:
        """End a held submission: it is never scored, and it keeps using its quota slot."""
        if not reason.strip():
            raise BadRequest("a reason is required to reject a held submission")
        record = self._review(
            submission_id,
            REJECTED,
            f"rejected by {actor} after review: {reason}",
            error=f"rejected after review: {reason}",
        )
        return {**public_view(record), "status": record["status"], "error": record["error"]}

    def _review(self, submission_id: str, status: str, note: str, error: str | None = None) -> dict:
        if not is_submission_id(submission_id):
            raise UnknownSubmission("malformed submission id")
        found = find_record(self.store, submission_id)
        if found is None:
            raise UnknownSubmission()

        def change(store: Store, head: str, rec: dict) -> tuple[dict | None, dict[str, bytes]]:
            if rec["status"] != HELD:
                raise NotHeld(f"submission {submission_id} is {rec['status']}, not held")
            # A gold-match hold released by a maintainer is not held again when its scored version is found.
            cleared = {"gold_match_released": True} if rec.get("held_for") == "gold_match" else {}
            return transition(rec, status, note, error=error, **cleared), {}

        updated = update_record(self.store, found["track"], submission_id, change, f"review {submission_id}")
        if updated is None:  # gone since it was found
            raise UnknownSubmission()
        return updated


def format_report_of(report: Report) -> dict:
    """The gold-independent part of an intake report kept for an accepted upload (format_report.json):
    `{"entries": [{"line", "id", "issues"}, ...] (first FORMAT_REPORT_MAX), "total": N, "advice": [...]}`.
    Built only from the upload and the public inputs (`Track.check_predictions`), so safe to show."""
    return {
        "entries": [
            {"line": e.get("line"), "id": e.get("id"), "issues": list(e.get("issues") or [])}
            for e in report.format_report[:FORMAT_REPORT_MAX]
        ],
        "total": len(report.format_report),
        "advice": list(report.advice),
    }


def _with_problems(report: Report, problems: list[Problem]) -> Report:
    merged = Report(
        errors=[], errors_total=0, advice=report.advice, format_report=report.format_report, rows=report.rows
    )
    merged.extend(problems)
    merged.extend(report.errors)
    merged.errors_total += report.errors_total - len(report.errors)
    return merged
