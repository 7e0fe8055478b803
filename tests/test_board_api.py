"""The REST leaderboard (issue 15 item 4): pages and totals, the UI's own filters, ETag/304, the full-board
download, gzip for the API and the UI page (with Gradio's queue still streaming), and `leaderboard.json`
written by orjson byte for byte as json wrote it."""

from __future__ import annotations

import csv
import io
import json
import math
import threading
import time
from pathlib import Path

import httpx
import pytest
import uvicorn
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from space.auth import Auth
from space.board_query import View, filter_rows, rows_frame
from space.server import create_app
from tests.conftest_pipeline import RecordingEnqueuer
from tests.conftest_ui import free_port, publish_demo_board
from worker.config import Config
from worker.service import Service
from worker.store import WEB_AREAS, open_store
from worker.store.codec import pretty as board_json

TRACK = "cold"
SYSTEMS = 9  # plus 3 baselines: 12 rows


def stdlib_json(obj) -> bytes:
    """What `leaderboard.json` was before orjson: the reference for byte identity."""
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, indent=2).encode() + b"\n"


@pytest.fixture(scope="module")
def board_env(tmp_path_factory: pytest.TempPathFactory):
    config = Config(data_dir=tmp_path_factory.mktemp("board") / "data")
    full = open_store(config)
    ids = publish_demo_board(full, TRACK, SYSTEMS)
    service = Service(config, open_store(config, areas=WEB_AREAS), RecordingEnqueuer())
    service.head_ttl = 0.0
    return config, service, full, ids


@pytest.fixture(scope="module")
def client(board_env) -> TestClient:
    config, service, *_ = board_env
    return TestClient(create_app(config, service=service, auth=Auth(config, "open"), with_ui=False))


def all_rows(board_env) -> list[dict]:
    return board_env[1].leaderboard(TRACK)["rows"]


# -- leaderboard.json bytes -------------------------------------------------------------------------------


def test_board_json_is_byte_identical_on_a_published_board(board_env) -> None:
    _, service, full, _ = board_env
    stored = full.read("results", f"{TRACK}/leaderboard.json")
    board = json.loads(stored)
    assert len(board["rows"]) == SYSTEMS + 3
    assert board_json(board) == stdlib_json(board) == stored


def test_board_json_respells_what_orjson_writes_differently() -> None:
    # orjson writes 0.00005 and 5.96e-8 where json writes 5e-05 and 5.96e-08; integers past 64 bits make
    # orjson refuse. Strings that look like such numbers stay as they are.
    for board in (
        {"rows": [{"x": 5e-05, "y": -3.2e-07, "z": [1e-300, 0.00012, 1e16, 1.5e300]}]},
        {"x": 5.960464477539063e-08, 'k": 5e-5': 1e-05, "s": "0.00001", "t": "1e-5\n  2e-7"},
        {"rows": [{"n": 2**70}]},
    ):
        assert board_json(board) == stdlib_json(board)
    assert board_json({"rows": [{"x": 0.5}]}) == b'{\n  "rows": [\n    {\n      "x": 0.5\n    }\n  ]\n}\n'


_leaf = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.floats(min_value=-1e-3, max_value=1e-3)  # where orjson and json spell floats differently
    | st.text(max_size=20)
)
_tree = st.recursive(
    _leaf,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(st.text(max_size=8), _tree, max_size=6))
def test_board_json_matches_json_for_any_finite_tree(tree) -> None:
    assert board_json(tree) == stdlib_json(tree)


# -- pages, filters, totals ------------------------------------------------------------------------------


def test_pages_cover_the_board_with_totals(client, board_env) -> None:
    rows = all_rows(board_env)
    seen = []
    for page in (1, 2, 3):
        body = client.get("/api/v1/leaderboard", params={"track": TRACK, "page": page, "page_size": 5}).json()
        assert (body["total"], body["matched"], body["page"], body["page_size"], body["pages"]) == (
            12,
            12,
            page,
            5,
            3,
        )
        assert body["primary_metric"] == "f1" and body["reference_set"]["track"] == TRACK
        seen += body["rows"]
    assert seen == rows  # same rows, same order, same values as leaderboard.json
    beyond = client.get("/api/v1/leaderboard", params={"track": TRACK, "page": 4, "page_size": 5}).json()
    assert beyond["rows"] == [] and beyond["matched"] == 12
    default = client.get("/api/v1/leaderboard", params={"track": TRACK}).json()
    assert default["rows"] == rows and default["page_size"] == 100


@pytest.mark.parametrize(
    "params, view",
    [
        ({"q": "model-0000"}, View(track=TRACK, q="model-0000")),
        ({"baselines": "false"}, View(track=TRACK, baselines=False)),
        (
            {"type": "open", "setting": "zero-shot,taxonomy"},
            View(track=TRACK, model_types=("open",), settings=("zero-shot", "taxonomy")),
        ),
        ({"sort": "accuracy"}, View(track=TRACK, sort="accuracy")),
        ({"sort": "date"}, View(track=TRACK, sort="date")),
        ({"q": "no such system"}, View(track=TRACK, q="no such system")),
    ],
)
def test_filters_are_the_uis(client, board_env, params, view) -> None:
    rows = all_rows(board_env)
    expected = [rows[i]["submission_id"] for i in filter_rows(rows_frame(rows), view).index]
    body = client.get("/api/v1/leaderboard", params={"track": TRACK, **params}).json()
    assert [r["submission_id"] for r in body["rows"]] == expected
    assert body["matched"] == len(expected) and body["total"] == 12
    if params.get("q") != "no such system":
        assert 0 < len(expected)


@pytest.mark.parametrize(
    "params, field",
    [
        ({"sort": "jrem"}, "sort"),  # a VARM metric is not a COLD sort key
        ({"type": "weights"}, "type"),
        ({"setting": "few-shot"}, "setting"),
        ({"page": 0}, "page"),
        ({"page_size": 1001}, "page_size"),
        ({"q": "x" * 201}, "q"),
    ],
)
def test_bad_queries_are_named(client, params, field) -> None:
    response = client.get("/api/v1/leaderboard", params={"track": TRACK, **params})
    assert response.status_code == 422 and field in response.text
    assert client.get("/api/v1/leaderboard", params={"track": "nope"}).status_code == 404


# -- ETag / 304, and a new revision ----------------------------------------------------------------------


def test_etag_304_and_a_publish_changes_it(client, board_env) -> None:
    _, service, full, ids = board_env
    params = {"track": TRACK, "page_size": 5}
    first = client.get("/api/v1/leaderboard", params=params)
    tag = first.headers["etag"]
    again = client.get("/api/v1/leaderboard", params=params, headers={"If-None-Match": tag})
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == tag
    other = client.get("/api/v1/leaderboard", params={**params, "page": 2}, headers={"If-None-Match": tag})
    assert other.status_code == 200 and other.headers["etag"] != tag  # the query is part of the tag
    stale = client.get("/api/v1/leaderboard", params=params, headers={"If-None-Match": '"other"'})
    assert stale.status_code == 200 and stale.content == first.content
    # A moderation hides a row: the results head moves, the old ETag no longer matches.
    hidden = ids[-1]
    service.moderate(hidden, actor="boss", hidden=True, reason="test")
    from worker.gold.publish import Publisher

    Publisher(full).publish(TRACK, note="hide one")
    after = client.get("/api/v1/leaderboard", params={"track": TRACK}, headers={"If-None-Match": tag})
    assert after.status_code == 200 and after.json()["total"] == 11
    assert hidden not in {r["submission_id"] for r in after.json()["rows"]}


# -- download and gzip -----------------------------------------------------------------------------------


def test_download_full_board_json_gzip_and_csv(client, board_env) -> None:
    board = board_env[1].leaderboard(TRACK)
    raw = client.get(
        "/api/v1/leaderboard/download", params={"track": TRACK}, headers={"Accept-Encoding": "identity"}
    )
    assert raw.headers.get("content-encoding") is None and "attachment" in raw.headers["content-disposition"]
    assert {k: v for k, v in raw.json().items() if k != "reference_set"} == board
    zipped = client.get(
        "/api/v1/leaderboard/download", params={"track": TRACK}, headers={"Accept-Encoding": "gzip"}
    )
    assert zipped.headers["content-encoding"] == "gzip" and zipped.json() == raw.json()  # httpx decodes
    again = client.get(
        "/api/v1/leaderboard/download",
        params={"track": TRACK},
        headers={"If-None-Match": zipped.headers["etag"]},
    )
    assert again.status_code == 304
    text = client.get(
        "/api/v1/leaderboard/download", params={"track": TRACK, "format": "csv", "baselines": "false"}
    ).content
    table = list(csv.DictReader(io.StringIO(text.decode("utf-8-sig"))))
    assert [r["submission_id"] for r in table] == [
        r["submission_id"] for r in board["rows"] if not r["is_baseline"]
    ]
    first = board["rows"][0]
    assert math.isclose(float(table[0]["f1"]), first["f1"]) if not first["is_baseline"] else True


def test_api_responses_are_gzipped_when_asked(client) -> None:
    params = {"track": TRACK}
    zipped = client.get("/api/v1/leaderboard", params=params, headers={"Accept-Encoding": "gzip"})
    plain = client.get("/api/v1/leaderboard", params=params, headers={"Accept-Encoding": "identity"})
    assert zipped.headers["content-encoding"] == "gzip" and "content-encoding" not in plain.headers
    assert int(zipped.headers["content-length"]) < len(plain.content) / 3
    assert zipped.json() == plain.json()  # httpx decoded the gzip body


# -- the UI page through the same middleware -------------------------------------------------------------


@pytest.mark.slow
def test_ui_page_gzipped_and_gradio_events_still_stream(board_env, tmp_path: Path) -> None:
    from gradio_client import Client

    config, service, *_ = board_env
    app = create_app(config, service=service, auth=Auth(config, "open"))
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.1)
        assert server.started, "uvicorn did not start"
        page = httpx.get(f"{base}/", headers={"Accept-Encoding": "gzip"}, timeout=30)
        assert page.status_code == 200 and page.headers["content-encoding"] == "gzip"
        assert len(page.content) > 5 * int(page.headers["content-length"])  # decoded is much larger
        # A Gradio event goes through the queue's event stream (text/event-stream, left uncompressed).
        client = Client(f"{base}/", verbose=False)
        try:
            out, *_ = client.predict(TRACK, "", [], [], True, "rank", [], 1, api_name="/leaderboard")
        finally:
            client.close()
        data = out.get("value", out)
        assert len(data["data"]) == len(service.leaderboard(TRACK)["rows"])
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def test_rest_keeps_the_number_of_an_undefined_metric_and_names_it(client, board_env) -> None:
    """REST is for scripts: the published 0 stays a number, next to the scorer's reason (issue 16)."""
    rows = client.get("/api/v1/leaderboard", params={"track": TRACK}).json()["rows"]
    majority = next(r for r in rows if r["model_name"] == "baseline: majority")
    assert majority["precision"] == 0.0 and majority["undefined.precision"].startswith("TP + FP = 0")
    lexicon = next(r for r in rows if r["model_name"] == "baseline: lexicon")  # the control
    assert lexicon["precision"] > 0 and lexicon.get("undefined.precision") is None
    body = client.get(f"/api/v1/submissions/{majority['submission_id']}").json()
    result = body["result"]["result"]
    assert result["metrics"]["precision"] == 0.0 and set(result["undefined"]) == {"precision"}


# -- hostile query strings (issue 27 item 6) ---------------------------------------------------------------


@pytest.mark.parametrize("page", ["99999999999999999999999", "1000001", "0", "-5", "x"])
def test_out_of_range_page_is_a_422_naming_it(client, page: str) -> None:
    r = client.get("/api/v1/leaderboard", params={"track": TRACK, "page": page})
    assert r.status_code == 422, r.text
    assert "page" in r.text and "Traceback" not in r.text


def test_the_largest_page_answers_an_empty_page(client) -> None:  # the bound's positive control
    r = client.get("/api/v1/leaderboard", params={"track": TRACK, "page": 1_000_000})
    assert r.status_code == 200 and r.json()["rows"] == [] and r.json()["page"] == 1_000_000


def _seen_by_gradio(method: str, path: str, query: bytes) -> bytes:
    """The query string the app behind UiPageParam receives."""
    import asyncio

    from space.querystring import UiPageParam

    seen = {}

    async def inner(scope, receive, send) -> None:
        seen["q"] = scope["query_string"]

    scope = {"type": "http", "method": method, "path": path, "query_string": query}
    asyncio.run(UiPageParam(inner)(scope, None, None))
    return seen["q"]


def test_ui_page_parameter_never_reaches_gradio() -> None:
    assert _seen_by_gradio("GET", "/", b"track=cold&page=-5&q=a+b") == b"track=cold&q=a+b"
    assert _seen_by_gradio("HEAD", "/", b"page=99999999999999999999999") == b""
    # positive controls: the REST API's own `page`, and other paths and methods, are left alone
    assert _seen_by_gradio("GET", "/api/v1/leaderboard", b"page=2") == b"page=2"
    assert _seen_by_gradio("POST", "/", b"page=2") == b"page=2"


def test_ui_page_link_renders_the_board(board_env) -> None:
    config, service, *_ = board_env
    with TestClient(create_app(config, service=service, auth=Auth(config, "open"))) as ui:
        r = ui.get("/", params={"track": TRACK, "page": "-5"})
        assert r.status_code == 200 and "<html" in r.text.lower(), r.text[-500:]
