"""The shapes the service answers the web side with (issue 30.1): what `Service` reads return, as typed
dicts, so the REST routes and the UI read named keys a type checker knows, and the JSON a route sends is
exactly the value (a TypedDict is a dict at run time).

Only what the disclosure contract lets a caller see is in them: a record's public fields, its status and
lifecycle, and a result the gate already let through (../shared/spec/disclosure.md §3)."""

from __future__ import annotations

from typing import Any, Literal, TypedDict


class PublicRecord(TypedDict):
    """A submission record's public fields (`worker.records.PUBLIC_FIELDS`)."""

    submission_id: str
    track: str
    sha256: str
    metadata: dict[str, Any]
    submitter: str
    is_baseline: bool
    verified: bool
    created_at: str


class ModerationAnswer(PublicRecord, total=False):
    """What a change of visibility or a review answers: the public fields and what changed."""

    status: str
    error: str | None
    hidden: bool
    hidden_reason: str | None
    changed: bool  # make-public / withdraw: False when it already was so (nothing was done)


class HeldView(PublicRecord):
    """A held submission as a reviewer sees it (maintainers only)."""

    status: str
    reason: str | None
    rows_differing: int | None
    near_copy_of: str | None  # the earlier submission it nearly copies
    held_for: str  # near_copy (also an exact copy of another submitter's file) or gold_match


class VersionView(TypedDict):
    """One scored version of a submission (`worker.records.PUBLIC_VERSION_FIELDS`)."""

    version: int
    scorer_version: str
    references_sha256: str
    scored_at: str


class ResultView(TypedDict):
    version: int
    result: dict[str, Any]  # the scorer's result as the disclosure gate shows it


class SubmissionView(PublicRecord):
    """`Service.submission`: one submission's page (REST `GET /api/v1/submissions/{id}`)."""

    status: str  # queued | scoring | scored | published | failed | rejected | held
    error: str | None
    report: dict[str, Any] | None
    hidden: bool
    private: bool  # hidden by its submitter (who may make it public), not by a maintainer
    updated_at: str
    history: list[dict[str, Any]]
    versions: list[VersionView]
    format_report: dict[str, Any] | None
    result: ResultView | None  # None until scored, and while the result is not shown
    released: bool  # False: the Ladder did not release it (no test number; disclosure §3)
    not_released: str | None  # why, for its owner
    primary_metric: str  # the track's primary metric key, e.g. "jrem"
    primary_metric_label: str  # its column header, e.g. "JREM ↑"


class RescoreNotice(TypedDict):
    """A re-score moved one of the caller's numbers or ranks."""

    kind: Literal["rescore"]
    track: str
    submission_id: str
    model_name: str | None
    metric: str
    old: float | None
    new: float | None
    old_rank: int | None
    new_rank: int | None
    at: str | None
    link: str


class ReleaseNotice(TypedDict):
    """A release ranked one of the caller's submissions."""

    kind: Literal["release"]
    track: str
    submission_id: str
    model_name: str | None
    release: str
    rank: int | None
    live_rank: int | None
    rank_delta: int | None
    at: str | None
    link: str


Notice = RescoreNotice | ReleaseNotice


class ReferenceSetView(TypedDict):
    """`Service.reference_set`: what a track is scored on, from its published manifest. `kind` None with
    `ready` False: no reference set installed; None with `ready` True: one published before manifests."""

    track: str
    kind: Literal["real", "demo"] | None
    ready: bool
    rows: dict[str, int]
    sha256: str | None
    installed_at: str | None
    test_status: Literal["private", "public"] | None  # ../shared/spec/disclosure.md §1


class LatestRelease(TypedDict):
    """A track's newest release as the board names it."""

    name: str
    date: str
    url: str


class PublishedRelease(TypedDict):
    """One release: its signed `release.json`, its rows and its BibTeX entry."""

    release: dict[str, Any]
    rows: list[dict[str, Any]]
    citation: str


class Health(TypedDict, total=False):
    """`Service.health`: `ok` and each check's "ok" or what is wrong; `beat` and `hub_commits` are reported
    but not part of `ok`; the web process adds its `sandbox` state."""

    ok: bool
    store: str
    broker: str
    disk: str
    worker: str
    beat: str
    hub_commits: dict[str, Any]
    sandbox: str
