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
