"""The Compare tab: two systems side by side, paired-bootstrap differences of the headline metrics."""

from __future__ import annotations

import gradio as gr
import pandas as pd

from scoring.protocol import FIELDS
from worker.errors import ServiceError

from .. import figures
from ..answers import answer_text
from ..context import Context, refused
from ..i18n import both, t
from ..tables import (
    HIDE_EMPTY,
    METRICS,
    PHONE_CARDS,
    ColumnType,
    better_side,
    metric_header,
    model_cell,
    na_cell,
    pct_text,
    system_choices,
    top_systems,
    undefined_reason,
)

TABLE_COLUMNS = ("h_metric", "col_a", "col_b", "col_diff", "h_ci", "h_significant", "h_better")
DELTA_COLUMNS = ("h_field_metric", "col_a", "col_b", "col_diff")


def either_undefined(ra: dict, rb: dict, key: str) -> str:
    """Why metric `key` cannot be compared ("" when it can): either system's value is undefined (0/0)."""
    reasons = [f"{side}: {r}" for side, row in (("A", ra), ("B", rb)) if (r := undefined_reason(row, key))]
    return " · ".join(reasons)


def value_cell(row: dict, key: str) -> float | str | None:
    """One system's value in percent (one decimal, as on the board), or "n/a" with the reason on hover
    (undefined, 0/0)."""
    reason = undefined_reason(row, key)
    return na_cell(reason) if reason else pct_text(row.get(key))


def linked(row: dict, track: str, lang: str) -> str:
    """A system's name (escaped) linking to its submission page in the viewer's track and language."""
    return model_cell(row, track, lang)


def frame(rows: list[list], keys: tuple[str, ...], lang: str) -> gr.Dataframe:
    """A Dataframe whose cells may be "n/a" spans: Markdown columns, the rest as plain text."""
    columns = [t(k, lang) for k in keys]
    table = pd.DataFrame(rows, columns=columns)
    types: list[ColumnType] = ["str" if i == 0 else "markdown" for i in range(len(columns))]
    return gr.Dataframe(value=table.astype(object).where(table.notna(), ""), datatype=types, headers=columns)


class ComparePage:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.help = ctx.texts(gr.Markdown(), value="compare_help")
        with gr.Row():
            self.a = gr.Dropdown([], allow_custom_value=True, label=both("system_a"), elem_id="cmp-a")
            self.b = gr.Dropdown([], allow_custom_value=True, label=both("system_b"), elem_id="cmp-b")
            self.run_btn = gr.Button(both("compare_btn"), variant="primary", scale=0, elem_id="cmp-run")
        self.title = gr.Markdown(elem_id="cmp-title")
        self.table = gr.Dataframe(
            interactive=False,
            label=both("paired_bootstrap"),
            elem_id="cmp-table",
            elem_classes=[*PHONE_CARDS, *HIDE_EMPTY],
        )
        self.plot = gr.Plot(elem_id="cmp-plot", show_label=False)
        self.deltas = gr.Dataframe(
            interactive=False,
            label=both("field_deltas"),
            elem_id="cmp-deltas",
            elem_classes=[*PHONE_CARDS, *HIDE_EMPTY],
        )
        # The last comparison shown (track, ids, the Service's answer), so the language toggle can render it
        # again without asking the workers for another paired bootstrap.
        self.shown = gr.State(None)

    @property
    def outputs(self) -> list:
        return [self.title, self.table, self.plot, self.deltas]

    def wire(self, track: gr.Radio, lang: gr.Radio) -> None:
        self.run_btn.click(
            self.compare, [track, self.a, self.b, lang], [*self.outputs, self.shown], api_name="compare"
        )

    def relabel(self, shown: dict | None, lang: str) -> dict:
        """The comparison on screen again, in `lang` (nothing when none is shown)."""
        if not shown:
            return {self.title: gr.skip()}
        board = self.ctx.cache.board(shown["track"])
        ra, rb = board.row(shown["a"]), board.row(shown["b"])
        if ra is None or rb is None:  # a system left the board since: keep what is shown
            return {self.title: gr.skip()}
        return self.render(shown["track"], ra, rb, shown["comparison"], lang)

    def pickers(self, track: str) -> dict:
        """The two pickers of a track: its systems, the top two preselected."""
        board = self.ctx.cache.board(track)
        choices, top = system_choices(board.df), top_systems(board.df)
        return {
            self.a: gr.Dropdown(choices=choices, value=top[0] if top else None),
            self.b: gr.Dropdown(choices=choices, value=top[1] if len(top) > 1 else None),
        }

    def compare(self, track: str, a: str, b: str, lang: str = "zh") -> dict:
        """Paired-bootstrap differences for the headline metrics, plus per-field deltas from the board. A
        metric undefined (0/0) on either side has no difference: n/a, the reason on hover."""
        if not a or not b or a == b:
            raise refused(t("pick_two", lang))
        board = self.ctx.cache.board(track)
        ra, rb = board.row(a), board.row(b)
        if ra is None or rb is None:
            # Only published, visible systems can be compared (no probing of hidden or pending ones).
            raise refused(t("both_on_board", lang))
        try:
            comp = self.ctx.service.compare(a, b)
        except ServiceError as exc:
            raise refused(f"{t('compare_failed', lang)}: {answer_text(exc, lang)}") from exc
        except Exception as exc:
            raise refused(f"{t('compare_failed', lang)}: {exc}") from exc
        shown = {"track": track, "a": a, "b": b, "comparison": comp}
        return {**self.render(track, ra, rb, comp, lang), self.shown: shown}

    def render(self, track: str, ra: dict, rb: dict, comp: dict, lang: str) -> dict:
        """Title, paired-bootstrap table, chart and per-field deltas of two board rows, in `lang`."""
        name_a, name_b = str(ra.get("model_name", "A")), str(rb.get("model_name", "B"))
        rows, undefined = [], {}
        for metric, v in (comp or {}).items():
            if not isinstance(v, dict) or "diff" not in v:
                continue
            header = metric_header(track, metric, lang)
            reason = either_undefined(ra, rb, metric)
            if reason:
                undefined[metric] = reason
                rows.append(
                    [header, value_cell(ra, metric), value_cell(rb, metric), na_cell(reason), "", "n/a", "—"]
                )
                continue
            ci = v.get("ci") or [None, None]
            side = better_side(metric, v.get("diff"), bool(v.get("significant")), track)
            rows.append(
                [
                    header,
                    pct_text(v.get("a")),
                    pct_text(v.get("b")),
                    pct_text(v.get("diff")),
                    "" if ci[0] is None else f"[{pct_text(ci[0])}, {pct_text(ci[1])}]",
                    t("yes" if v.get("significant") else "no", lang),
                    {"A": "A", "B": "B", "": "—"}[side],
                ]
            )
        keys = (
            [f"field_accuracy.{f}" for f in FIELDS]
            if track == "varm"
            else [m.key for m in METRICS[track] if m.percent]
        )
        deltas = []
        for k in keys:
            reason = either_undefined(ra, rb, k)
            both_given = ra.get(k) is not None and rb.get(k) is not None
            diff = na_cell(reason) if reason else pct_text(ra[k] - rb[k]) if both_given else None
            deltas.append([metric_header(track, k, lang), value_cell(ra, k), value_cell(rb, k), diff])
        return {
            self.title: f"A = {linked(ra, track, lang)} · B = {linked(rb, track, lang)}",
            self.table: frame(rows, TABLE_COLUMNS, lang),
            self.plot: figures.compare_bars(comp, name_a, name_b, track, lang, undefined),
            self.deltas: frame(deltas, DELTA_COLUMNS, lang),
        }
