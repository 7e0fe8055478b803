"""The service's answers (worker/errors.py) and their one HTTP mapping (space/api.py, issue 30.1)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from space.api import STATUS_OF, service_error_response
from space.ui.answers import answer_text
from space.ui.i18n import TEXT
from worker.errors import (
    BadRequest,
    Busy,
    DiskFull,
    NotAllowed,
    NotHeld,
    QuotaExceeded,
    ServiceError,
    UnknownSubmission,
)


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


def raise_site_keys() -> set[str]:
    """Every `key="..."` a service raise site names (worker/service/)."""
    root = Path(__file__).resolve().parents[1] / "worker" / "service"
    return {m for p in root.glob("*.py") for m in re.findall(r'\bkey="([a-z_]+)"', p.read_text())}


def test_every_answer_has_a_text_in_both_languages():
    keys = raise_site_keys() | {kind.key for kind in kinds()} - {"quota_exceeded"}
    assert {"too_many_finals", "not_submitter", "reason_required"} <= keys  # the scan sees the raise sites
    missing = sorted(k for k in keys if f"err_{k}" not in TEXT)
    assert missing == []
    assert "planted_key" not in keys and "err_planted_key" not in TEXT  # what a new, untexted key would be


def test_a_chinese_page_gets_chinese_answers():
    answers = [
        UnknownSubmission(),
        UnknownSubmission("x: not one of your submissions on varm", key="not_yours", id="0123456789abcdef"),
        BadRequest("choose at most 2 finals per track", key="too_many_finals"),
        NotAllowed("only its submitter can withdraw a submission", key="not_submitter"),
        NotHeld("submission 0123456789abcdef is queued, not held", id="0123456789abcdef", status="queued"),
        Busy(3),
        DiskFull(),
        QuotaExceeded("quota", 3, "2027-01-01T00:00:00Z"),
    ]
    for exc in answers:
        zh, en = answer_text(exc, "zh"), answer_text(exc, "en")
        assert re.search(r"[\u4e00-\u9fff]", zh) and not re.search(r"\b(the|submission|not|only)\b", zh), zh
        assert not re.search(r"[\u4e00-\u9fff]", en), en
    assert "0123456789abcdef" in answer_text(answers[1], "zh")  # the values fill the text
    # a key without a text falls back to its kind's, never to the English message
    planted = BadRequest("an English reason", key="planted_key")
    assert answer_text(planted, "zh") == answer_text(BadRequest("x"), "zh") != "an English reason"
