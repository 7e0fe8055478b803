"""The Blocks shell: title, language, the track selector and one tab per page (`space/ui/pages/`).

Each page builds its own layout and wires its own events; the shell wires only what spans pages (page load,
a track switch, the language). Every event has an explicit `api_name` (tests and clients call them by name).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import gradio as gr

from scoring.tracks import TRACK_TITLES
from space.auth import oauth_enabled, oauth_problem
from space.board_query import TRACKS, View
from space.uploads import delete_cache
from worker.service import Service

from . import i18n
from .context import Context
from .footer import CSS as FOOTER_CSS
from .footer import site_footer
from .i18n import both, t
from .identity import ui_auth_mode
from .pages.about import AboutPage
from .pages.analysis import AnalysisPage
from .pages.board import BoardPage
from .pages.compare import ComparePage
from .pages.explorer import ExplorerPage
from .pages.maintainers import MaintainersPage
from .pages.releases import ReleasesPage
from .pages.submission import SubmissionPage
from .pages.submit import SubmitPage
from .upload import CSS as UPLOAD_CSS

# The page is built in Chinese; a link with ?lang=en is switched by the first events after load. Until
# then the app is not painted (html.lang-pending), so an English reader never sees Chinese first; a
# timeout shows it anyway should the switch never come. REVEAL ends the wait (build_app wires it).
HEAD = """<script>
(function () {
  var english = new URLSearchParams(window.location.search).get("lang") === "en";
  // Gradio says its own words (loading, buttons) in the browser's language: make that the page's.
  var locale = english ? ["en-US", "en"] : ["zh-CN", "zh"];
  Object.defineProperty(navigator, "language", { get: function () { return locale[0]; } });
  Object.defineProperty(navigator, "languages", { get: function () { return locale; } });
  if (!english) return;
  var root = document.documentElement;
  root.classList.add("lang-pending");
  setTimeout(function () { root.classList.remove("lang-pending"); }, 8000);
})();
</script>
<style>html.lang-pending gradio-app { visibility: hidden; }</style>
"""
# Gradio applies the new texts over a few frames (the tab bar last): show the page once the chrome (title,
# tabs, labels; never user data) has no Chinese left, or after 2 s whatever it holds.
REVEAL = """() => {
  const chrome = "#site-title, [role=tab], label span:not(#lang *)";
  const han = /[\u3400-\u9fff]/;
  const started = performance.now();
  (function check() {
    const texts = [...document.querySelectorAll(chrome)].map((el) => el.textContent).join(" ");
    if (!han.test(texts) || performance.now() - started > 2000) {
      document.documentElement.classList.remove("lang-pending");
    } else {
      setTimeout(check, 20);
    }
  })();
}"""
# Gradio's Dataframe gives a body cell no name of its column: on a phone the cards of a phone-cards table (CSS
# below) show it from the cell's data-label, copied here from the header Gradio renders (in the page's
# language) whenever a table or its header is drawn again. Only on a phone-wide screen (nowhere else are the
# names shown), and watching node insertions and `title` changes only: text changes (characterData) happen
# all over the page at every redraw, and watching them slowed a loaded browser's language toggle.
CELL_LABELS = """
if (!window.cellLabels) {
  const phone = window.matchMedia("(max-width: 640px)");
  window.cellLabels = () => {
    for (const table of document.querySelectorAll(".phone-cards")) {
      const heads = [...table.querySelectorAll("thead th")].map((th) => th.getAttribute("title") || "");
      for (const cell of table.querySelectorAll(".virtual-row [data-col]")) {
        const name = heads[Number(cell.dataset.col)] || "";
        if (cell.dataset.label !== name) cell.dataset.label = name;
      }
    }
  };
  let queued = false;
  new MutationObserver(() => {
    if (queued || !phone.matches) return;
    queued = true;
    requestAnimationFrame(() => { queued = false; window.cellLabels(); });
  }).observe(document.body, { childList: true, subtree: true, attributeFilter: ["title"] });
  phone.addEventListener("change", () => window.cellLabels());
  window.cellLabels();
}
"""
# The toggle writes the language into the address bar, so a copied link opens in it.
LANG_IN_ADDRESS = """(lang) => {
  const url = new URL(window.location.href);
  url.searchParams.set("lang", lang === "en" ? "en" : "zh");
  window.history.replaceState(window.history.state, "", url);
  return lang;
}"""

CSS = (
    """
#board table td, #board table th { font-variant-numeric: tabular-nums; }
.explorer-item mark.varm-target { background: #ffe08a; padding: 0 2px; border-radius: 3px; }
.explorer-item mark { background: #ffd6a5; }
.explorer-fields td, .explorer-fields th { padding: 2px 10px; border-bottom: 1px solid #ddd; }
.explorer-fields tr.wrong td { color: #b00020; font-weight: 600; }
.explorer-text { font-size: 1.1em; line-height: 1.8; }
.explorer-attr .attr-1 { background: #fde2cf; } .explorer-attr .attr-2 { background: #fbc4a0; }
.explorer-attr .attr-3 { background: #f8a270; } .explorer-attr .attr-4 { background: #f47d43; }
.explorer-attr .attr-5 { background: #e4531b; color: #fff; }
.explorer-attr .attr-top { outline: 1px solid #7a1f00; }
/* The board's header is a table (th); its body is rows of div.body-cell (Gradio's virtual list), sized
   from a hidden measuring table (td): a column rule names all three. A long model name wraps inside a
   bounded column (never cut: two names that share a prefix stay distinct), so the headline metrics that
   follow stay in view whatever names the board holds. */
#board th:nth-child(2), #board td:nth-child(2), #board .body-cell:nth-child(2) {
  max-width: 180px !important; }
#board .body-cell:nth-child(2) .cell-wrap, #board .body-cell:nth-child(2) .cell-wrap * {
  white-space: normal !important; overflow-wrap: anywhere; text-overflow: clip !important;
  overflow: visible !important; }
#board .body-cell:nth-child(2) p { margin: 0; }
/* Rank and Model stay put when the board scrolls sideways (Gradio's pinned_columns does not pin here). */
#board th:nth-child(-n+2), #board td:nth-child(-n+2), #board .body-cell:nth-child(-n+2) {
  position: sticky !important; z-index: 3; background: var(--block-background-fill); }
#board th:nth-child(1), #board td:nth-child(1), #board .body-cell:nth-child(1) {
  left: 0; width: 64px !important; min-width: 64px !important; max-width: 64px !important; }
#board th:nth-child(2), #board td:nth-child(2), #board .body-cell:nth-child(2) {
  left: 64px; box-shadow: 1px 0 0 var(--border-color-primary); }
/* The board's pager buttons keep their text on one line ("‹ Prev", "下一页 ›"; issue 28.15): Gradio gave
   them 70 px and broke "‹ Prev" in two; each is as wide as its text. */
#lb-prev, #lb-next { white-space: nowrap !important; min-width: max-content !important;
  flex: 0 0 auto !important; }
/* A table that shows nothing until it has a row (tables.HIDE_EMPTY): before anyone validated a file, compared
   two systems or opened a submission, Gradio would draw it empty under placeholder headers ("1 2 3"). Gradio
   marks a table without rows "no-rows" from its data, so the table comes back with its first row. */
.hide-empty:has(.table-container.no-rows) { display: none !important; }
/* A phone-cards table (tables.PHONE_CARDS) on a wider screen: its first column (what a row is: a metric, a
   model) wraps within 240 px and stays put when the table scrolls sideways. */
.phone-cards th:first-child, .phone-cards td:first-child, .phone-cards .body-cell:first-child {
  max-width: 240px !important; position: sticky !important; left: 0; z-index: 3;
  background: var(--block-background-fill); box-shadow: 1px 0 0 var(--border-color-primary); }
.phone-cards .body-cell:first-child .cell-wrap, .phone-cards .body-cell:first-child .cell-wrap * {
  white-space: normal !important; overflow-wrap: anywhere; }
/* A column of sentences (a validation message, a subset's note) wraps: one long message (every missing id of
   a file) no longer widens the table past the page, whose end then hid behind a scroll. */
#report th:last-child, #report td:last-child, #report .body-cell:last-child,
#ex-report th:last-child, #ex-report td:last-child, #ex-report .body-cell:last-child {
  max-width: 640px !important; }
#page-subsets th:last-child, #page-subsets td:last-child, #page-subsets .body-cell:last-child {
  max-width: 400px !important; }
/* Gradio's theme declares Source Sans Pro at 600 from a 5 kB subset file that holds "A", "B" and a few
   Cyrillic letters, and at 700 nothing: every other semibold or bold letter (titles, labels, bold words) fell
   back to DejaVu Sans Bold, wider and taller than the text around it, the title's "A" alone in Source Sans.
   Both weights come from the full Bold file Gradio also ships (the later of two equal faces wins). */
@font-face { font-family: 'Source Sans Pro'; font-weight: 600; font-style: normal;
  src: url('static/fonts/SourceSansPro/SourceSansPro-Bold.woff2') format('woff2'); }
@font-face { font-family: 'Source Sans Pro'; font-weight: 700; font-style: normal;
  src: url('static/fonts/SourceSansPro/SourceSansPro-Bold.woff2') format('woff2'); }
/* Issue 28.15: a compact head (title, language, track), so the board's rows start in the first screen:
   the language and track options on one line with less padding, the banner in the text's own size. */
#site-title h1 { margin: 0.2em 0 !important; }
#lang { padding: 6px 10px !important; }
#lang .wrap, #track .wrap { gap: 6px !important; }
#lang .wrap { flex-wrap: nowrap !important; }
#lang .wrap label, #track .wrap label { padding: 4px 10px !important; }
#board-caption strong { font-size: inherit !important; }
/* Gradio's progress text over a busy component ("processing | 0.4s", "queue: 1/2 |") is in English whatever
   the page's language (Gradio 6.31 has no translation for it): its spinner alone says the part is busy. */
.progress-text { display: none !important; }
#board-caption blockquote { margin: 4px 0 !important; padding: 2px 10px !important; }
/* Phones: the title above the language box; on the board, rank, model and the primary metric with its CI
   (columns 1-4: the metrics follow the model) fit 390 px, the rest scrolls sideways. */
@media (max-width: 640px) {
  #site-title { min-width: 100% !important; }
  #site-title h1 { font-size: 1.2rem; }
  #site-title h2 { font-size: 1.1rem; }
  #tagline *, #board-caption * { font-size: 0.85rem !important; }
  /* The options name themselves (中文 / English, the tracks): no label over them. */
  #lang > span, #track > span { display: none; }
  /* The search on its own line, sort and baselines under it (Gradio puts the row's fields in one form). */
  #search { flex-basis: 100% !important; }
  #baselines { min-width: 120px !important; }
  #track .wrap label span { font-size: 0.8rem !important; }
  #track .wrap label { padding: 2px 6px !important; }
  #track .wrap { gap: 4px !important; }
  /* The rows first: the banner and the legend follow the table and its pager on a phone. */
  #board-caption { order: 1; }
  #board-link-row, #export-files { order: 2; }
  /* Every table: smaller text and padding, wrapping headers, so more than the first column fits. */
  .table-wrap table *, .table-wrap .body-cell * { font-size: 12px !important; }
  .table-wrap .cell-wrap { padding: 4px 4px !important; }
  .table-wrap th .header { white-space: normal; }
  #board table, #board table *, #board .body-cell, #board .body-cell * { font-size: 12px !important; }
  #board th, #board td { padding: 0 !important; }
  #board .cell-wrap { padding: 4px 3px !important; }
  #board th .header { white-space: normal; }
  #board th:nth-child(1), #board td:nth-child(1), #board .body-cell:nth-child(1) {
    width: 38px !important; min-width: 38px !important; max-width: 38px !important; }
  #board th:nth-child(2), #board td:nth-child(2), #board .body-cell:nth-child(2) {
    left: 38px; width: 100px !important; min-width: 100px !important; max-width: 100px !important; }
  #board th:nth-child(3), #board td:nth-child(3), #board .body-cell:nth-child(3) {
    width: 46px !important; min-width: 46px !important; max-width: 46px !important; }
  #board th:nth-child(4), #board td:nth-child(4), #board .body-cell:nth-child(4) {
    width: 112px !important; min-width: 112px !important; max-width: 112px !important; }
  #board .cell-menu-button { display: none; }
  /* Tables marked phone-cards (tables.PHONE_CARDS) turn into cards: a row's first cell is its title, every
     other cell its column's name (CELL_LABELS) over its value, three to a line; nothing scrolls sideways. */
  .phone-cards .virtual-table-viewport { max-height: none !important; overflow-x: hidden !important; }
  .phone-cards .header-table { display: none; }
  .phone-cards .virtual-body { width: 100% !important; }
  /* A column is at least as wide as its widest unbreakable text: a submission id (the link to its page)
     never breaks (a 16-character id cut in two reads as two ids); everything else wraps anywhere. */
  .phone-cards .virtual-row { display: grid !important;
    grid-template-columns: repeat(3, minmax(min-content, 1fr));
    align-items: start; border-bottom: 1px solid var(--border-color-primary); }
  .phone-cards .virtual-row .body-cell { width: auto !important; min-width: 0 !important;
    flex: none !important; border: none !important; display: block !important; height: auto !important; }
  .phone-cards .virtual-row .body-cell:first-child { grid-column: 1 / -1; font-weight: 600;
    position: static !important; max-width: none !important; box-shadow: none; }
  .phone-cards .virtual-row .body-cell:not(:first-child)::before { content: attr(data-label); display: block;
    padding: 4px 4px 0; font-size: 11px; color: var(--body-text-color-subdued); }
  .phone-cards .body-cell .cell-wrap { display: block !important; height: auto !important; }
  .phone-cards .body-cell .cell-wrap, .phone-cards .body-cell .cell-wrap * { white-space: normal !important;
    overflow-wrap: anywhere; overflow: visible !important; text-overflow: clip !important; }
  .phone-cards.wide-last .virtual-row .body-cell:last-child { grid-column: span 2; }
  .phone-cards .body-cell .cell-wrap a[href*="submission="] { white-space: nowrap !important;
    overflow-wrap: normal !important; }
}
"""
    + UPLOAD_CSS
    + FOOTER_CSS
)


@dataclass
class App:
    """The Blocks app, its pages, and the events that span pages: page load (a view link or a submission
    link), a track switch, the language. Tests and benchmarks call the pages' callbacks directly."""

    demo: gr.Blocks
    ctx: Context
    track: gr.Radio
    tabs: gr.Tabs
    tagline: gr.Markdown
    lang: gr.Radio
    board: BoardPage
    analysis: AnalysisPage
    submit: SubmitPage
    submission: SubmissionPage
    explorer: ExplorerPage
    compare: ComparePage
    about: AboutPage
    maintainers: MaintainersPage

    @property
    def load_outputs(self) -> list:
        """In the order the `load_view` API has always returned them."""
        b = self.board
        return [
            self.track,
            b.search,
            b.types,
            b.settings,
            b.baselines,
            b.sort,
            b.columns,
            *b.outputs,
            self.analysis.systems,
            self.compare.a,
            self.compare.b,
            self.tabs,
            self.submission.id,
            *self.submission.outputs,
        ]

    @staticmethod
    def link_language(request: gr.Request | None) -> str:
        """The language a link asks for (?lang=en), else Chinese."""
        params = request.query_params if request is not None and request.query_params else {}
        return "en" if params.get("lang") == "en" else "zh"

    def load_view(self, request: gr.Request | None, profile: gr.OAuthProfile | None = None) -> dict:
        """Page load: restore the view from the URL query (?track=&q=&baselines=&sort=&submission=&lang=);
        a link to a submission sets the one track selector to that submission's track."""
        params = dict(request.query_params) if request is not None and request.query_params else {}
        lang = self.link_language(request)
        sub_id = str(params.get("submission", ""))[:32]
        linked = self.submission.track_of(sub_id, None, profile)
        if linked:
            params["track"] = linked
        view = View.from_query(params)
        out = {
            self.track: view.track,
            **self.board.restore(view, lang),
            **self.analysis.pickers(view.track),
            **self.compare.pickers(view.track),
            self.submission.id: sub_id,
            self.lang: lang,
        }
        if sub_id:
            out[self.tabs] = gr.Tabs(selected="submission")
            out.update(self.submission.show_submission(sub_id, None, lang, profile))
        return out

    def switch_track(self, track: str, lang: str = "zh") -> dict:
        """New choices for the per-track controls (sort keys, columns, pickers) after a track switch."""
        track = track if track in TRACKS else "varm"
        return {
            **self.board.track_controls(track, lang),
            **self.analysis.pickers(track),
            **self.compare.pickers(track),
        }

    def follow_submission(  # noqa: PLR0913
        self,
        sid,
        token,
        track,
        q,
        types,
        settings,
        baselines,
        sort,
        columns,
        page,
        lang="zh",
        profile: gr.OAuthProfile | None = None,
    ) -> dict:
        """After opening a submission by id: the one track selector, its per-track controls and the board
        move to the submission's track (nothing changes when it is already there)."""
        linked = self.submission.track_of(sid, token, profile)
        if not linked or linked == track:
            return {self.track: gr.skip()}
        return {
            self.track: linked,
            **self.switch_track(linked, lang),
            **self.board.render_board(linked, q, types, settings, baselines, "rank", [], 1, lang),
        }

    def tagline_for(self, track: str, lang: str = "zh") -> str:
        """The line under the title: the track's own (VARM's speaks of JREM; issue 28.15b)."""
        return i18n.tagline(track, lang)

    def relabel(self, lang: str, track: str = "varm") -> dict:
        """Every bound text in `lang`, and the tagline of `track` in it (one step: the page is shown only
        after it, html.lang-pending)."""
        return {**self.ctx.texts.updates(lang), self.tagline: i18n.tagline(track, lang)}

    def view_choices(self, track: str, sort: str, columns: list[str] | None, lang: str) -> dict:
        return self.board.view_choices(track, sort, columns, lang)

    def language(self, lang: str, track: str = "varm") -> dict:
        return {
            self.tagline: i18n.tagline(track, lang),
            self.about.about: i18n.about(lang),
            self.explorer.help: i18n.t("explorer_help", lang),
            self.compare.help: i18n.t("compare_help", lang),
        }


def build_demo(service: Service, **kwargs) -> gr.Blocks:
    """The whole Space UI on top of the web process's `worker.service.Service`."""
    return build_app(service, **kwargs).demo


def build_app(
    service: Service,
    *,
    auth_mode: str | None = None,
    refresh_seconds: float = 10.0,
    status_seconds: float = 1.5,
    warm: bool = True,
) -> App:
    """`warm=False` leaves the boards cold (benchmarks time the first view)."""
    mode = auth_mode or ui_auth_mode(service)
    if mode == "oauth" and not oauth_enabled():
        # A LoginButton outside a Space makes Gradio attach its mocked OAuth routes (anyone becomes
        # HF_TOKEN's owner): never built, whoever asks for it.
        raise RuntimeError(oauth_problem() or "OAuth sign-in is only available on a Hugging Face Space")
    ctx = Context(service, auth_mode=mode)
    if warm:
        # Cold start: read every board (and load plotly's template) in the background, so the first
        # viewer does not pay for it.
        threading.Thread(target=ctx.warm, name="ui-warm", daemon=True).start()
    ttl = service.config.ui_file_ttl_seconds
    with gr.Blocks(title="VARM-Bench & ToxiTrace leaderboard", delete_cache=delete_cache(ttl)) as demo:
        gr.HTML(f"<style>{CSS}</style>", container=False, padding=False, js_on_load=CELL_LABELS)
        with gr.Row():
            ctx.texts(gr.Markdown(elem_id="site-title"), value=lambda lang: f"# {t('title', lang)}")
            lang = gr.Radio(
                [("中文", "zh"), ("English", "en")],
                value="zh",
                label=both("lang"),
                scale=0,
                min_width=200,
                elem_id="lang",
            )
        # The track's tagline (not a bound text: it follows the track too; `App.relabel`, `tagline_for`).
        tagline = gr.Markdown(i18n.tagline("varm", "zh"), elem_id="tagline")
        # The one track selector: every tab (board, analysis, submit, explorer, downloads, maintainers)
        # follows it, and a link to a submission sets it.
        track = gr.Radio(
            [(TRACK_TITLES[k], k) for k in TRACKS], value="varm", label=both("track"), elem_id="track"
        )
        with gr.Tabs(elem_id="tabs") as tabs:
            with gr.Tab(both("tab_board"), id="board", elem_id="tab-board"):
                board = BoardPage(ctx)
            with gr.Tab(both("tab_analysis"), id="analysis", elem_id="tab-analysis") as analysis_tab:
                analysis = AnalysisPage(ctx)
            with gr.Tab(both("tab_submit"), id="submit", elem_id="tab-submit"):
                submit = SubmitPage(ctx, status_seconds)
            with gr.Tab(both("tab_submission"), id="submission", elem_id="tab-submission"):
                submission = SubmissionPage(ctx)
            with gr.Tab(both("tab_explorer"), id="explorer", elem_id="tab-explorer"):
                explorer = ExplorerPage(ctx)
            with gr.Tab(both("tab_compare"), id="compare", elem_id="tab-compare"):
                compare = ComparePage(ctx)
            with gr.Tab(both("tab_releases"), id="releases", elem_id="tab-releases") as releases_tab:
                releases = ReleasesPage(ctx)
            with gr.Tab(both("tab_about"), id="about", elem_id="tab-about"):
                about = AboutPage(ctx)
            with gr.Tab(both("tab_maint"), id="maint", visible=False, elem_id="tab-maint") as maint_tab:
                maintainers = MaintainersPage(ctx)
        site_footer(ctx.texts)

        app = App(
            demo,
            ctx,
            track,
            tabs,
            tagline,
            lang,
            board,
            analysis,
            submit,
            submission,
            explorer,
            compare,
            about,
            maintainers,
        )
        ctx.texts.adopt(demo)  # every `both(key)` label, value, placeholder and info follows the toggle
        # The link's language first, on its own (one quick event: the page stays unpainted until the texts
        # follow it, html.lang-pending); then the view, which reads the board.
        demo.load(app.link_language, None, lang, api_name=False, show_progress="hidden")
        demo.load(app.load_view, None, [*app.load_outputs, lang], api_name="load_view")
        view_inputs = board.inputs(track, lang)
        board.wire(track, lang, refresh_seconds)
        switched = [board.sort, board.columns, analysis.systems, compare.a, compare.b, board.page]
        track.input(app.switch_track, [track, lang], switched, api_name="switch_track").then(
            board.render_board, view_inputs, board.outputs, api_name="leaderboard_after_switch"
        ).then(
            analysis.analysis,
            [track, analysis.systems, lang],
            analysis.outputs,
            api_name="analysis_after_switch",
        )
        analysis.wire(analysis_tab, track, lang)
        submit.wire(demo, track, lang, maint_tab)
        # A submission opened by id moves the one track selector (and the board) to its track.
        for opened in submission.wire(submit.token, lang):
            opened.then(
                app.follow_submission,
                [submission.id, submit.token, *view_inputs],
                [track, *switched, *board.outputs],
                api_name=False,
            )
        explorer.wire(track, lang)
        compare.wire(track, lang)
        track.change(
            app.tagline_for,
            [track, lang],
            tagline,
            api_name="tagline",
            api_visibility="private",
            show_progress="hidden",
        )
        lang.input(
            app.language,
            [lang, track],
            [tagline, about.about, explorer.help, compare.help],
            api_name="language",
            js=LANG_IN_ADDRESS,
        )
        # .change: the toggle, or ?lang=en in a link (load_view): every bound text, then what is rendered
        # from data in the page's language.
        texts = ctx.texts
        lang.change(
            app.relabel,
            [lang, track],
            [*texts.components, tagline],
            api_name="relabel",
            api_visibility="private",
            show_progress="hidden",
        ).then(None, js=REVEAL, api_name=False).then(
            board.render_board, view_inputs, board.outputs, api_name=False
        ).then(
            app.view_choices,
            [track, board.sort, board.columns, lang],
            [board.sort, board.columns],
            api_name=False,
        ).then(
            submission.show_submission,
            [submission.id, submit.token, lang],
            submission.outputs,
            api_name=False,
        ).then(submit.sign_in, [submit.token, lang], [submit.who, maint_tab], api_name=False).then(
            submit.relabel_outcome,
            [submit.sub_id, track, submit.shown_report, submit.token, lang],
            [submit.message, submit.report, submit.status, submit.status_timer, submit.link],
            api_name=False,
        ).then(submit.quota_text, [track, submit.token, lang], submit.quota, api_name=False).then(
            submit.my_submissions, submit.mine_inputs(lang), submit.mine_outputs, api_name=False
        ).then(analysis.analysis, [track, analysis.systems, lang], analysis.outputs, api_name=False).then(
            compare.relabel, [compare.shown, lang], compare.outputs, api_name=False
        ).then(explorer.relabel, [track, explorer.upload, lang], explorer.outputs, api_name=False).then(
            maintainers.relabel,
            maintainers.relabel_inputs(track, submit.token, lang),
            maintainers.relabel_outputs,
            api_name=False,
        )
        about.wire(track, lang)
        maintainers.wire(track, submit.token, lang)
        releases.wire(releases_tab, track, lang)

    ctx.uploaded = demo.upload_file_set  # filled by Gradio's /gradio_api/upload route
    return app
