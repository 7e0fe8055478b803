"""Taking submissions: validation against the public inputs, the upload's one commit, quotas and the
near-copy guard (worker/nearcopy.py)."""

from __future__ import annotations

import hashlib
import logging
import secrets
from collections.abc import Callable
from datetime import UTC, datetime
from typing import NotRequired, TypedDict

from scoring.api import read_public_inputs
from scoring.problems import InputError, Problem
from scoring.report import Report
from scoring.tracks import get_track
from worker import quotas
from worker.disk import DISK_FULL_ERRNOS
from worker.errors import (
    BadRequest,
    DiskFull,
    NotReady,
)
from worker.nearcopy import (
    COPY_OF_ANOTHER,
    COPY_OF_CONCEALED,
    Fingerprint,
    Match,
    fingerprint_path,
    held_reason,
)
from worker.own import PRIVATE_REASON
from worker.quotas import QuotaState, QuotaView
from worker.records import (
    FINAL_BAD,
    HELD,
    REJECTED,
    check_track,
    format_report_path,
    held_record,
    new_record,
    now_iso,
    predictions_path,
    validate_metadata,
)
from worker.service.state import (
    FORMAT_REPORT_MAX,
    FORMAT_REPORT_TRACKS,
    ServiceBase,
)
from worker.store import Store, commit_with_retry, layout
from worker.submissions import (
    AREA,
    dumps,
    list_records,
    load_record,
    load_records,
    read_json,
    record_files,
)

log = logging.getLogger(__name__)


class SubmitOutcome(TypedDict):
    """What `Intake.submit` answers: status "queued", "held" (with `reason`) or "rejected" (with the
    line-numbered `report`, nothing stored, `submission_id` None); `duplicate`: the same file was already
    submitted (its id and status are the earlier one's)."""

    submission_id: str | None
    status: str
    report: dict | None
    duplicate: bool
    quota: QuotaState
    reason: NotRequired[str]


class Intake(ServiceBase):
    def public_inputs(self, track: str) -> list[dict]:
        """The public test inputs of `track`, re-parsed only when the published file changes."""
        raw = self.public_file(track, "test_inputs.jsonl")
        if raw is None:
            raise NotReady(
                f"track {track!r} has no reference set installed yet, so it cannot take "
                "submissions (a maintainer installs one: "
                f"`python -m worker install --track {track} DIR`)",
                track=track,
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
    ) -> SubmitOutcome:
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
            raise BadRequest("an identity is required", key="identity_required")
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
    ) -> SubmitOutcome:
        now = datetime.now(UTC)
        sha = hashlib.sha256(data).hexdigest()
        index_path = quotas.index_path(identity, track)
        index = read_json(self.store, AREA, index_path) or quotas.empty_index()
        existing = self._duplicate(track, index, sha)
        if existing is not None:
            return _duplicate_of(existing, self._quota_state(track, index, now, is_baseline))
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
            return _duplicate_of(outcome["existing"], self._quota_state(track, index, now, is_baseline))
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
        recent = [e for e in index["accepted"] if now - quotas.parse_iso(e["at"]) < quotas.WINDOW]
        records = load_records(store or self.store, track, [e["submission_id"] for e in recent], revision)
        times = []
        for entry in recent:
            record = records[entry["submission_id"]]
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

    def _quota_state(self, track: str, index: dict, now: datetime, is_baseline: bool = False) -> QuotaState:
        if is_baseline:
            return {"limit": None, "used": 0, "remaining": None, "next_slot_at": None}
        return quotas.window_state(self._counted(track, index), self.config.quota_per_day, now)

    def quota(self, identity: str, track: str) -> QuotaView:
        index = read_json(self.store, AREA, quotas.index_path(identity, track)) or quotas.empty_index()
        state = self._quota_state(track, index, datetime.now(UTC))
        attempts = quotas.window_state(index["attempts"], self.config.attempts_per_day, datetime.now(UTC))
        return {**state, "attempts": attempts}

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


def _duplicate_of(existing: dict, quota: QuotaState) -> SubmitOutcome:
    """The answer to a file the same submitter already sent: the earlier submission's id and status."""
    return {
        "submission_id": existing["submission_id"],
        "status": existing["status"],
        "report": None,
        "duplicate": True,
        "quota": quota,
    }


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
