"""Hostile uploads and requests against the running web process (level b of issue 7).

A case holds when: the answer is a 4xx (413/422 for uploads, 401 for bad identities, 404 for probing
paths) with a JSON body — line-numbered `errors` for file problems — and no traceback text; it came within
`REQUEST_SECONDS`; no submission was stored (no new `<track>/<id>/` file in the submissions area); and
`GET /api/v1/health` still answers 200 afterwards. Tolerated quirks (BOM, CRLF) must be accepted (202).
Metadata cases marked "reject_or_inert" may be accepted, but then the stored record must hold the value
as plain data (never a path) and the submission's public view must not have gained privileges.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from worker.config import Config
from worker.store import open_store

from . import corpus

REQUEST_SECONDS = 30.0
HEAVY_REQUEST_SECONDS = 60.0
VALID_META = {
    "model_name": "hostile-probe",
    "organisation": "",
    "model_type": "open",
    "setting": "zero-shot",
    "paper_url": "",
    "code_url": "",
    "description": "",
}


@dataclass
class Outcome:
    case: str
    kind: str  # "file" | "meta" | "request"
    held: bool
    why: str
    status: int
    seconds: float


# A submission's own files, and the track's record index (worker/store/layout.py) that every record
# change rewrites: an inert upload may touch nothing else.
SUBMISSION_FILE = re.compile(
    r"(varm|cold|toxicn|cntp)/([0-9a-f]{16}/[A-Za-z0-9_.]+|index\.json|index/[0-9a-f]{2}\.json)"
)


def submission_files(data_dir: Path) -> set[str]:
    """Files of stored submissions (`<track>/<id>/...`), excluding the per-identity quota indexes."""
    store = open_store(Config(data_dir=data_dir), areas={"submissions"})
    return {p for p in store.list("submissions") if not p.startswith("identities/")}


def stored_ids(files: set[str]) -> set[str]:
    """Submission ids that have a record (a worker writing results for an old id adds none)."""
    return {p.split("/")[1] for p in files if p.endswith("/submission.json")}


def _post(
    client: httpx.Client, track: str, data: bytes, meta: dict, user: str
) -> tuple[httpx.Response, float]:
    start = time.perf_counter()
    form = {"track": track, **{k: ("" if v is None else str(v)) for k, v in meta.items()}}
    response = client.post(
        "/api/v1/submissions", data=form, files={"file": ("pred.jsonl", data)}, headers={"X-User": user}
    )
    return response, time.perf_counter() - start


def _json(response: httpx.Response) -> dict | None:
    try:
        body = response.json()
    except ValueError:
        return None
    return body if isinstance(body, dict) else {"_list": body}


def _no_traceback(response: httpx.Response) -> bool:
    text = response.text
    return "Traceback" not in text and 'File "/' not in text


def judge_file(
    case: corpus.FileCase, response: httpx.Response, seconds: float, stored: bool
) -> tuple[bool, str]:
    limit = HEAVY_REQUEST_SECONDS if case.heavy else REQUEST_SECONDS
    body = _json(response)
    if seconds > limit:
        return False, f"took {seconds:.1f} s"
    if response.status_code >= 500:
        return False, f"{response.status_code}: {response.text[:200]}"
    if not _no_traceback(response):
        return False, "traceback text in the response"
    if body is None:
        return False, f"{response.status_code} without a JSON body"
    if case.expect == "accept":
        ok = response.status_code in (200, 202)
        return ok, f"{response.status_code}" + ("" if ok else f": {response.text[:200]}")
    if case.expect == "clean":
        return response.status_code < 500, f"{response.status_code} (either answer is fine)"
    if stored:
        return False, "a submission was stored"
    if response.status_code == 413:
        return True, "413 too large"
    if response.status_code != 422:
        return False, f"expected 422/413, got {response.status_code}: {response.text[:200]}"
    errors = body.get("errors") or []
    if not errors or not errors[0].get("message"):
        return False, f"422 without errors: {response.text[:200]}"
    if case.line_numbered and errors[0].get("line") is None:
        return False, f"first error has no line number: {errors[0]}"
    return True, f"422: {errors[0]['message'][:80]}"


def run_file_cases(
    client: httpx.Client,
    data_dir: Path,
    tracks: list[str],
    inputs: dict[str, list[dict]],
    *,
    heavy: bool | None = False,
    only: set[str] | None = None,
) -> list[Outcome]:
    """POST every file case; a rejected case must store nothing. Checked once for the whole batch: every
    submission id stored meanwhile must be one that an accepted (2xx) answer named."""
    out: list[Outcome] = []
    before = stored_ids(submission_files(data_dir))
    accepted: set[str] = set()
    for track in tracks:
        for n, case in enumerate(corpus.file_cases(track, heavy=heavy)):
            if only is not None and case.name not in only:
                continue
            data = corpus.build_bytes(case, inputs[track], track)
            name = f"{track}/{case.name}"
            try:
                response, seconds = _post(client, track, data, VALID_META, f"hostile-{track}-{n}")
            except httpx.HTTPError as error:
                out.append(Outcome(name, "file", False, f"transport error: {error!r}", 0, 0))
                continue
            del data
            if response.status_code in (200, 202):
                accepted.add((_json(response) or {}).get("submission_id") or "")
            held, why = judge_file(case, response, seconds, stored=response.status_code in (200, 202))
            if held and case.expect == "reject":
                health = client.get("/api/v1/health")
                if health.status_code != 200:
                    held, why = False, f"health answered {health.status_code} afterwards"
            out.append(Outcome(name, "file", held, why, response.status_code, seconds))
    stray = stored_ids(submission_files(data_dir)) - before - accepted
    if stray:
        out.append(
            Outcome(
                "stored-nothing", "file", False, f"submissions stored without a 2xx: {sorted(stray)}", 0, 0
            )
        )
    return out


def _record(client: httpx.Client, submission_id: str) -> dict | None:
    response = client.get(f"/api/v1/submissions/{submission_id}")
    return response.json() if response.status_code == 200 else None


def run_meta_cases(client: httpx.Client, data_dir: Path, track: str, inputs: list[dict]) -> list[Outcome]:
    out = []
    base = corpus.valid_file(track, inputs)
    for n, case in enumerate(corpus.META_CASES):
        meta = {**VALID_META, **case.metadata}
        data = base  # the same bytes each time: identities differ, so no duplicate short-cut
        before = submission_files(data_dir)
        response, seconds = _post(client, track, data, meta, case.identity or f"meta-{n}")
        after = submission_files(data_dir)
        body = _json(response)
        name = f"meta/{case.name}"
        if response.status_code >= 500 or body is None or not _no_traceback(response):
            out.append(
                Outcome(
                    name,
                    "meta",
                    False,
                    f"{response.status_code}: {response.text[:200]}",
                    response.status_code,
                    seconds,
                )
            )
            continue
        if response.status_code == 422:
            held = stored_ids(after) == stored_ids(before) and bool(body.get("errors"))
            first = (body.get("errors") or [{}])[0].get("message", "")
            why = f"422: {first[:60]}" if held else f"422 but stored or no errors: {str(body)[:200]}"
            out.append(Outcome(name, "meta", held, why, 422, seconds))
            continue
        if case.expect == "reject":
            out.append(
                Outcome(
                    name,
                    "meta",
                    False,
                    f"accepted ({response.status_code}), expected 422",
                    response.status_code,
                    seconds,
                )
            )
            continue
        sid = body.get("submission_id") or ""
        new = after - before
        bad_paths = [p for p in new if not SUBMISSION_FILE.fullmatch(p)]
        record = _record(client, sid) or {}
        privileged = any(record.get(k) for k in ("verified", "is_baseline", "hidden"))
        held = response.status_code in (200, 202) and len(sid) == 16 and not bad_paths and not privileged
        why = (
            f"accepted inert ({response.status_code}, id {sid})"
            if held
            else (f"{response.status_code}; stray paths {bad_paths[:3]}; privileged={privileged}")
        )
        out.append(Outcome(name, "meta", held, why, response.status_code, seconds))
    return out


# Probing requests: (name, method, path, kwargs, acceptable statuses)
def request_cases(track: str) -> list[tuple[str, str, str, dict, tuple[int, ...]]]:
    ok_file = {"files": {"file": ("p.jsonl", b'{"id": "x"}\n')}}
    return [
        ("submit_no_file", "POST", "/api/v1/submissions", {"data": {"track": track}}, (422,)),
        ("submit_json_body", "POST", "/api/v1/submissions", {"json": {"track": track}}, (422,)),
        (
            "submit_bad_track",
            "POST",
            "/api/v1/submissions",
            {"data": {"track": "../varm"}, **ok_file},
            (422,),
        ),
        (
            "submit_track_case",
            "POST",
            "/api/v1/submissions",
            {"data": {"track": track.upper()}, **ok_file},
            (422,),
        ),
        (
            "submit_user_traversal",
            "POST",
            "/api/v1/submissions",
            {"data": {"track": track}, "headers": {"X-User": "../../admin"}, **ok_file},
            (401,),
        ),
        (
            "submit_user_control",
            "POST",
            "/api/v1/submissions",
            {"data": {"track": track}, "headers": {"X-User": "bob\tadmin"}, **ok_file},
            (401,),
        ),
        (
            "submit_user_10kb",
            "POST",
            "/api/v1/submissions",
            {"data": {"track": track}, "headers": {"X-User": "u" * 10_240}, **ok_file},
            (401, 431),
        ),
        (
            "submit_declared_huge",
            "POST",
            "/api/v1/submissions",
            {"raw": True, "declared": 10**12},
            (413, 400),
        ),
        (
            "submit_bad_boundary",
            "POST",
            "/api/v1/submissions",
            {"content": b"--zz\r\ngarbage", "headers": {"Content-Type": "multipart/form-data; boundary=zz"}},
            (400, 422),
        ),
        ("get_submission_traversal", "GET", "/api/v1/submissions/..%2F..%2Fetc%2Fpasswd", {}, (404,)),
        ("get_submission_10kb_id", "GET", "/api/v1/submissions/" + "a" * 10_240, {}, (404, 414, 431)),
        ("get_submission_glob", "GET", "/api/v1/submissions/*", {}, (404,)),
        ("public_gold_file", "GET", f"/api/v1/public/{track}/test.jsonl", {}, (404,)),
        (
            "public_traversal",
            "GET",
            f"/api/v1/public/{track}/..%2F..%2Freferences%2F{track}%2Ftest.jsonl",
            {},
            (404,),
        ),
        ("public_bad_track", "GET", "/api/v1/public/..%2Freferences/test_inputs.jsonl", {}, (404,)),
        (
            "leaderboard_html_track",
            "GET",
            "/api/v1/leaderboard?track=%3Cscript%3Ealert(1)%3C/script%3E",
            {},
            (404, 422),
        ),
        ("validate_no_track", "POST", "/api/v1/validate", ok_file, (422,)),
        ("quota_no_track", "GET", "/api/v1/quota", {}, (422,)),
    ]


def run_request_cases(client: httpx.Client, data_dir: Path, track: str) -> list[Outcome]:
    out = []
    for name, method, path, kwargs, allowed in request_cases(track):
        before = submission_files(data_dir)
        start = time.perf_counter()
        if kwargs.get("raw"):  # httpx refuses to send a lying Content-Length: speak HTTP by hand
            status, text = raw_post(str(client.base_url), path, kwargs["declared"])
            held = status in allowed and "Traceback" not in text
            seconds = time.perf_counter() - start
            out.append(Outcome(f"request/{name}", "request", held, f"{status}", status, seconds))
            continue
        try:
            response = client.request(method, path, **kwargs)
        except httpx.HTTPError as error:
            out.append(Outcome(f"request/{name}", "request", False, f"transport error {error!r}", 0, 0))
            continue
        seconds = time.perf_counter() - start
        stored = stored_ids(submission_files(data_dir)) != stored_ids(before)
        held = response.status_code in allowed and _no_traceback(response) and not stored
        text = response.text
        if "<script>" in text and response.headers.get("content-type", "").startswith("text/html"):
            held = False
        why = f"{response.status_code}" + ("" if held else f" (allowed {allowed}): {text[:160]}")
        out.append(Outcome(f"request/{name}", "request", held, why, response.status_code, seconds))
    return out


def summarise(outcomes: list[Outcome], health_ok: bool) -> dict:
    failed = [o for o in outcomes if not o.held]
    return {
        "tried": len(outcomes),
        "held": len(outcomes) - len(failed),
        "by_kind": {k: sum(1 for o in outcomes if o.kind == k) for k in ("file", "meta", "request")},
        "failed": [{"case": o.case, "why": o.why} for o in failed],
        "max_seconds": round(max((o.seconds for o in outcomes), default=0.0), 2),
        "health_always_ok": health_ok,
    }


def raw_post(base_url: str, path: str, declared: int, body: bytes = b"--zz\r\n") -> tuple[int, str]:
    """POST with a Content-Length far larger than the bytes sent; returns (status, body text)."""
    import socket
    from urllib.parse import urlsplit

    url = urlsplit(base_url)
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {url.hostname}\r\nX-User: raw\r\n"
        f"Content-Type: multipart/form-data; boundary=zz\r\nContent-Length: {declared}\r\n"
        "Connection: close\r\n\r\n"
    ).encode()
    with socket.create_connection((url.hostname, url.port), timeout=REQUEST_SECONDS) as sock:
        sock.sendall(head + body)
        chunks = []
        try:
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        except TimeoutError:
            return 0, "no answer (timed out waiting for the rest of a body that never comes)"
    text = b"".join(chunks).decode("utf-8", "replace")
    try:
        return int(text.split(" ", 2)[1]), text
    except (IndexError, ValueError):
        return 0, text


def run_all(tmp: Path) -> dict:
    """Start a private deployment and run every REST case against it (used by bench_hostile.py)."""
    from . import procs, runner

    with (
        procs.Deployment(tmp / "rest", workers=1) as dep,
        httpx.Client(base_url=dep.url, timeout=120) as client,
    ):
        tracks = [t for t in runner.available_tracks() if public_inputs(client, t)]
        inputs = {t: public_inputs(client, t) for t in tracks}
        outcomes = run_file_cases(client, dep.data_dir, tracks, inputs, heavy=None)
        outcomes += run_meta_cases(client, dep.data_dir, tracks[0], inputs[tracks[0]])
        outcomes += run_request_cases(client, dep.data_dir, tracks[0])
        health_ok = client.get("/api/v1/health").status_code == 200
        logs = dep.logs()
    summary = summarise(outcomes, health_ok)
    summary["tracebacks_in_logs"] = sum(t.count("Traceback") for t in logs.values())
    return summary


def public_inputs(client: httpx.Client, track: str, wait: float = 60) -> list[dict]:
    """The published public test inputs of `track` (waits for the service's first publish)."""
    deadline = time.monotonic() + wait
    while True:
        response = client.get(f"/api/v1/public/{track}/test_inputs.jsonl")
        if response.status_code == 200:
            return [json.loads(x) for x in response.text.splitlines() if x.strip()]
        if time.monotonic() > deadline:
            return []
        time.sleep(0.5)
