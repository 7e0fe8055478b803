"""Leakage and access: nothing hidden gets out, and nobody gets more than they are owed.

On the shared private deployment (seeded demo benchmark + baselines, two workers, AUTH=open):

- every file of the results area, every API response collected here and every log line of every process is
  scanned for hidden-reference needles (tests/hostile/leaks.py: gold rationales, implicit targets, gold
  label sequences) and the results area holds only public kinds of file;
- the web process's store cannot open the references area, and space/ has no code path to it;
- maintainer-only UI actions are refused to other identities; quotas hold across model renames and
  identity case changes;
- a pickle-serialised Celery message is refused by the worker and never deserialised.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from tests.hostile import corpus, figures, leaks, procs
from tests.hostile.fixtures import MAINTAINER, shared_deployment
from worker.config import Config
from worker.store import open_store

TRACKS = ("varm", "cold", "toxicn", "cntp")
PUBLIC_ENVELOPE_KEYS = {
    "submission_id",
    "track",
    "sha256",
    "metadata",
    "submitter",
    "is_baseline",
    "verified",
    "created_at",
}
RESULT_FILE = re.compile(
    r"README\.md|changelog\.jsonl|changelog/[0-9]{5}\.jsonl|rescore/[a-z]+/[0-9TZ:_.-]+\.json"
    r"|keys/ed25519\.pub"
    r"|releases/(varm|cold|toxicn|cntp)/[0-9]{4}-[0-9]{2}(\.[0-9]+)?/"
    r"(release\.json|rows\.json|rows\.parquet|CITATION\.cff|citation\.bib)"
    r"|(varm|cold|toxicn|cntp)/(leaderboard\.(json|parquet)|board/(rank\.json|rows/[0-9]{5}\.json|ranks/[0-9a-f]{16}\.json)|public/(test_inputs\.jsonl|dev\.jsonl|subsets\.json|dev_subsets\.json"
    r"|reference_set\.json)"
    r"|results/[0-9a-f]{16}/v[0-9]+\.json)"
)


@pytest.fixture(scope="module")
def dep(request: pytest.FixtureRequest) -> procs.Deployment:
    return shared_deployment(request)


@pytest.fixture(scope="module")
def client(dep):
    with httpx.Client(base_url=dep.url, timeout=60) as c:
        yield c


@pytest.fixture(scope="module")
def published(client) -> dict[str, dict]:
    """Wait until every track's leaderboard has rows (the seeded baselines got scored and published)."""
    boards: dict[str, dict] = {}
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and len(boards) < len(TRACKS):
        for track in TRACKS:
            board = client.get("/api/v1/leaderboard", params={"track": track}).json()
            if board.get("rows"):
                boards[track] = board
        time.sleep(1)
    missing = sorted(set(TRACKS) - set(boards))
    assert not missing, f"no published leaderboard rows for {missing} within 240 s"
    return boards


@pytest.fixture(scope="module")
def needles() -> list[leaks.Needle]:
    found = leaks.all_needles(TRACKS)
    assert len(found) > 100, "the demo bundles give enough needles to make the scan meaningful"
    return found


@pytest.fixture(scope="module")
def responses(client, published) -> dict[str, bytes]:
    """Every kind of API answer a visitor can get, including rejection reports and submission pages."""
    out: dict[str, bytes] = {}

    def get(path: str, **kw) -> None:
        r = client.get(path, **kw)
        out[f"GET {path} {kw.get('params', '')}"] = r.content

    for track in TRACKS:
        get("/api/v1/leaderboard", params={"track": track})
        for name in ("test_inputs.jsonl", "dev.jsonl", "subsets.json", "dev_subsets.json"):
            get(f"/api/v1/public/{track}/{name}")
        for row in published[track]["rows"]:
            get(f"/api/v1/submissions/{row['submission_id']}")
        inputs = [
            json.loads(x) for x in out[f"GET /api/v1/public/{track}/test_inputs.jsonl "].splitlines() if x
        ]
        # Rejection and validation reports: a near-valid file (one row missing, one unknown, one duplicate).
        lines = corpus.valid_lines(track, inputs)
        data = b"".join(lines[1:] + lines[-1:]) + b'{"id": "zz-unknown", "label": 1, "output": "x"}\n'
        r = client.post("/api/v1/validate", data={"track": track}, files={"file": ("p.jsonl", data)})
        out[f"POST validate {track}"] = r.content
        r = client.post(
            "/api/v1/submissions",
            data={"track": track, "model_name": "leak-probe"},
            files={"file": ("p.jsonl", data)},
            headers={"X-User": "leak-probe"},
        )
        out[f"POST submissions {track}"] = r.content
    for path in ("/", "/openapi.json", "/api/v1/health", "/config", "/gradio_api/info"):
        get(path)
    return out


def _hits_report(hits: list[leaks.Hit]) -> str:
    return "\n".join(f"{h.where}: {h.needle.track}/{h.needle.kind}: …{h.context}…" for h in hits[:10])


def test_needle_scanner_finds_a_planted_leak(needles) -> None:
    """The scan is not vacuous: a gold rationale or a label sequence planted in a blob is found."""
    for kind in ("cot", "labels"):
        needle = next(n for n in needles if n.kind == kind)
        assert leaks.scan("planted", json.dumps({"x": needle.text}, ensure_ascii=True), needles)


def test_results_area_holds_only_public_files_and_no_gold(dep, published, needles) -> None:
    store = open_store(Config(data_dir=dep.data_dir), areas={"results"})
    paths = store.list("results")
    assert paths
    odd = [p for p in paths if not RESULT_FILE.fullmatch(p)]
    assert not odd, f"unexpected files in the public results area: {odd[:10]}"
    hits = []
    for path in paths:
        data = store.read("results", path) or b""
        hits += leaks.scan(f"results/{path}", data, needles)
        if path.endswith("/public/test_inputs.jsonl"):
            keys = {k for line in data.splitlines() if line.strip() for k in json.loads(line)}
            assert keys <= {"id", "text"}, f"{path} carries {keys - {'id', 'text'}}"
        if path.endswith("/public/reference_set.json"):  # the manifest: counts and a hash, nothing more
            assert set(json.loads(data)) == {
                "track",
                "kind",
                "sha256",
                "rows",
                "installed_at",
                "test_status",
            }, path
        if "/results/" in path:
            envelope = json.loads(data)
            assert set(envelope["submission"]) <= PUBLIC_ENVELOPE_KEYS, (path, set(envelope["submission"]))
    figures.record("leakage_results_area", files=len(paths), needles=len(needles), hits=len(hits))
    assert not hits, _hits_report(hits)


def test_api_responses_carry_no_gold(responses, needles) -> None:
    assert len(responses) > 20
    hits = [h for name, body in responses.items() for h in leaks.scan(name, body, needles)]
    figures.record(
        "leakage_api",
        needles=len(needles),
        responses=len(responses),
        bytes=sum(len(b) for b in responses.values()),
        hits=len(hits),
    )
    assert not hits, _hits_report(hits)


def test_logs_carry_no_gold(dep, responses, needles) -> None:
    """Every log line written so far by redis, seed, workers and the web process (tests ran before this)."""
    logs = dep.logs()
    assert any("worker" in name for name in logs) and "space.log" in logs
    hits = [h for name, text in logs.items() for h in leaks.scan(name, text, needles)]
    figures.record(
        "leakage_logs",
        needles=len(needles),
        log_files=len(logs),
        log_lines=sum(t.count("\n") for t in logs.values()),
        hits=len(hits),
    )
    assert not hits, _hits_report(hits)


def test_static_file_routes_do_not_serve_gold(client, dep, needles) -> None:
    """Gradio's file routes and odd paths cannot reach the demo gold in the working tree, the store's
    references area or the tokens file."""
    root = procs.ROOT
    targets = [
        root / "data" / "demo" / "varm" / "test.jsonl",
        dep.data_dir / "store" / "references" / "HEAD",
        dep.data_dir / "tokens.json",
        Path("/etc/passwd"),
    ]
    paths = []
    for target in targets:
        rel = os.path.relpath(target, root)
        for prefix in ("/gradio_api/file=", "/file=", "/gradio_api/file/", "/static/", "/assets/"):
            paths += [prefix + str(target), prefix + rel, prefix + quote(str(target), safe="")]
    paths += [
        "/../data/demo/varm/test.jsonl",
        "/%2e%2e/data/demo/varm/test.jsonl",
        "/data/demo/varm/test.jsonl",
    ]
    served = []
    for path in paths:
        r = client.get(path)
        body = r.content
        if r.status_code == 200 and (
            leaks.scan(path, body, needles) or b"root:" in body or b'"target"' in body
        ):
            served.append(path)
    assert not served, f"gold or system files served at: {served[:5]}"


def test_web_process_cannot_open_references(tmp_path: Path) -> None:
    """The web process's store is opened without the references area, and space/ never names it."""
    from space.server import build_service
    from worker.store import StoreError

    service = build_service(Config(data_dir=tmp_path / "data"))
    assert "references" not in service.store.areas
    with pytest.raises(StoreError):
        service.store.read("references", "varm/test.jsonl")
    root = Path(__file__).resolve().parents[1] / "space"
    offenders = []
    for path in root.rglob("*.py"):
        text = path.read_text()
        if re.search(r"""["']references["']|load_references|ReferenceCache|HF_REFERENCES_REPO""", text):
            offenders.append(str(path.relative_to(root.parent)))
    assert not offenders, f"web-process code touching references: {offenders}"


def _distinct_files(track: str, inputs: list[dict], n: int) -> list[bytes]:
    """n valid, byte-distinct files (an unknown key on the first row differs)."""
    out = []
    for i in range(n):
        lines = corpus.valid_lines(track, inputs)
        row = json.loads(lines[0])
        row["run"] = i
        lines[0] = json.dumps(row, ensure_ascii=False).encode() + b"\n"
        out.append(b"".join(lines))
    return out


def test_quota_holds_across_renames_and_identity_case(client, dep) -> None:
    """QUOTA_PER_DAY=3: a 4th distinct file gets 429 whatever the model name or the identity's case."""
    track = "cold"
    inputs = [
        json.loads(x) for x in client.get(f"/api/v1/public/{track}/test_inputs.jsonl").text.splitlines()
    ]
    files = _distinct_files(track, inputs, 6)
    statuses = []
    for i, data in enumerate(files[:3]):
        r = client.post(
            "/api/v1/submissions",
            data={"track": track, "model_name": f"model-{i}"},
            files={"file": ("p.jsonl", data)},
            headers={"X-User": "quota-user"},
        )
        statuses.append(r.status_code)
    assert statuses == [202, 202, 202]
    for user, name, data in [
        ("quota-user", "renamed", files[3]),
        ("QUOTA-USER", "model-0", files[4]),
        ("Quota-User", "another-name", files[5]),
    ]:
        r = client.post(
            "/api/v1/submissions",
            data={"track": track, "model_name": name},
            files={"file": ("p.jsonl", data)},
            headers={"X-User": user},
        )
        assert r.status_code == 429, (user, name, r.status_code, r.text[:300])
        assert r.json().get("next_slot_at") and r.headers.get("Retry-After")
    quota = client.get("/api/v1/quota", params={"track": track}, headers={"X-User": "qUoTa-UsEr"}).json()
    assert quota["remaining"] == 0 and quota["used"] == 3, quota


def test_maintainer_actions_refused_to_other_identities(dep) -> None:
    """The UI's maintainer endpoints (re-score, moderate) refuse anyone not in MAINTAINERS."""
    from gradio_client import Client
    from gradio_client.exceptions import AppError

    client = Client(dep.url + "/", verbose=False)
    for api_name, args in [
        ("/maint_rescore", ("varm", True, "")),
        ("/maint_moderate", ("0123456789abcdef", "verify", "because", "")),
    ]:
        with pytest.raises(AppError):
            client.predict(*args, api_name=api_name)


def test_service_maintainer_check_is_exact_up_to_case() -> None:
    from worker.service import Service

    service = Service(Config(maintainers=(MAINTAINER,)), store=None, enqueue=None)  # type: ignore[arg-type]
    assert service.is_maintainer(MAINTAINER) and service.is_maintainer(MAINTAINER.upper())
    for other in ("", "anonymous", "maint", "maint-ops2", "maint-ops ", "maint_ops", "maint‐ops"):
        assert service.is_maintainer(other) is (other.strip().casefold() == MAINTAINER), other


def test_worker_refuses_pickle_messages(dep, tmp_path: Path) -> None:
    """A pickle-serialised task message is refused by the worker and never unpickled (the payload would
    create a sentinel directory if it were)."""
    import os

    from celery import Celery

    sentinel = tmp_path / "unpickled"

    class Payload:
        def __reduce__(self):
            return (os.mkdir, (str(sentinel),))

    app = Celery("attacker", broker=dep.env["CELERY_BROKER_URL"])
    app.conf.update(
        task_serializer="pickle",
        accept_content=["pickle", "json"],
        broker_transport_options={"global_keyprefix": dep.env["CELERY_KEY_PREFIX"]},
    )
    app.send_task("worker.tasks.score_submission", args=[Payload(), "0123456789abcdef"], queue="submissions")
    app.send_task("worker.tasks.publish_track", args=[Payload()], queue="publish")
    deadline = time.monotonic() + 30
    refused = 0
    while time.monotonic() < deadline:
        logs = "\n".join(t for n, t in dep.logs().items() if n.startswith("worker"))
        refused = len(re.findall(r"untrusted content|ContentDisallowed|Refusing to deserialize", logs))
        if refused >= 2:
            break
        time.sleep(0.3)
    assert refused >= 2, "the workers did not log refusing both pickle messages"
    assert not sentinel.exists(), "a worker unpickled the message"
    app.close()
