"""API-level tests of the UI callbacks against the real service (`python -m space`, embedded worker).

Complements test_ui_api.py (build_demo in-process over the real Service, LocalStore and a Celery worker on
Redis): here the whole `python -m space` process is under test, with its own seeding and embedded worker.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import plotly.io as pio
import pytest
from gradio_client import Client, handle_file
from gradio_client.exceptions import AppError

from space.ui.safe import md
from tests.conftest_ui import TOKENS

pytestmark = pytest.mark.browser  # needs the same live service as the browser tests

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"
ALICE = next(t for t, u in TOKENS.items() if u == "alice")
BOSS = next(t for t, u in TOKENS.items() if u == "boss")


def value(update):
    return update.get("value", update) if isinstance(update, dict) else update


@pytest.fixture(scope="module")
def client(live_space) -> Iterator[Client]:
    client = Client(live_space.url, verbose=False)
    # live_space waited for the baselines through REST; the UI's boards follow the results head as
    # `Service.results_head()` caches it (Service.head_ttl), so wait until its boards show them as well.
    deadline = time.monotonic() + 30
    for track in ("varm", "cold"):
        while True:
            board, *_ = client.predict(track, "", [], [], True, "rank", [], 1, api_name="/leaderboard")
            if len(value(board)["data"]) >= 3 or time.monotonic() > deadline:
                break
            time.sleep(0.5)
    yield client
    client.close()  # ends its heartbeat stream, which would otherwise hold the server's shutdown open


def test_board_and_analysis_from_real_results(client) -> None:
    board, caption, *_ = client.predict("varm", "", [], [], True, "rank", [], 1, api_name="/leaderboard")
    models = {r[1].split("](")[0] for r in value(board)["data"]}  # [escaped name](?submission=id)
    assert {f"[{md(f'baseline: {b}')}" for b in ("lexicon", "majority", "char-ngram")} <= models
    out = client.predict("varm", [], api_name="/analysis")
    figs = [pio.from_json(value(o)["plot"]) for o in out[:5]]
    heat = figs[4]
    assert heat.data and heat.data[0].type == "heatmap" and len(heat.data[0].x) == 4  # four cue subsets
    points = figs[1].data[1:]  # one trace per system
    assert points and all(t.x[0] >= t.y[0] for t in points)  # JREM never above label F1 here


def test_compare_two_baselines_via_worker(client) -> None:
    _, _, systems, a, b, _ = client.predict("varm", api_name="/switch_track")
    ids = systems["value"]
    title, comp, fig, deltas = client.predict("varm", ids[0], ids[1], api_name="/compare")
    rows = value(comp)["data"]
    assert rows and rows[0][0] == "JREM ↑" and rows[0][4].startswith("[")
    assert len(value(deltas)["data"]) == 6


def test_maintainer_dry_run_report(client) -> None:
    with pytest.raises(AppError):
        client.predict("cold", True, ALICE, api_name="/maint_rescore")
    # The live Space is shared by the session's tests: an earlier run's report (a forced one, say) may be
    # the latest until this run's arrives.
    earlier, _ = client.predict("cold", BOSS, "en", api_name="/maint_report")
    out, _ = client.predict("cold", True, BOSS, "en", api_name="/maint_rescore")
    assert "dry run" in out and "forced" not in out
    deadline = time.monotonic() + 90
    rows: list = []
    while time.monotonic() < deadline and not rows:
        summary, diff = client.predict("cold", BOSS, "en", api_name="/maint_report")
        rows = value(diff)["data"] if summary != earlier else []
        time.sleep(1)
    assert rows, "no dry-run report appeared"
    assert "dry run" in summary and {r[2] for r in rows} & {"F1 ↑", "skipped (already current)"}


def test_explorer_and_downloads_use_public_files(client) -> None:
    f = handle_file(str(DEMO / "cold/baselines/lexicon.dev.jsonl"))
    summary, report, items, detail, _ = client.predict("cold", f, "en", api_name="/explore")
    assert "Accuracy" in summary and len(value(items)["data"]) == 100
    files = client.predict("cold", api_name="/downloads")
    assert sorted(Path(p).name for p in value(files)) == ["cold-dev.jsonl", "cold-test_inputs.jsonl"]
