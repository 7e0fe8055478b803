"""Submission records (ARCHITECTURE §5): paths, lifecycle transitions, metadata validation.

Pure functions on plain dicts; reading and writing them is `worker.submissions`' job.
"""

from __future__ import annotations

import copy
import unicodedata
from datetime import UTC, datetime
from typing import cast
from urllib.parse import urlsplit

from scoring.names import MODEL_TYPES as KNOWN_MODEL_TYPES
from scoring.names import SETTINGS as KNOWN_SETTINGS
from scoring.problems import Problem

# Paths and the validated parts they are built from live in the store layout; re-exported for the callers
# that know a record by its track and id.
from worker.identities import looks_like_prefix
from worker.store.layout import (  # noqa: F401
    check_track,
    format_report_path,
    is_submission_id,
    predictions_path,
    published_result_path,
    record_path,
    rows_path,
    sealed_result_path,
    staged_result_path,
    sub_dir,
)
from worker.views import PublicRecord, VersionView

RECEIVED, QUEUED, SCORING, SCORED, PUBLISHED, REJECTED, FAILED, HELD = (
    "received",
    "queued",
    "scoring",
    "scored",
    "published",
    "rejected",
    "failed",
    "held",
)
STATUSES = (RECEIVED, QUEUED, SCORING, SCORED, PUBLISHED, REJECTED, FAILED, HELD)
PENDING = frozenset({RECEIVED, QUEUED, SCORING})  # waiting for a worker
FINAL_BAD = frozenset({REJECTED, FAILED})
# A near-copy of an earlier submission (worker/nearcopy.py) waits for a maintainer, not for a worker: it is
# never scored until released (-> queued) and never stuck for the reconciler; it uses a quota slot.
AWAITING_REVIEW = frozenset({HELD})
MAX_ATTEMPTS = 3  # scoring runs started; one more crash than this and the submission is failed

PUBLIC_FIELDS = (
    "submission_id",
    "track",
    "sha256",
    "metadata",
    "submitter",
    "is_baseline",
    "verified",
    "created_at",
)
MODEL_TYPES = (*KNOWN_MODEL_TYPES, "")  # empty: not given
SETTINGS = (*KNOWN_SETTINGS, "")
METADATA_LIMITS = {
    "model_name": 100,
    "organisation": 200,
    "paper_url": 500,
    "code_url": 500,
    "description": 2000,
}
RESERVED_MODEL_PREFIX = "baseline"  # model names starting so are the project's own baselines only


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_iso(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def new_record(
    *,
    submission_id: str,
    track: str,
    sha256: str,
    submitter: str,
    metadata: dict,
    is_baseline: bool = False,
    at: str | None = None,
) -> dict:
    """A record that is persisted already `queued`: it is committed before its task is sent."""
    at = at or now_iso()
    return {
        "submission_id": submission_id,
        "track": check_track(track),
        "sha256": sha256,
        "submitter": submitter,
        "status": QUEUED,
        "error": None,
        "report": None,
        "metadata": metadata,
        "is_baseline": is_baseline,
        "verified": False,
        "hidden": False,
        "hidden_reason": None,
        "attempts": 0,
        "created_at": at,
        "updated_at": at,
        "history": [
            {"status": RECEIVED, "at": at, "note": "upload validated"},
            {"status": QUEUED, "at": at, "note": "waiting for a worker"},
        ],
        "versions": [],
    }


def held_record(record: dict, reason: str, near_copy: dict) -> dict:
    """`record` (fresh, queued) held for review instead: `reason` is shown to the submitter; `near_copy`
    ({"of": earlier id, "rows_differing": k}) is private, for maintainers."""
    held = transition(record, HELD, reason, error=reason, near_copy=near_copy)
    held["history"] = [h for h in held["history"] if h["status"] != QUEUED]  # it never waited for a worker
    return held


def transition(record: dict, status: str, note: str, *, error: str | None = None, **fields) -> dict:
    """A copy of `record` moved to `status`, with a history entry (and `error` for failures)."""
    assert status in STATUSES, status
    out = copy.deepcopy(record)
    at = now_iso()
    out.update(fields, status=status, updated_at=at)
    if error is not None or status not in FINAL_BAD:
        out["error"] = error
    out["history"].append({"status": status, "at": at, "note": note})
    return out


def noted(record: dict, note: str) -> dict:
    """A copy of `record` with a history entry at its current status: an event that moves no status (a
    re-score's new version, its publication)."""
    out = copy.deepcopy(record)
    at = now_iso()
    out["updated_at"] = at
    out["history"].append({"status": record["status"], "at": at, "note": note})
    return out


def public_view(record: dict) -> PublicRecord:
    # Exactly the stored values (a missing one as None): this dict is inside signed result envelopes.
    return cast(PublicRecord, {key: record.get(key) for key in PUBLIC_FIELDS})


# What a result version may show outside the workers. Not `references_revision`: the revision of the
# private references area is a path component on the store's disk; `references_sha256` names the set.
PUBLIC_VERSION_FIELDS = ("version", "scorer_version", "references_sha256", "scored_at")


def public_version(version: dict) -> VersionView:
    return cast(VersionView, {key: version.get(key) for key in PUBLIC_VERSION_FIELDS})


def version_key(version: dict) -> tuple[str, str]:
    """What makes a result version unique for one submission (its file sha is fixed)."""
    return version["scorer_version"], version["references_sha256"]


def find_version(record: dict, scorer_version: str, references_sha256: str) -> dict | None:
    for version in record.get("versions", []):
        if version_key(version) == (scorer_version, references_sha256):
            return version
    return None


# -- metadata ------------------------------------------------------------------------------------------


def strip_format_characters(text: str) -> str:
    """`text` without Unicode format characters (category Cf: zero-width spaces and joiners, bidi marks,
    soft hyphens...), which render as nothing and would make two names look alike."""
    return "".join(c for c in text if unicodedata.category(c) != "Cf")


def is_reserved_model_name(name: str) -> bool:
    """Does `name` claim to be a baseline ("Baseline: x", "ＢＡＳＥＬＩＮＥ", "base\u200bline-x")?"""
    folded = unicodedata.normalize("NFKC", strip_format_characters(unicodedata.normalize("NFKC", name)))
    # and on the confusable skeleton, without default-ignorables ("baseIine", "bаseline", "base\uFE0Fline")
    return folded.casefold().lstrip().startswith(RESERVED_MODEL_PREFIX) or looks_like_prefix(
        name.lstrip(), RESERVED_MODEL_PREFIX
    )


def _clean_text(value, name: str, problems: list[Problem], *, multiline: bool = False) -> str:
    text = "" if value is None else str(value).strip()
    allowed = "\n\t" if multiline else ""
    if any(unicodedata.category(c) == "Cc" and c not in allowed for c in text):
        problems.append(Problem(None, name, "must not contain control characters"))
    limit = METADATA_LIMITS[name]
    if len(text) > limit:
        problems.append(Problem(None, name, f"is {len(text)} characters long; at most {limit} are allowed"))
    return text


def _clean_url(value, name: str, problems: list[Problem]) -> str:
    url = _clean_text(value, name, problems)
    if not url:
        return ""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc or any(c.isspace() for c in url):
        problems.append(Problem(None, name, "must be an http:// or https:// URL"))
    return url


def validate_metadata(raw: dict, *, baseline: bool = False) -> tuple[dict, list[Problem]]:
    """Normalised metadata and the problems found (field-level, line None). Format characters are removed
    from the model name; names starting with "baseline" are refused unless `baseline` (the project's own
    baseline submissions)."""
    problems: list[Problem] = []
    meta = {
        "model_name": _clean_text(
            strip_format_characters(str(raw.get("model_name") or "")), "model_name", problems
        ),
        "organisation": _clean_text(raw.get("organisation"), "organisation", problems),
        "model_type": str(raw.get("model_type") or "").strip().lower(),
        "setting": str(raw.get("setting") or "").strip().lower(),
        "paper_url": _clean_url(raw.get("paper_url"), "paper_url", problems),
        "code_url": _clean_url(raw.get("code_url"), "code_url", problems),
        "description": _clean_text(raw.get("description"), "description", problems, multiline=True),
    }
    if not meta["model_name"]:
        problems.append(Problem(None, "model_name", "is required"))
    elif is_reserved_model_name(meta["model_name"]) and not baseline:
        problems.append(
            Problem(
                None,
                "model_name",
                f"names starting with '{RESERVED_MODEL_PREFIX}' are reserved for the leaderboard's own "
                "baselines; please choose another name",
            )
        )
    if meta["model_type"] not in MODEL_TYPES:
        problems.append(Problem(None, "model_type", "must be 'open' or 'closed' (or left empty)"))
    if meta["setting"] not in SETTINGS:
        problems.append(
            Problem(None, "setting", "must be 'zero-shot', 'taxonomy' or 'fine-tuned' (or left empty)")
        )
    return meta, problems


def on_board(record: dict) -> bool:
    """What the board shows, and so what Compare may take: a held, private, hidden, unpublished or not
    released submission is no comparison's side (the comparison would measure hidden labels through it)."""
    return (
        record["status"] == PUBLISHED
        and not record.get("hidden")
        and bool(record["versions"])
        and not not_released(record)
    )


def not_released(record: dict) -> bool:
    """Scored and published, but the Ladder did not release it (../shared/spec/disclosure.md §3): it is on
    no public page, and its owner sees why and no number."""
    return (record.get("ladder") or {}).get("released") is False


def shows_result(record: dict, result: dict | None) -> bool:
    """May the web side show this staged `result` of the record's latest version (to anyone, its owner
    too)? A private test's public-slice result only once the Ladder released it; before the publish that
    decides, nobody sees it (a scored file would otherwise show a number the Ladder may then withhold). A
    public test's result (or one scored before slices existed) as soon as it is scored. A private
    submission's too once released (it is in its submitter's chain, worker/gold/ladder.py)."""
    if result is None or record.get("status") == HELD:  # held for review (a gold match): not yet shown
        return False
    if result.get("slice") != "public":
        return True
    ladder = record.get("ladder") or {}
    latest = record["versions"][-1]["version"] if record.get("versions") else None
    return ladder.get("released") is True and ladder.get("version") == latest


def ladder_message(record: dict) -> str | None:
    """The owner's explanation of a submission the Ladder did not release (no number from the test but
    the margin it had to beat)."""
    ladder = record.get("ladder") or {}
    if ladder.get("released") is not False:
        return None
    se = ladder.get("se")
    margin = f" ({100 * se:.1f} points)" if isinstance(se, int | float) and se == se else ""
    return (
        "scored — not released: not better than your released best by more than one standard error"
        f"{margin}. The live board shows each submitter's released best on the public slice; see README, "
        '"What the live board shows".'
    )
