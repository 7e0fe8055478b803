"""Per-submitter, per-track quotas over a rolling 24 hours, kept in the submissions area.

One small index file per (identity, track), `identities/<sha256(identity)>/<track>.json`:
`{"accepted": [{"submission_id", "sha256", "at"}], "attempts": ["ISO time", ...]}`. `accepted` (kept for
ever) also answers "has this submitter sent this exact file before?". Identities are compared in their
normalised form (`normalise_identity`) and stored only as hashes.
"""

from __future__ import annotations

import hashlib
import unicodedata
from datetime import datetime, timedelta
from typing import TypedDict

from worker.errors import QuotaExceeded
from worker.records import parse_iso, strip_format_characters
from worker.store import layout

WINDOW = timedelta(hours=24)


def normalise_identity(identity: str) -> str:
    """The one form of a user name used for quotas, ownership, maintainer checks and display: NFKC,
    format characters removed, case-folded, trimmed ("ＭＡＬＬＯＲＹ", "mallory\u200b" -> "mallory")."""
    text = strip_format_characters(unicodedata.normalize("NFKC", str(identity)))
    return unicodedata.normalize("NFKC", text.casefold()).strip()


def owned_by(record: dict, identity: str | None) -> bool:
    """Is `identity` the submitter of `record` (both in their normalised form)?"""
    if not identity:
        return False
    return normalise_identity(record.get("submitter") or "") == normalise_identity(identity)


def index_path(identity: str, track: str) -> str:
    key = hashlib.sha256(normalise_identity(identity).encode()).hexdigest()
    return layout.quota_index_path(key, track)


def empty_index() -> dict:
    return {"accepted": [], "attempts": []}


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


class QuotaState(TypedDict):
    """A caller's quota on a track: `limit` and `remaining` are None for the baselines (no quota)."""

    limit: int | None
    used: int
    remaining: int | None
    next_slot_at: str | None  # when the oldest counted event leaves the window; None below the limit


class QuotaView(QuotaState):
    """`Service.quota`: the scored-submission quota and, under `attempts`, the upload-attempt cap."""

    attempts: QuotaState


def window_state(times: list[str], limit: int, now: datetime) -> QuotaState:
    """The quota state of events at `times` in the 24 h before `now`."""
    recent = sorted(t for t in (parse_iso(x) for x in times) if now - t < WINDOW)
    used = len(recent)
    # The slot that frees up first belongs to the oldest event that still counts.
    next_slot = _iso(recent[used - limit] + WINDOW) if used >= limit and recent else None
    return {"limit": limit, "used": used, "remaining": max(0, limit - used), "next_slot_at": next_slot}


def check(times: list[str], limit: int, now: datetime, kind: str) -> QuotaState:
    state = window_state(times, limit, now)
    remaining = state["remaining"]
    if remaining is not None and remaining <= 0:  # never None here: `limit` is a number
        raise QuotaExceeded(kind, limit, state["next_slot_at"] or _iso(now + WINDOW))
    return state


def prune_attempts(index: dict, now: datetime) -> dict:
    """Drop attempts older than the window so the file stays small."""
    return {**index, "attempts": [t for t in index["attempts"] if now - parse_iso(t) < WINDOW]}


def submissions_of(index: dict, sha256: str) -> list[str]:
    """Ids of this submitter's uploads of the file with this sha256, newest first."""
    return [e["submission_id"] for e in reversed(index["accepted"]) if e["sha256"] == sha256]
