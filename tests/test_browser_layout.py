"""Issue 28 in headless Debian chromium at 1440×900 and 390×844, in both languages, measured on element boxes:
model names that share a prefix stay whole and distinct (point 1), Rank and Model stay in view after the
board scrolls sideways (2), Compare, My submissions, the validation report and a submission page's tables
show every value on a phone without a sideways scroll, each under its column's name, and keep their first
column in view when they scroll at 1440 (3, 10), a submission id is never broken across two lines (3),
numbers keep their decimal (15), a `?lang=en` link paints no Chinese before the page turns English and the
toggle writes the language into the address bar (8), a table waiting for a file, a comparison or a
submission is not drawn (no "0 1 2" / "1 2 3" placeholder headers, 11 and 15). Each measurement has a
positive control that makes it fail. Screenshots: test-output/screenshots/layout-*. Marked `browser`.
"""

from __future__ import annotations

import json
import re
import time

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.conftest_ui import open_tab, shot
from tests.factories import mixed_predictions

pytestmark = pytest.mark.browser

TIMEOUT = 60_000
# Two demo baselines whose names share their first 20 characters (the cut used to show both as the same).
SHARED_PREFIX = ("baseline: char-ngram", "baseline: char-ngram-random")
CJK = re.compile(r"[\u3400-\u9fff\uff00-\uffef]")
# What the board looked like before: a model name cut with "…" on one line (more specific than the app's
# own rule, which comes later in the page).
OLD_CUT = (
    "html body #board .body-cell:nth-child(2) .cell-wrap, "
    "html body #board .body-cell:nth-child(2) .cell-wrap * "
    "{ white-space: nowrap !important; overflow: hidden !important; text-overflow: ellipsis !important; }"
)


def open_board(page: Page, url: str, track: str, lang: str, contains: str) -> None:
    page.goto(f"{url}?track={track}&lang={lang}")
    expect(page.locator("#board")).to_contain_text(contains, timeout=TIMEOUT)
    expect(page.locator("#board")).to_be_visible(timeout=TIMEOUT)  # a ?lang=en page shows once English
    page.locator("#board").scroll_into_view_if_needed()


def model_cells(page: Page) -> list[dict]:
    """Each body row's model cell: its text, its box, the link's box, and whether any part of it is cut
    (content wider than its box with the overflow hidden)."""
    return page.evaluate(
        """() => [...document.querySelectorAll('#board .body-cell:nth-child(2)')].map(cell => {
          const box = cell.getBoundingClientRect();
          const link = cell.querySelector('a');
          const lbox = link ? link.getBoundingClientRect() : null;
          const cut = [cell, ...cell.querySelectorAll('*')].some(el => {
            const cs = getComputedStyle(el);
            return el.scrollWidth > el.clientWidth + 1 && cs.overflowX !== 'visible';
          });
          return {text: cell.innerText.trim(), left: box.left, right: box.right, cut,
                  link_right: lbox ? lbox.right : null, link_width: lbox ? lbox.width : 0};
        })"""
    )


def test_names_that_share_a_prefix_stay_whole_and_distinct(live_space, view) -> None:
    page, size, lang = view
    open_board(page, live_space.url, "cold", lang, SHARED_PREFIX[1])
    shot(page, f"layout-board-{size}-{lang}")
    cells = {c["text"]: c for c in model_cells(page)}
    for name in SHARED_PREFIX:
        cell = cells[name]  # the whole name is the cell's text ...
        assert not cell["cut"], (name, cell)  # ... and none of it is hidden
        assert cell["link_right"] <= cell["right"] + 1 and cell["link_width"] > 20, (name, cell)
    # Positive control: with the old one-line cut the same measurement sees the longer name cut.
    page.add_style_tag(content=OLD_CUT)
    time.sleep(0.3)
    cut = {c["text"]: c["cut"] for c in model_cells(page)}
    assert cut[SHARED_PREFIX[1]], cut
    assert not page.errors, page.errors


def test_rank_and_model_stay_in_view_after_scrolling_sideways(live_space, view) -> None:
    page, size, lang = view
    open_board(page, live_space.url, "varm", lang, "lexicon")
    first_row = page.locator("#board .virtual-row").first
    first_row.evaluate("el => el.scrollIntoView({block: 'center'})")  # in the window, to look at it
    viewport = page.locator("#board .virtual-table-viewport").first
    area = viewport.bounding_box()
    assert area is not None
    scrolled = viewport.evaluate("el => { el.scrollLeft = el.scrollWidth; return el.scrollLeft; }")
    assert scrolled > 0, "the board is wider than its box at this width"  # else nothing to test
    time.sleep(0.3)
    for column, what in ((1, "rank"), (2, "model")):
        cell = first_row.locator(f".body-cell:nth-child({column})")
        box = cell.bounding_box()
        assert box is not None and box["x"] >= area["x"] - 1, (what, box, area)
        assert box["x"] + box["width"] <= area["x"] + area["width"] + 1, (what, box, area)
        # Seen, not covered: the point at the cell's centre belongs to the cell.
        centre = (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        on_top = page.evaluate(
            "([x, y, sel]) => { const el = document.elementFromPoint(x, y); "
            "return !!el && !!el.closest(sel); }",
            [*centre, f"#board .virtual-row:first-child .body-cell:nth-child({column})"],
        )
        assert on_top, (what, box)
    # Positive control: the same scroll took the primary metric (column 3, not pinned) out of view.
    model = first_row.locator(".body-cell:nth-child(2)").bounding_box()
    metric = first_row.locator(".body-cell:nth-child(3)").bounding_box()
    assert model is not None and metric is not None
    assert metric["x"] + metric["width"] <= model["x"] + model["width"] + 1, (metric, model)
    # Positive control: unpinned, the same scroll takes the rank out of the box.
    page.add_style_tag(
        content="html body #board .virtual-row .body-cell:nth-child(n) { position: static !important; }"
    )
    time.sleep(0.3)
    rank = first_row.locator(".body-cell:nth-child(1)").bounding_box()
    assert rank is not None and rank["x"] < area["x"] - 1, (rank, area)
    shot(page, f"layout-board-scrolled-{size}-{lang}")  # last: a full-page shot moves the window


def test_metric_values_keep_their_decimal(live_space, view) -> None:
    page, _, lang = view
    open_board(page, live_space.url, "varm", lang, "lexicon")
    cells = page.locator("#board .virtual-row .body-cell:nth-child(3)")
    expect(cells.first).to_have_text(re.compile(r"\d"), timeout=TIMEOUT)  # the board re-renders once
    values = cells.all_inner_texts()
    assert values and all(re.fullmatch(r"\d+\.\d", v.strip()) for v in values), values


def test_an_english_link_paints_no_chinese(live_space, view) -> None:
    """Every frame the app is visible in, before and after the switch, shows no Chinese (the language
    box's own "中文" aside); the toggle puts the language in the address bar."""
    page, size, lang = view
    page.add_init_script(
        """window.__frames = [];
        (function probe() {
          const app = document.querySelector('gradio-app');
          if (app && getComputedStyle(app).visibility !== 'hidden') {
            const langBox = document.querySelector('#lang');
            let text = app.innerText || '';
            if (langBox) text = text.split(langBox.innerText).join(' ');
            window.__frames.push(text);
          }
          requestAnimationFrame(probe);
        })();"""
    )
    page.goto(f"{live_space.url}?lang={lang}")
    expect(page.locator("#board")).to_contain_text("lexicon", timeout=TIMEOUT)
    # Shown once English (a loaded machine may take longer than the board's text to get there).
    expect(page.locator("#board")).to_be_visible(timeout=TIMEOUT)
    time.sleep(1)
    frames = page.evaluate("window.__frames")
    assert frames, "the app was never visible"
    chinese = [f for f in frames if CJK.search(f)]
    if lang == "en":
        assert chinese == [], (len(chinese), len(frames), CJK.findall(chinese[0])[:20])
        shot(page, f"layout-first-paint-{size}-en")
        page.locator("#lang").get_by_text("中文").click()
        page.wait_for_url(re.compile(r"lang=zh"), timeout=TIMEOUT)
        page.locator("#lang").get_by_text("English").click()
        page.wait_for_url(re.compile(r"lang=en"), timeout=TIMEOUT)
    else:  # positive control: the probe sees Chinese where the page is Chinese
        assert chinese, frames[-1][:200]


def test_each_track_shows_its_own_tagline(live_space, view) -> None:
    """Issue 28.15b: VARM's tagline (JREM) stood under every track. A link to COLD shows COLD's in the
    link's language; a switch to VARM shows VARM's, and the language toggle keeps the track's own."""
    from space.ui.i18n import tagline

    page, size, lang = view
    open_board(page, live_space.url, "cold", lang, "lexicon")
    line = page.locator("#tagline")
    expect(line).to_have_text(tagline("cold", lang), timeout=TIMEOUT)
    assert "JREM" not in line.inner_text()
    page.locator("#track").get_by_text("VARM-Bench", exact=True).click()
    expect(line).to_have_text(tagline("varm", lang), timeout=TIMEOUT)
    page.locator("#track").get_by_text("CNTP", exact=True).click()
    expect(line).to_have_text(tagline("cntp", lang), timeout=TIMEOUT)
    other = "en" if lang == "zh" else "zh"
    page.locator("#lang").get_by_text({"en": "English", "zh": "中文"}[other]).click()
    expect(line).to_have_text(tagline("cntp", other), timeout=TIMEOUT)
    shot(page, f"layout-tagline-cntp-{size}-{other}")
    assert not page.errors, page.errors


JILL = "tok-jill-0123456789"  # submits only here (tests/conftest_ui.py TOKENS)
# Long enough that a table sized to it is wider than 1440 px's page (before the first column wrapped).
JILL_MODEL = "jill's ensemble: char-ngram-random + lexicon + a fine-tuned reranker (v2, seed 7)"
TABS = {"en": ("Compare", "Submit"), "zh": ("对比", "提交")}
# Each value cell of a table: its box, whether any of it is cut (content wider than a box that hides it),
# the column name drawn before it (CSS ::before, "none" where none is) and its column's header.
# Positive control: the phone-cards tables drawn as Gradio draws a table (a row of fixed-width cells).
GRADIO_TABLES = (
    "html body .phone-cards .virtual-row { display: flex !important; } "
    "html body .phone-cards .virtual-body { width: max-content !important; } "
    "html body .phone-cards .virtual-row .body-cell { width: 200px !important; flex: 0 0 200px !important; }"
)
CELLS = """(table) => [...document.querySelectorAll(table + ' .virtual-row [role=gridcell]')].map(cell => {
  const box = cell.getBoundingClientRect();
  const head = document.querySelector(`${table} thead th[data-heading="${cell.dataset.col}"]`);
  const cut = [cell, ...cell.querySelectorAll('*')].some(el =>
      el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== 'visible');
  return {table, col: Number(cell.dataset.col), text: cell.innerText.trim(), left: box.left,
          right: box.right, cut, label: getComputedStyle(cell, '::before').content,
          header: head ? head.getAttribute('title') : null};
})"""


@pytest.fixture(scope="module")
def jills_submission(live_space) -> str:
    """A private COLD submission of jill's with a long model name, scored (private: off every board another
    test reads)."""
    answer = httpx.post(
        f"{live_space.url}api/v1/submissions",
        data={"track": "cold", "model_name": JILL_MODEL, "private": "true"},
        files={"file": ("p.jsonl", mixed_predictions("cold", 0.8, seed="jill-layout"))},
        headers=(auth := {"Authorization": f"Bearer {JILL}"}),
        timeout=60,
    )
    assert answer.status_code == 202, answer.text
    sid = answer.json()["submission_id"]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        status = httpx.get(f"{live_space.url}api/v1/submissions/{sid}", headers=auth, timeout=10)
        if status.json()["status"] == "scored":
            return sid
        time.sleep(0.5)
    raise AssertionError(f"{sid} was not scored")


def open_compare(page: Page, url: str, lang: str) -> None:
    """Compare the two systems the tab picks (the top two of COLD) and wait for both tables."""
    open_board(page, url, "cold", lang, "lexicon")
    open_tab(page, TABS[lang][0])
    expect(page.locator("#cmp-a input")).not_to_have_value("", timeout=TIMEOUT)
    page.locator("#cmp-run").click()
    for table in ("#cmp-table", "#cmp-deltas"):
        expect(page.locator(f"{table} [role=gridcell]").first).to_be_attached(timeout=TIMEOUT)


def open_my_submissions(page: Page, url: str, lang: str) -> None:
    open_board(page, url, "cold", lang, "lexicon")
    open_tab(page, TABS[lang][1])
    page.locator("#token input, #token textarea").first.fill(JILL)
    page.locator("#sign-in").click()
    expect(page.locator("#who")).to_contain_text("jill", timeout=TIMEOUT)
    page.locator("#my-subs-refresh").click()
    expect(page.locator("#my-subs [role=gridcell]").first).to_be_attached(timeout=TIMEOUT)


def open_report(page: Page, url: str, lang: str, folder) -> None:
    """The Submit tab's validation report of a broken file: a file-level problem (every test row without a
    prediction, a long message) and two lines that are not JSON."""
    open_board(page, url, "cold", lang, "lexicon")
    open_tab(page, TABS[lang][1])
    broken = folder / "broken.jsonl"
    broken.write_text('{"id": "x", "output": \n{not json\n')
    page.locator("#upload input[type=file]").set_input_files(str(broken))
    expect(page.locator("#report [role=gridcell]").first).to_be_attached(timeout=TIMEOUT)


# The submission page's tables (a table without rows is not drawn: HIDE_EMPTY).
PAGE_TABLES = ("#page-metrics", "#page-subsets", "#page-format", "#page-output-format", "#page-versions")


# The first words of an explanation metric's name (point 4: a ToxiTrace page lists what its board row shows).
EXPLANATION = {"en": "Expl. comprehensiveness", "zh": "解释全面性"}
ROWS = """(table) => [...document.querySelectorAll(table + ' .virtual-row')].map(row =>
  [...row.querySelectorAll('[role=gridcell]')].map(cell => cell.innerText.trim()))"""


def open_submission_page(page: Page, url: str, lang: str) -> tuple[str, ...]:
    """The submission page of COLD's char-ngram baseline (it explains its predictions: ToxiTrace's
    explanation metrics are listed with their values); the tables it draws (those with rows)."""
    rows = httpx.get(f"{url}api/v1/leaderboard?track=cold", timeout=10).json()["rows"]
    sid = next(r["submission_id"] for r in rows if r["model_name"] == "baseline: char-ngram")
    page.goto(f"{url}?submission={sid}&track=cold&lang={lang}")
    for table in ("#page-metrics", "#page-history"):
        expect(page.locator(f"{table} [role=gridcell]").first).to_be_attached(timeout=TIMEOUT)
    expect(page.locator("#page-metrics")).to_be_visible(timeout=TIMEOUT)  # a ?lang=en page shows once English
    time.sleep(1)
    drawn = tuple(t for t in (*PAGE_TABLES, "#page-history") if page.locator(f"{t} .virtual-row").count())
    assert len(drawn) >= 4, drawn
    explained = [r for r in page.evaluate(ROWS, "#page-metrics") if r[0].startswith(EXPLANATION[lang])]
    assert explained and re.fullmatch(r"\d+\.\d %?", explained[0][1]), explained
    return drawn


def cells(page: Page, tables: tuple[str, ...]) -> list[dict]:
    time.sleep(0.5)  # the cards' column names follow the table's drawing by a frame
    return [c for table in tables for c in page.evaluate(CELLS, table)]


def phone_problems(found: list[dict], width: int, lang: str) -> list[tuple]:
    """What a phone reader misses: a cell past the screen's edges (or behind a sideways scroll), a cut
    value, a value without its column's name (the page's language: the headers are)."""
    bad: list[tuple] = []
    for c in found:
        if c["left"] < -1 or c["right"] > width + 1 or c["cut"]:
            bad.append(("out of view", c["table"], c["text"][:30], round(c["left"]), round(c["right"])))
        if c["col"] > 0 and c["label"] != json.dumps(c["header"], ensure_ascii=False):
            bad.append(("no column name", c["table"], c["text"][:30], c["label"], c["header"]))
    labels = " ".join(c["label"] for c in found)
    if bool(CJK.search(labels)) != (lang == "zh"):
        bad.append(("language", labels[:80]))
    return bad


def first_column_pinned(page: Page, table: str) -> bool:
    """After the table scrolls fully right, its first column's cells are still at the table's left edge."""
    viewport = page.locator(f"{table} .virtual-table-viewport").first
    box = viewport.bounding_box()
    assert box is not None
    scrolled = viewport.evaluate("el => { el.scrollLeft = el.scrollWidth; return el.scrollLeft; }")
    assert scrolled > 0, f"{table} does not scroll"  # else nothing is measured
    time.sleep(0.3)
    firsts = page.locator(f"{table} .virtual-row [role=gridcell][data-col='0']")
    lefts = [b["x"] for b in (firsts.nth(i).bounding_box() for i in range(firsts.count())) if b]
    return bool(lefts) and all(abs(x - box["x"]) <= 2 for x in lefts)


def desktop_problems(page: Page, tables: tuple[str, ...]) -> list[tuple]:
    """At 1440: a table wider than its box (a sideways scroll hides its last columns), and, in the same table
    squeezed until it scrolls, a first column that scrolls away with the values."""
    bad = [
        ("scrolls", table)
        for table in tables
        if page.locator(f"{table} .virtual-table-viewport").first.evaluate(
            "el => el.scrollWidth > el.clientWidth + 1"
        )
    ]
    for table in tables:
        page.add_style_tag(content=f"{table} {{ width: 300px !important; max-width: 300px !important; }}")
        time.sleep(0.3)
        if not first_column_pinned(page, table):
            bad.append(("first column not pinned", table))
    return bad


@pytest.mark.parametrize("what", ["compare", "my-submissions", "report", "submission-page"])
def test_phone_tables_show_every_value_without_a_sideways_scroll(
    live_space, jills_submission, view, what: str, tmp_path
) -> None:
    """Compare (paired bootstrap, per-field deltas), My submissions, the validation report (its long
    file-level message included) and a submission page's tables: on a phone every value cell is on the screen
    under its column's name; at 1440 the tables fit, and their first column stays when they scroll."""
    page, size, lang = view
    if what == "compare":
        open_compare(page, live_space.url, lang)
        tables: tuple[str, ...] = ("#cmp-table", "#cmp-deltas")
    elif what == "report":
        open_report(page, live_space.url, lang, tmp_path)
        tables = ("#report",)
    elif what == "submission-page":
        tables = open_submission_page(page, live_space.url, lang)
    else:
        open_my_submissions(page, live_space.url, lang)
        expect(page.locator("#my-subs")).to_contain_text("jill's ensemble", timeout=TIMEOUT)
        tables = ("#my-subs",)
    page.locator(tables[0]).scroll_into_view_if_needed()
    shot(page, f"layout-{what}-{size}-{lang}")
    found = cells(page, tables)
    assert len(found) >= 7, found  # a row of Compare's or of My submissions' seven columns at least
    if size == "390":
        assert phone_problems(found, page.viewport_size["width"], lang) == []
        # Positive control: the table as Gradio draws it (no cards) puts values past the screen's edge.
        page.add_style_tag(content=GRADIO_TABLES)
        time.sleep(0.5)
        assert any(p[0] == "out of view" for p in phone_problems(cells(page, tables), 390, lang))
    else:
        assert desktop_problems(page, tables) == []
    assert not page.errors, page.errors


# Every table drawn on the page (a box on screen): its block's id, its headers and how many rows it has.
DRAWN_TABLES = """() => [...document.querySelectorAll('.table-wrap')].filter(t => t.getClientRects().length)
  .map(t => ({id: t.closest('.block') ? t.closest('.block').id : '',
              rows: t.querySelectorAll('.virtual-row').length,
              heads: [...t.querySelectorAll('thead th')].map(th => (th.title || '').trim())}))"""
# The tabs whose tables wait for something (a file, a comparison, a submission, a release), by language.
WAITING_TABS = {
    "en": ("Submit", "Submission", "Dev explorer", "Compare", "Releases", "Maintainers"),
    "zh": ("提交", "提交详情", "开发集浏览", "对比", "正式发布", "维护"),
}
# The last of them is a maintainer's: opened signed in as one (tests/conftest_ui.py TOKENS, MAINTAINERS).
BOSS = ("tok-boss-0123456789", "boss")


def empty_table_problems(page: Page, lang: str) -> list[tuple]:
    """A drawn table without a row (placeholder headers, "0 1 2" or "1 2 3", or headers alone), or with
    headers in the other language."""
    bad: list[tuple] = []
    for table in page.evaluate(DRAWN_TABLES):
        heads = table["heads"]
        if not table["rows"]:
            bad.append(("drawn empty", table["id"], heads[:4]))
        if heads and all(re.fullmatch(r"\d+", h) for h in heads):
            bad.append(("placeholder headers", table["id"], heads[:4]))
        if lang == "en" and CJK.search(" ".join(heads)):
            bad.append(("language", table["id"], heads[:4]))
    return bad


def test_tables_show_nothing_until_they_have_rows(live_space, view, tmp_path) -> None:
    """Before anyone validated a file, opened a submission, explored dev predictions, compared two systems,
    cut a release or (a maintainer) asked for a re-score report or the held list, those tabs draw no table
    (Gradio drew them empty under "0 1 2" / "1 2 3" or bare headers); a report with problems is drawn at
    once, under headers in the page's language."""
    page, size, lang = view
    open_board(page, live_space.url, "varm", lang, "lexicon")
    found = {}
    for name in WAITING_TABS[lang]:
        if name == WAITING_TABS[lang][-1]:  # the Maintainers tab shows once a maintainer signed in
            open_tab(page, WAITING_TABS[lang][0])
            page.locator("#token input, #token textarea").first.fill(BOSS[0])
            page.locator("#sign-in").click()
            expect(page.locator("#who")).to_contain_text(BOSS[1], timeout=TIMEOUT)
        open_tab(page, name)
        time.sleep(1)  # a tab's components are drawn when it opens
        found[name] = empty_table_problems(page, lang)
    shot(page, f"layout-empty-tables-{size}-{lang}")
    assert {name: bad for name, bad in found.items() if bad} == {}
    # Positive control: a broken file's report is drawn, rows and headers in the page's language.
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "x", "output": \n{not json\n')
    open_tab(page, WAITING_TABS[lang][0])
    page.locator("#upload input[type=file]").set_input_files(str(broken))
    expect(page.locator("#report [role=gridcell]").first).to_be_attached(timeout=TIMEOUT)
    time.sleep(0.5)
    drawn = {t["id"]: t for t in page.evaluate(DRAWN_TABLES)}
    assert drawn["report"]["rows"] >= 2, drawn
    assert drawn["report"]["heads"][0] == {"en": "Line", "zh": "行号"}[lang], drawn["report"]
    assert "report" not in {p[1] for p in empty_table_problems(page, lang)}
    assert not page.errors, page.errors


def test_a_submission_id_stays_on_one_line(live_space, jills_submission, view) -> None:
    """My submissions links each submission's page by its 16-character id: on a phone's card as at 1440 the
    id is one line (one box) inside its cell and the screen, never broken in two."""
    page, size, lang = view
    open_my_submissions(page, live_space.url, lang)
    link = page.locator(f"#my-subs .virtual-row a[href*='submission={jills_submission}']")
    expect(link).to_have_text(jills_submission, timeout=TIMEOUT)
    link.scroll_into_view_if_needed()
    time.sleep(0.5)  # the cards' layout follows the table's drawing by a frame
    shot(page, f"layout-my-submissions-id-{size}-{lang}")
    measure = """a => { const cell = a.closest('[role=gridcell]').getBoundingClientRect();
      return {lines: [...a.getClientRects()].map(r => [r.left, r.right]), cell: [cell.left, cell.right]}; }"""
    width = page.viewport_size["width"]
    box = link.evaluate(measure)
    assert len(box["lines"]) == 1, box  # one line
    (left, right), (cell_left, cell_right) = box["lines"][0], box["cell"]
    assert cell_left - 1 <= left and right <= cell_right + 1 and right <= width + 1, box
    if size == "390":  # positive control: the cards' old rule (any text wraps anywhere) breaks the id
        page.add_style_tag(
            content="html body .phone-cards .virtual-row { grid-template-columns: repeat(3, minmax(0, 1fr)) "
            "!important; } html body .phone-cards .body-cell .cell-wrap a[href*='submission='] "
            "{ white-space: normal !important; overflow-wrap: anywhere !important; }"
        )
        time.sleep(0.5)
        assert len(link.evaluate(measure)["lines"]) == 2
    assert not page.errors, page.errors
