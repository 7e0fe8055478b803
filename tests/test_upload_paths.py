"""No path but a real upload, and bounded upload/export files (issue 11, items 1 and 2).

Against the production web process (`python -m space`: FastAPI with the Gradio UI mounted by
`gr.mount_gradio_app`), whose store holds the hidden references on the same disk:

- every Gradio endpoint that takes a file — listed from the app's own `/gradio_api/info`, so a new one is
  covered without editing this test — refuses a `FileData` whose `path` names a server file (the references,
  `tokens.json`, a private file, `/etc/passwd`, the demo gold in the working tree), and none of that file's
  content, nor a copy of it in the upload folder, comes back; the same endpoint works with a file that came
  through `/gradio_api/upload` (positive control);
- the REST API reads only the request body (a `path`-looking form field is just text);
- uploads are bounded (per request, and in total) and upload/export files are deleted after a short time
  and at exit, while an export still returns a usable file.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from scoring.limits import MAX_FILE_BYTES
from tests.conftest_ui import DEMO, TOKENS
from tests.webproc import WebProcess, stop_web, web_process

ALICE = next(t for t, u in TOKENS.items() if u == "alice")
TTL_SECONDS = 6
FILES_MAX_BYTES = 3 * 1024 * 1024
FILE_META = {"_type": "gradio.FileData"}
# Values for the non-file parameters of file-taking endpoints, by the handler's parameter name.
ARGUMENTS = {"track": "cold", "token": ALICE, "model_name": "path-probe", "lang": "en"}


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebProcess]:
    yield from web_process(
        tmp_path_factory.mktemp("upload-paths"),
        UI_FILE_TTL_SECONDS=str(TTL_SECONDS),
        UI_FILES_MAX_BYTES=str(FILES_MAX_BYTES),
    )


@pytest.fixture(scope="module")
def client(web: WebProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=web.url, timeout=60) as c:
        yield c


def file_endpoints(client: httpx.Client) -> dict[str, list[dict]]:
    """Every named Gradio endpoint with at least one File parameter, from the app's API info."""
    info = client.get("/gradio_api/info").json()
    return {
        name: ep["parameters"]
        for name, ep in info["named_endpoints"].items()
        if any(p["component"] == "File" for p in ep["parameters"])
    }


def arguments(params: list[dict], file_data: dict) -> list:
    out = []
    for p in params:
        if p["component"] == "File":
            out.append(file_data)
        elif p["parameter_name"] in ARGUMENTS:
            out.append(ARGUMENTS[p["parameter_name"]])
        else:
            out.append(p["parameter_default"] if p["parameter_has_default"] else "")
    return out


def call(client: httpx.Client, endpoint: str, data: list) -> tuple[str, str]:
    """(last SSE event name, whole SSE text) of one `/gradio_api/call/<endpoint>` request."""
    r = client.post(f"/gradio_api/call{endpoint}", json={"data": data})
    assert r.status_code == 200, (endpoint, r.status_code, r.text[:300])
    stream = client.get(f"/gradio_api/call{endpoint}/{r.json()['event_id']}").text
    events = [line.split(":", 1)[1].strip() for line in stream.splitlines() if line.startswith("event:")]
    return (events[-1] if events else ""), stream


def upload(client: httpx.Client, name: str, data: bytes) -> httpx.Response:
    return client.post("/gradio_api/upload", files={"files": (name, data, "application/octet-stream")})


def resolve(path: Path) -> Path:
    return path if path.is_absolute() else DEMO.parents[1] / path


def submissions(web: WebProcess, track: str) -> list[str]:
    from worker.store.local import LocalStore

    return [
        p for p in LocalStore(web.data_dir).list("submissions", f"{track}/") if p.endswith("submission.json")
    ]


def files_under(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()] if folder.exists() else []


@pytest.fixture(scope="module")
def targets(web: WebProcess, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, list[bytes]]]:
    """Server files an attacker would name, each with byte strings that must never come back."""
    refs = web.references("cold")
    first = json.loads(refs.read_text().splitlines()[0])
    private = tmp_path_factory.mktemp("outside") / "secret.txt"
    private.write_text('{"id": "x", "label": 1, "secret": "s3cr3t-needle-4711"}\n')
    demo_gold = DEMO / "cold" / "test.jsonl"
    return {
        "references": (refs, [first["text"].encode()]),
        "tokens.json": (web.data_dir / "tokens.json", [t.encode() for t in TOKENS]),
        "private file": (private, [b"s3cr3t-needle-4711"]),
        "/etc/passwd": (Path("/etc/passwd"), [b"root:x:0"]),
        "demo gold (relative)": (Path("data/demo/cold/test.jsonl"), [demo_gold.read_text()[:60].encode()]),
    }


def test_every_file_endpoint_refuses_server_paths(client, web, targets) -> None:
    endpoints = file_endpoints(client)
    # The list comes from the app itself; these four must be among them (the test is not vacuous).
    assert {"/validate", "/validate_upload", "/submit", "/explore"} <= set(endpoints), sorted(endpoints)
    before = set(files_under(web.upload_dir))
    accepted = []
    for endpoint, params in endpoints.items():
        for label, (path, needles) in targets.items():
            file_data = {"path": str(path), "orig_name": "p.jsonl", "meta": FILE_META}
            event, stream = call(client, endpoint, arguments(params, file_data))
            if event != "error":
                accepted.append(f"{endpoint} took {label}: {event} {stream[-300:]!r}")
            leaked = [n for n in needles if n in stream.encode()]
            assert not leaked, f"{endpoint} returned content of {label}"
    assert not accepted, "\n".join(accepted)
    # No copy of any target landed in the upload folder (where /gradio_api/file= would serve it).
    digests = {hashlib.sha256(resolve(p).read_bytes()).hexdigest() for p, _ in targets.values()}
    copies = [
        p
        for p in set(files_under(web.upload_dir)) - before
        if hashlib.sha256(p.read_bytes()).hexdigest() in digests
    ]
    assert not copies, copies
    # And nothing was submitted with any of them.
    assert submissions(web, "cold") == [], submissions(web, "cold")


def test_real_upload_works_on_every_file_endpoint(client) -> None:
    """Positive control: the same endpoints accept a file that came through /gradio_api/upload."""
    data = (DEMO / "cold" / "baselines" / "majority.test.jsonl").read_bytes()
    for endpoint, params in file_endpoints(client).items():
        r = upload(client, "majority.jsonl", data)
        assert r.status_code == 200, r.text
        file_data = {"path": r.json()[0], "orig_name": "majority.jsonl", "meta": FILE_META}
        event, stream = call(client, endpoint, arguments(params, file_data))
        assert event == "complete", (endpoint, stream[-500:])


def test_rest_reads_only_the_request_body(client, web) -> None:
    """A server path sent to the REST API is text, never a file name: validation sees those bytes only."""
    refs = str(web.references("cold"))
    r = client.post(
        "/api/v1/validate", data={"track": "cold", "path": refs}, files={"file": ("p.jsonl", refs)}
    )
    assert r.status_code == 200
    report = r.json()
    assert report["valid"] is False and report["rows"] == 0, report
    honest = (DEMO / "cold" / "baselines" / "majority.test.jsonl").read_bytes()
    r = client.post("/api/v1/validate", data={"track": "cold"}, files={"file": ("p.jsonl", honest)})
    assert r.json()["valid"] is True  # positive control


def test_file_route_serves_no_store_or_token_file(client, web) -> None:
    for path in (web.references("cold"), web.data_dir / "tokens.json"):
        r = client.get(f"/gradio_api/file={path}")
        assert r.status_code in (403, 404), (path, r.status_code)
        assert b"tok-" not in r.content


def test_upload_size_is_bounded(client) -> None:
    r = upload(client, "big.jsonl", b"x" * (MAX_FILE_BYTES + 1))
    assert r.status_code == 413, (r.status_code, r.text[:200])
    assert upload(client, "small.jsonl", b'{"id": "a", "label": 0}\n').status_code == 200


@pytest.mark.slow
def test_exports_and_uploads_are_deleted_after_use(client, web) -> None:
    from gradio_client import Client

    ui = Client(web.url + "/", verbose=False)
    try:
        paths = []
        for _ in range(5):
            out = ui.predict("cold", "", [], [], True, "rank", [], 1, api_name="/export")
            files = out["value"] if isinstance(out, dict) else out
            assert len(files) == 2
            csv = Path(files[0] if isinstance(files[0], str) else files[0]["path"]).read_text()
            assert "model_name" in csv.splitlines()[0], csv[:200]  # a usable CSV
        for i in range(5):
            r = upload(client, f"u{i}.jsonl", f'{{"id": "u{i}", "label": 0}}\n'.encode())
            assert r.status_code == 200
            paths.append(Path(r.json()[0]))
    finally:
        ui.close()
    assert all(p.is_file() for p in paths)
    deadline = time.monotonic() + 20 * TTL_SECONDS
    while time.monotonic() < deadline and files_under(web.upload_dir):
        time.sleep(0.5)
    assert files_under(web.upload_dir) == [], files_under(web.upload_dir)[:5]


@pytest.mark.slow
def test_upload_folder_total_is_bounded_and_frees_up(client, web) -> None:
    chunk = 700 * 1024
    statuses = []
    for i in range(8):
        statuses.append(upload(client, f"fill{i}.jsonl", bytes([65 + i]) * chunk).status_code)
    assert statuses[0] == 200 and 507 in statuses, statuses
    deadline = time.monotonic() + 20 * TTL_SECONDS
    while time.monotonic() < deadline and upload(client, "after.jsonl", b"after\n").status_code != 200:
        time.sleep(0.5)
    assert upload(client, "after2.jsonl", b"after2\n").status_code == 200


def test_files_deleted_at_exit(tmp_path: Path) -> None:
    gen = web_process(tmp_path, UI_FILE_TTL_SECONDS="3600")
    web = next(gen)
    with httpx.Client(base_url=web.url, timeout=60) as c:
        assert upload(c, "x.jsonl", b"x\n").status_code == 200
    assert files_under(web.upload_dir)
    stop_web(web)
    assert files_under(web.upload_dir) == []


def test_handlers_read_only_uploaded_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Defence in depth, without Gradio's own check: `checked_upload` (what every handler reading an upload
    calls, through `Context.checked_upload`) takes only a file in the upload folder
    that the upload route recorded; a path outside, a copy in the folder, a symlink, a missing file and an
    oversized file are refused."""
    from space.uploads import UploadRefused, checked_upload

    folder = tmp_path / "uploads"
    (folder / "abc").mkdir(parents=True)
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(folder))
    uploaded = folder / "abc" / "p.jsonl"
    uploaded.write_bytes(b"honest\n")
    assert checked_upload(str(uploaded), {str(uploaded)}) == uploaded.resolve()  # positive control
    assert checked_upload(None, set()) is None
    secret = tmp_path / "secret.jsonl"
    secret.write_bytes(b"gold\n")
    copied = folder / "abc" / "copy.jsonl"
    copied.write_bytes(b"gold\n")
    link = folder / "abc" / "link.jsonl"
    link.symlink_to(secret)
    for path in (secret, copied, link, folder / "abc" / "gone.jsonl", folder / ".." / "secret.jsonl"):
        with pytest.raises(UploadRefused):
            checked_upload(str(path), {str(uploaded), str(copied) if path != copied else ""})
    big = folder / "abc" / "big.jsonl"
    with open(big, "wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)
    with pytest.raises(UploadRefused, match="larger"):
        checked_upload(str(big), {str(big)})


def test_a_refused_file_is_one_fixed_sentence_naming_no_path(client, web, targets) -> None:
    """Issue 23: Gradio's refusal texts named the blocked folders (the data folder, the repository's data
    folder) and the file route echoed the path asked for. Every refusal is now one fixed sentence, on the
    event stream and on the file routes; an uploaded file is still used and served (positive control)."""
    from space.uploads import REFUSED_FILE

    secret_folders = [str(web.data_dir.resolve()), str(DEMO.parents[1]), str(DEMO.parents[0])]
    endpoint, params = "/validate", file_endpoints(client)["/validate"]
    for label, (path, _) in targets.items():
        file_data = {"path": str(path), "orig_name": "p.jsonl", "meta": FILE_META}
        event, stream = call(client, endpoint, arguments(params, file_data))
        assert event == "error" and REFUSED_FILE in stream, (label, stream[-300:])
        for route in ("/gradio_api/file=", "/file="):
            answer = client.get(f"{route}{path}")
            assert answer.status_code == 404 and answer.text == REFUSED_FILE, (label, route, answer.text)
        named = [folder for folder in secret_folders if folder in stream]
        assert not named, (label, named)
    uploaded = upload(client, "p.jsonl", (DEMO / "cold" / "baselines" / "lexicon.test.jsonl").read_bytes())
    [served_path] = uploaded.json()
    served = client.get(f"/gradio_api/file={served_path}")
    assert served.status_code == 200 and served.content.startswith(b'{"id"'), served.text[:100]
    file_data = {"path": served_path, "orig_name": "p.jsonl", "meta": FILE_META}
    assert call(client, endpoint, arguments(params, file_data))[0] == "complete"


def test_the_hub_cache_is_blocked_with_the_data_folders(tmp_path) -> None:
    """Issue 23: with STORE=hub the store's downloads (the references' too, in a worker) sit in the Hub
    cache, which no Gradio route may read; the data folder and the repository's data folder stay blocked."""
    from huggingface_hub.constants import HF_HUB_CACHE

    from space.uploads import blocked_paths

    blocked = blocked_paths(tmp_path / "data", DEMO.parents[0])
    assert str(Path(HF_HUB_CACHE).expanduser().resolve()) in blocked
    assert str((tmp_path / "data").resolve()) in blocked and str(DEMO.parents[0].resolve()) in blocked


def test_gradio_queue_does_not_poll_every_millisecond(tmp_path: Path) -> None:
    """The mounted UI's event queue looks for work every QUEUE_IDLE_POLL_SECONDS, not Gradio's Linux
    default of 1 ms (which kept ~5% of a core busy with no one on the site; bench/bench_burst.py --idle).
    Positive control: a queue Gradio builds and nobody mounts keeps the default this setting replaces."""
    import gradio as gr
    from fastapi import FastAPI

    from space import uploads

    with gr.Blocks() as mounted:
        gr.Markdown("x")
    with gr.Blocks() as untouched:
        gr.Markdown("x")
    uploads.mount(FastAPI(), mounted, data_dir=tmp_path / "data", repo_data=tmp_path / "repo", ttl_seconds=60)
    queue = mounted._queue
    assert (queue.sleep_when_free, queue.progress_update_sleep_when_free) == (
        uploads.QUEUE_IDLE_POLL_SECONDS,
        uploads.QUEUE_PROGRESS_POLL_SECONDS,
    )
    assert untouched._queue.sleep_when_free < uploads.QUEUE_IDLE_POLL_SECONDS / 10
    assert untouched._queue.progress_update_sleep_when_free < uploads.QUEUE_PROGRESS_POLL_SECONDS
