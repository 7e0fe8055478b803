"""API-level tests of every tab's callbacks, through gradio_client against the launched app.

No doubles: `ui_app` (tests/conftest_ui.py) is `build_demo` over the web process's real Service and
LocalStore, with a real Celery worker subprocess behind the queue. Its boards were filled through the real
scoring job and publisher, so the expected values below come from the store itself (leaderboard.json,
private row outcomes), never from constants. Callbacks that enqueue work (submit, compare, re-score,
moderate) are followed to the worker's result. `python -m space` end to end: test_ui_live / test_browser.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import plotly.io as pio
import pytest
from gradio_client import handle_file
from gradio_client.exceptions import AppError

from scoring.disclosure import rounded
from scoring.tracks import get_track
from space.board_query import PAGE_SIZE
from space.ui.safe import md
from space.ui.tables import (
    better_side,
    metric_header,
    model_cell,
    pct,
    pct_text,
)
from tests.conftest_ui import TOKENS, UIApp
from tests.factories import XSS_NAME, mixed_predictions, submission_view
from worker.gold.outcomes import unpack
from worker.leaderboard import Entry
from worker.records import rows_path
from worker.submissions import find_record, list_records, read_json
from worker.views import SubmissionView

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"
ALICE, BOSS, CAROL = (next(t for t, u in TOKENS.items() if u == name) for name in ("alice", "boss", "carol"))
VIEW = ("varm", "", [], [], True, "rank", [], 1, "en")
WAIT = 90.0

EXPECTED_API = {
    "/analysis",
    "/analysis_after_switch",
    "/compare",
    "/downloads",
    "/explore",
    "/explore_filter",
    "/explore_item",
    "/export",
    "/make_public",
    "/my_notices",
    "/my_submissions",
    "/language",
    "/leaderboard",
    "/leaderboard_after_switch",
    "/leaderboard_next",
    "/leaderboard_prev",
    "/load_view",
    "/maint_cut_release",
    "/maint_held",
    "/maint_moderate",
    "/maint_report",
    "/maint_rescore",
    "/poll_status",
    "/quota",
    "/quota_for_track",
    "/refresh",
    "/release_view",
    "/releases",
    "/save_finals",
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


def board(app: UIApp, track: str) -> list[dict]:
    """The published leaderboard rows, as the real Service serves them."""
    return app.service.leaderboard(track)["rows"]


def eventually(app: UIApp, predicate, what: str, timeout: float = WAIT):
    """Poll `predicate` until truthy; on timeout, fail with the worker's log tail."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}\n{app.worker.log()[-3000:]}")


def settle(app: UIApp) -> None:
    """Wait until the worker has nothing left to publish (every submission scored and published)."""

    def idle() -> bool:
        return all(
            r["status"] in ("published", "rejected", "failed")
            for track in app.ids
            for r in list_records(app.store, track)
        )

    eventually(app, idle, "the worker to finish earlier submissions")


def test_api_surface_is_pinned(ui_client) -> None:
    names = set(ui_client.view_api(return_format="dict", print_info=False)["named_endpoints"])
    assert names == EXPECTED_API


def test_leaderboard_prev_next_page_stay_in_bounds(ui_client, ui_app) -> None:
    n = len(board(ui_app, "varm"))
    last = -(-n // PAGE_SIZE)
    # Next from the last page and Prev from page 1 stay put; a page past the end is clamped first.
    for api, start, want in (
        ("/leaderboard_next", last, last),
        ("/leaderboard_next", last + 5, last),
        ("/leaderboard_prev", 1, 1),
        ("/leaderboard_prev", last + 5, last),
    ):
        out, caption, _, page = ui_client.predict(*VIEW[:-2], start, "en", api_name=api)
        assert page == want, (api, start, page)
        first = (want - 1) * PAGE_SIZE + 1
        assert f"Rows {first}–{min(n, want * PAGE_SIZE)} of {n}" in caption
        assert len(table(out)["data"]) == min(n, want * PAGE_SIZE) - first + 1


def test_leaderboard_render_search_filters(ui_client, ui_app) -> None:
    rows = board(ui_app, "varm")
    n = len(rows)
    assert n >= 12
    out, caption, link, page = ui_client.predict(*VIEW, api_name="/leaderboard")
    data = table(out)
    headers = data["headers"]
    assert headers[:2] == ["Rank", "Model"] and "JREM ↑" in headers and "JREM 95% CI" in headers
    assert out["datatype"][headers.index("Model")] == "markdown"
    assert len(data["data"]) == n and f"Rows 1–{n} of {n}" in caption and page == 1
    assert link.endswith("[?track=varm&lang=en](?track=varm&lang=en)")
    # The published order, names escaped and linked to their pages (the browser test checks the XSS name
    # renders as text).
    assert [r[1] for r in data["data"]] == [model_cell(r, "varm", "en") for r in rows]
    assert model_cell({"model_name": XSS_NAME, "submission_id": "0" * 16}).startswith(f"[{md(XSS_NAME)}]")
    assert any(md(XSS_NAME) in r[1] for r in data["data"])
    jrem = headers.index("JREM ↑")
    assert [r[jrem] for r in data["data"]] == [pct(r["jrem"]) for r in rows]

    out, caption, link, _ = ui_client.predict(
        "varm", "lexi", [], [], True, "rank", [], 1, api_name="/leaderboard"
    )
    assert [r[1].split("](")[0] for r in table(out)["data"]] == [f"[{md('baseline: lexicon')}"]
    assert "q=lexi" in link
    out, *_ = ui_client.predict("varm", "", [], [], False, "her_c", [], 1, api_name="/leaderboard")
    shown = table(out)["data"]
    her = [r[table(out)["headers"].index("HER-C ↓")] for r in shown]
    assert her == sorted(her, reverse=True) and all("baseline" not in " ".join(map(str, r)) for r in shown)
    assert len(shown) == sum(not r["is_baseline"] for r in rows)
    out, *_ = ui_client.predict(
        "varm", "", ["open"], ["zero-shot"], True, "rank", [], 1, "en", api_name="/leaderboard"
    )
    h = table(out)["headers"]
    picked = {(r[h.index("Type")], r[h.index("Setting")]) for r in table(out)["data"]}
    assert picked == {("open", "zero-shot")}
    assert len(table(out)["data"]) == sum(
        r["model_type"] == "open" and r["setting"] == "zero-shot" for r in rows
    )


def test_switch_track_and_toxitrace_columns(ui_client, ui_app) -> None:
    sort, columns, systems, a, b, page = ui_client.predict("cntp", "en", api_name="/switch_track")
    assert ["Span overlap F1 ↑", "spans.overlap_f1"] in sort["choices"] and page == 1
    assert "spans.overlap_f1" in columns["value"]
    ids = {r["submission_id"] for r in board(ui_app, "cntp")}
    assert len(systems["value"]) == 8 and set(systems["value"]) <= ids
    assert a["value"] and b["value"] and a["value"] != b["value"]
    out, *_ = ui_client.predict("cntp", "", [], [], True, "rank", [], 1, "en", api_name="/leaderboard")
    assert {"Span overlap F1 ↑", "F1 ↑", "Accuracy ↑", "Macro-F1 ↑"} <= set(table(out)["headers"])
    out, *_ = ui_client.predict("cold", "", [], [], True, "rank", [], 1, "en", api_name="/leaderboard")
    assert {"F1 ↑", "F1 95% CI", "Precision ↑", "Recall ↑"} <= set(table(out)["headers"])
    zh, *_ = ui_client.predict("cold", "", [], [], True, "rank", [], 1, "zh", api_name="/leaderboard")
    assert {"F1 ↑", "F1 95% CI", "精确率 ↑", "召回率 ↑"} <= set(table(zh)["headers"])  # 28.9


def test_load_view_defaults(ui_client, ui_app) -> None:
    out = ui_client.predict(api_name="/load_view")
    assert out[0] == "varm" and out[4] is True
    assert len(table(out[7])["data"]) == len(board(ui_app, "varm"))


def test_export_csv_and_json(ui_client, ui_app) -> None:
    update = ui_client.predict("varm", "model", [], [], False, "rank", [], 1, api_name="/export")
    files = [Path(p) for p in update["value"]]
    csv = next(p for p in files if p.suffix == ".csv").read_text("utf-8-sig")
    data = json.loads(next(p for p in files if p.suffix == ".json").read_text())
    expected = {
        r["submission_id"]: r
        for r in board(ui_app, "varm")
        if not r["is_baseline"] and "model" in r["model_name"]
    }
    assert data["track"] == "varm" and {r["submission_id"] for r in data["rows"]} == set(expected)
    for row in data["rows"]:  # raw published values, unrounded
        assert row["jrem"] == expected[row["submission_id"]]["jrem"]
    assert "JREM ↑ (0–1) [jrem]" in csv.splitlines()[0] and "[ci.jrem.low]" in csv.splitlines()[0]


def test_analysis_varm_charts(ui_client) -> None:
    out = ui_client.predict("varm", [], "en", api_name="/analysis")
    figs = [plot(o) for o in out[:5]]
    titles = [f.layout.title.text for f in figs]
    assert "error rate" in titles[0] and "JREM" in titles[1] and "HER" in titles[2]
    assert "Format issues" in titles[3] and "Cue subsets" in titles[4]
    assert len(figs[0].data) == 8  # top 5 + 3 baselines
    for fig in figs:  # the cue panels are stacked: their x axis is titled under the bottom one
        assert (fig.layout.xaxis.title.text or fig.layout.xaxis3.title.text) and fig.layout.yaxis.title.text
    heat = figs[4].data[0]
    assert heat.type == "heatmap" and len(heat.x) == 4  # the four demo cue subsets, from real results
    assert len(table(out[5])["data"]) == 8


def test_analysis_toxitrace_charts(ui_client) -> None:
    out = ui_client.predict("cold", [], "en", api_name="/analysis")
    assert "classification" in plot(out[0]).layout.title.text
    assert "topic" in plot(out[2]).layout.title.text or "topic" in plot(out[1]).layout.title.text
    assert out[4].get("visible") is False


def test_validate_reports_line_numbers(ui_client, tmp_path: Path) -> None:
    good = handle_file(str(DEMO / "varm/baselines/lexicon.test.jsonl"))
    message, report = ui_client.predict("varm", good, "en", api_name="/validate")
    assert "valid" in message and table(report)["data"] == []
    bad = tmp_path / "bad.jsonl"
    lines = (DEMO / "varm/baselines/lexicon.test.jsonl").read_text().splitlines()
    bad.write_text("\n".join([lines[0], "{not json", json.dumps({"id": 5}), *lines[3:]]) + "\n")
    message, report = ui_client.predict("varm", handle_file(str(bad)), "en", api_name="/validate")
    rows = table(report)["data"]
    assert "not valid" in message and {r[0] for r in rows} >= {"2", "3"}
    lines_in_order = [int(r[0]) for r in rows if r[0] != "file"]  # file-level problems first, then by line
    assert lines_in_order == sorted(lines_in_order) and lines_in_order[0] == 2, rows
    assert [r[0] for r in rows][: len(rows) - len(lines_in_order)] == ["file"] * (
        len(rows) - len(lines_in_order)
    )


def test_submit_requires_identity_and_model_name(ui_client) -> None:
    f = handle_file(str(DEMO / "varm/baselines/lexicon.test.jsonl"))
    msg, *_ = ui_client.predict("varm", f, "m", "", "", "", "", "", "", "", "en", api_name="/submit")
    assert "token" in msg.lower()
    msg, *_ = ui_client.predict(
        "varm", f, "m", "", "", "", "", "", "", "wrong-token", "en", api_name="/submit"
    )
    assert "not valid" in msg
    msg, report, sid, *_ = ui_client.predict(
        "varm", f, " ", "", "", "", "ftp://x", "", "", ALICE, "en", api_name="/submit"
    )
    fields = {r[1] for r in table(report)["data"]}
    assert sid == "" and fields == {"model_name", "paper_url"}


def test_submit_lifecycle_and_new_row(ui_client, ui_app, tmp_path: Path) -> None:
    upload = tmp_path / "api-model.jsonl"
    lines = mixed_predictions("varm", 0.97, seed="api-model").decode().splitlines()
    broken = {}  # line number -> row id: outputs that are not schema-valid (still accepted and scored)
    for n in (2, 5):
        obj = json.loads(lines[n - 1])
        obj["output"] = "no anchors at all"
        lines[n - 1], broken[n] = json.dumps(obj, ensure_ascii=False), obj["id"]
    upload.write_bytes(("\n".join(lines) + "\n").encode())
    msg, report, sid, status, timer, link, quota = ui_client.predict(
        "varm",
        handle_file(str(upload)),
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
    assert "Submissions left today" in quota  # the quota line is refreshed by the submit itself
    # The record is durable (and queued or already further along) before the worker says anything.
    record = find_record(ui_app.store, sid)
    assert record["submitter"] == "alice" and record["metadata"]["model_name"] == "api-model"
    assert record["history"][1]["status"] == "queued"

    # The status timer, as the page polls it, until the real worker has scored and published it.
    def polled() -> str | None:
        status, timer = ui_client.predict(sid, "", "en", api_name="/poll_status")
        return None if timer["active"] else status

    assert "**published**" in eventually(ui_app, polled, "the submission to be published")
    out, *_ = ui_client.predict("varm", "api-model", [], [], True, "rank", [], 1, api_name="/leaderboard")
    assert [r[1] for r in table(out)["data"]] == [f"[api\\-model](?submission={sid}&track=varm)"]
    page = ui_client.predict(sid, "", "en", api_name="/submission")
    assert "api\\-model" in page[0] and table(page[2])["data"][0][0] == "JREM"
    assert "@misc{varm-" + sid in page[9]
    assert {"queued", "scoring", "scored", "published"} <= {r[0] for r in table(page[8])["data"]}
    # The submitter's own format report, kept at intake: count, then line / id / issues per bad output.
    assert "2 output(s) are not schema-valid" in page[10]
    rows = table(page[11])["data"]
    assert [(r[0], r[1]) for r in rows] == [(n, broken[n]) for n in (2, 5)]
    assert all("missing_analysis_prefix" in r[2] for r in rows)
    # tests/factories.submission_view (used by the pure renderer tests) has the real answer's shape.
    real = ui_app.service.submission(sid)
    assert real["status"] == "published" and real["result"]["result"]["metrics"]["jrem"] > 0
    fake = submission_view(Entry(real, real["versions"][-1], real["result"]["result"]))
    assert set(fake) == set(real) == SubmissionView.__required_keys__  # and the type names each key


def test_quota_shown_and_exceeded(ui_client, ui_app, tmp_path: Path) -> None:
    limit = ui_app.config.quota_per_day
    assert f"left today: {limit}/{limit}" in ui_client.predict("toxicn", CAROL, "en", api_name="/quota")
    for i in range(limit + 1):
        upload = tmp_path / f"q{i}.jsonl"
        upload.write_bytes(mixed_predictions("toxicn", 0.5, seed=f"quota-{i}"))
        form = ("toxicn", handle_file(str(upload)), f"q{i}", "", "", "", "", "", "", CAROL, "en")
        msg, _, sid, *_ = ui_client.predict(*form, api_name="/submit")
        if i < limit:
            assert len(sid) == 16, msg
        else:
            assert sid == "" and "next free slot" in msg.lower()
    assert f"left today: 0/{limit}" in ui_client.predict("toxicn", CAROL, "en", api_name="/quota")
    assert f"left today: {limit}/{limit}" in ui_client.predict("cold", CAROL, "en", api_name="/quota")


def test_refresh_follows_store_head(ui_app) -> None:
    from gradio_client import Client

    settle(ui_app)  # earlier tests' submissions must not move the head under this test
    client = Client(ui_app.url, verbose=False)  # its own session: the last head it saw is session state
    first = client.predict(*VIEW, api_name="/refresh")  # first tick: only remembers the head
    assert first == ({"__type__": "update"},) * 4, first  # gr.skip() everywhere
    assert client.predict(*VIEW, api_name="/refresh") == first  # head unchanged: nothing re-rendered
    target = ui_app.ids["varm"][4]
    # A maintainer verifies a system: the Service sends a publish to the worker, which moves the head.
    ui_app.service.moderate(target, actor="boss", verified=True, reason="checked the paper")
    eventually(
        ui_app,
        lambda: any(r["submission_id"] == target and r["verified"] for r in board(ui_app, "varm")),
        "the verified mark to be published",
    )
    out, caption, _, page = client.predict(*VIEW, api_name="/refresh")
    data = table(out)
    name = find_record(ui_app.store, target)["metadata"]["model_name"]
    cell = model_cell({"model_name": name, "submission_id": target}, "varm", "en")
    row = next(r for r in data["data"] if r[1] == cell)
    assert "verified" in row[data["headers"].index("Mark")] and page == 1 and "Rows 1–" in caption
    assert client.predict(*VIEW, api_name="/refresh") == first  # and quiet again until the next publish
    client.close()


def test_submission_page_unknown_and_escaped(ui_client, ui_app) -> None:
    page = ui_client.predict("ffffffffffffffff", "", "en", api_name="/submission")
    assert "No such submission" in page[0]
    xss = ui_app.ids["varm"][3]
    assert find_record(ui_app.store, xss)["metadata"]["model_name"] == XSS_NAME
    page = ui_client.predict(xss, "", "en", api_name="/submission")
    assert "<img" not in page[0] and "&lt;img" in page[0]
    assert plot(page[4]).layout.title.text


def test_explorer_flow(ui_client, ui_app) -> None:
    f = handle_file(str(DEMO / "varm/baselines/lexicon.dev.jsonl"))
    summary, report, items, detail, subsets = ui_client.predict("varm", f, "en", api_name="/explore")
    assert "JREM" in summary and len(table(items)["data"]) == 200 and "varm-target" in detail
    # The subset filter offers the cue subsets of the published dev membership and filters by it.
    membership = json.loads(ui_app.service.public_file("varm", "dev_subsets.json"))
    assert sorted(c[1] for c in subsets["choices"] if c[1]) == sorted(membership)
    items, _ = ui_client.predict("", "", "", "general_abuse", False, "en", api_name="/explore_filter")
    assert sorted(r[1] for r in table(items)["data"]) == sorted(membership["general_abuse"])
    items, detail = ui_client.predict("stance", "", "", "", True, "en", api_name="/explore_filter")
    rows = table(items)["data"]
    assert rows and all("Stance" in r[3] for r in rows)
    detail = ui_client.predict(rows[0][0], api_name="/explore_item")
    assert f"#{rows[0][0]}" in detail


def test_compare(ui_client, ui_app) -> None:
    a, b = ui_app.ids["varm"][3:5]
    # The expected statistics, computed here from the private row outcomes the scoring job stored.
    outcomes = [unpack(read_json(ui_app.store, "submissions", rows_path("varm", sid, 1))) for sid in (a, b)]
    expected = rounded(get_track("varm").paired_compare(*outcomes, bootstrap=1000, seed=0))  # the gate
    title, comp, fig, deltas = ui_client.predict("varm", a, b, "en", api_name="/compare")
    rows = table(comp)["data"]
    names = [metric_header("varm", k) for k in expected]
    assert [r[0] for r in rows] == names
    assert rows[0][0] == "JREM ↑" and "HER-C ↓" in [r[0] for r in rows]
    for (_, va, vb, diff, ci, significant, better), metric in zip(rows, expected, strict=True):
        want = expected[metric]
        side = better_side(metric, want["diff"], want["significant"])
        assert better == {"A": "A", "B": "B", "": "—"}[side]
        # One decimal as on the board, always written ("17.0", not "17"): issue 28.15.
        assert (va, vb, diff) == (pct_text(want["a"]), pct_text(want["b"]), pct_text(want["diff"]))
        assert all(re.fullmatch(r"-?\d+\.\d", x) for x in (va, vb, diff)), (va, vb, diff)
        assert ci == f"[{pct_text(want['ci'][0])}, {pct_text(want['ci'][1])}]"
        assert significant == ("yes" if want["significant"] else "no")
    assert plot(fig).layout.yaxis.title.text and len(table(deltas)["data"]) == 6
    with pytest.raises(AppError):
        ui_client.predict("varm", a, a, api_name="/compare")


def test_language_and_downloads(ui_client, ui_app) -> None:
    tagline, about, *_ = ui_client.predict("en", "varm", api_name="/language")
    assert "label score" in tagline and "JREM" in about
    tagline, about, *_ = ui_client.predict("zh", "varm", api_name="/language")
    assert "标签" in tagline
    tagline, *_ = ui_client.predict("en", "cold", api_name="/language")  # issue 28.15b: COLD's own
    assert tagline.startswith("COLD") and "JREM" not in tagline
    update = ui_client.predict("varm", api_name="/downloads")
    files = {Path(p).name: Path(p).read_bytes() for p in update["value"]}
    assert sorted(files) == ["varm-dev.jsonl", "varm-test_inputs.jsonl"]
    assert files["varm-test_inputs.jsonl"] == ui_app.service.public_file("varm", "test_inputs.jsonl")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_tagline_is_the_tracks_own(ui_app, lang: str) -> None:
    """Issue 28.15b: VARM's tagline (JREM needs the whole record right) stood under every track. Each
    track has its own, in the page's language, wherever the tagline is set: a track switch
    (`tagline_for`), the language toggle (`language`) and the relabel that follows a link's language."""
    from space.ui.app import build_app
    from space.ui.i18n import TEXT

    app = build_app(ui_app.service, auth_mode="open", warm=False)
    varm = TEXT["tagline"][0 if lang == "zh" else 1]
    shown = {}
    for track in ("varm", "cold", "toxicn", "cntp"):
        said = {
            app.tagline_for(track, lang),
            app.language(lang, track)[app.tagline],
            app.relabel(lang, track)[app.tagline],
        }
        assert len(said) == 1, said  # one tagline per track, whichever event set it
        shown[track] = said.pop()
    assert shown["varm"] == varm
    for track, title in (("cold", "COLD"), ("toxicn", "ToxiCN"), ("cntp", "CNTP")):
        assert shown[track].startswith(title) and "JREM" not in shown[track], shown[track]
        assert ("有毒" in shown[track]) == (lang == "zh")  # in the page's language
    assert len(set(shown.values())) == 4, shown
    # The bound texts still follow the language in the same step.
    assert app.about.about in app.relabel(lang, "cold")


def test_maintainer_actions_need_maintainer(ui_client, ui_app) -> None:
    assert "maintainer" not in ui_client.predict(ALICE, "en", api_name="/sign_in")
    assert "maintainer" in ui_client.predict(BOSS, "en", api_name="/sign_in")
    with pytest.raises(AppError, match="Maintainers only"):
        ui_client.predict("cold", True, ALICE, "en", api_name="/maint_rescore")

    # A maintainer corrects one gold label, so every cold result is now stale, and dry-runs a re-score.
    store = ui_app.store
    refs = [json.loads(x) for x in store.read("references", "cold/test.jsonl").splitlines()]
    refs[1]["label"] = 1 - refs[1]["label"]
    fixed = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in refs).encode()
    store.commit("references", {"cold/test.jsonl": fixed}, [], "fix a gold label")
    out, diff = ui_client.predict("cold", True, BOSS, "en", api_name="/maint_rescore")
    assert re.search(r"Started: `[0-9a-f-]{36}` · dry run", out) and "Latest diff report" in out
    assert table(diff)["data"] in ([], [[]]) and "Submission" in table(diff)["headers"], diff

    def report():
        summary, diff = ui_client.predict("cold", BOSS, "en", api_name="/maint_report")
        return (summary, table(diff)["data"]) if table(diff)["data"] else None

    summary, rows = eventually(ui_app, report, "the worker's dry-run report")
    assert "dry run" in summary and "by boss" in summary
    assert re.search(r"\d+ submissions · \d+ re-scored · \d+ skipped", summary), summary  # words, not keys
    assert "rank_changes" not in summary
    on_board = {r["submission_id"] for r in board(ui_app, "cold")}
    assert {r[0] for r in rows} == on_board
    assert {r[2] for r in rows} == {metric_header("cold", k) for k in get_track("cold").headline_metrics}
    assert all(re.fullmatch(r"\d+ → \d+", r[6]) for r in rows)
    assert any(r[5] not in (None, 0) for r in rows if r[2] == "Accuracy ↑")  # the flipped label counts
    assert store.list("results", "rescore/cold/") == []  # dry-run reports stay private
    dry_run = summary.split(" · ")[0]  # "**<run>**"
    assert re.fullmatch(r"\*\*\S+\*\*", dry_run), summary
    with pytest.raises(AppError, match="Maintainers only"):
        ui_client.predict("cold", ALICE, "en", api_name="/maint_report")

    target = ui_app.ids["cold"][5]
    before, *_ = ui_client.predict("cold", "", [], [], True, "rank", [], 1, api_name="/leaderboard")
    assert any(f"(?submission={target}&" in r[1] for r in table(before)["data"])  # positive control
    with pytest.raises(AppError, match="reason"):
        ui_client.predict(target, "hide", "", BOSS, "en", api_name="/maint_moderate")
    out = ui_client.predict(
        target, "hide", "duplicate of another entry", BOSS, "en", api_name="/maint_moderate"
    )
    assert out.startswith("✓ hide · [") and f"?submission={target}" in out and "now hidden" in out, out
    record = find_record(store, target)
    assert record["hidden"] and record["hidden_reason"] == "duplicate of another entry"
    assert record["history"][-1]["note"] == "moderated by boss: duplicate of another entry"
    eventually(ui_app, lambda: target not in {r["submission_id"] for r in board(ui_app, "cold")}, "the hide")
    assert store.list("results", f"cold/results/{target}/") == []  # its public envelope is gone too
    out, *_ = ui_client.predict("cold", "", [], [], True, "rank", [], 1, api_name="/leaderboard")
    names = [r[1] for r in table(out)["data"]]
    assert not any(f"(?submission={target}&" in n for n in names)  # its row links nowhere: it is gone
    assert len(names) == len(board(ui_app, "cold")) == len(on_board) - 1

    # Then a real run: not the dry run's report shown as this one's (issue 28.11). Its answer names no
    # earlier run and its table waits (with its headers) until the worker's report of this run is there.
    out, diff = ui_client.predict("cold", False, BOSS, "en", api_name="/maint_rescore")
    assert "real run" in out and dry_run not in out and "dry run" not in out, out
    assert table(diff)["data"] in ([], [[]]) and "Submission" in table(diff)["headers"], diff

    def real_report():
        summary, diff = ui_client.predict("cold", BOSS, "en", api_name="/maint_report")
        return (summary, table(diff)["data"]) if not summary.startswith(dry_run) else None

    summary, _ = eventually(ui_app, real_report, "the worker's real re-score report")
    assert "published" in summary and "dry run" not in summary and "by boss" in summary, summary


def test_compare_refuses_systems_not_on_the_board(ui_client, ui_app) -> None:
    a = ui_app.ids["varm"][3]
    other_track = ui_app.ids["cold"][3]
    with pytest.raises(AppError, match="leaderboard"):
        ui_client.predict("varm", a, other_track, "en", api_name="/compare")


def test_maintainers_tab_lists_releases_and_rejects_held_near_copies(ui_client, ui_app) -> None:
    """A near-copy is held (Service), listed in the Maintainers tab for maintainers only, and ended there.
    A second Service with a recording enqueuer stores the files, so nothing reaches the board."""
    from tests.conftest_pipeline import RecordingEnqueuer
    from worker.service import Service

    service = Service(ui_app.config, ui_app.store, RecordingEnqueuer())
    data = (DEMO / "toxicn" / "baselines" / "lexicon.test.jsonl").read_bytes()
    rows = [json.loads(line) for line in data.decode().splitlines() if line.strip()]
    rows[7]["label"] = 1 - rows[7]["label"]
    probe = "".join(json.dumps(r) + "\n" for r in rows).encode()
    original = service.submit(
        identity="probe-origin", track="toxicn", data=data, metadata={"model_name": "o"}
    )
    held = service.submit(identity="probe-eve", track="toxicn", data=probe, metadata={"model_name": "p"})
    assert held["status"] == "held" and "probe-origin" not in held["reason"]

    with pytest.raises(AppError, match="Maintainers only"):
        ui_client.predict("toxicn", ALICE, "en", api_name="/maint_held")
    listed = table(ui_client.predict("toxicn", BOSS, api_name="/maint_held"))
    row = next(r for r in listed["data"] if r[0] == held["submission_id"])
    assert row[1] == "probe-eve" and row[4] == 1
    assert row[5].startswith(f"[{original['submission_id']}](?submission={original['submission_id']}")

    with pytest.raises(AppError, match="不在待审中|not held"):
        ui_client.predict(original["submission_id"], "release", "ok", BOSS, api_name="/maint_moderate")
    out = ui_client.predict(
        held["submission_id"], "reject", "label probe", BOSS, "en", api_name="/maint_moderate"
    )
    assert "Status: rejected" in out, out
    assert find_record(ui_app.store, held["submission_id"])["error"] == "rejected after review: label probe"
    listed = table(ui_client.predict("toxicn", BOSS, api_name="/maint_held"))
    assert held["submission_id"] not in [r[0] for r in listed["data"]]


def test_the_maintainers_language_redraw_reads_nothing_for_a_non_maintainer(ui_app: UIApp) -> None:
    """The language chain sends the Maintainers tables back to be redrawn; tables a caller claims to show
    (a crafted event) get the held list only with a maintainer's token (the control: the maintainer's
    redraw lists the held upload, in English)."""
    import pandas as pd

    from space.ui.app import build_app
    from space.ui.i18n import t
    from space.ui.pages.maintainers import HELD_COLUMNS
    from tests.conftest_pipeline import RecordingEnqueuer
    from worker.service import Service

    service = Service(ui_app.config, ui_app.store, RecordingEnqueuer())
    rows = [
        json.loads(x) for x in (DEMO / "cold" / "baselines" / "lexicon.test.jsonl").read_text().splitlines()
    ]
    rows[11]["label"] = 1 - rows[11]["label"]  # not a baseline's file: a copy of it is another's file
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    service.submit(identity="relabel-origin", track="cold", data=data, metadata={"model_name": "o"})
    held = service.submit(identity="relabel-copy", track="cold", data=data, metadata={"model_name": "c"})
    assert held["status"] == "held"

    page = build_app(ui_app.service, auth_mode="token").maintainers
    claimed = pd.DataFrame([["x"] * len(HELD_COLUMNS)])
    refused = page.relabel("cold", claimed, claimed, ALICE, "en")
    assert refused[page.held_table].empty and refused[page.diff].empty
    assert list(refused[page.held_table].columns) == [t(k, "en") for k in HELD_COLUMNS]
    shown = page.relabel("cold", None, claimed, BOSS, "en")[page.held_table]
    assert held["submission_id"] in shown[t("col_submission_id", "en")].tolist()
