"""The Blocks shell: title, language, the track selector and one tab per page (`space/ui/pages/`).

Each page builds its own layout and wires its own events; the shell wires only what spans pages (page load,
a track switch, the language). Every event has an explicit `api_name` (tests and clients call them by name).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import gradio as gr

from space.uploads import delete_cache
from worker.service import Service

from . import i18n
from .context import Context
from .i18n import both
from .identity import ui_auth_mode
from .pages.about import AboutPage
from .pages.analysis import AnalysisPage
from .pages.board import BoardPage
from .pages.compare import ComparePage
from .pages.explorer import ExplorerPage
from .pages.maintainers import MaintainersPage
from .pages.submission import SubmissionPage
from .pages.submit import SubmitPage
from .tables import TRACK_TITLES, TRACKS, View

CSS = """
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
/* Phones: the title above the language box; on the board, rank, model and the primary metric with its CI
   (columns 1-4: the metrics follow the model) fit 390 px, the rest scrolls sideways. */
@media (max-width: 640px) {
  #site-title { min-width: 100% !important; }
  #site-title h1 { font-size: 1.5rem; }
  #site-title h2 { font-size: 1.1rem; }
  #board table, #board table *, #board .body-cell, #board .body-cell * { font-size: 12px !important; }
  #board th, #board td { padding: 0 !important; }
  #board .cell-wrap { padding: 4px 3px !important; }
  #board th .header { white-space: normal; }
  #board th:nth-child(1), #board td:nth-child(1) { width: 38px !important; min-width: 38px !important;
    max-width: 38px !important; }
  #board th:nth-child(2), #board td:nth-child(2) { width: 100px !important; min-width: 100px !important;
    max-width: 100px !important; }
  #board .body-cell:nth-child(2) p { overflow: hidden; text-overflow: ellipsis; white-space: nowrap;
    margin: 0; }
  #board th:nth-child(3), #board td:nth-child(3) { width: 46px !important; min-width: 46px !important;
    max-width: 46px !important; }
  #board th:nth-child(4), #board td:nth-child(4) { width: 112px !important; min-width: 112px !important;
    max-width: 112px !important; }
  #board .cell-menu-button { display: none; }
}
"""


@dataclass
class App:
    """The Blocks app, its pages, and the events that span pages: page load (a view link or a submission
    link), a track switch, the language. Tests and benchmarks call the pages' callbacks directly."""

    demo: gr.Blocks
    ctx: Context
    track: gr.Radio
    tabs: gr.Tabs
    tagline: gr.Markdown
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

    def load_view(self, request: gr.Request | None, profile: gr.OAuthProfile | None = None) -> dict:
        """Page load: restore the view from the URL query (?track=&q=&baselines=&sort=&submission=)."""
        params = dict(request.query_params) if request is not None and request.query_params else {}
        view = View.from_query(params)
        sub_id = str(params.get("submission", ""))[:32]
        out = {
            self.track: view.track,
            **self.board.restore(view),
            **self.analysis.pickers(view.track),
            **self.compare.pickers(view.track),
            self.submission.id: sub_id,
        }
        if sub_id:
            out[self.tabs] = gr.Tabs(selected="submission")
            out.update(self.submission.show_submission(sub_id, None, profile))
        return out

    def switch_track(self, track: str) -> dict:
        """New choices for the per-track controls (sort keys, columns, pickers) after a track switch."""
        track = track if track in TRACKS else "varm"
        return {
            **self.board.track_controls(track),
            **self.analysis.pickers(track),
            **self.compare.pickers(track),
        }

    def language(self, lang: str) -> dict:
        return {
            self.tagline: i18n.t("tagline", lang),
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
    ctx = Context(service, auth_mode=auth_mode or ui_auth_mode(service))
    if warm:
        # Cold start: read every board (and load plotly's template) in the background, so the first
        # viewer does not pay for it.
        threading.Thread(target=ctx.warm, name="ui-warm", daemon=True).start()
    ttl = service.config.ui_file_ttl_seconds
    with gr.Blocks(title="VARM-Bench & ToxiTrace leaderboard", delete_cache=delete_cache(ttl)) as demo:
        gr.HTML(f"<style>{CSS}</style>", container=False, padding=False, js_on_load=None)
        with gr.Row():
            gr.Markdown(f"# {i18n.t('title', 'zh')}\n## {i18n.t('title', 'en')}", elem_id="site-title")
            lang = gr.Radio(
                [("中文", "zh"), ("English", "en")],
                value="zh",
                label=both("lang"),
                scale=0,
                min_width=200,
                elem_id="lang",
            )
        tagline = gr.Markdown(i18n.t("tagline", "zh"))
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
            with gr.Tab(both("tab_about"), id="about", elem_id="tab-about"):
                about = AboutPage(ctx)
            with gr.Tab(both("tab_maint"), id="maint", visible=False, elem_id="tab-maint") as maint_tab:
                maintainers = MaintainersPage(ctx)

        app = App(
            demo,
            ctx,
            track,
            tabs,
            tagline,
            board,
            analysis,
            submit,
            submission,
            explorer,
            compare,
            about,
            maintainers,
        )
        demo.load(app.load_view, None, app.load_outputs, api_name="load_view")
        board.wire(track, refresh_seconds)
        track.input(
            app.switch_track,
            track,
            [board.sort, board.columns, analysis.systems, compare.a, compare.b, board.page],
            api_name="switch_track",
        ).then(
            board.render_board,
            [
                track,
                board.search,
                board.types,
                board.settings,
                board.baselines,
                board.sort,
                board.columns,
                board.page,
            ],
            board.outputs,
            api_name="leaderboard_after_switch",
        ).then(
            analysis.analysis, [track, analysis.systems], analysis.outputs, api_name="analysis_after_switch"
        )
        analysis.wire(analysis_tab, track)
        submit.wire(demo, lang, maint_tab)
        submission.wire(submit.token)
        explorer.wire()
        compare.wire(track)
        lang.input(
            app.language, lang, [tagline, about.about, explorer.help, compare.help], api_name="language"
        )
        about.wire()
        maintainers.wire(submit.token)

    ctx.uploaded = demo.upload_file_set  # filled by Gradio's /gradio_api/upload route
    return app
