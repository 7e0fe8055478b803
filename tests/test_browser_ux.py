"""The everyday path of issue 16 in headless Debian chromium against the real service (`live_space`):
texts that fit the track, a board row leading to its evidence, the headline numbers in view at 1440 px and
390 px. Screenshots go to test-output/screenshots/ (`ux-*`). Marked `browser`.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.conftest_ui import shot

pytestmark = pytest.mark.browser

TIMEOUT = 60_000
VARM_WRONG_FIELDS = "wrong targets, stances"


def open_tab(page: Page, name: str) -> None:
    page.get_by_role("tab", name=re.compile(name)).click()


def wait_board(page: Page, contains: str = "lexicon") -> None:
    expect(page.locator("#board-caption")).to_contain_text("Rows", timeout=TIMEOUT)
    expect(page.locator("#board")).to_contain_text(contains, timeout=TIMEOUT)


def test_analysis_subtitle_follows_the_track(live_space, browser_page: Page) -> None:
    page = browser_page
    page.goto(f"{live_space.url}?track=cold")  # a link sets the track, not the selector
    wait_board(page)
    open_tab(page, "Analysis")
    intro = page.locator("#analysis-intro")
    expect(intro).to_contain_text("target group", timeout=TIMEOUT)
    expect(intro).not_to_contain_text(VARM_WRONG_FIELDS)  # COLD records have no targets or stances
    shot(page, "ux-analysis-cold")
    page.locator("#track").get_by_text("VARM-Bench", exact=True).click()  # positive control
    expect(intro).to_contain_text(VARM_WRONG_FIELDS, timeout=TIMEOUT)
    assert not page.errors, page.errors


def test_model_name_opens_its_submission_page(live_space, browser_page: Page) -> None:
    page = browser_page
    page.goto(live_space.url)
    wait_board(page)
    link = page.locator("#board a", has_text="baseline: lexicon").first
    href = link.get_attribute("href")
    assert href and re.fullmatch(r"\?submission=[0-9a-f]{16}", href), href
    sid = href.split("=")[1]
    link.focus()  # keyboard: the link takes focus and Enter follows it (in a new tab: the board stays)
    assert page.evaluate("document.activeElement.getAttribute('href')") == href
    with page.context.expect_page(timeout=TIMEOUT) as opened:
        page.keyboard.press("Enter")
    board_page, page = page, opened.value
    page.set_viewport_size({"width": 1440, "height": 900})
    assert page.url.endswith(f"?submission={sid}"), page.url
    header = page.locator("#page-header")
    expect(header).to_contain_text("lexicon", timeout=TIMEOUT)
    expect(header).to_contain_text("Rank 排名", timeout=TIMEOUT)
    expect(page.locator("#page-metrics")).to_contain_text("Label Macro-F1", timeout=TIMEOUT)
    expect(page.locator("#page-metrics")).not_to_contain_text("macro_f1.label")
    expect(page.locator("#page-subsets")).to_contain_text("JREM harmful", timeout=TIMEOUT)
    shot(page, "ux-submission-page-1440")
    assert not board_page.errors, board_page.errors
