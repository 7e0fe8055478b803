"""A submitter's view of their own submissions ("My submissions"): what `Service.my_submissions` returns.

Built only from what the submitter may already see of each submission (its record's public fields,
status and error, the latest staged result's headline metrics, the intake format report's count), never
from a held near-copy's private details or anything gold-derived beyond their own scores.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from scoring.tracks import get_track

PRIVATE_REASON = "private: visible to its submitter only, until they make it public"


@dataclass(frozen=True)
class OwnSubmission:
    """One of the caller's submissions, newest first in `Service.my_submissions`."""

    submission_id: str
    track: str
    model_name: str
    status: str  # queued | scoring | scored | published | failed | rejected | held
    created_at: str
    updated_at: str
    private: bool  # hidden by its submitter: off the board until they make it public
    hidden: bool  # off the board (privately, or by a maintainer)
    error: str | None  # why it failed, was rejected or is held
    primary_metric: str  # the track's primary metric key (e.g. "jrem")
    scores: dict[str, float] = field(default_factory=dict)  # headline metrics of the latest result, 0-1
    result_version: int | None = None
    format_issues: int | None = None  # outputs that are not schema-valid (None: the track has no format)
    link: str = ""  # the submission page, relative to the UI ("?submission=<id>")
    released: bool = True  # False: scored, but the Ladder did not release it (no number; disclosure §3)
    hidden_reason: str | None = None  # a maintainer's reason when they hid it (None: not hidden, or private)

    def as_dict(self) -> dict:
        return asdict(self)


def _metric(metrics: dict, dotted: str) -> float | None:
    value: object = metrics
    for part in dotted.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def headline_scores(track: str, result: dict | None) -> dict[str, float]:
    """The track's headline metrics present in a scorer result (dotted keys, shares in [0, 1])."""
    metrics = (result or {}).get("metrics") or {}
    found = ((key, _metric(metrics, key)) for key in get_track(track).headline_metrics)
    return {key: value for key, value in found if value is not None}


def own_submission(record: dict, result: dict | None, format_report: dict | None) -> OwnSubmission:
    """The owner's summary of `record`, with its latest staged `result` (None before scoring) and its
    intake `format_report` (None for tracks without one)."""
    track = record["track"]
    versions = record.get("versions") or []
    return OwnSubmission(
        submission_id=record["submission_id"],
        track=track,
        model_name=str((record.get("metadata") or {}).get("model_name") or ""),
        status=record["status"],
        created_at=record["created_at"],
        updated_at=record.get("updated_at") or record["created_at"],
        private=bool(record.get("hidden")) and record.get("hidden_reason") == PRIVATE_REASON,
        hidden=bool(record.get("hidden")),
        error=record.get("error"),
        primary_metric=get_track(track).primary_metric,
        scores=headline_scores(track, result),
        result_version=versions[-1]["version"] if versions else None,
        format_issues=None if format_report is None else int(format_report.get("total") or 0),
        link=f"?submission={record['submission_id']}",
        released=(record.get("ladder") or {}).get("released") is not False,
        hidden_reason=(
            record.get("hidden_reason")
            if record.get("hidden") and record.get("hidden_reason") != PRIVATE_REASON
            else None
        ),
    )
