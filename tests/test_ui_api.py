"""API-level tests of every tab's callbacks, through gradio_client against the launched app.

Runs on the in-memory Service double (`fake_ui`, tests/ui_fakes.py) so every branch is deterministic;
the real pipeline is exercised end to end by tests/test_browser.py and test_ui_live.py.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import plotly.io as pio
import pytest
from gradio_client import handle_file
from gradio_client.exceptions import AppError

from tests.conftest_ui import TOKENS
from tests.ui_fakes import XSS_NAME

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"
ALICE, BOSS = list(TOKENS)
VIEW = ("varm", "", [], [], True, "rank", [], 1)

EXPECTED_API = {
    "/analysis",
    "/analysis_after_switch",
    "/compare",
    "/downloads",
    "/explore",
    "/explore_filter",
    "/explore_item",
    "/export",
    "/language",
    "/leaderboard",
    "/leaderboard_after_switch",
    "/load_view",
    "/maint_moderate",
    "/maint_report",
    "/maint_rescore",
    "/poll_status",
    "/quota",
    "/quota_for_track",
    "/refresh",
    "/sign_in",
    "/submission",
    "/submit",
    "/switch_track",
    "/validate",
    "/validate_upload",
    "/whoami",
}


def table(update: dict) -> dict:
    """A Dataframe output: either {"headers", "data"} or a component update holding it under "value"."""
    return update.get("value", update) if isinstance(update, dict) else update


def plot(update: dict):
    value = update.get("value", update) if isinstance(update, dict) else update
    return pio.from_json(value["plot"]) if value else None


def test_api_surface_is_pinned(fake_client) -> None:
    names = set(fake_client.view_api(return_format="dict", print_info=False)["named_endpoints"])
    assert names == EXPECTED_API


def test_leaderboard_render_search_filters(fake_client) -> None:
    board, caption, link, page = fake_client.predict(*VIEW, api_name="/leaderboard")
    data = table(board)
    headers = data["headers"]
    assert headers[:2] == ["Rank 排名", "Model 模型"] and "JREM" in headers and "JREM 95% CI" in headers
    assert board["datatype"][headers.index("Model 模型")] == "str"
    assert len(data["data"]) == 12 and "Rows 1–12 of 12" in caption and page == 1
    assert link.endswith("[?track=varm](?track=varm)")
    models = [r[1] for r in data["data"]]
    assert XSS_NAME in models  # stored and returned verbatim; the browser test checks it renders as text

    board, caption, link, _ = fake_client.predict(
        "varm", "lexi", [], [], True, "rank", [], 1, api_name="/leaderboard"
    )
    assert [r[1] for r in table(board)["data"]] == ["lexicon"] and "q=lexi" in link
    board, *_ = fake_client.predict("varm", "", [], [], False, "her_c", [], 1, api_name="/leaderboard")
    rows = table(board)["data"]
    her = [r[table(board)["headers"].index("HER-C")] for r in rows]
    assert her == sorted(her, reverse=True) and all("baseline" not in " ".join(map(str, r)) for r in rows)
    board, *_ = fake_client.predict(
        "varm", "", ["open"], ["zero-shot"], True, "rank", [], 1, api_name="/leaderboard"
    )
    h = table(board)["headers"]
    assert {(r[h.index("Type 类型")], r[h.index("Setting 设置")]) for r in table(board)["data"]} <= {
        ("open", "zero-shot")
    }


def test_switch_track_and_toxitrace_columns(fake_client) -> None:
    sort, columns, systems, a, b, page = fake_client.predict("cntp", api_name="/switch_track")
    assert ["Span overlap F1", "spans.overlap_f1"] in sort["choices"] and page == 1
    assert "spans.overlap_f1" in columns["value"]
    assert len(systems["value"]) == 8 and a["value"] and b["value"] and a["value"] != b["value"]
    board, *_ = fake_client.predict("cntp", "", [], [], True, "rank", [], 1, api_name="/leaderboard")
    assert {"Span overlap F1", "F1", "Accuracy", "Macro-F1"} <= set(table(board)["headers"])
    board, *_ = fake_client.predict("cold", "", [], [], True, "rank", [], 1, api_name="/leaderboard")
    assert {"F1", "F1 95% CI", "Precision", "Recall"} <= set(table(board)["headers"])


def test_load_view_defaults(fake_client) -> None:
    out = fake_client.predict(api_name="/load_view")
    assert out[0] == "varm" and out[4] is True
    assert len(table(out[7])["data"]) == 12


def test_export_csv_and_json(fake_client) -> None:
    update = fake_client.predict("varm", "model", [], [], False, "rank", [], 1, api_name="/export")
    files = [Path(p) for p in update["value"]]
    csv = next(p for p in files if p.suffix == ".csv").read_text("utf-8-sig")
    data = json.loads(next(p for p in files if p.suffix == ".json").read_text())
    assert data["track"] == "varm" and data["rows"] and all(not r["is_baseline"] for r in data["rows"])
    assert "jrem" in csv.splitlines()[0] and "ci.jrem.low" in csv.splitlines()[0]


def test_analysis_varm_charts(fake_client) -> None:
    out = fake_client.predict("varm", [], api_name="/analysis")
    figs = [plot(o) for o in out[:5]]
    titles = [f.layout.title.text for f in figs]
    assert "error rate" in titles[0] and "JREM" in titles[1] and "HER" in titles[2]
    assert "Format issues" in titles[3] and "Cue subsets" in titles[4]
    assert len(figs[0].data) == 8  # top 5 + 3 baselines
    for fig in figs:
        assert fig.layout.xaxis.title.text and fig.layout.yaxis.title.text
    assert len(table(out[5])["data"]) == 8


def test_analysis_toxitrace_charts(fake_client) -> None:
    out = fake_client.predict("cold", [], api_name="/analysis")
    assert "classification" in plot(out[0]).layout.title.text
    assert "topic" in plot(out[2]).layout.title.text or "topic" in plot(out[1]).layout.title.text
    assert out[4].get("visible") is False


def test_validate_reports_line_numbers(fake_client, tmp_path: Path) -> None:
    good = handle_file(str(DEMO / "varm/baselines/lexicon.test.jsonl"))
    message, report = fake_client.predict("varm", good, "en", api_name="/validate")
    assert "valid" in message and table(report)["data"] == []
    bad = tmp_path / "bad.jsonl"
    lines = (DEMO / "varm/baselines/lexicon.test.jsonl").read_text().splitlines()
    bad.write_text("\n".join([lines[0], "{not json", json.dumps({"id": 5}), *lines[3:]]) + "\n")
    message, report = fake_client.predict("varm", handle_file(str(bad)), "en", api_name="/validate")
    rows = table(report)["data"]
    assert "not valid" in message and rows[0][0] == "2" and {r[0] for r in rows} >= {"2", "3"}


def test_submit_requires_identity_and_model_name(fake_client) -> None:
    f = handle_file(str(DEMO / "varm/baselines/lexicon.test.jsonl"))
    msg, *_ = fake_client.predict("varm", f, "m", "", "", "", "", "", "", "", "en", api_name="/submit")
    assert "token" in msg.lower()
    msg, *_ = fake_client.predict(
        "varm", f, "m", "", "", "", "", "", "", "wrong-token", "en", api_name="/submit"
    )
    assert "not valid" in msg
    msg, report, sid, *_ = fake_client.predict(
        "varm", f, " ", "", "", "", "ftp://x", "", "", ALICE, "en", api_name="/submit"
    )
    fields = {r[1] for r in table(report)["data"]}
    assert sid == "" and fields == {"model_name", "paper_url"}


def test_submit_lifecycle_and_new_row(fake_client, fake_ui) -> None:
    f = handle_file(str(DEMO / "varm/baselines/lexicon.test.jsonl"))
    msg, report, sid, status, timer, link = fake_client.predict(
        "varm",
        f,
        "api-model",
        "Org",
        "open",
        "zero-shot",
        "https://example.org",
        "",
        "",
        ALICE,
        "en",
        api_name="/submit",
    )
    assert len(sid) == 16 and "**queued**" in status and timer["active"] is True
    assert f"?submission={sid}" in link and "left today" in msg
    seen = [status]
    for _ in range(10):
        status, timer = fake_client.predict(sid, api_name="/poll_status")
        seen.append(status)
        if not timer["active"]:
            break
    assert "**published**" in seen[-1] and any("**scoring**" in s for s in seen)
    board, *_ = fake_client.predict("varm", "api-model", [], [], True, "rank", [], 1, api_name="/leaderboard")
    assert [r[1] for r in table(board)["data"]] == ["api-model"]
    page = fake_client.predict(sid, api_name="/submission")
    assert "api\\-model" in page[0] and table(page[2])["data"][0][0] == "jrem"
    assert "@misc{varm-" + sid in page[9]


def test_quota_shown_and_exceeded(fake_client, fake_ui) -> None:
    assert "left today" in fake_client.predict("varm", ALICE, "en", api_name="/quota")
    fake_ui.service.quota_limit = 0
    try:
        f = handle_file(str(DEMO / "cold/baselines/lexicon.test.jsonl"))
        msg, *_ = fake_client.predict("cold", f, "q", "", "", "", "", "", "", ALICE, "en", api_name="/submit")
        assert "next free slot" in msg.lower()
    finally:
        fake_ui.service.quota_limit = 5


def test_refresh_follows_store_head(fake_client, fake_ui) -> None:
    head = fake_ui.service.store.head("results")
    out = fake_client.predict(*VIEW, api_name="/refresh")  # first tick: nothing to do
    fake_ui.service.publish()
    time.sleep(0.05)
    out = fake_client.predict(*VIEW, api_name="/refresh")
    assert fake_ui.service.store.head("results") != head
    assert out is not None


def test_submission_page_unknown_and_escaped(fake_client, fake_ui) -> None:
    page = fake_client.predict("ffffffffffffffff", api_name="/submission")
    assert "No such submission" in page[0]
    xss = next(e for e in fake_ui.service.entries["varm"] if e.record["metadata"]["model_name"] == XSS_NAME)
    page = fake_client.predict(xss.record["submission_id"], api_name="/submission")
    assert "<img" not in page[0] and "&lt;img" in page[0]
    assert plot(page[4]).layout.title.text


def test_explorer_flow(fake_client) -> None:
    f = handle_file(str(DEMO / "varm/baselines/lexicon.dev.jsonl"))
    summary, report, items, detail, _ = fake_client.predict("varm", f, api_name="/explore")
    assert "JREM" in summary and len(table(items)["data"]) == 200 and "varm-target" in detail
    items, detail = fake_client.predict("stance", "", "", "", True, api_name="/explore_filter")
    rows = table(items)["data"]
    assert rows and all("stance" in r[3] for r in rows)
    detail = fake_client.predict(rows[0][0], api_name="/explore_item")
    assert f"#{rows[0][0]}" in detail


def test_compare(fake_client, fake_ui) -> None:
    a, b = (e.record["submission_id"] for e in fake_ui.service.entries["varm"][3:5])
    title, comp, fig, deltas = fake_client.predict("varm", a, b, api_name="/compare")
    assert [r[0] for r in table(comp)["data"]] == ["jrem", "her_c", "t_f1"]
    assert plot(fig).layout.yaxis.title.text and len(table(deltas)["data"]) == 6
    with pytest.raises(AppError):
        fake_client.predict("varm", a, a, api_name="/compare")


def test_language_and_downloads(fake_client) -> None:
    tagline, about, *_ = fake_client.predict("en", api_name="/language")
    assert "label score" in tagline and "JREM" in about
    tagline, about, *_ = fake_client.predict("zh", api_name="/language")
    assert "标签" in tagline
    update = fake_client.predict("varm", api_name="/downloads")
    names = sorted(Path(p).name for p in update["value"])
    assert names == ["varm-dev.jsonl", "varm-test_inputs.jsonl"]


def test_maintainer_actions_need_maintainer(fake_client, fake_ui) -> None:
    assert "maintainer" not in fake_client.predict(ALICE, "en", api_name="/sign_in")
    assert "maintainer" in fake_client.predict(BOSS, "en", api_name="/sign_in")
    with pytest.raises(AppError, match="Maintainers only"):
        fake_client.predict("varm", True, ALICE, api_name="/maint_rescore")
    out, diff = fake_client.predict("varm", True, BOSS, api_name="/maint_rescore")
    assert "t-1" in out and "dry run" in out
    rows = table(diff)["data"]
    assert {r[2] for r in rows} == {"jrem", "her_c"} and rows[0][5] == 1.0 and rows[0][6] == "1 → 1"
    with pytest.raises(AppError, match="Maintainers only"):
        fake_client.predict("varm", ALICE, api_name="/maint_report")  # dry-run reports are private
    summary, diff = fake_client.predict("varm", BOSS, api_name="/maint_report")
    assert "20261202T120000Z" in summary and table(diff)["data"]
    target = fake_ui.service.entries["cold"][5].record["submission_id"]
    with pytest.raises(AppError, match="reason"):
        fake_client.predict(target, "hide", "", BOSS, api_name="/maint_moderate")
    out = fake_client.predict(target, "hide", "duplicate of another entry", BOSS, api_name="/maint_moderate")
    assert '"hidden": true' in out
    assert fake_ui.service.moderations[-1]["actor"] == "boss"
    board, *_ = fake_client.predict("cold", "", [], [], True, "rank", [], 1, api_name="/leaderboard")
    assert len(table(board)["data"]) == 11


def test_compare_refuses_systems_not_on_the_board(fake_client, fake_ui) -> None:
    a = fake_ui.service.entries["varm"][3].record["submission_id"]
    other_track = fake_ui.service.entries["cold"][3].record["submission_id"]
    with pytest.raises(AppError, match="leaderboard"):
        fake_client.predict("varm", a, other_track, api_name="/compare")
