"""What submitters do to their own entries (make public, withdraw, finals) and maintainers to anyone's
(moderate, held near-copies, re-score, releases, comparisons sent to a worker)."""

from __future__ import annotations

import logging

from scoring.names import TRACK_NAMES
from worker import quotas
from worker.errors import (
    AlreadyExists,
    BadRequest,
    NotAllowed,
    NotHeld,
    UnknownSubmission,
)
from worker.own import PRIVATE_REASON
from worker.records import (
    HELD,
    QUEUED,
    REJECTED,
    check_track,
    is_submission_id,
    now_iso,
    on_board,
    public_view,
    transition,
)
from worker.service.state import (
    RELEASE_NAME,
    ServiceBase,
)
from worker.store import Store, commit_with_retry
from worker.submissions import (
    AREA,
    find_record,
    list_records,
    load_record,
    quarantined,
    read_json,
    record_files,
    update_record,
)
from worker.views import HeldView, ModerationAnswer

log = logging.getLogger(__name__)


class Moderation(ServiceBase):
    def cut_release(self, track: str, name: str, actor: str) -> dict:
        """Send the cut of release `name` of `track` to a worker (the references are there); BadRequest
        for a malformed name, AlreadyExists for a name taken (a release never changes: cut an erratum)."""
        check_track(track)
        if not RELEASE_NAME.match(name):
            raise BadRequest(
                f"a release is named like 2027-03 (an erratum: 2027-03.1), not {name!r}", key="release_name"
            )
        if self.store.list("results", f"releases/{track}/{name}/"):
            raise AlreadyExists(
                f"release {name} of {track} exists; a release is never changed", name=name, track=track
            )
        return {"track": track, "name": name, "task_id": self.enqueue.release(track, name, actor)}

    def compare(self, a_id: str, b_id: str) -> dict:
        a, b = find_record(self.store, a_id), find_record(self.store, b_id)
        if a is None or b is None:
            raise UnknownSubmission()
        if a["track"] != b["track"]:
            raise BadRequest("submissions are on different tracks", key="compare_tracks")
        if not (on_board(a) and on_board(b)):
            raise BadRequest(
                "both submissions must be on the board (published and visible)", key="compare_on_board"
            )
        return self.enqueue.compare(a["track"], a_id, b_id)

    def make_public(self, submission_id: str, *, identity: str) -> ModerationAnswer:
        """The submitter turns their private submission public: it joins the board at the next publish.
        Only a submission hidden as private can be; one a maintainer hid stays hidden. `changed` says
        whether anything was done (False: it already was public)."""
        record = self._own_record(submission_id, identity, "make a submission public")
        if not record.get("hidden"):
            return ModerationAnswer(**public_view(record), hidden=False, changed=False)
        if record.get("hidden_reason") != PRIVATE_REASON:
            raise NotAllowed(
                "this submission was hidden by a maintainer; it cannot be made public",
                key="hidden_by_maintainer",
            )
        answer = self.moderate(
            submission_id, actor=identity, hidden=False, reason="made public by its submitter"
        )
        return ModerationAnswer(**answer, changed=True)

    def withdraw(self, submission_id: str, *, identity: str) -> ModerationAnswer:
        """The submitter takes their submission off the board: it becomes private (off every public page
        at the next publish; `make_public` puts it back). Its results stay, like any private one's."""
        record = self._own_record(submission_id, identity, "withdraw a submission")
        if record.get("hidden"):  # already off the board (private, or hidden by a maintainer)
            return ModerationAnswer(**public_view(record), hidden=True, changed=False)
        answer = self.moderate(submission_id, actor=identity, hidden=True, reason=PRIVATE_REASON)
        return ModerationAnswer(**answer, changed=True)

    def hidden_reason(self, submission_id: str, viewer: str | None) -> str | None:
        """Why a maintainer hid `submission_id`, for whoever may see it hidden (its submitter and the
        maintainers); None when it is not hidden by a maintainer (visible, or private) or for anyone else."""
        if viewer is None or not is_submission_id(submission_id):
            return None
        record = find_record(self.store, submission_id)
        if record is None or not record.get("hidden") or record.get("hidden_reason") == PRIVATE_REASON:
            return None
        return record.get("hidden_reason") if self.may_see(record, viewer) else None

    def _own_record(self, submission_id: str, identity: str, action: str) -> dict:
        """The caller's own record; UnknownSubmission (malformed, or unknown to them) or NotAllowed (not
        theirs) otherwise."""
        if not is_submission_id(submission_id):
            raise UnknownSubmission("malformed submission id")
        record = find_record(self.store, submission_id)
        if record is None or not self.may_see(record, identity):
            raise UnknownSubmission()
        if not quotas.owned_by(record, identity):
            raise NotAllowed(f"only its submitter can {action}", key="not_submitter")
        return record

    def quarantined(self, track: str) -> list[dict]:
        """Unreadable submission records of `track` (skipped by the pipeline), for maintainers."""
        return quarantined(self.store, check_track(track))

    def rescore(self, track: str, dry_run: bool, actor: str, force: bool = False) -> dict:
        """Send a re-score of `track` to the workers; `force` recomputes current versions too."""
        check_track(track)
        # `force` only when asked: an Enqueuer written before it (a test's recorder) still takes the rest.
        task = (
            self.enqueue.rescore(track, dry_run, actor, force=True)
            if force
            else self.enqueue.rescore(track, dry_run, actor)
        )
        return {"task_id": task, "track": track, "dry_run": dry_run, "force": force}

    def moderate(
        self,
        submission_id: str,
        *,
        actor: str,
        hidden: bool | None = None,
        verified: bool | None = None,
        is_baseline: bool | None = None,
        reason: str,
    ) -> ModerationAnswer:
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
        return ModerationAnswer(
            **public_view(updated), hidden=updated["hidden"], hidden_reason=updated["hidden_reason"]
        )

    def finals(self, identity: str, track: str) -> list[str]:
        """The caller's chosen finals on `track` (ids; empty: a release takes their best released one)."""
        return [r["submission_id"] for r in self._own_records(identity, track) if r.get("final")]

    def set_finals(self, identity: str, track: str, submission_ids: list[str]) -> list[str]:
        """Choose at most 2 of the caller's released, visible submissions on `track` as their finals (an
        empty list: back to the default, their best released one). ValueError naming what is wrong."""
        check_track(track)
        wanted = list(dict.fromkeys(submission_ids))
        if len(wanted) > 2:
            raise BadRequest("choose at most 2 finals per track", key="too_many_finals")
        own = {r["submission_id"]: r for r in self._own_records(identity, track)}
        for sid in wanted:
            record = own.get(sid)
            if record is None:
                raise UnknownSubmission(
                    f"{sid}: not one of your submissions on {track}", key="not_yours", id=sid
                )
            if not on_board(record):
                raise BadRequest(
                    f"{sid}: only a released submission on the board can be a final",
                    key="final_not_on_board",
                    id=sid,
                )

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

    def held(self, track: str | None = None) -> list[HeldView]:
        """Held submissions (near-copies, and a public test's gold matches), oldest first, with what a
        reviewer needs (maintainers only: `near_copy_of` names the earlier submission)."""
        tracks = [check_track(track)] if track else list(TRACK_NAMES)
        out: list[HeldView] = []
        for name in tracks:
            for record in list_records(self.store, name):
                if record["status"] != HELD:
                    continue
                near = record.get("near_copy") or {}
                out.append(
                    HeldView(
                        **public_view(record),
                        status=HELD,
                        reason=record["error"],
                        rows_differing=near.get("rows_differing"),
                        near_copy_of=near.get("of"),
                        held_for=record.get("held_for") or "near_copy",  # or gold_match (§5)
                    )
                )
        return out

    def release(self, submission_id: str, *, actor: str, reason: str = "") -> ModerationAnswer:
        """Score and publish a held submission as usual."""
        note = f"released by {actor}" + (f": {reason}" if reason else "")
        record = self._review(submission_id, QUEUED, note)
        try:
            self.enqueue.score(record["track"], submission_id)
        except Exception as exc:  # the record is queued in the store; the reconciler re-sends
            log.warning(
                "could not send %s to the broker (%s); the reconciler will", submission_id, type(exc).__name__
            )
        return ModerationAnswer(**public_view(record), status=record["status"])

    def reject(self, submission_id: str, *, actor: str, reason: str) -> ModerationAnswer:
        """End a held submission: it is never scored, and it keeps using its quota slot."""
        if not reason.strip():
            raise BadRequest("a reason is required to reject a held submission", key="reason_required")
        record = self._review(
            submission_id,
            REJECTED,
            f"rejected by {actor} after review: {reason}",
            error=f"rejected after review: {reason}",
        )
        return ModerationAnswer(**public_view(record), status=record["status"], error=record["error"])

    def _review(self, submission_id: str, status: str, note: str, error: str | None = None) -> dict:
        if not is_submission_id(submission_id):
            raise UnknownSubmission("malformed submission id")
        found = find_record(self.store, submission_id)
        if found is None:
            raise UnknownSubmission()

        def change(store: Store, head: str, rec: dict) -> tuple[dict | None, dict[str, bytes]]:
            if rec["status"] != HELD:
                raise NotHeld(
                    f"submission {submission_id} is {rec['status']}, not held",
                    id=submission_id,
                    status=rec["status"],
                )
            # A gold-match hold released by a maintainer is not held again when its scored version is found.
            cleared = {"gold_match_released": True} if rec.get("held_for") == "gold_match" else {}
            return transition(rec, status, note, error=error, **cleared), {}

        updated = update_record(self.store, found["track"], submission_id, change, f"review {submission_id}")
        if updated is None:  # gone since it was found
            raise UnknownSubmission()
        return updated
