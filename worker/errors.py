"""The answers the service gives on purpose, one class per kind.

The REST API maps each kind to its HTTP status in one place (`space/api.py`, `service_error_response`); the UI
shows the message. The built-in bases are kept so that callers written against them (`except ValueError`,
`except LookupError`, `except PermissionError`) still catch what they meant. Anything else a service method
raises is a bug (HTTP 500), never an answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


class ServiceError(Exception):
    """Base of every answer below. The message is English (REST's `detail`, logs); `key` names the answer
    and `params` fill it, so a UI can say it in its own language (space/ui/answers.py): the kind's own key
    unless the raise site names a more precise one."""

    key = "service_error"
    params: Mapping[str, object] = MappingProxyType({})

    def __init__(self, message: str = "", *, key: str = "", **params: object) -> None:
        super().__init__(message)
        if key:
            self.key = key
        if params:
            self.params = MappingProxyType(dict(params))


class BadRequest(ServiceError, ValueError):
    """The request itself is wrong: a malformed release name, a missing reason, too many finals (422)."""

    key = "bad_request"


class UnknownSubmission(ServiceError, LookupError, ValueError):
    """No such submission, or none this caller may see; a malformed id is one too (404)."""

    key = "unknown_submission"

    def __init__(self, message: str = "unknown submission id", *, key: str = "", **params: object) -> None:
        super().__init__(message, key=key, **params)


class NotAllowed(ServiceError, PermissionError):
    """The caller may see the thing but not do this to it (403)."""

    key = "not_allowed"


class NotHeld(ServiceError, ValueError):
    """A review (release / reject) of a submission that is not held (409)."""

    key = "not_held"


class AlreadyExists(ServiceError, FileExistsError):
    """A name that is taken and never changes, such as a release's (409)."""

    key = "exists"


class NotReady(ServiceError):
    """The track cannot take submissions yet: its public inputs are not published (503)."""

    key = "not_ready"


class DiskFull(ServiceError):
    """The data disk has no room for an upload; nothing was stored (507)."""

    key = "disk_full"

    def __init__(self) -> None:
        super().__init__("the server's disk is full, so the upload was not stored; please try again later")


class Busy(ServiceError):
    """Every work slot is taken: try again in `retry_after` seconds (503)."""

    key = "busy"

    def __init__(self, retry_after: int) -> None:
        super().__init__(
            f"the server is busy validating other uploads; retry in {retry_after} s", seconds=retry_after
        )
        self.retry_after = retry_after


@dataclass
class QuotaExceeded(ServiceError):
    """Over the scored-submission quota ("quota") or the upload-attempt cap ("attempts") (429)."""

    key = "quota_exceeded"
    kind: str
    limit: int
    next_slot_at: str

    def __str__(self) -> str:
        what = "scored submissions" if self.kind == "quota" else "upload attempts"
        return (
            f"limit of {self.limit} {what} per 24 hours reached for this track; "
            f"next slot opens at {self.next_slot_at}"
        )
