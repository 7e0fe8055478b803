"""Issue 28.15 in headless Debian chromium against the real service (`live_space`), at 1440×900 and 390×844 in
both languages, measured on element boxes:
- the board's rows start in the first screen: the header and the first rows of the table are above the fold
  (it started ~800 px down at 1440 with two rows showing, and 1.5 screens down on a phone);
- the bold and semibold texts are drawn in the page's font: Gradio declares Source Sans Pro at 600 from a
  5 kB subset holding "A" and "B" only, so every other bold letter fell back to DejaVu Sans Bold (wider and
  taller than the text around it; the title's "A" alone in Source Sans).
Each check has a positive control that makes it fail. Screenshots: test-output/screenshots/top-*.
Marked `browser`."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.conftest_ui import VIEWPORTS, screen_page, shot

pytestmark = pytest.mark.browser

TIMEOUT = 60_000
# Rows of the board wholly in the first screen at each width (the demo VARM board has three rows; on a phone
# the first, and the second when no other test's submission has added a line to the head).
ROWS_IN_VIEW = {"1440": 3, "390": 1}

ROW_BOTTOMS = """() => [...document.querySelectorAll('#board .virtual-row')]
    .map(r => r.getBoundingClientRect()).filter(b => b.height > 0).map(b => b.bottom)"""

# The width of a text in `family` at `weight`, once with a monospace and once with a serif fallback: the two
# agree only when every letter comes from `family` itself.
FALLBACK_WIDTHS = """async ([family, weight, text]) => {
    await document.fonts.load(`${weight} 20px ${family}`, text);
    const widths = [];
    for (const fallback of ['"DejaVu Sans Mono"', '"DejaVu Serif"']) {
        const span = document.createElement('span');
        span.style.cssText = `font: ${weight} 20px ${family}, ${fallback}; position: absolute;`;
        span.style.whiteSpace = 'pre';  // one line, whatever the screen's width
        span.textContent = text;
        document.body.appendChild(span);
        widths.push(span.getBoundingClientRect().width);
        span.remove();
    }
    return widths;
}"""
LETTERS = "Verifiable Chinese Abusive-Speech Moderation Leaderboard 0123456789 JREM"


@pytest.fixture(
    params=[(size, lang) for size in VIEWPORTS for lang in ("en", "zh")], ids=lambda p: "-".join(p)
)
def opened(request, chromium, live_space):
    size, lang = request.param
    context, page, errors = screen_page(chromium, size)
    page.goto(f"{live_space.url}?track=varm&lang={lang}")
    expect(page.locator("#board-caption")).to_contain_text("Rows" if lang == "en" else "行", timeout=TIMEOUT)
    expect(page.locator("#board .virtual-row").first).to_be_visible(timeout=TIMEOUT)
    page.wait_for_timeout(500)  # the fonts and the last layout pass
    yield page, size, lang
    assert not errors, errors
    context.close()


def rows_in_first_screen(page: Page) -> int:
    height = page.viewport_size["height"]
    return sum(bottom <= height for bottom in page.evaluate(ROW_BOTTOMS))


def test_the_board_rows_start_in_the_first_screen(opened) -> None:
    page, size, lang = opened
    assert page.evaluate("() => window.scrollY") == 0
    shown = rows_in_first_screen(page)
    shot(page, f"top-board-{size}-{lang}")
    assert shown >= ROWS_IN_VIEW[size], (size, lang, shown, page.evaluate(ROW_BOTTOMS))
    # Positive control: the head as tall as it was (title, language box and controls ~200 px taller) pushes
    # the rows out of the first screen, and the count says so.
    page.add_style_tag(content="#tagline { padding-bottom: 420px !important; }")
    page.wait_for_timeout(300)
    assert rows_in_first_screen(page) < ROWS_IN_VIEW[size]


def test_bold_texts_are_drawn_in_the_page_font(opened) -> None:
    page, size, lang = opened
    family = page.evaluate("() => getComputedStyle(document.querySelector('#site-title h1')).fontFamily")
    assert family.startswith('"Source Sans Pro"'), family
    for weight in (400, 600, 700):
        mono, serif = page.evaluate(FALLBACK_WIDTHS, ['"Source Sans Pro"', weight, LETTERS])
        assert abs(mono - serif) < 0.5, (weight, mono, serif)
    # Positive control: a family the page does not have takes every letter from the fallback.
    mono, serif = page.evaluate(FALLBACK_WIDTHS, ['"No Such Font"', 600, LETTERS])
    assert abs(mono - serif) > 20, (mono, serif)
    # And Gradio's own 600 face alone (its subset file) misses letters: what the page had before.
    page.add_style_tag(
        content="@font-face { font-family: 'Subset Only'; font-weight: 600; "
        "src: url('static/fonts/SourceSansPro/SourceSansPro-SemiBold.woff2') format('woff2'); }"
    )
    mono, serif = page.evaluate(FALLBACK_WIDTHS, ['"Subset Only"', 600, LETTERS])
    assert abs(mono - serif) > 20, (mono, serif)
