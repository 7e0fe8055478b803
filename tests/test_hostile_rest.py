"""Hostile uploads and requests against the running service's REST API (level b of issue 7).

`python -m space` runs in a subprocess (tmp DATA_DIR, AUTH=open, free port, private redis-server, two
Celery workers). Each crafted upload must get a 4xx with a JSON body (line-numbered `errors` for file
problems, no traceback text) within bounded time, store no submission, and leave /api/v1/health at 200.
See tests/hostile/rest.py for the judging rules.
"""

from __future__ import annotations

import httpx
import pytest

from tests.hostile import corpus, figures, rest
from tests.hostile.fixtures import shared_deployment

pytestmark = pytest.mark.slow  # a whole deployment (subprocesses) and every hostile file case: ~25 s

TRACKS = ("varm", "cold")  # toxicn and cntp: every case at the scorer level; REST in bench_hostile

KNOWN: dict[str, str] = {}


@pytest.fixture(scope="module")
def dep(request: pytest.FixtureRequest):
    return shared_deployment(request)


@pytest.fixture(scope="module")
def client(dep):
    with httpx.Client(base_url=dep.url, timeout=120) as c:
        yield c


@pytest.fixture(scope="module")
def inputs(client) -> dict[str, list[dict]]:
    out = {t: rest.public_inputs(client, t) for t in TRACKS}
    assert all(out.values()), "the seeded service publishes every track's public test inputs"
    return out


@pytest.fixture(scope="module")
def file_outcomes(client, dep, inputs) -> dict[str, rest.Outcome]:
    outcomes = rest.run_file_cases(client, dep.data_dir, list(TRACKS), inputs, heavy=False)
    outcomes += rest.run_file_cases(client, dep.data_dir, ["varm"], inputs, heavy=True)  # all tracks: bench
    return {o.case: o for o in outcomes}


def _file_params() -> list:
    out = []
    for track in TRACKS:
        for case in corpus.file_cases(track, heavy=None if track == "varm" else False):
            marks = [pytest.mark.xfail(strict=True, reason=KNOWN[case.name])] if case.name in KNOWN else []
            out.append(pytest.param(f"{track}/{case.name}", id=f"{track}-{case.name}", marks=marks))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name", _file_params())
def test_hostile_upload_answered_cleanly(file_outcomes: dict, name: str) -> None:
    outcome = file_outcomes[name]
    assert outcome.held, f"{name}: {outcome.why}"


def test_rejected_uploads_stored_nothing(file_outcomes: dict) -> None:
    """Every submission stored during the file cases was named by a 2xx answer."""
    assert "stored-nothing" not in file_outcomes, file_outcomes.get("stored-nothing")


@pytest.fixture(scope="module")
def meta_outcomes(client, dep, inputs) -> dict[str, rest.Outcome]:
    return {o.case: o for o in rest.run_meta_cases(client, dep.data_dir, "varm", inputs["varm"])}


@pytest.mark.parametrize("name", [f"meta/{c.name}" for c in corpus.META_CASES])
def test_hostile_metadata_refused_or_inert(meta_outcomes: dict, name: str) -> None:
    outcome = meta_outcomes[name]
    assert outcome.held, f"{name}: {outcome.why}"


@pytest.fixture(scope="module")
def request_outcomes(client, dep) -> dict[str, rest.Outcome]:
    return {o.case: o for o in rest.run_request_cases(client, dep.data_dir, "varm")}


@pytest.mark.parametrize("name", [f"request/{c[0]}" for c in rest.request_cases("varm")])
def test_probing_request_refused(request_outcomes: dict, name: str) -> None:
    outcome = request_outcomes[name]
    assert outcome.held, f"{name}: {outcome.why}"


def test_service_still_healthy_and_no_traceback_logged(
    client, dep, file_outcomes, meta_outcomes, request_outcomes
) -> None:
    """After every hostile case: health 200, and the web process logged no traceback."""
    assert client.get("/api/v1/health").status_code == 200
    outcomes = [*file_outcomes.values(), *meta_outcomes.values(), *request_outcomes.values()]
    summary = rest.summarise(outcomes, health_ok=True)
    summary.pop("failed")
    figures.record("hostile_rest", **summary, statuses=sorted({o.status for o in outcomes}))
    log = dep.logs().get("space.log", "")
    assert "Traceback" not in log, log[log.find("Traceback") : log.find("Traceback") + 1500]
