"""Blocks layout and event wiring. Every event has an explicit `api_name` (tests call them by name)."""

from __future__ import annotations

import threading

import gradio as gr

from space.uploads import delete_cache

from . import i18n
from .handlers import UI, report_frame
from .i18n import Localised, both, t
from .identity import ui_auth_mode
from .tables import (
    MODEL_TYPES,
    SETTINGS,
    TRACK_TITLES,
    TRACKS,
    column_choices,
    default_columns,
    sort_choices,
)

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
STANCES = ("攻击或认同", "反对攻击", "引用或转述", "中性提及")
CATEGORIES = ("非攻击", "一般辱骂", "地域族群攻击", "性别攻击", "性少数攻击", "阶层职业攻击", "身心疾病攻击")
FIELDS = ("target", "target_type", "target_explicitness", "stance", "label", "category")
MODERATION = [
    ("hide 隐藏", "hide"),
    ("unhide 取消隐藏", "unhide"),
    ("flag only 仅标记（审计）", "flag"),
    ("mark verified 标记已验证", "verify"),
    ("unmark verified", "unverify"),
    ("mark baseline 标记基线", "baseline"),
    ("unmark baseline", "unbaseline"),
    ("release held near-copy 放行待审提交", "release"),
    ("reject held near-copy 驳回待审提交", "reject"),
]


def build_demo(
    service: object,
    *,
    auth_mode: str | None = None,
    refresh_seconds: float = 10.0,
    status_seconds: float = 1.5,
) -> gr.Blocks:
    """The whole Space UI on top of a `worker.service.Service` (or anything with the same methods)."""
    mode = auth_mode or ui_auth_mode(service)
    ui = UI(service, auth_mode=mode)
    # Cold start: read every board (and load plotly's template) in the background, so the first viewer
    # does not pay for it.
    threading.Thread(target=ui.warm, name="ui-warm", daemon=True).start()
    track_choices = [(TRACK_TITLES[name], name) for name in TRACKS]
    L = Localised("zh")  # every text below follows the language toggle (static ones via both(key))

    ttl = int(getattr(getattr(service, "config", None), "ui_file_ttl_seconds", 900))
    with gr.Blocks(title="VARM-Bench & ToxiTrace leaderboard", delete_cache=delete_cache(ttl)) as demo:
        gr.HTML(f"<style>{CSS}</style>", container=False, padding=False, js_on_load=None)
        with gr.Row():
            L(gr.Markdown(elem_id="site-title"), value=lambda lang: f"# {t('title', lang)}")
            lang = gr.Radio(
                [("中文", "zh"), ("English", "en")],
                value="zh",
                label=both("lang"),
                scale=0,
                min_width=200,
                elem_id="lang",
            )
        tagline = L(gr.Markdown(), value="tagline")
        # The one track selector: every tab (board, analysis, submit, explorer, downloads, maintainers)
        # follows it, and a link to a submission sets it.
        track = gr.Radio(track_choices, value="varm", label=both("track"), elem_id="track")
        head_state = gr.State("")

        with gr.Tabs(elem_id="tabs") as tabs:
            # ---- Leaderboard ------------------------------------------------------------------------
            with gr.Tab(both("tab_board"), id="board", elem_id="tab-board"):
                with gr.Row():
                    search = gr.Textbox(
                        label=both("search"), placeholder=both("search_hint"), scale=3, elem_id="search"
                    )
                    types = L(gr.CheckboxGroup(label=both("model_type"), scale=1, elem_id="filter-type"),
                              choices=type_choices)
                    settings = L(gr.CheckboxGroup(label=both("setting"), scale=2, elem_id="filter-setting"),
                                 choices=setting_choices)
                    baselines = gr.Checkbox(value=True, label=both("baselines"), scale=1, elem_id="baselines")
                with gr.Row():
                    sort = gr.Dropdown(
                        sort_choices("varm"), value="rank", label=both("sort"), scale=2, elem_id="sort"
                    )
                    page = gr.Number(
                        value=1,
                        precision=0,
                        minimum=1,
                        label=both("page"),
                        scale=0,
                        min_width=100,
                        elem_id="page",
                    )
                    prev_btn = gr.Button(both("prev"), scale=0, min_width=70, elem_id="lb-prev")
                    next_btn = gr.Button(both("next"), scale=0, min_width=70, elem_id="lb-next")
                    with gr.Accordion(both("columns"), open=False, elem_id="columns-box"):
                        columns = gr.Dropdown(
                            column_choices("varm"),
                            value=default_columns("varm"),
                            multiselect=True,
                            show_label=False,
                            elem_id="columns",
                        )
                caption = gr.Markdown(elem_id="board-caption")
                table = gr.Dataframe(
                    interactive=False,
                    wrap=False,
                    max_height=640,
                    pinned_columns=2,
                    show_search="none",
                    elem_id="board",
                    buttons=["fullscreen", "copy"],
                )
                with gr.Row():
                    # Relative link: the browser resolves it against the page (also in the Space iframe).
                    link = gr.Markdown(elem_id="view-link")
                    export_btn = gr.Button("⬇ CSV / JSON", scale=1, elem_id="export")
                export_files = gr.File(
                    label=both("downloads"),
                    file_count="multiple",
                    interactive=False,
                    visible=False,
                    elem_id="export-files",
                )

            # ---- Analysis ---------------------------------------------------------------------------
            with gr.Tab(both("tab_analysis"), id="analysis", elem_id="tab-analysis") as analysis_tab:
                analysis_intro = gr.Markdown(analysis_intro_text("varm"), elem_id="analysis-intro")
                systems = gr.Dropdown(
                    [], multiselect=True, allow_custom_value=True, label=both("systems"), elem_id="systems"
                )
                analyse_btn = gr.Button(both("update_charts"), elem_id="analyse")
                plots = []
                with gr.Row():
                    plots.append(gr.Plot(elem_id="plot-1", show_label=False))
                    plots.append(gr.Plot(elem_id="plot-2", show_label=False))
                with gr.Row():
                    plots.append(gr.Plot(elem_id="plot-3", show_label=False))
                    plots.append(gr.Plot(elem_id="plot-4", show_label=False))
                plots.append(gr.Plot(elem_id="plot-5", show_label=False))
                metric_tbl = gr.Dataframe(
                    interactive=False, label="Metrics 指标 (%)", elem_id="analysis-table"
                )

            # ---- Submit -----------------------------------------------------------------------------
            with gr.Tab(both("tab_submit"), id="submit", elem_id="tab-submit"):
                with gr.Row():
                    if mode == "oauth":
                        gr.LoginButton(elem_id="login")
                    token = gr.Textbox(
                        label=both("token"),
                        type="password",
                        visible=mode in ("token", "hub"),
                        placeholder=both("token_hint"),
                        elem_id="token",
                    )
                    sign_in_btn = gr.Button(both("check_sign_in"), scale=0, elem_id="sign-in")
                who = gr.Markdown(elem_id="who")
                with gr.Row():
                    with gr.Column(scale=1):
                        upload = gr.File(
                            label=both("upload"),
                            file_types=[".jsonl", ".json", ".txt"],
                            type="filepath",
                            elem_id="upload",
                        )
                        quota = gr.Markdown(elem_id="quota")
                        private = gr.Checkbox(value=False, label=both("private"), info=both("private_info"),
                                              elem_id="private")
                    with gr.Column(scale=1):
                        model_name = gr.Textbox(
                            label=both("model_name"), max_length=100, elem_id="model-name"
                        )
                        organisation = gr.Textbox(
                            label=both("organisation"), max_length=200, elem_id="organisation"
                        )
                        with gr.Row():
                            model_type = L(gr.Radio(value="", label=both("model_type"), elem_id="model-type"),
                                           choices=lambda lang: [("—", ""), *type_choices(lang)])
                            setting = L(gr.Radio(value="", label=both("setting"), elem_id="setting"),
                                        choices=lambda lang: [("—", ""), *setting_choices(lang)])
                        paper_url = gr.Textbox(
                            label=both("paper_url"), placeholder="https://…", elem_id="paper-url"
                        )
                        code_url = gr.Textbox(
                            label=both("code_url"), placeholder="https://…", elem_id="code-url"
                        )
                        description = gr.Textbox(
                            label=both("description"), lines=2, max_length=2000, elem_id="description"
                        )
                with gr.Row():
                    validate_btn = gr.Button(both("validate_btn"), elem_id="validate")
                    submit_btn = gr.Button(both("submit_btn"), variant="primary", elem_id="submit")
                message = gr.Markdown(elem_id="submit-message")
                # The language toggle empties the report (its headers are in the old language).
                report = L(gr.Dataframe(interactive=False, wrap=True, label=both("validation_report"),
                                        elem_id="report"), value=lambda lang: report_frame(None, lang))
                sub_id = gr.Textbox(label=both("submission_id"), interactive=False, elem_id="new-id")
                status = gr.Markdown(elem_id="status")
                sub_link = gr.Markdown(elem_id="submission-link")
                status_timer = gr.Timer(status_seconds, active=False)
                with gr.Accordion(both("my_submissions"), open=True, elem_id="my-subs-box"):
                    mine_btn = gr.Button(both("refresh_mine"), size="sm", elem_id="my-subs-refresh")
                    mine_table = gr.Dataframe(interactive=False, wrap=True, datatype="markdown",
                                              elem_id="my-subs")
                    with gr.Row():
                        mine_private = gr.Dropdown([], label=both("private_pick"), elem_id="my-private")
                        make_public_btn = gr.Button(both("make_public"), scale=0, elem_id="make-public")
                    mine_msg = gr.Markdown(elem_id="make-public-msg")

            # ---- Submission page --------------------------------------------------------------------
            with gr.Tab(both("tab_submission"), id="submission", elem_id="tab-submission"):
                with gr.Row():
                    page_id = gr.Textbox(label=both("submission_id"), scale=3, elem_id="page-id")
                    page_btn = gr.Button(both("open"), scale=0, elem_id="page-open")
                p_header = gr.Markdown(elem_id="page-header")
                p_status = gr.Markdown(elem_id="page-status")
                p_metrics = gr.Dataframe(interactive=False, label=both("metrics_pct"), elem_id="page-metrics")
                p_plot = gr.Plot(elem_id="page-plot", show_label=False)
                p_subsets = gr.Dataframe(
                    interactive=False, label=both("subsets_label"), elem_id="page-subsets"
                )
                p_format = gr.Dataframe(
                    interactive=False, wrap=True, label=both("format_report"), elem_id="page-format"
                )
                p_outputs_text = gr.Markdown(elem_id="page-output-format-summary")
                p_outputs = gr.Dataframe(
                    interactive=False,
                    wrap=True,
                    label=both("output_format_report"),
                    elem_id="page-output-format",
                )
                p_prov = gr.Markdown(elem_id="page-provenance")
                p_versions = gr.Dataframe(
                    interactive=False, label=both("versions"), elem_id="page-versions"
                )
                p_history = gr.Dataframe(interactive=False, label=both("history"), elem_id="page-history")
                p_bib = gr.Code(language=None, label="BibTeX", elem_id="page-bibtex")
            page_outputs = [
                p_header,
                p_status,
                p_metrics,
                p_subsets,
                p_plot,
                p_format,
                p_prov,
                p_versions,
                p_history,
                p_bib,
                p_outputs_text,  # appended last: earlier outputs keep their /submission API positions
                p_outputs,
            ]

            # ---- Dev explorer -----------------------------------------------------------------------
            with gr.Tab(both("tab_explorer"), id="explorer", elem_id="tab-explorer"):
                explorer_help = L(gr.Markdown(), value="explorer_help")
                with gr.Row():
                    ex_upload = gr.File(
                        label=both("dev_upload"),
                        type="filepath",
                        file_types=[".jsonl", ".json", ".txt"],
                        elem_id="ex-upload",
                    )
                ex_btn = gr.Button(both("explore_btn"), variant="primary", elem_id="ex-run")
                ex_items = gr.State([])
                ex_summary = gr.Markdown(elem_id="ex-summary")
                ex_report = gr.Dataframe(
                    interactive=False, wrap=True, label="Validation vs dev 开发集验证", elem_id="ex-report"
                )
                with gr.Row():
                    ex_field = gr.Dropdown(
                        [("any 任意", "")] + [(f, f) for f in FIELDS],
                        value="",
                        label="Field wrong 错误字段",
                        elem_id="ex-field",
                    )
                    ex_stance = gr.Dropdown(
                        [("any 任意", "")] + [(s, s) for s in STANCES],
                        value="",
                        label="Gold stance 金标立场",
                        elem_id="ex-stance",
                    )
                    ex_cat = gr.Dropdown(
                        [("any 任意", "")] + [(c, c) for c in CATEGORIES],
                        value="",
                        label="Gold category 金标类别",
                        elem_id="ex-category",
                    )
                    ex_subset = gr.Dropdown(
                        [],
                        value="",
                        allow_custom_value=True,
                        label="Subset / breakdown 子集/分项",
                        elem_id="ex-subset",
                    )
                    ex_errors = gr.Checkbox(label="Errors only 仅错误", elem_id="ex-errors")
                with gr.Row():
                    ex_table = gr.Dataframe(
                        interactive=False,
                        wrap=False,
                        max_height=520,
                        scale=3,
                        label="Items 条目",
                        elem_id="ex-table",
                        column_widths=["7%", "23%", "40%", "18%", "12%"],
                    )
                    with gr.Column(scale=2):
                        ex_no = gr.Number(label="Item # 条目编号", precision=0, elem_id="ex-no")
                        ex_detail = gr.HTML(elem_id="ex-detail", js_on_load=None)

            # ---- Compare ----------------------------------------------------------------------------
            with gr.Tab(both("tab_compare"), id="compare", elem_id="tab-compare"):
                compare_help = L(gr.Markdown(), value="compare_help")
                with gr.Row():
                    cmp_a = gr.Dropdown([], allow_custom_value=True, label="System A 系统 A", elem_id="cmp-a")
                    cmp_b = gr.Dropdown([], allow_custom_value=True, label="System B 系统 B", elem_id="cmp-b")
                    cmp_btn = gr.Button("Compare 对比", variant="primary", scale=0, elem_id="cmp-run")
                cmp_title = gr.Markdown(elem_id="cmp-title")
                cmp_table = gr.Dataframe(
                    interactive=False, label="Paired bootstrap 配对自助法", elem_id="cmp-table"
                )
                cmp_plot = gr.Plot(elem_id="cmp-plot", show_label=False)
                cmp_deltas = gr.Dataframe(
                    interactive=False, label="Per-field deltas 各字段差值", elem_id="cmp-deltas"
                )

            # ---- About & downloads ------------------------------------------------------------------
            with gr.Tab(both("tab_about"), id="about", elem_id="tab-about"):
                about = L(gr.Markdown(elem_id="about"), value=i18n.about)
                with gr.Row():
                    dl_btn = gr.Button(both("get_files"), elem_id="dl-run")
                dl_files = gr.File(
                    file_count="multiple",
                    interactive=False,
                    label=both("files"),
                    visible=False,
                    elem_id="dl-files",
                )

            # ---- Maintainers ------------------------------------------------------------------------
            with gr.Tab(both("tab_maint"), id="maint", visible=False, elem_id="tab-maint") as maint_tab:
                gr.Markdown(
                    "Every action re-checks your identity and is audit-logged. "
                    "所有操作均复核身份并记入审计日志。"
                )
                with gr.Row():
                    m_dry = gr.Checkbox(value=True, label="Dry run 试运行", elem_id="m-dry")
                    m_rescore = gr.Button("Re-score 重新评分", elem_id="m-rescore")
                    m_report_btn = gr.Button("Latest diff report 最新差异报告", elem_id="m-report")
                m_out = gr.Markdown(elem_id="m-out")
                m_diff = gr.Dataframe(interactive=False, label="Re-score diff 差异", elem_id="m-diff")
                with gr.Row():
                    m_id = gr.Textbox(label=both("submission_id"), elem_id="m-id")
                    m_action = gr.Dropdown(MODERATION, value="hide", label="Action 操作", elem_id="m-action")
                    m_reason = gr.Textbox(label="Reason 理由 (required)", elem_id="m-reason")
                    m_go = gr.Button("Apply 执行", variant="stop", elem_id="m-apply")
                m_mod_out = gr.Markdown(elem_id="m-mod-out")
                gr.Markdown(
                    "**Held for review 待审**: near-copies of an earlier submission (they would reveal "
                    "hidden labels); release or reject one above by its id. "
                    "与已有提交几乎相同的文件，需审核。"
                )
                with gr.Row():
                    m_held_btn = gr.Button("Held submissions 待审提交", elem_id="m-held-btn")
                m_held = gr.Dataframe(interactive=False, label="Held 待审", elem_id="m-held")

        refresh_timer = gr.Timer(refresh_seconds)

        # ---- wiring ---------------------------------------------------------------------------------
        L.adopt(demo)
        view_inputs = [track, search, types, settings, baselines, sort, columns, page, lang]
        board_outputs = [table, caption, link, page, head_state]
        mine_inputs, mine_outputs = [token, lang, mine_private], [mine_table, mine_private]

        demo.load(
            ui.load_view,
            None,
            [
                track,
                search,
                types,
                settings,
                baselines,
                sort,
                columns,
                *board_outputs,
                systems,
                cmp_a,
                cmp_b,
                tabs,
                page_id,
                *page_outputs,
                lang,
            ],
            api_name="load_view",
        )
        gr.on(
            [
                search.input,
                types.input,
                settings.input,
                baselines.input,
                sort.input,
                columns.input,
                page.submit,
            ],
            ui.render_board,
            view_inputs,
            board_outputs,
            api_name="leaderboard",
            trigger_mode="always_last",
        )
        # Same render path as the page box; render_board clamps the page to the board's bounds.
        prev_btn.click(ui.prev_page, view_inputs, board_outputs, api_name="leaderboard_prev")
        next_btn.click(ui.next_page, view_inputs, board_outputs, api_name="leaderboard_next")
        track.input(
            ui.switch_track,
            [track, lang],
            [sort, columns, systems, cmp_a, cmp_b, page],
            api_name="switch_track",
        ).then(ui.render_board, view_inputs, board_outputs, api_name="leaderboard_after_switch").then(
            ui.analysis, [track, systems], [*plots, metric_tbl], api_name="analysis_after_switch"
        )
        refresh_timer.tick(
            ui.refresh_if_changed,
            [head_state, *view_inputs],
            board_outputs,
            api_name="refresh",
            show_progress="hidden",
        )
        export_btn.click(ui.export, view_inputs, export_files, api_name="export")
        # .change: follows the track however it is set (the selector, or a link opened by load_view).
        track.change(analysis_intro_text, track, analysis_intro, api_name=False, show_progress="hidden")
        track.change(ui.quota_text, [track, token, lang], quota, api_name="quota_for_track",
                     show_progress="hidden")

        gr.on(
            [analysis_tab.select, analyse_btn.click, systems.input],
            ui.analysis,
            [track, systems],
            [*plots, metric_tbl],
            api_name="analysis",
            trigger_mode="always_last",
        )

        sign_in_btn.click(ui.sign_in, [token, lang], [who, maint_tab], api_name="sign_in").then(
            ui.quota_text, [track, token, lang], quota, api_name="quota"
        ).then(ui.my_submissions, mine_inputs, mine_outputs, api_name=False)
        gr.on([token.submit, token.blur], ui.sign_in, [token, lang], [who, maint_tab], api_name=False).then(
            ui.quota_text, [track, token, lang], quota, api_name=False
        ).then(ui.my_submissions, mine_inputs, mine_outputs, api_name=False)
        demo.load(ui.sign_in, [token, lang], [who, maint_tab], api_name="whoami").then(
            ui.my_submissions, mine_inputs, mine_outputs, api_name=False
        )
        upload.upload(ui.validate, [track, upload, lang], [message, report], api_name="validate_upload")
        validate_btn.click(ui.validate, [track, upload, lang], [message, report], api_name="validate")
        submit_btn.click(
            ui.submit,
            [
                track,
                upload,
                model_name,
                organisation,
                model_type,
                setting,
                paper_url,
                code_url,
                description,
                token,
                lang,
                private,
            ],
            [message, report, sub_id, status, status_timer, sub_link, quota],
            api_name="submit",
            concurrency_limit=4,
        ).then(ui.my_submissions, mine_inputs, mine_outputs, api_name=False)
        status_timer.tick(
            ui.poll_status,
            [sub_id, token, lang],
            [status, status_timer],
            api_name="poll_status",
            show_progress="hidden",
        ).then(
            ui.my_submissions_when_done, [sub_id, *mine_inputs], mine_outputs, api_name=False,
            show_progress="hidden",
        )
        mine_btn.click(ui.my_submissions, mine_inputs, mine_outputs, api_name="my_submissions")
        make_public_btn.click(
            ui.make_public, [mine_private, token, lang], mine_msg, api_name="make_public"
        ).then(ui.my_submissions, mine_inputs, mine_outputs, api_name=False)

        # The token (or the OAuth session) lets a submitter and maintainers open a hidden submission.
        # A submission opened by id moves the one track selector (and the board) to its track.
        for opened, name in ((page_btn.click, "submission"), (page_id.submit, False)):
            opened(ui.show_submission, [page_id, token, lang], page_outputs, api_name=name).then(
                ui.follow_submission,
                [page_id, token, *view_inputs],
                [track, sort, columns, systems, cmp_a, cmp_b, *board_outputs],
                api_name=False,
            )

        ex_btn.click(
            ui.explore,
            [track, ex_upload, lang],
            [ex_items, ex_summary, ex_report, ex_table, ex_detail, ex_subset],
            api_name="explore",
        )
        gr.on(
            [ex_field.input, ex_stance.input, ex_cat.input, ex_subset.input, ex_errors.input],
            ui.explore_filter,
            [ex_items, ex_field, ex_stance, ex_cat, ex_subset, ex_errors],
            [ex_table, ex_detail],
            api_name="explore_filter",
        )
        ex_no.submit(ui.explore_item, [ex_items, ex_no], ex_detail, api_name="explore_item")
        ex_table.select(_select_item, [ex_items], [ex_no, ex_detail], api_name=False)

        cmp_btn.click(
            ui.compare,
            [track, cmp_a, cmp_b],
            [cmp_title, cmp_table, cmp_plot, cmp_deltas],
            api_name="compare",
        )

        lang.input(_language, lang, [tagline, about, explorer_help, compare_help], api_name="language")
        # .change: the toggle, or ?lang=en in a link (load_view): every text, then what is rendered from data.
        lang.change(L.updates, lang, L.components, api_name=False, show_progress="hidden").then(
            ui.render_board, view_inputs, board_outputs, api_name=False
        ).then(ui.view_choices, [track, sort, columns, lang], [sort, columns], api_name=False).then(
            ui.show_submission, [page_id, token, lang], page_outputs, api_name=False
        ).then(ui.sign_in, [token, lang], [who, maint_tab], api_name=False).then(
            ui.quota_text, [track, token, lang], quota, api_name=False
        ).then(ui.my_submissions, mine_inputs, mine_outputs, api_name=False)
        dl_btn.click(ui.downloads, track, dl_files, api_name="downloads")

        m_rescore.click(ui.rescore, [track, m_dry, token], [m_out, m_diff], api_name="maint_rescore")
        m_report_btn.click(ui.maint_report, [track, token], [m_out, m_diff], api_name="maint_report")
        m_go.click(ui.moderate, [m_id, m_action, m_reason, token], m_mod_out, api_name="maint_moderate")
        m_held_btn.click(ui.held, [track, token], m_held, api_name="maint_held")

    ui.uploaded = demo.upload_file_set  # filled by Gradio's /gradio_api/upload route
    demo.ui = ui  # type: ignore[attr-defined]  # for tests and the server (cache access)
    return demo


ANALYSIS_INTRO = {
    "varm": "Where systems really fail: a high label score can hide wrong targets, stances and categories. "
            "系统究竟错在哪里：高标签分数可能掩盖错误的对象、立场和类别。",
    "toxitrace": "Where systems really fail: accuracy and F1 per group of the test set (topic, target group, "
                 "expression) show whom a detector misses. 系统究竟错在哪里：按测试集分组（话题、目标群体、"
                 "表达方式）的准确率和 F1 显示检测器漏掉了谁。",
    "cntp": "Where systems really fail: a right label with the wrong toxic span is still wrong; the span "
            "overlap scores show it. 系统究竟错在哪里：标签正确但有害片段错误仍然是错的；"
            "片段重合度会显示出来。",
}


def analysis_intro_text(track: str) -> str:
    """The Analysis subtitle of a track: VARM's speaks of targets, stances and categories; the ToxiTrace
    tracks have none of those fields."""
    return ANALYSIS_INTRO.get(track) or ANALYSIS_INTRO["toxitrace"]


def type_choices(lang: str) -> list[tuple[str, str]]:
    return [(t(f"type_{m}", lang), m) for m in MODEL_TYPES]


def setting_choices(lang: str) -> list[tuple[str, str]]:
    return [(t(f"set_{s}", lang), s) for s in SETTINGS]


def _language(lang: str):
    return (
        i18n.t("tagline", lang),
        i18n.about(lang),
        i18n.t("explorer_help", lang),
        i18n.t("compare_help", lang),
    )


def _select_item(items: list[dict], evt: gr.SelectData):
    """Clicking a row of the explorer table opens that item (the first column holds its number)."""
    from .explorer import item_html

    try:
        number = int(evt.row_value[0])
    except (TypeError, ValueError, IndexError):
        return gr.skip(), gr.skip()
    item = next((it for it in items or [] if it["n"] == number), None)
    return number, item_html(item)
