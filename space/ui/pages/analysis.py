"""The Analysis tab: where systems fail, as charts over the selected systems (aggregates only)."""

from __future__ import annotations

import gradio as gr

from .. import figures
from ..context import Context
from ..i18n import both
from ..tables import METRICS, TRACK_TITLES, TRACKS, is_explanation, metric_table, system_choices, top_systems

PLOTS = 5

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


class AnalysisPage:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.intro = gr.Markdown(analysis_intro_text("varm"), elem_id="analysis-intro")
        self.systems = gr.Dropdown(
            [], multiselect=True, allow_custom_value=True, label=both("systems"), elem_id="systems",
            max_choices=figures.MAX_SYSTEMS,  # the charts are laid out for this many
        )
        self.analyse_btn = gr.Button(both("update_charts"), elem_id="analyse")
        with gr.Row():
            self.plots = [
                gr.Plot(elem_id="plot-1", show_label=False),
                gr.Plot(elem_id="plot-2", show_label=False),
            ]
        with gr.Row():
            self.plots += [
                gr.Plot(elem_id="plot-3", show_label=False),
                gr.Plot(elem_id="plot-4", show_label=False),
            ]
        self.plots.append(gr.Plot(elem_id="plot-5", show_label=False))
        self.table = gr.Dataframe(interactive=False, label="Metrics 指标 (%)", elem_id="analysis-table")

    @property
    def outputs(self) -> list:
        return [*self.plots, self.table]

    def wire(self, tab: gr.Tab, track: gr.Radio) -> None:
        gr.on(
            [tab.select, self.analyse_btn.click, self.systems.input],
            self.analysis,
            [track, self.systems],
            self.outputs,
            api_name="analysis",
            trigger_mode="always_last",
        )
        # .change: follows the track however it is set (the selector, or a link opened by load_view).
        track.change(analysis_intro_text, track, self.intro, api_name=False, show_progress="hidden")

    def pickers(self, track: str) -> dict:
        """The system picker of a track: its choices, and the default selection (top 5 + baselines)."""
        board = self.ctx.cache.board(track)
        return {
            self.systems: gr.Dropdown(
                choices=system_choices(board.df), value=top_systems(board.df), multiselect=True
            )
        }

    def _selected(self, track: str, systems: list[str] | None) -> tuple[list[dict], list[dict | None]]:
        board = self.ctx.cache.board(track)
        ids = [s for s in systems or [] if board.row(s) is not None] or top_systems(board.df)
        rows = [r for r in (board.row(i) for i in ids[: figures.MAX_SYSTEMS]) if r is not None]
        results = [self.ctx.cache.result(track, str(r["submission_id"]), r.get("version")) for r in rows]
        return rows, results

    def analysis(self, track: str, systems: list[str] | None) -> dict:
        """Five chart slots and the metric table for the selected systems (aggregates only)."""
        track = track if track in TRACKS else "varm"
        rows, results = self._selected(track, systems)
        if track == "varm":
            figs = [
                figures.field_error_bars(rows),
                figures.label_vs_jrem(rows),
                figures.her_bars(rows),
                figures.format_issue_bars(rows, results),
                figures.cue_heatmap(rows, results),
            ]
        else:
            cls = [(m.key, m.header()) for m in METRICS["cold"] if not is_explanation(m.key)]
            figs = [
                figures.metric_bars(rows, cls, f"{TRACK_TITLES[track]}: classification 分类指标 (95% CI)")
            ]
            fields = figures.breakdown_fields(results)
            figs += [figures.breakdown_bars(rows, results, f) for f in fields[:2]]
            if track == "cntp":
                spans = [(m.key, m.header()) for m in METRICS["cntp"] if m.key.startswith("spans.")]
                figs.append(figures.metric_bars(rows, spans, "CNTP: toxic spans 毒性片段 (95% CI)"))
            if any(r.get("explanations.comprehensiveness") is not None for r in rows):
                figs.append(figures.comprehensiveness_vs_f1(rows))
        out: dict = {plot: gr.Plot(value=None, visible=False) for plot in self.plots}
        out.update(
            {plot: gr.Plot(value=fig, visible=True) for plot, fig in zip(self.plots, figs, strict=False)}
        )
        out[self.table] = metric_table(rows, track)
        return out
