"""Blocks layout and event wiring. Every event has an explicit `api_name` (tests call them by name)."""

from __future__ import annotations

import threading

import gradio as gr

from space.uploads import delete_cache

from . import i18n
from .handlers import UI
from .i18n import both
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
    track_choices = [(TRACK_TITLES[t], t) for t in TRACKS]

    ttl = int(getattr(getattr(service, "config", None), "ui_file_ttl_seconds", 900))
    with gr.Blocks(title="VARM-Bench & ToxiTrace leaderboard", delete_cache=delete_cache(ttl)) as demo:
        gr.HTML(f"<style>{CSS}</style>", container=False, padding=False, js_on_load=None)
        with gr.Row():
            gr.Markdown(f"# {i18n.t('title', 'zh')}\n## {i18n.t('title', 'en')}")
            lang = gr.Radio(
                [("中文", "zh"), ("English", "en")],
                value="zh",
                label=both("lang"),
                scale=0,
                min_width=200,
                elem_id="lang",
            )
        tagline = gr.Markdown(i18n.t("tagline", "zh"))
        track = gr.Radio(track_choices, value="varm", label=both("track"), elem_id="track")
        head_state = gr.State("")

        with gr.Tabs(elem_id="tabs") as tabs:
            # ---- Leaderboard ------------------------------------------------------------------------
            with gr.Tab(both("tab_board"), id="board", elem_id="tab-board"):
                with gr.Row():
                    search = gr.Textbox(
                        label=both("search"), placeholder="e.g. qwen / lexicon", scale=3, elem_id="search"
                    )
                    types = gr.CheckboxGroup(
                        list(MODEL_TYPES), label=both("model_type"), scale=1, elem_id="filter-type"
                    )
                    settings = gr.CheckboxGroup(
                        list(SETTINGS), label=both("setting"), scale=2, elem_id="filter-setting"
                    )
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
                    prev_btn = gr.Button("‹ Prev", scale=0, min_width=70, elem_id="lb-prev")
                    next_btn = gr.Button("Next ›", scale=0, min_width=70, elem_id="lb-next")
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
                    label="Downloads 下载",
                    file_count="multiple",
                    interactive=False,
                    visible=False,
                    elem_id="export-files",
                )

            # ---- Analysis ---------------------------------------------------------------------------
            with gr.Tab(both("tab_analysis"), id="analysis", elem_id="tab-analysis") as analysis_tab:
                gr.Markdown(
                    "Where systems really fail: a high label score can hide wrong targets, stances "
                    "and categories. 系统究竟错在哪里：高标签分数可能掩盖错误的对象、立场和类别。"
                )
                systems = gr.Dropdown(
                    [], multiselect=True, allow_custom_value=True, label=both("systems"), elem_id="systems"
                )
                analyse_btn = gr.Button("Update charts 更新图表", elem_id="analyse")
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
                        placeholder="printed at start-up / $DATA_DIR/tokens.json",
                        elem_id="token",
                    )
                    sign_in_btn = gr.Button("Check sign-in 检查登录", scale=0, elem_id="sign-in")
                who = gr.Markdown(elem_id="who")
                with gr.Row():
                    with gr.Column(scale=1):
                        sub_track = gr.Radio(
                            track_choices, value="varm", label=both("track"), elem_id="sub-track"
                        )
                        upload = gr.File(
                            label=both("upload"),
                            file_types=[".jsonl", ".json", ".txt"],
                            type="filepath",
                            elem_id="upload",
                        )
                        quota = gr.Markdown(elem_id="quota")
                    with gr.Column(scale=1):
                        model_name = gr.Textbox(
                            label=both("model_name"), max_length=100, elem_id="model-name"
                        )
                        organisation = gr.Textbox(
                            label=both("organisation"), max_length=200, elem_id="organisation"
                        )
                        with gr.Row():
                            model_type = gr.Radio(
                                [("—", ""), ("open", "open"), ("closed", "closed")],
                                value="",
                                label=both("model_type"),
                                elem_id="model-type",
                            )
                            setting = gr.Radio(
                                [("—", "")] + [(s, s) for s in SETTINGS],
                                value="",
                                label=both("setting"),
                                elem_id="setting",
                            )
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
                report = gr.Dataframe(
                    headers=["Line 行", "Field 字段", "Message 说明"],
                    interactive=False,
                    wrap=True,
                    label="Validation report 验证报告",
                    elem_id="report",
                )
                sub_id = gr.Textbox(label=both("submission_id"), interactive=False, elem_id="new-id")
                status = gr.Markdown(elem_id="status")
                sub_link = gr.Markdown(elem_id="submission-link")
                status_timer = gr.Timer(status_seconds, active=False)

            # ---- Submission page --------------------------------------------------------------------
            with gr.Tab(both("tab_submission"), id="submission", elem_id="tab-submission"):
                with gr.Row():
                    page_id = gr.Textbox(label=both("submission_id"), scale=3, elem_id="page-id")
                    page_btn = gr.Button("Open 打开", scale=0, elem_id="page-open")
                p_header = gr.Markdown(elem_id="page-header")
                p_status = gr.Markdown(elem_id="page-status")
                p_metrics = gr.Dataframe(interactive=False, label="Metrics 指标 (%)", elem_id="page-metrics")
                p_plot = gr.Plot(elem_id="page-plot", show_label=False)
                p_subsets = gr.Dataframe(
                    interactive=False, label="Cue subsets / breakdowns 线索子集/分项", elem_id="page-subsets"
                )
                p_format = gr.Dataframe(
                    interactive=False, wrap=True, label="Format report 格式报告", elem_id="page-format"
                )
                p_outputs_text = gr.Markdown(elem_id="page-output-format-summary")
                p_outputs = gr.Dataframe(
                    interactive=False,
                    wrap=True,
                    label="Output format report 输出格式报告 (line 行号, id, issues 问题)",
                    elem_id="page-output-format",
                )
                p_prov = gr.Markdown(elem_id="page-provenance")
                p_versions = gr.Dataframe(
                    interactive=False, label="Result versions 结果版本", elem_id="page-versions"
                )
                p_history = gr.Dataframe(interactive=False, label="History 历史", elem_id="page-history")
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
                explorer_help = gr.Markdown(i18n.t("explorer_help", "zh"))
                with gr.Row():
                    ex_track = gr.Radio(track_choices, value="varm", label=both("track"), elem_id="ex-track")
                    ex_upload = gr.File(
                        label="Dev predictions 开发集预测 (JSONL)",
                        type="filepath",
                        file_types=[".jsonl", ".json", ".txt"],
                        elem_id="ex-upload",
                    )
                ex_btn = gr.Button("Explore 浏览", variant="primary", elem_id="ex-run")
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
                compare_help = gr.Markdown(i18n.t("compare_help", "zh"))
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
                about = gr.Markdown(i18n.about("zh"), elem_id="about")
                with gr.Row():
                    dl_track = gr.Radio(track_choices, value="varm", label=both("track"), elem_id="dl-track")
                    dl_btn = gr.Button("Get public files 获取公开文件（测试输入、开发集）", elem_id="dl-run")
                dl_files = gr.File(
                    file_count="multiple",
                    interactive=False,
                    label="Files 文件",
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
                    m_track = gr.Radio(track_choices, value="varm", label=both("track"), elem_id="m-track")
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
        view_inputs = [track, search, types, settings, baselines, sort, columns, page]
        board_outputs = [table, caption, link, page, head_state]

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
            ui.switch_track, track, [sort, columns, systems, cmp_a, cmp_b, page], api_name="switch_track"
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

        gr.on(
            [analysis_tab.select, analyse_btn.click, systems.input],
            ui.analysis,
            [track, systems],
            [*plots, metric_tbl],
            api_name="analysis",
            trigger_mode="always_last",
        )

        sign_in_btn.click(ui.sign_in, [token, lang], [who, maint_tab], api_name="sign_in").then(
            ui.quota_text, [sub_track, token, lang], quota, api_name="quota"
        )
        gr.on([token.submit, token.blur], ui.sign_in, [token, lang], [who, maint_tab], api_name=False).then(
            ui.quota_text, [sub_track, token, lang], quota, api_name=False
        )
        demo.load(ui.sign_in, [token, lang], [who, maint_tab], api_name="whoami")
        sub_track.input(ui.quota_text, [sub_track, token, lang], quota, api_name="quota_for_track")
        upload.upload(ui.validate, [sub_track, upload, lang], [message, report], api_name="validate_upload")
        validate_btn.click(ui.validate, [sub_track, upload, lang], [message, report], api_name="validate")
        submit_btn.click(
            ui.submit,
            [
                sub_track,
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
            ],
            [message, report, sub_id, status, status_timer, sub_link],
            api_name="submit",
            concurrency_limit=4,
        )
        status_timer.tick(
            ui.poll_status,
            [sub_id, token],
            [status, status_timer],
            api_name="poll_status",
            show_progress="hidden",
        )

        # The token (or the OAuth session) lets a submitter and maintainers open a hidden submission.
        page_btn.click(ui.show_submission, [page_id, token], page_outputs, api_name="submission")
        page_id.submit(ui.show_submission, [page_id, token], page_outputs, api_name=False)

        ex_btn.click(
            ui.explore,
            [ex_track, ex_upload],
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
        dl_btn.click(ui.downloads, dl_track, dl_files, api_name="downloads")

        m_rescore.click(ui.rescore, [m_track, m_dry, token], [m_out, m_diff], api_name="maint_rescore")
        m_report_btn.click(ui.maint_report, [m_track, token], [m_out, m_diff], api_name="maint_report")
        m_go.click(ui.moderate, [m_id, m_action, m_reason, token], m_mod_out, api_name="maint_moderate")
        m_held_btn.click(ui.held, [m_track, token], m_held, api_name="maint_held")

    ui.uploaded = demo.upload_file_set  # filled by Gradio's /gradio_api/upload route
    demo.ui = ui  # type: ignore[attr-defined]  # for tests and the server (cache access)
    return demo


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
