"""The service's answers (worker/errors.py) and their one HTTP mapping (space/api.py, issue 30.1)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from space.api import STATUS_OF, service_error_response
from worker.errors import Busy, DiskFull, QuotaExceeded, ServiceError, UnknownSubmission


def kinds(base: type = ServiceError) -> set[type]:
    out = set()
    for sub in base.__subclasses__():
        out |= {sub} | kinds(sub)
    return out


def test_every_answer_has_exactly_one_status():
    assert kinds() == set(STATUS_OF)

    class Planted(ServiceError):  # positive control: a new kind without a status is seen
        pass

    assert Planted in kinds() - set(STATUS_OF)


def test_bodies_carry_what_each_kind_adds():
    unknown = service_error_response(UnknownSubmission())
    assert unknown.status_code == 404 and json.loads(unknown.body) == {"detail": "unknown submission id"}
    busy = service_error_response(Busy(7))
    assert busy.status_code == 503 and busy.headers["Retry-After"] == "7"
    assert json.loads(busy.body)["retry_after"] == 7
    assert json.loads(service_error_response(DiskFull()).body)["problem"] == "disk_full"
    at = (datetime.now(UTC) + timedelta(seconds=90)).isoformat().replace("+00:00", "Z")
    quota = service_error_response(QuotaExceeded("quota", 3, at))
    body = json.loads(quota.body)
    assert quota.status_code == 429 and body["kind"] == "quota" and body["limit"] == 3
    assert 1 <= int(quota.headers["Retry-After"]) <= 91
