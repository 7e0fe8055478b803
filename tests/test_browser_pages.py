"""Every public page of the UI at 1440 x 900 and at 390 x 844 (a phone), in headless Debian chromium against
the real service (`live_space`): each tab opens from the tab bar (on a phone, the ones that do not fit from
Gradio's "More tabs" menu), shows its own panel, does not make the page scroll sideways and raises no page
error. A screenshot of each goes to test-output/screenshots/pages-<tab>-<width>.png (issue 16's "screenshots
of each page at both widths"). Marked `browser`.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.conftest_ui import VIEWPORTS, open_tab, screen_page, shot

pytestmark = pytest.mark.browser

TIMEOUT = 60_000
# (tab id, English tab name, a control of that page): the control in view proves the tab really opened.
TABS = (
    ("board", "Leaderboard", "#board"),
    ("analysis", "Analysis", "#analyse"),
    ("submit", "Submit", "#upload"),
    ("submission", "Submission", "#page-open"),
    ("explorer", "Dev explorer", "#ex-run"),
    ("compare", "Compare", "#cmp-run"),
    ("releases", "Releases", "#rel-name"),
    ("about", "About & downloads", "#dl-run"),
)


@pytest.mark.parametrize("width", list(VIEWPORTS))
def test_every_page_opens_fits_and_is_captured(live_space, chromium, width: str) -> None:
    context, page, errors = screen_page(chromium, width)
    try:
        page.goto(f"{live_space.url}?lang=en")
        expect(page.get_by_role("tab").first).to_have_text("Leaderboard", timeout=TIMEOUT)  # relabelled
        expect(page.locator("#board")).to_contain_text("lexicon", timeout=TIMEOUT)
        opened = []
        for tab_id, name, control in TABS:
            open_tab(page, name)
            expect(page.locator(f"#tab-{tab_id}")).to_be_visible(timeout=TIMEOUT)
            expect(page.locator(f"#tab-{tab_id} {control}").first).to_be_visible(timeout=TIMEOUT)
            page.wait_for_timeout(300)  # let plots and tables finish their layout before measuring
            scroll = page.evaluate("document.documentElement.scrollWidth")
            assert scroll <= VIEWPORTS[width]["width"] + 1, f"{name} at {width} px scrolls sideways: {scroll}"
            shot(page, f"pages-{tab_id}-{width}")
            opened.append(tab_id)
        assert opened == [tab_id for tab_id, _, _ in TABS]
        assert not errors, errors
    finally:
        context.close()
