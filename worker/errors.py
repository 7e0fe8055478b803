"""The answers the service gives on purpose, one class per kind.

The REST API maps each kind to its HTTP status in one place (`space/api.py`, `service_error_response`); the UI
shows the message. The built-in bases are kept so that callers written against them (`except ValueError`,
`except LookupError`, `except PermissionError`) still catch what they meant. Anything else a service method
raises is a bug (HTTP 500), never an answer.
"""

from __future__ import annotations

from dataclasses import dataclass


class ServiceError(Exception):
    """Base of every answer below."""


class BadRequest(ServiceError, ValueError):
    """The request itself is wrong: a malformed release name, a missing reason, too many finals (422)."""


class UnknownSubmission(ServiceError, LookupError, ValueError):
    """No such submission, or none this caller may see; a malformed id is one too (404)."""

    def __init__(self, message: str = "unknown submission id") -> None:
        super().__init__(message)


class NotAllowed(ServiceError, PermissionError):
    """The caller may see the thing but not do this to it (403)."""


class NotHeld(ServiceError, ValueError):
    """A review (release / reject) of a submission that is not held (409)."""


class AlreadyExists(ServiceError, FileExistsError):
    """A name that is taken and never changes, such as a release's (409)."""


class NotReady(ServiceError):
    """The track cannot take submissions yet: its public inputs are not published (503)."""


class DiskFull(ServiceError):
    """The data disk has no room for an upload; nothing was stored (507)."""

    def __init__(self) -> None:
        super().__init__("the server's disk is full, so the upload was not stored; please try again later")


class Busy(ServiceError):
    """Every work slot is taken: try again in `retry_after` seconds (503)."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"the server is busy validating other uploads; retry in {retry_after} s")
        self.retry_after = retry_after


@dataclass
class QuotaExceeded(ServiceError):
    """Over the scored-submission quota ("quota") or the upload-attempt cap ("attempts") (429)."""

    kind: str
    limit: int
    next_slot_at: str

    def __str__(self) -> str:
        what = "scored submissions" if self.kind == "quota" else "upload attempts"
        return (
            f"limit of {self.limit} {what} per 24 hours reached for this track; "
            f"next slot opens at {self.next_slot_at}"
        )
