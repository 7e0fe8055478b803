"""Submitters in headless Debian chromium against the real service (`live_space`), at 1440 px and 390 px:
a private submission shows in "My submissions" and not on the board; one track selector (a COLD link moves
it); the language toggle leaves no text of the other language on any page (board, submit, submission,
analysis with its chart texts, compare, explorer, about, maintainers); links keep the chosen language and
track.
Screenshots go to test-output/screenshots/ (`sub-*`). Marked `browser`.
"""

from __future__ import annotations

import json
import re
import time
import urllib.request

import pytest
from playwright.sync_api import Page, expect

from scoring.protocol import FIELDS
from tests.conftest_ui import ROOT, TOKENS, open_tab, shot
from tests.factories import mixed_predictions

pytestmark = pytest.mark.browser

TIMEOUT = 60_000
ALICE = next(tok for tok, user in TOKENS.items() if user == "alice")
BOSS = next(tok for tok, user in TOKENS.items() if user == "boss")
WIDTHS = {"1440": {"width": 1440, "height": 900}, "390": {"width": 390, "height": 844}}
CJK = re.compile(r"[\u3400-\u9fff\u3000-\u303f\uff00-\uffef]")
# Text a viewer reads in the page's visible tab: everything outside data cells (model names, user metadata,
# scorer messages, ids) and outside the language picker, whose two options name themselves.
VISIBLE_TEXT = """([exclude, dataHeaders]) => {
    const skip = new Set(document.querySelectorAll(exclude));
    // A table's data columns (model, organisation, submitter, submission id) by their header, in either
    // language: their body cells are data; every other cell (a message, a note, an event) is interface.
    const heads = new RegExp(dataHeaders);
    for (const table of document.querySelectorAll('.table-wrap')) {
        const head = table.querySelector('thead');
        const names = head ? [...head.querySelectorAll('th')].map(th => th.innerText.trim()) : [];
        names.forEach((name, i) => {
            if (!heads.test(name)) return;
            table.querySelectorAll(`.virtual-row .body-cell:nth-child(${i + 1})`).forEach(c => skip.add(c));
        });
    }
    const out = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const el = node.parentElement;
        if (!el || !node.textContent.trim()) continue;
        if ([...skip].some(s => s.contains(el))) continue;
        if (el.closest('[hidden], [aria-hidden=true], script, style, template')) continue;
        const live = el.closest('[aria-live]');  // Gradio's screen-reader announcer (GRADIO_OWN)
        if (live && live.getBoundingClientRect().width <= 2) continue;
        const box = el.getBoundingClientRect(), style = getComputedStyle(el);
        if (box.width === 0 || box.height === 0 || style.visibility === 'hidden' || style.display === 'none')
            continue;
        out.push(node.textContent.trim());
    }
    return out;
}"""
# Data, not interface: the language options, the submission page's title (its model name), the uploaded
# file's name, its submitter's description (the page header's quote), the page's BibTeX, the code examples
# of the file formats (VARM outputs are Chinese), the system pickers' values (model names), the view link,
# the signed-in user's name, and in every table the columns DATA_HEADERS names. Every other table
# cell is checked (validation messages, history notes, held reasons, report rows). Chart texts are interface
# (space/ui/figures.py), the system names in them are the seeded baselines' ASCII ones. The footer is
# interface too: the app hides Gradio's (in the browser's locale) and shows its own (space/ui/footer.py).
DATA = (
    "#lang .wrap label span, #page-header h2, #page-bibtex, #upload .file-name, #about pre, #about code, "
    "#systems .token, #cmp-a input, #cmp-b input, #systems input, #view-link a, #who strong, "
    "#page-header blockquote, #upload .file-preview"
)
DATA_HEADERS = (
    r"^(Model|模型|Organisation|机构|Submitter|提交者|Submission|提交|Near copy of|相近的提交)( .*)?$"
)
# The Chinese interface writes these names in Latin letters: the benchmarks', metrics', formats' and tools'
# own names (as the papers and the files spell them). Any other Latin word of two or more letters on a
# Chinese page is English left untranslated.
LATIN_NAMES = frozenset(
    "VARM Bench COLD ToxiCN CNTP ToxiTrace JREM Macro HER AUPRC IoU CI JSONL JSON CSV API REST Gradio BibTeX "
    "Hugging Face Hub UTC SE ID LGBTQ".split()
) | {  # the prediction files' field names (a report's Field column, a message naming its field)
    "id",
    "output",
    "label",
    "spans",
    "char_scores",
    "probabilities",
    *FIELDS,
}
# A run of Latin letters, digits and joiners; quoted text (a field name, a value, code) is left out first.
LATIN_RUN = re.compile(r"[A-Za-z0-9_'-]+")
QUOTED = re.compile(r"'[^'\n]*'|`[^`\n]*`|\"[^\"\n]*\"|‘[^’]*’|“[^”]*”")


def latin_words(text: str) -> list[str]:
    """The Latin words of `text` outside quotes; a run joined to a digit (an id, "F1", "T-F1") is none."""
    words = []
    for run in LATIN_RUN.findall(QUOTED.sub(" ", text)):
        if not any(ch.isdigit() for ch in run):
            words += [w for w in re.split(r"[-']", run) if len(w) > 1]
    return words


def untranslated(text: str, data: frozenset[str] = frozenset()) -> list[str]:
    """The Latin words of `text` a Chinese page should not show (a word joined to a digit, like an id or
    "F1", is not one; nor are the `data` words: the published rows' model and organisation names)."""
    return [w for w in latin_words(text) if w not in LATIN_NAMES and w not in data]


def data_words(url: str) -> frozenset[str]:
    """The Latin words of every published row's model and organisation name, on every track, and the test
    users' names (a submission page names its submitter, its history the user who acted)."""
    words: set[str] = set(TOKENS.values())
    for track in ("varm", "cold", "toxicn", "cntp"):
        with urllib.request.urlopen(f"{url}api/v1/leaderboard?track={track}", timeout=10) as resp:
            for row in json.loads(resp.read())["rows"]:
                for name in (row.get("model_name"), row.get("organisation")):
                    words.update(re.findall(r"[A-Za-z]+", name or ""))  # "x-private-1440" too
    return frozenset(words)


# Gradio's status announcement for screen readers ("加载中" / "Loading", "In queue: 1 of 2", which Gradio 6.31
# has in English only, and "common.complete", a key it lacks), in a 1 px clipped live region, while an event
# runs: skipped with the region (VISIBLE_TEXT) and by its texts here.
# It follows the browser's locale, not the app's toggle: Gradio 6.31 writes its own
# `common.loading` over any app translation (its core `load_translations`) and offers no per-app locale;
# hiding it would silence it for screen readers too. Gradio's upload prompt and footer are checked like any
# text: the app hides them and shows its own (space/ui/upload.py, space/ui/footer.py).
GRADIO_OWN = re.compile(r"加载中|Loading\.\.\.|In queue: \d+ of \d+|common\.\w+")


def test_the_chinese_page_check_flags_english_and_passes_names() -> None:
    """The checker on its own (no browser): English interface words are found, the Latin names the Chinese
    interface keeps and ids or metric names joined to digits are not."""
    for english in (
        "Leaderboard",
        "Show baselines",
        "Rows 1–3",
        "line 11, field output: not valid",
        "Held for",
    ):
        assert untranslated(english), english
    for chinese in (
        "缺少字段 'spans'：本赛道对有毒片段计分",
        "第 3 行：缺少 cold-demo-test-0003 的预测",
        "标签 Macro-F1 ↑",
        "JREM 95% CI",
        "提交 3fa9c0d2e1b4a5c6 已发布",
        "VARM-Bench 的 JSONL 文件",
        "T-F1",
    ):
        assert untranslated(chinese) == [], chinese


def visible_texts(page: Page) -> list[str]:
    return [x for x in page.evaluate(VISIBLE_TEXT, [DATA, DATA_HEADERS]) if not GRADIO_OWN.fullmatch(x)]


def set_language(page: Page, lang: str) -> None:
    page.locator("#lang").get_by_text({"en": "English", "zh": "中文"}[lang], exact=True).click()


def tab(page: Page, name: str) -> None:
    """Open a tab by its label. On a phone the later tabs sit in Gradio's overflow menu, which is not what
    these tests are about: the page is widened for the click and narrowed again."""
    direct = page.get_by_role("tab", name=re.compile(name))
    if direct.count() and direct.first.is_visible():
        direct.first.click()
        return
    size = page.viewport_size
    page.set_viewport_size(WIDTHS["1440"])
    page.get_by_role("tab", name=re.compile(name)).first.click()
    page.set_viewport_size(size)


def new_page(chromium, width: str) -> Page:
    mobile = width == "390"
    context = chromium.new_context(
        viewport=WIDTHS[width],
        locale="zh-CN",
        is_mobile=mobile,
        has_touch=mobile,
        device_scale_factor=2 if mobile else 1,
    )
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    return page


def sign_in(page: Page, token: str, user: str = "alice") -> None:
    page.locator("#token input, #token textarea").first.fill(token)
    page.locator("#sign-in").click()
    expect(page.locator("#who")).to_contain_text(user, timeout=TIMEOUT)


@pytest.mark.parametrize("width", ["1440", "390"])
def test_private_submission_shows_in_my_submissions_not_on_the_board(
    live_space, chromium, tmp_path, width: str
) -> None:
    page = new_page(chromium, width)
    try:
        page.goto(f"{live_space.url}?track=cold&lang=en")
        expect(page.locator("#board-caption")).to_contain_text("Rows", timeout=TIMEOUT)
        tab(page, "^Submit$")
        sign_in(page, ALICE)
        name = f"alice-private-{width}"
        # A file of her own per run (a copy of a baseline's would be held), each better than the last by far,
        # so the Ladder releases it (the runs go 1440, then 390, on one service).
        upload = tmp_path / f"{name}.jsonl"
        upload.write_bytes(
            mixed_predictions("cold", 0.6 if width == "1440" else 0.95, seed=f"private-{width}")
        )
        page.locator("#upload input[type=file]").set_input_files(str(upload))
        page.locator("#model-name input, #model-name textarea").first.fill(name)
        page.locator("#private input[type=checkbox]").check()
        page.locator("#submit").click()
        expect(page.locator("#submit-message")).to_contain_text("private", timeout=TIMEOUT)
        expect(page.locator("#quota")).to_contain_text("Submissions left today", timeout=TIMEOUT)
        sid = page.locator("#new-id input, #new-id textarea").first.input_value()
        assert re.fullmatch(r"[0-9a-f]{16}", sid), sid
        mine = page.locator("#my-subs")
        expect(mine).to_contain_text(name, timeout=TIMEOUT)
        expect(mine).to_contain_text("private", timeout=TIMEOUT)
        # Scored like any other (the list refreshes once, when the status line's timer sees it done) ...
        expect(mine).to_contain_text("F1 ", timeout=120_000)
        shot(page, f"sub-my-submissions-{width}")
        # ... but off the board, in the UI and through the API.
        tab(page, "^Leaderboard$")
        expect(page.locator("#board")).to_contain_text("lexicon", timeout=TIMEOUT)
        expect(page.locator("#board")).not_to_contain_text(name)
        with urllib.request.urlopen(f"{live_space.url}api/v1/leaderboard?track=cold", timeout=10) as resp:
            rows = json.loads(resp.read())["rows"]
        assert sid not in {r["submission_id"] for r in rows} and rows  # positive control: the board has rows
        # The owner makes it public: it leaves the private list and joins the board at the next publish.
        tab(page, "^Submit$")
        page.locator("#my-private input").click()
        page.get_by_role("option", name=re.compile(name)).click()
        expect(page.locator("#my-private input")).to_have_value(re.compile(name), timeout=TIMEOUT)
        page.locator("#make-public").click()
        message = page.locator("#make-public-msg")
        page.wait_for_function(
            """() => /public|error|Error|错误/.test(
                (document.querySelector('#make-public-msg')?.innerText || '') +
                [...document.querySelectorAll('.toast-body')].map(t => t.innerText).join(' '))""",
            timeout=TIMEOUT,
        )
        toasts = page.locator(".toast-body").all_inner_texts()
        assert "public" in message.inner_text(), toasts
        tab(page, "^Leaderboard$")
        expect(page.locator("#board")).to_contain_text(name, timeout=120_000)
        assert not page.errors, page.errors
    finally:
        page.context.close()


def test_a_cold_submission_link_moves_the_one_track_selector(live_space, chromium) -> None:
    with urllib.request.urlopen(f"{live_space.url}api/v1/leaderboard?track=cold", timeout=10) as resp:
        sid = json.loads(resp.read())["rows"][0]["submission_id"]
    page = new_page(chromium, "1440")
    try:
        page.goto(f"{live_space.url}?submission={sid}")  # no track in the link: the submission's wins
        expect(page.locator("#page-header")).to_contain_text(sid, timeout=TIMEOUT)
        expect(page.locator("#track input[value=cold]")).to_be_checked(timeout=TIMEOUT)
        tab(page, "排行榜")
        expect(page.locator("#board")).to_contain_text("lexicon", timeout=TIMEOUT)
        assert page.locator("#sub-track, #ex-track, #dl-track, #m-track").count() == 0  # one selector only
        # Opening a VARM submission by id moves it back (positive control).
        with urllib.request.urlopen(f"{live_space.url}api/v1/leaderboard?track=varm", timeout=10) as resp:
            varm = json.loads(resp.read())["rows"][0]["submission_id"]
        tab(page, "提交详情")
        page.locator("#page-id input, #page-id textarea").first.fill(varm)
        page.locator("#page-open").click()
        expect(page.locator("#track input[value=varm]")).to_be_checked(timeout=TIMEOUT)
        assert not page.errors, page.errors
    finally:
        page.context.close()


PAGES = (  # (name, its tab in English and Chinese)
    ("board", "Leaderboard", "排行榜"),
    ("submit", "Submit", "提交"),
    ("submission", "Submission", "提交详情"),
    ("analysis", "Analysis", "分析"),
    ("compare", "Compare", "对比"),
    ("explorer", "Dev explorer", "开发集浏览"),
    ("releases", "Releases", "正式发布"),
    ("about", "About & downloads", "说明与下载"),
    ("maint", "Maintainers", "维护"),
)


def other_language(page: Page, lang: str, data: frozenset[str] = frozenset()) -> list[str]:
    """Visible interface texts of the other language than `lang` (`data`: words of user data)."""
    texts = visible_texts(page)
    assert texts
    if lang == "en":
        return [x for x in texts if CJK.search(x)]
    return [x for x in texts if untranslated(x, data)]


PROMPT = {"en": "Drop the file here, or click to upload", "zh": "将文件拖放到此处，或点击上传"}


def upload_prompt(page: Page, zone: str, lang: str) -> None:
    """The drop zone shows the app's prompt in `lang` over the zone, and a click or a drop on the prompt
    reaches Gradio's zone (the prompt lets pointer events through)."""
    prompt = page.locator(f"{zone}-prompt")
    expect(prompt).to_have_text(PROMPT[lang], timeout=TIMEOUT)
    prompt.scroll_into_view_if_needed()  # elementFromPoint sees the viewport only
    box, over = page.locator(zone).bounding_box(), prompt.bounding_box()
    assert box and over and box["y"] < over["y"] and over["y"] + over["height"] < box["y"] + box["height"]
    hit = page.evaluate(
        "([x, y, zone]) => !!document.elementFromPoint(x, y)?.closest(`${zone} button.upload-container`)",
        [over["x"] + over["width"] / 2, over["y"] + over["height"] / 2, zone],
    )
    assert hit, zone


def gradio_prompt_found(page: Page, lang: str) -> list[str]:
    """Positive control: with the app's hiding undone, the checker finds Gradio's own prompt, which is in
    the browser's locale (zh-CN here), on the English Submit page."""
    text = page.locator("#upload [data-testid=upload-text]")
    text.evaluate("e => { e.style.visibility = 'visible'; e.style.fontSize = '16px'; }")
    try:
        return other_language(page, lang)
    finally:
        text.evaluate("e => { e.style.visibility = ''; e.style.fontSize = ''; }")


FOOTER = {
    "en": "Use via API · REST API docs · Display settings · Built with Gradio",
    "zh": "通过 API 使用 · REST API 文档 · 显示设置 · 基于 Gradio 构建",
}


def gradio_footer_found(page: Page, lang: str) -> list[str]:
    """Positive control: with the app's hiding undone, the checker finds Gradio's own footer, which is in
    the browser's locale (zh-CN here), on the English page."""
    footer = page.locator(".gradio-container > .main > .wrap > footer")
    expect(footer).to_be_attached()
    footer.evaluate("e => e.style.setProperty('display', 'flex', 'important')")
    try:
        return other_language(page, lang)
    finally:
        footer.evaluate("e => e.style.removeProperty('display')")


def footer_opens_the_api_page(page: Page, lang: str) -> None:
    """The footer in `lang`; its API button opens Gradio's API page (and closes it again)."""
    footer = page.locator("#site-footer")
    expect(footer).to_have_text(FOOTER[lang], timeout=TIMEOUT)
    assert footer.get_by_role("link", name=re.compile("REST API")).get_attribute("href") == "docs"
    footer.get_by_role("button", name=FOOTER[lang].split(" · ")[0]).click()
    api = page.locator("[role=dialog].api-docs")
    expect(api).to_be_visible(timeout=TIMEOUT)
    assert "view=api" in page.url
    api.locator(".banner-wrap > button").click()  # its close button (not its API recorder's)
    expect(api).to_have_count(0, timeout=TIMEOUT)
    expect(page.get_by_text("Recording API Calls")).to_have_count(0)


def _check_pages(page: Page, lang: str, width: str, sid: str, data: frozenset[str] = frozenset()) -> None:
    """On every page in `lang`: no interface text of the other language."""
    for name, en, zh in PAGES:
        open_tab(page, en if lang == "en" else zh)
        if name == "submission":
            page.locator("#page-id input, #page-id textarea").first.fill(sid)
            page.locator("#page-open").click()
            expect(page.locator("#page-metrics")).to_contain_text("F1", timeout=TIMEOUT)
        elif name == "analysis":
            expect(page.locator("#plot-1 .js-plotly-plot svg text").first).to_be_attached(timeout=TIMEOUT)
            expect(page.locator("#plot-1 .gtitle")).to_contain_text(
                "classification" if lang == "en" else "分类指标", timeout=TIMEOUT
            )
        elif name == "compare":
            page.locator("#cmp-run").click()
            expect(page.locator("#cmp-table")).to_contain_text("A (%)", timeout=TIMEOUT)
            expect(page.locator("#cmp-plot .js-plotly-plot")).to_be_attached(timeout=TIMEOUT)
        elif name in ("submit", "explorer"):
            upload_prompt(page, "#upload" if name == "submit" else "#ex-upload", lang)
        elif name == "releases":
            expect(page.locator("#rel-info")).not_to_be_empty(timeout=TIMEOUT)
        elif name == "maint":
            page.locator("#m-report").click()
            expect(page.locator("#m-out")).not_to_be_empty(timeout=TIMEOUT)
        page.wait_for_timeout(500)
        found = other_language(page, lang, data)
        assert found == [], (lang, name, found)
        if name == "submit" and lang == "en":
            assert "将文件拖放到此处" in gradio_prompt_found(page, lang)
        if name == "board":
            if lang == "en":
                assert any(CJK.search(x) for x in gradio_footer_found(page, lang))
            footer_opens_the_api_page(page, lang)
        shot(page, f"sub-{name}-{lang}-{width}")


@pytest.mark.parametrize("width", ["1440", "390"])
def test_the_language_toggle_leaves_no_text_of_the_other_language(live_space, chromium, width: str) -> None:
    with urllib.request.urlopen(f"{live_space.url}api/v1/leaderboard?track=cold", timeout=10) as resp:
        sid = json.loads(resp.read())["rows"][0]["submission_id"]
    page = new_page(chromium, width)
    try:
        page.goto(f"{live_space.url}?track=cold")
        expect(page.locator("#board-caption")).to_contain_text("行", timeout=TIMEOUT)
        open_tab(page, "提交")
        sign_in(page, BOSS, "boss")  # a maintainer: the Maintainers tab shows
        set_language(page, "en")
        open_tab(page, "Leaderboard")
        expect(page.locator("#board-caption")).to_contain_text("Rows", timeout=TIMEOUT)
        # Positive control for the checker: one Chinese text put on the English page is found.
        page.evaluate("""() => { const s = document.createElement('span'); s.id = 'planted';
            s.textContent = '排名'; document.querySelector('#board-caption').appendChild(s); }""")
        assert other_language(page, "en") == ["排名"]
        page.evaluate("() => document.querySelector('#planted').remove()")
        _check_pages(page, "en", width, sid)
        open_tab(page, "Leaderboard")
        set_language(page, "zh")
        expect(page.locator("#board-caption")).to_contain_text("行", timeout=TIMEOUT)
        page.evaluate("""() => { const s = document.createElement('span'); s.id = 'planted';
            s.textContent = 'Leaderboard'; document.querySelector('#board-caption').appendChild(s); }""")
        assert other_language(page, "zh") == ["Leaderboard"]
        page.evaluate("() => document.querySelector('#planted').remove()")
        _check_pages(page, "zh", width, sid, data_words(live_space.url))
        assert not page.errors, page.errors
    finally:
        page.context.close()


# A COLD file with problems of several kinds: a label out of range, a line that is not JSON, a label as a
# string, a duplicate id, and (file level) every other test row without a prediction.
BROKEN = (
    '{"id": "cold-demo-test-0001", "label": 2}\n'
    "{not json\n"
    '{"id": "cold-demo-test-0002", "label": "1"}\n'
    '{"id": "cold-demo-test-0002", "label": 1}\n'
)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("width", ["1440", "390"])
def test_a_validation_report_is_in_the_page_language(
    live_space, chromium, tmp_path, width: str, lang: str
) -> None:
    """The Submit tab's report of a broken file (the scorer's messages, the file-level summary) holds no text
    of the other language, its message cells included; a link's language from the first paint."""
    page = new_page(chromium, width)
    try:
        page.goto(f"{live_space.url}?track=cold&lang={lang}")
        expect(page.locator("#board-caption")).to_contain_text(
            "Rows" if lang == "en" else "行", timeout=TIMEOUT
        )
        open_tab(page, "Submit" if lang == "en" else "提交")
        broken = tmp_path / "broken.jsonl"
        broken.write_text(BROKEN)
        page.locator("#upload input[type=file]").set_input_files(str(broken))
        cells = page.locator("#report [role=gridcell]")
        expect(cells.nth(11)).to_be_attached(timeout=TIMEOUT)  # four problems or more, three cells each
        page.wait_for_timeout(500)
        messages = [x for x in cells.all_inner_texts() if len(x) > 12]
        # Positive control: the messages are there, and in the page's language.
        assert len(messages) >= 4, messages
        assert all(bool(CJK.search(x)) == (lang == "zh") for x in messages), messages
        found = other_language(page, lang, data_words(live_space.url))
        assert found == [], found
        shot(page, f"sub-report-{lang}-{width}")
        assert not page.errors, page.errors
    finally:
        page.context.close()


def test_links_keep_the_language_and_the_track(live_space, chromium) -> None:
    """A board row opens its submission page in the viewer's language and track; so do the view link and
    the Compare names. Positive control: the Chinese page's links carry no lang=en and open it in Chinese."""
    page = new_page(chromium, "1440")
    try:
        page.goto(f"{live_space.url}?track=cold&lang=en")
        expect(page.locator("#board-caption")).to_contain_text("Rows", timeout=TIMEOUT)
        link = page.locator("#board td a[href*='submission=']").first
        href = link.get_attribute("href") or ""
        assert "lang=en" in href and "track=cold" in href, href
        assert "lang=en" in (page.locator("#view-link a").first.get_attribute("href") or "")
        open_tab(page, "Compare")
        page.locator("#cmp-run").click()
        expect(page.locator("#cmp-title a").first).to_have_attribute(
            "href", re.compile("lang=en"), timeout=TIMEOUT
        )
        page.goto(f"{live_space.url}{href.lstrip('./')}" if not href.startswith("http") else href)
        expect(page.locator("#page-header")).to_contain_text("Status", timeout=TIMEOUT)  # English page
        expect(page.locator("#track input[value=cold]")).to_be_checked(timeout=TIMEOUT)
        page.goto(f"{live_space.url}?track=cold")
        expect(page.locator("#board-caption")).to_contain_text("行", timeout=TIMEOUT)
        zh_href = page.locator("#board td a[href*='submission=']").first.get_attribute("href") or ""
        assert "lang=en" not in zh_href and "track=cold" in zh_href, zh_href
        page.goto(f"{live_space.url}{zh_href.lstrip('./')}")
        expect(page.locator("#page-header")).to_contain_text("状态", timeout=TIMEOUT)
        assert not page.errors, page.errors
    finally:
        page.context.close()


def _post(live_space, token: str, data: bytes, name: str, track: str = "cold") -> str:
    import httpx

    answer = httpx.post(
        f"{live_space.url}api/v1/submissions",
        data={"track": track, "model_name": name},
        files={"file": ("p.jsonl", data)},
        headers={"Authorization": f"Bearer {token}"},
        timeout=60,
    )
    assert answer.status_code == 202, answer.text
    return answer.json()["submission_id"]


def test_the_maintainers_tables_keep_their_rows_when_the_language_changes(live_space, chromium) -> None:
    """A held upload (ivy's exact copy of hank's file) in the Maintainers tab's held list stays listed when
    the page switches language, under the new language's headers (it was emptied before)."""
    data = mixed_predictions("cold", 0.55, seed="hank-ivy")
    _post(live_space, "tok-hank-0123456789", data, "hank-original")
    held = _post(live_space, "tok-ivy-0123456789", data, "ivy-copy")
    page = new_page(chromium, "1440")
    try:
        page.goto(f"{live_space.url}?track=cold")
        expect(page.locator("#board-caption")).to_contain_text("行", timeout=TIMEOUT)
        open_tab(page, "提交")
        sign_in(page, BOSS, "boss")
        tab(page, "维护")
        held_table = page.locator("#m-held")
        page.locator("#m-held-btn").click()
        expect(held_table).to_contain_text(held, timeout=TIMEOUT)
        expect(held_table).to_contain_text("提交者")
        set_language(page, "en")
        expect(held_table).to_contain_text("Submitter", timeout=TIMEOUT)
        expect(held_table).to_contain_text(held)  # still listed
        assert "提交者" not in held_table.inner_text()
        shot(page, "sub-maintainers-held-en-1440")
        # Control: an empty table gets the new language's headers and no rows.
        expect(page.locator("#m-diff")).to_contain_text("Submission", timeout=TIMEOUT)
        assert not page.errors, page.errors
    finally:
        page.context.close()


def test_a_bad_file_is_explained_in_the_pages_language(live_space, chromium, tmp_path) -> None:
    """The validation report of a broken VARM file (issue 28.9: scorer messages included): on a Chinese
    page no English sentence is left in the problems or the advice; the English page (the control) shows the
    scorer's own words."""
    from tests.test_scorer_text import english_left

    baseline = ROOT / "data" / "demo" / "varm" / "baselines" / "lexicon.test.jsonl"
    good = [json.loads(x) for x in baseline.read_text().splitlines()]
    output = good[0]["output"]
    rows = [json.dumps(r, ensure_ascii=False) for r in good]
    rows[2] = json.dumps({"id": good[2]["id"]})  # missing output
    rows[3] = '{"id": "x", "output": '  # not JSON
    rows[4] = json.dumps({"id": good[4]["id"], "output": output.replace("[", "【").replace("]", "】")})
    path = tmp_path / "broken.jsonl"
    path.write_text("\n".join(rows) + "\n")
    for lang in ("zh", "en"):
        page = new_page(chromium, "1440")
        try:
            page.goto(f"{live_space.url}?track=varm&lang={lang}")
            caption = "行" if lang == "zh" else "Rows"
            expect(page.locator("#board-caption")).to_contain_text(caption, timeout=TIMEOUT)
            open_tab(page, "提交" if lang == "zh" else "Submit")
            page.locator("#upload input[type=file]").set_input_files(str(path))
            expect(page.locator("#submit-message")).to_contain_text("✗", timeout=TIMEOUT)
            expect(page.locator("#report")).to_contain_text("output", timeout=TIMEOUT)
            said = page.locator("#report").inner_text() + "\n" + page.locator("#submit-message").inner_text()
            if lang == "zh":  # the row ids are data
                assert english_left(re.sub(r"varm-demo-test-\d+", "", said)) == [], said
                shot(page, "sub-report-zh-1440")
            else:
                assert "not valid JSON" in said and english_left(said), said
        finally:
            page.context.close()


def test_the_last_uploads_message_follows_the_language_toggle(live_space, chromium, tmp_path) -> None:
    """Issue 28.9: after a file was checked on a Chinese page, switching to English leaves no Chinese in the
    Submit tab's message, status, link and report; the message and the report are written again in English
    (not dropped). Control: the message is Chinese before the toggle."""
    baseline = ROOT / "data" / "demo" / "varm" / "baselines" / "lexicon.test.jsonl"
    rows = baseline.read_text().splitlines()
    path = tmp_path / "short.jsonl"
    path.write_text("\n".join(rows[:-1]) + "\n")  # one row missing: refused, with a message
    page = new_page(chromium, "1440")
    try:
        page.goto(f"{live_space.url}?track=varm&lang=zh")
        expect(page.locator("#board-caption")).to_contain_text("行", timeout=TIMEOUT)
        open_tab(page, "提交")
        page.locator("#upload input[type=file]").set_input_files(str(path))
        expect(page.locator("#submit-message")).to_contain_text("✗", timeout=TIMEOUT)
        outcome = ("#submit-message", "#status", "#submission-link")
        assert CJK.search(page.locator("#submit-message").inner_text())
        set_language(page, "en")
        expect(page.locator("#board-caption")).to_contain_text("Rows", timeout=TIMEOUT)
        expect(page.locator("#submit-message")).to_contain_text("not valid", timeout=TIMEOUT)
        expect(page.locator("#report")).to_contain_text("Message", timeout=TIMEOUT)
        left = [page.locator(sel).inner_text() for sel in (*outcome, "#report")]
        assert not any(CJK.search(re.sub(r"varm-demo-test-\d+", "", text)) for text in left), left
        assert "✗" in left[0], left
    finally:
        page.context.close()


KATE = "tok-kate-0123456789"  # submits only here, on CNTP (tests/conftest_ui.py TOKENS)


def test_an_owner_withdraws_a_public_submission_from_my_submissions(live_space, chromium) -> None:
    """Issue 28.6: an owner takes a public entry back from My submissions (REST and the CLI could; the page
    could only make a private one public): it becomes private, My submissions says so, and an anonymous
    reader no longer finds it. Positive control: before, it is public and anonymous readers see it."""
    import httpx

    data = mixed_predictions("cntp", 0.7, seed="kate-withdraw")
    sid = _post(live_space, KATE, data, "kate-takes-it-back", track="cntp")
    auth = {"Authorization": f"Bearer {KATE}"}
    record = f"{live_space.url}api/v1/submissions/{sid}"
    deadline = time.monotonic() + 120
    while httpx.get(record, headers=auth, timeout=10).json()["status"] != "published":
        assert time.monotonic() < deadline, f"{sid} was not published"
        time.sleep(0.5)
    assert httpx.get(record, headers=auth, timeout=10).json()["private"] is False  # control: public ...
    assert httpx.get(record, timeout=10).status_code == 200  # ... and anyone finds it
    page = new_page(chromium, "1440")
    try:
        page.goto(f"{live_space.url}?track=cntp&lang=en")
        expect(page.locator("#board-caption")).to_contain_text("Rows", timeout=TIMEOUT)
        open_tab(page, "Submit")
        sign_in(page, KATE, "kate")
        page.locator("#my-subs-refresh").click()
        expect(page.locator("#my-subs")).to_contain_text(sid, timeout=TIMEOUT)
        page.locator("#my-public input").click()
        page.get_by_role("option", name=re.compile(sid)).click()
        expect(page.locator("#my-public input")).to_have_value(re.compile(sid), timeout=TIMEOUT)
        page.locator("#withdraw").click()
        expect(page.locator("#withdraw-msg")).to_contain_text("withdrawn", timeout=TIMEOUT)
        expect(page.locator("#my-subs")).to_contain_text("private", timeout=TIMEOUT)  # the list says so
        shot(page, "sub-withdrawn-1440")
        assert httpx.get(record, headers=auth, timeout=10).json()["private"] is True
        assert httpx.get(record, timeout=10).status_code == 404  # off every public page
        assert not page.errors, page.errors
    finally:
        page.context.close()
