"""The Compare tab: two systems side by side, paired-bootstrap differences of the headline metrics."""

from __future__ import annotations

import gradio as gr
import pandas as pd

from scoring.protocol import FIELDS

from .. import figures
from ..context import Context, refused
from ..safe import md
from ..tables import (
    METRICS,
    better_side,
    metric_cells,
    metric_header,
    pct,
    system_choices,
    top_systems,
    undefined_reason,
)


def with_undefined(table: pd.DataFrame, keys: list[str], rows: dict[str, dict]) -> gr.Dataframe:
    """`table` (one line per metric key) as a Dataframe whose system columns (`rows`: column -> board row)
    show "n/a" with the reason on hover where that system's metric is undefined (0/0)."""
    types = ["str"] * len(table.columns)
    for column, row in rows.items():
        cells, kind = metric_cells(table[column].tolist(), [undefined_reason(row, k) for k in keys])
        if kind == "markdown":
            table[column] = cells
            types[table.columns.get_loc(column)] = kind
    return gr.Dataframe(value=table, datatype=types)


class ComparePage:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.help = ctx.texts(gr.Markdown(), value="compare_help")
        with gr.Row():
            self.a = gr.Dropdown([], allow_custom_value=True, label="System A 系统 A", elem_id="cmp-a")
            self.b = gr.Dropdown([], allow_custom_value=True, label="System B 系统 B", elem_id="cmp-b")
            self.run_btn = gr.Button("Compare 对比", variant="primary", scale=0, elem_id="cmp-run")
        self.title = gr.Markdown(elem_id="cmp-title")
        self.table = gr.Dataframe(interactive=False, label="Paired bootstrap 配对自助法", elem_id="cmp-table")
        self.plot = gr.Plot(elem_id="cmp-plot", show_label=False)
        self.deltas = gr.Dataframe(
            interactive=False, label="Per-field deltas 各字段差值", elem_id="cmp-deltas"
        )

    def wire(self, track: gr.Radio) -> None:
        self.run_btn.click(
            self.compare,
            [track, self.a, self.b],
            [self.title, self.table, self.plot, self.deltas],
            api_name="compare",
        )

    def pickers(self, track: str) -> dict:
        """The two pickers of a track: its systems, the top two preselected."""
        board = self.ctx.cache.board(track)
        choices, top = system_choices(board.df), top_systems(board.df)
        return {
            self.a: gr.Dropdown(choices=choices, value=top[0] if top else None),
            self.b: gr.Dropdown(choices=choices, value=top[1] if len(top) > 1 else None),
        }

    def compare(self, track: str, a: str, b: str) -> dict:
        """Paired-bootstrap differences for the headline metrics, plus per-field deltas from the board."""
        if not a or not b or a == b:
            raise refused("Pick two different systems. 请选择两个不同的系统。")
        board = self.ctx.cache.board(track)
        ra, rb = board.row(a), board.row(b)
        if ra is None or rb is None:
            # Only published, visible systems can be compared (no probing of hidden or pending ones).
            raise refused(
                "Both systems must be on this track's leaderboard. 两个系统都必须在该赛道排行榜上。"
            )
        name_a, name_b = str(ra.get("model_name", a)), str(rb.get("model_name", b))
        try:
            comp = self.ctx.service.compare(a, b)
        except Exception as exc:
            raise refused(f"Comparison failed 对比失败: {exc}") from exc
        rows, compared = [], []
        for metric, v in (comp or {}).items():
            if not isinstance(v, dict) or "diff" not in v:
                continue
            compared.append(metric)
            ci = v.get("ci") or [None, None]
            side = better_side(metric, v.get("diff"), bool(v.get("significant")), track)
            rows.append(
                [
                    metric_header(track, metric),
                    pct(v.get("a"), 2),
                    pct(v.get("b"), 2),
                    pct(v.get("diff"), 2),
                    "" if ci[0] is None else f"[{pct(ci[0], 2)}, {pct(ci[1], 2)}]",
                    "yes 是" if v.get("significant") else "no 否",
                    {"A": "A", "B": "B", "": "—"}[side],
                ]
            )
        table = pd.DataFrame(
            rows,
            columns=[
                "Metric 指标",
                "A (%)",
                "B (%)",
                "A − B (points 百分点)",
                "95% CI",
                "Significant 显著",
                "Better 更好",
            ],
        )
        keys = (
            [f"field_accuracy.{f}" for f in FIELDS]
            if track == "varm"
            else [m.key for m in METRICS[track] if m.percent]
        )
        deltas = pd.DataFrame(
            [
                [
                    metric_header(track, k),
                    pct(ra.get(k), 2),
                    pct(rb.get(k), 2),
                    None if ra.get(k) is None or rb.get(k) is None else pct(ra[k] - rb[k], 2),
                ]
                for k in keys
            ],
            columns=["Field / metric 字段/指标", "A (%)", "B (%)", "A − B (points 百分点)"],
        )
        return {
            self.title: f"A = {md(name_a)} · B = {md(name_b)}",
            self.table: with_undefined(table, compared, {"A (%)": ra, "B (%)": rb}),
            self.plot: figures.compare_bars(comp, name_a, name_b, track),
            self.deltas: with_undefined(deltas, keys, {"A (%)": ra, "B (%)": rb}),
        }
