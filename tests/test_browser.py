"""End to end in headless Debian chromium against the real service (`python -m space`, embedded worker).

Screenshots of every step go to test-output/screenshots/. Marked `browser` (deselect with -m "not browser").
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.conftest_ui import TOKENS, shot
from tests.factories import mixed_predictions

pytestmark = pytest.mark.browser

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"
ALICE = next(t for t, u in TOKENS.items() if u == "alice")
XSS = "<img src=x onerror=alert(1)>"
TIMEOUT = 60_000


def fill(page: Page, elem_id: str, value: str) -> None:
    page.locator(f"#{elem_id}").locator("textarea, input").first.fill(value)


def open_tab(page: Page, name: str) -> None:
    page.get_by_role("tab", name=re.compile(name)).click()


def search(page: Page, text: str) -> None:
    # Typed key by key: the search box reacts to user input events, as for a real viewer.
    box = page.locator("#search").locator("textarea, input").first
    box.fill("")
    box.press_sequentially(text, delay=20)


def board_text(page: Page) -> str:
    return page.locator("#board").inner_text()


def wait_rows(page: Page, contains: str, timeout: int = TIMEOUT) -> None:
    expect(page.locator("#board-caption")).to_contain_text("Rows", timeout=timeout)  # load_view has run
    expect(page.locator("#board")).to_contain_text(contains, timeout=timeout)
    expect(page.locator("#board")).to_be_visible(timeout=timeout)  # a ?lang=en page shows once English


def submit_via_ui(page: Page, path: Path, model: str, track_label: str = "VARM-Bench") -> str:
    open_tab(page, "Submit")
    fill(page, "token", ALICE)
    page.locator("#track").get_by_text(track_label, exact=True).click()
    page.locator("#upload input[type=file]").set_input_files(str(path))
    expect(page.locator("#submit-message")).to_contain_text("is valid", timeout=TIMEOUT)  # instant validation
    fill(page, "model-name", model)
    fill(page, "organisation", "Browser Lab")
    page.locator("#submit").click()
    expect(page.locator("#new-id").locator("textarea, input").first).to_have_value(
        re.compile(r"^[0-9a-f]{16}$"), timeout=TIMEOUT
    )
    return page.locator("#new-id").locator("textarea, input").first.input_value()


def test_leaderboard_search_track_chart(live_space, browser_page: Page) -> None:
    page = browser_page
    page.goto(f"{live_space.url}?lang=en")
    wait_rows(page, "lexicon")
    expect(page.locator("#board")).to_contain_text("JREM")
    shot(page, "01-leaderboard-varm")

    search(page, "lexicon")
    expect(page.locator("#view-link a")).to_have_attribute("href", re.compile(r"q=lexicon"), timeout=TIMEOUT)
    expect(page.locator("#board")).not_to_contain_text("majority")
    shot(page, "02-leaderboard-search")

    page.locator("#track").get_by_text("COLD", exact=True).click()
    expect(page.locator("#board")).to_contain_text("Precision", timeout=TIMEOUT)
    assert "JREM" not in board_text(page)
    shot(page, "03-leaderboard-cold")

    open_tab(page, "Analysis")
    expect(page.locator("#plot-1 .js-plotly-plot")).to_be_visible(timeout=TIMEOUT)
    page.locator("#track").get_by_text("VARM-Bench", exact=True).click()
    expect(page.locator("#plot-2")).to_contain_text("JREM", timeout=TIMEOUT)
    expect(page.locator("#plot-4 .js-plotly-plot")).to_be_visible(timeout=TIMEOUT)
    page.wait_for_timeout(800)
    shot(page, "04-analysis-varm")
    assert not page.errors, page.errors


def test_upload_reaches_published_and_row_appears(live_space, browser_page: Page, tmp_path: Path) -> None:
    page = browser_page
    page.goto(f"{live_space.url}?lang=en")
    wait_rows(page, "lexicon")
    preds = tmp_path / "browser.jsonl"
    # a file of alice's own (a copy of the baseline's would be held: docs/SECURITY.md), good enough to be
    # released by the Ladder as her first on this track
    preds.write_bytes(mixed_predictions("varm", 0.9, seed="browser"))
    sid = submit_via_ui(page, preds, "browser-model")
    shot(page, "05-submitted")
    expect(page.locator("#status")).to_contain_text("published", timeout=120_000)
    expect(page.locator("#status strong")).to_have_text("published")
    # The link keeps the track and language (space/ui/tables.py page_link).
    link = page.locator("#submission-link a")
    expect(link).to_have_attribute("href", f"?submission={sid}&track=varm&lang=en")
    shot(page, "06-status-published")

    open_tab(page, "Leaderboard")
    search(page, "browser-model")
    wait_rows(page, "browser-model", timeout=TIMEOUT)
    expect(page.locator("#board")).to_contain_text("Browser Lab")
    shot(page, "07-new-row")

    page.goto(f"{live_space.url}?submission={sid}&lang=en")
    expect(page.locator("#page-header")).to_contain_text("browser-model", timeout=TIMEOUT)
    expect(page.locator("#page-metrics")).to_contain_text("JREM")
    expect(page.locator("#page-bibtex")).to_contain_text(sid)
    shot(page, "08-submission-page")
    assert not page.errors, page.errors


def test_malformed_upload_shows_line_numbered_errors(live_space, browser_page: Page, tmp_path: Path) -> None:
    page = browser_page
    page.goto(f"{live_space.url}?lang=en")
    wait_rows(page, "lexicon")
    lines = (DEMO / "varm/baselines/lexicon.test.jsonl").read_text().splitlines()
    bad = tmp_path / "malformed.jsonl"
    bad.write_text(
        "\n".join([lines[0], "{this is not json", json.dumps({"id": 7, "output": 3}), *lines[5:]]) + "\n"
    )
    open_tab(page, "Submit")
    page.locator("#upload input[type=file]").set_input_files(str(bad))
    expect(page.locator("#submit-message")).to_contain_text("not valid", timeout=TIMEOUT)
    report = page.locator("#report")
    expect(report.locator("tbody tr").first).to_contain_text("2", timeout=TIMEOUT)
    text = report.inner_text()
    assert re.search(r"\b2\b", text) and re.search(r"\b3\b", text)
    shot(page, "09-malformed-upload")


def test_model_name_with_html_renders_as_text(live_space, browser_page: Page, tmp_path: Path) -> None:
    # Submit through the REST API (the quickest way in), then look at it in every place it is shown.
    data = mixed_predictions("varm", 0.98, seed="xss")  # beats her earlier one: released (the Ladder)
    form = {
        "track": "varm",
        "model_name": XSS,
        "organisation": "<b>bold</b>",
        "description": "<script>alert(2)</script>",
    }
    resp = httpx.post(
        f"{live_space.url}api/v1/submissions",
        data=form,
        files={"file": ("p.jsonl", data)},
        headers={"Authorization": f"Bearer {ALICE}"},
        timeout=30,
    )
    assert resp.status_code == 202, resp.text
    sid = resp.json()["submission_id"]

    page = browser_page
    page.goto(f"{live_space.url}?submission={sid}&lang=en")
    expect(page.locator("#page-header")).to_contain_text(XSS, timeout=TIMEOUT)
    for _ in range(60):  # wait for the worker to publish it
        if "published" in page.locator("#page-status").inner_text():
            break
        page.wait_for_timeout(1000)
        page.locator("#page-open").click()
    expect(page.locator("#page-status")).to_contain_text("published", timeout=TIMEOUT)
    expect(page.locator("#page-header")).to_contain_text("<b>bold</b>")
    shot(page, "10-xss-submission-page")

    # The stable view link: the search box and the table come back filtered from the URL alone.
    page.goto(f"{live_space.url}?track=varm&q=onerror&lang=en")
    wait_rows(page, XSS, timeout=TIMEOUT)
    expect(page.locator("#search").locator("textarea, input").first).to_have_value("onerror")
    expect(page.locator("#board")).to_contain_text("<b>bold</b>")
    expect(page.locator("#board")).not_to_contain_text("majority")
    shot(page, "11-xss-leaderboard")
    open_tab(page, "Analysis")
    page.locator("#analyse").click()
    expect(page.locator("#plot-1 .js-plotly-plot")).to_be_visible(timeout=TIMEOUT)
    page.wait_for_timeout(1000)
    assert page.locator("#board img, #page-header img, #plot-1 img, #plot-2 img, #systems img").count() == 0
    assert page.dialogs == [], page.dialogs
    assert not page.errors, page.errors


def test_dev_explorer(live_space, browser_page: Page) -> None:
    page = browser_page
    page.goto(f"{live_space.url}?lang=en")
    wait_rows(page, "lexicon")
    open_tab(page, "Dev explorer")
    page.locator("#ex-upload input[type=file]").set_input_files(
        str(DEMO / "varm/baselines/lexicon.dev.jsonl")
    )
    page.locator("#ex-run").click()
    expect(page.locator("#ex-summary")).to_contain_text("JREM", timeout=TIMEOUT)
    expect(page.locator("#ex-detail mark.varm-target")).to_be_visible(timeout=TIMEOUT)
    page.locator("#ex-errors input").check()
    page.wait_for_timeout(800)
    shot(page, "12-dev-explorer")
    assert not page.errors, page.errors
