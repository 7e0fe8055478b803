"""The Analysis tab: where systems fail, as charts over the selected systems (aggregates only)."""

from __future__ import annotations

import gradio as gr

from scoring.tracks import TRACK_TITLES

from .. import figures
from ..context import Context
from ..i18n import both, t
from ..tables import (
    METRICS,
    TRACKS,
    dataframe_value,
    is_explanation,
    metric_table,
    system_choices,
    top_systems,
)

PLOTS = 5

# Each track's subtitle: VARM's speaks of targets, stances and categories; the ToxiTrace tracks have none.
INTRO_KEYS = {"varm": "intro_varm", "cntp": "intro_cntp"}


def analysis_intro_text(track: str, lang: str = "zh") -> str:
    """The Analysis subtitle of a track in `lang`."""
    return t(INTRO_KEYS.get(track, "intro_toxitrace"), lang)


class AnalysisPage:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.intro = gr.Markdown(analysis_intro_text("varm"), elem_id="analysis-intro")
        self.systems = gr.Dropdown(
            [],
            multiselect=True,
            allow_custom_value=True,
            label=both("systems"),
            elem_id="systems",
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
        self.table = gr.Dataframe(interactive=False, label=both("metrics_pct"), elem_id="analysis-table")

    @property
    def outputs(self) -> list:
        return [*self.plots, self.table]

    def wire(self, tab: gr.Tab, track: gr.Radio, lang: gr.Radio) -> None:
        gr.on(
            [tab.select, self.analyse_btn.click, self.systems.input],
            self.analysis,
            [track, self.systems, lang],
            self.outputs,
            api_name="analysis",
            trigger_mode="always_last",
        )
        # .change: follows the track however it is set (the selector, or a link opened by load_view), and
        # the language.
        gr.on(
            [track.change, lang.change],
            analysis_intro_text,
            [track, lang],
            self.intro,
            api_name=False,
            show_progress="hidden",
        )

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

    def analysis(self, track: str, systems: list[str] | None, lang: str = "zh") -> dict:
        """Five chart slots and the metric table for the selected systems (aggregates only), in `lang`."""
        track = track if track in TRACKS else "varm"
        rows, results = self._selected(track, systems)
        if track == "varm":
            figs = [
                figures.field_error_bars(rows, lang),
                figures.label_vs_jrem(rows, lang),
                figures.her_bars(rows, lang),
                figures.format_issue_bars(rows, results, lang),
                figures.cue_heatmap(rows, results, lang),
            ]
        else:
            title = TRACK_TITLES[track]
            cls = [m.key for m in METRICS["cold"] if not is_explanation(m.key)]
            figs = [figures.metric_bars(rows, track, cls, t("fig_classification", lang, track=title), lang)]
            fields = figures.breakdown_fields(results)
            figs += [figures.breakdown_bars(rows, results, f, lang=lang, track=track) for f in fields[:2]]
            if track == "cntp":
                spans = [m.key for m in METRICS["cntp"] if m.key.startswith("spans.")]
                figs.append(figures.metric_bars(rows, track, spans, t("fig_spans", lang, track=title), lang))
            if any(r.get("explanations.comprehensiveness") is not None for r in rows):
                figs.append(figures.comprehensiveness_vs_f1(rows, lang, track))
        out: dict = {plot: gr.Plot(value=None, visible=False) for plot in self.plots}
        out.update(
            {plot: gr.Plot(value=fig, visible=True) for plot, fig in zip(self.plots, figs, strict=False)}
        )
        table, types = metric_table(rows, track, lang)
        out[self.table] = gr.Dataframe(value=dataframe_value(table), datatype=types)
        return out
