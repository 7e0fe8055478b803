"""A release cut in the browser (issue 24, "Done when"), on the real service (`live_space`, the embedded
default with its own worker): two submitters choose finals (one in My submissions, one over REST), a
maintainer cuts a release in the Maintainers tab, the Releases tab shows its table with the Rank Delta and a
citation block that the copy button puts on the clipboard; a re-score afterwards leaves every byte of the
release unchanged and the Releases tab offers an erratum; the submitter's notices in My submissions name the
release. Marked `browser`.
"""

from __future__ import annotations

import json
import re
import time
import urllib.request

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.conftest_ui import TOKENS, VIEWPORTS, open_tab, screen_page, shot
from tests.factories import mixed_predictions

pytestmark = pytest.mark.browser
TIMEOUT = 60_000
# erin and frank submit here only: their much-better uploads move no other test's Ladder (conftest_ui)
ERIN, BOSS, FRANK = (next(t for t, u in TOKENS.items() if u == name) for name in ("erin", "boss", "frank"))
NAME = "2031-01"
# a track no other test on the shared live service re-scores or reads reports of (test_ui_live: cold)
TRACK = "toxicn"


def api(live_space, path: str) -> dict:
    with urllib.request.urlopen(f"{live_space.url}api/v1/{path}", timeout=10) as resp:
        return json.loads(resp.read())


def submit_released(live_space, token: str, seed: str) -> str:
    """A COLD file of the submitter's own, much better than chance, published and released."""
    data = mixed_predictions(TRACK, 0.97, seed=seed)
    answer = httpx.post(
        f"{live_space.url}api/v1/submissions",
        data={"track": TRACK, "model_name": f"release-{seed}"},
        files={"file": ("p.jsonl", data)},
        headers={"Authorization": f"Bearer {token}"},
        timeout=60,
    )
    assert answer.status_code == 202, answer.text
    sid = answer.json()["submission_id"]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        body = api(live_space, f"submissions/{sid}")
        if body["status"] == "published":
            return sid
        time.sleep(0.5)
    raise AssertionError(f"{sid} not published: {body['status']}")


def release_files(live_space) -> dict[str, bytes]:
    from worker.store.local import LocalStore

    store = LocalStore(live_space.data_dir)
    return {p: store.read("results", p) for p in store.list("results", f"releases/{TRACK}/{NAME}/")}


def sign_in(page: Page, token: str, user: str) -> None:
    page.locator("#token input, #token textarea").first.fill(token)
    page.locator("#sign-in").click()
    expect(page.locator("#who")).to_contain_text(user, timeout=TIMEOUT)


RELEASES_TAB = {"en": "Releases", "zh": "正式发布"}


def release_at_both_widths(live_space, chromium) -> None:
    """The Releases tab after the cut at 1440 and 390 in both languages (issue 28: screenshots of every page
    at both widths): a fresh visitor sees the release's table with its rows. The control: the table is
    asserted to hold the release's submitter, so an empty tab fails."""
    for width in VIEWPORTS:
        for lang in ("en", "zh"):
            context, page, errors = screen_page(chromium, width)
            try:
                page.goto(f"{live_space.url}?track={TRACK}&lang={lang}")
                expect(page.locator("#board")).to_be_visible(timeout=TIMEOUT)
                open_tab(page, RELEASES_TAB[lang])
                expect(page.locator("#rel-info")).to_contain_text(NAME, timeout=TIMEOUT)
                expect(page.locator("#rel-table")).to_contain_text("release-erin-final", timeout=TIMEOUT)
                shot(page, f"releases-cut-{width}-{lang}")
                assert not errors, errors
            finally:
                context.close()


def test_finals_a_cut_the_release_view_its_citation_and_an_erratum(live_space, browser_page: Page) -> None:
    page = browser_page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    frank = submit_released(live_space, FRANK, "frank-final")
    erin = submit_released(live_space, ERIN, "erin-final")
    chosen = httpx.put(
        f"{live_space.url}api/v1/me/finals",
        params={"track": TRACK},
        json={"submission_ids": [frank]},
        headers={"Authorization": f"Bearer {FRANK}"},
        timeout=30,
    )
    assert chosen.status_code == 200 and chosen.json()["finals"] == [frank], chosen.text

    page.goto(f"{live_space.url}?track={TRACK}&lang=en")
    open_tab(page, "Submit")
    sign_in(page, ERIN, "erin")
    page.locator("#my-subs-refresh").click()
    page.locator("#my-finals input").click()
    page.get_by_role("option", name=re.compile(erin)).click()
    page.locator("#save-finals").click()
    expect(page.locator("#finals-msg")).to_contain_text(erin, timeout=TIMEOUT)
    assert api(live_space, f"leaderboard?track={TRACK}")["rows"]  # the board is there

    page.locator("#token input, #token textarea").first.fill(BOSS)  # the maintainer
    page.locator("#sign-in").click()
    expect(page.locator("#who")).to_contain_text("boss", timeout=TIMEOUT)
    open_tab(page, "Maintainers")
    page.locator("#m-rel-name input, #m-rel-name textarea").first.fill(NAME)
    page.locator("#m-cut").click()
    expect(page.locator("#m-cut-out")).to_contain_text("Sent to a worker", timeout=TIMEOUT)
    deadline = time.monotonic() + 120
    while not release_files(live_space) and time.monotonic() < deadline:
        time.sleep(0.5)
    frozen = release_files(live_space)
    assert frozen, "the worker did not cut the release"
    rows = {r["submission_id"]: r for r in api(live_space, f"releases/{TRACK}/{NAME}")["rows"]}
    assert {erin, frank} <= set(rows)

    open_tab(page, "Releases")
    expect(page.locator("#rel-info")).to_contain_text(NAME, timeout=TIMEOUT)
    table = page.locator("#rel-table")
    expect(table).to_contain_text("Rank Delta", timeout=TIMEOUT)
    expect(table).to_contain_text("release-erin-final", timeout=TIMEOUT)
    expect(page.locator("#rel-citation")).to_contain_text("@misc", timeout=TIMEOUT)
    page.locator("#rel-citation").hover()
    page.locator("#rel-citation button[aria-label*='opy'], #rel-citation button[title*='opy']").first.click()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.startswith("@misc") and NAME in copied, copied
    expect(page.locator("#rel-info")).not_to_contain_text("erratum")
    shot(page, "releases-cut")
    release_at_both_widths(live_space, page.context.browser)

    open_tab(page, "Maintainers")  # a re-score after the release
    page.locator("#m-dry input[type=checkbox]").uncheck()
    page.locator("#m-rescore").click()
    expect(page.locator("#m-out")).to_contain_text("Started", timeout=TIMEOUT)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and not api(live_space, f"releases/{TRACK}/{NAME}")["erratum_due"]:
        time.sleep(1)
    assert release_files(live_space) == frozen  # every byte of the release, unchanged
    open_tab(page, "Releases")
    page.locator("#rel-show").click()
    expect(page.locator("#rel-info")).to_contain_text("erratum", timeout=TIMEOUT)
    shot(page, "releases-erratum")
    # the submitter's notices: her row in the release, with its Rank Delta and a link to it
    open_tab(page, "Submit")
    sign_in(page, ERIN, "erin")
    page.locator("#my-subs-refresh").click()
    notices = page.locator("#my-notices")
    expect(notices).to_contain_text(f"in release {NAME}", timeout=TIMEOUT)
    expect(notices).to_contain_text("Rank Delta", timeout=TIMEOUT)
    assert not page.errors, page.errors
