"""The Submission tab: everything about one submission (its renderers live in `space/ui/submission.py`)."""

from __future__ import annotations

from typing import Any

import gradio as gr

from worker.records import is_submission_id

from .. import figures
from .. import submission as render
from ..context import Context
from ..i18n import both, t
from ..tables import HIDE_EMPTY, METRICS, PHONE_CARDS, TRACKS, UNDEFINED, WIDE_LAST


def _row_of(result: dict | None, lang: str = "zh") -> dict:
    """A leaderboard-row-shaped dict (flattened metrics, ci.<k>.low/high) from one scorer result."""
    if not result:
        return {}
    row: dict = dict(render.flatten_metrics(result))
    for k, v in (result.get("ci") or {}).items():
        if isinstance(v, list) and len(v) == 2:
            row[f"ci.{k}.low"], row[f"ci.{k}.high"] = v
    for k, reason in (result.get("undefined") or {}).items():
        row[f"{UNDEFINED}{k}"] = str(reason)
    row["model_name"] = t("this_submission", lang)
    return row


def page_table(
    label: str, elem_id: str, classes: list[str], *, wrap: bool = False, datatype: Any = "str"
) -> gr.Dataframe:
    """A read-only table of the page, labelled in both languages (the toggle relabels it)."""
    return gr.Dataframe(
        interactive=False,
        wrap=wrap,
        datatype=datatype,
        label=both(label),
        elem_id=elem_id,
        elem_classes=classes,
    )


class SubmissionPage:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        with gr.Row():
            self.id = gr.Textbox(label=both("submission_id"), scale=3, elem_id="page-id")
            self.open_btn = gr.Button(both("open"), scale=0, elem_id="page-open")
        self.header = gr.Markdown(elem_id="page-header")
        self.status = gr.Markdown(elem_id="page-status")
        # Each table is drawn once it has a row (HIDE_EMPTY): nothing before a submission is opened, no empty
        # output-format table when every output is valid (the line above it says so). On a phone each is cards
        # (PHONE_CARDS): every value in view under its column's name, a message or note two columns wide.
        cards, wide = [*PHONE_CARDS, *HIDE_EMPTY], [*PHONE_CARDS, *WIDE_LAST, *HIDE_EMPTY]
        self.metrics = page_table("metrics_pct", "page-metrics", cards, datatype=render.METRIC_TYPES)
        self.plot = gr.Plot(elem_id="page-plot", show_label=False)
        self.subsets = page_table("subsets_label", "page-subsets", cards, wrap=True)
        self.format = page_table("format_report", "page-format", wide, wrap=True)
        self.outputs_text = gr.Markdown(elem_id="page-output-format-summary")
        self.output_format = page_table("output_format_report", "page-output-format", wide, wrap=True)
        self.provenance = gr.Markdown(elem_id="page-provenance")
        self.versions = page_table("versions", "page-versions", cards)
        self.history = page_table("history", "page-history", wide)
        self.bibtex = gr.Code(language=None, label="BibTeX", elem_id="page-bibtex")

    @property
    def outputs(self) -> list:
        """In the order the `submission` API has always returned them (the output-format pair came last)."""
        return [
            self.header,
            self.status,
            self.metrics,
            self.subsets,
            self.plot,
            self.format,
            self.provenance,
            self.versions,
            self.history,
            self.bibtex,
            self.outputs_text,
            self.output_format,
        ]

    def wire(self, token: gr.Textbox, lang: gr.Radio) -> list:
        """The token (or the OAuth session) lets a submitter and maintainers open a hidden submission.
        Returns the two "opened" events, which the shell follows with the track selector."""
        inputs = [self.id, token, lang]
        return [
            self.open_btn.click(self.show_submission, inputs, self.outputs, api_name="submission"),
            self.id.submit(
                self.show_submission,
                inputs,
                self.outputs,
                api_name="submission_on_enter",
                api_visibility="private",
            ),
        ]

    def show_submission(
        self, sid: str, token: str | None = None, lang: str = "zh", profile: gr.OAuthProfile | None = None
    ) -> dict:
        """Everything about one submission. A hidden one shows only to its submitter and the maintainers
        (signed in), like "not found" else."""
        sid = (sid or "").strip().lower()
        # Ids are 16 hex characters; anything else is not looked up at all.
        viewer = self.ctx.viewer(token, profile)
        sub = self.ctx.service.submission(sid, viewer) if is_submission_id(sid) else None
        rec = render.record_of(sub)
        track = str(rec.get("track", "varm"))
        result = render.result_of(sub)
        fig = (
            figures.submission_field_bars(result, lang)
            if track == "varm" and result
            else figures.metric_bars(
                [_row_of(result, lang)] if result else [],
                track if track in TRACKS else "cold",
                [m.key for m in METRICS.get(track, ())][:6],
                t("metrics_ci", lang),
                lang,
            )
        )
        rank = ""
        if sub and track in TRACKS and rec.get("status") == "published":
            board = self.ctx.cache.board(track)
            rank = render.rank_markdown(board.row(sid), len(board.df), track, lang)
        # A maintainer's reason for hiding it, for its owner (and the maintainers): only asked when hidden.
        why = self.ctx.service.hidden_reason(sid, viewer) if render.hidden_by_maintainer(sub) else None
        return {
            self.header: render.header_markdown(sub, rank, lang, why),
            self.status: render.status_line(sub, lang, why) if sub else "",
            self.metrics: render.metrics_table(result, track, lang),
            self.subsets: render.subsets_table(result, lang)
            if track == "varm"
            else render.breakdowns_table(result, lang),
            self.plot: fig,
            self.format: render.format_table(result, rec, lang),
            self.provenance: render.provenance_markdown(sub, lang) if sub else "",
            self.versions: render.versions_table(rec, lang),
            self.history: render.history_table(rec, lang),
            self.bibtex: render.bibtex(sub) if sub else "",
            self.outputs_text: render.output_format_markdown(rec, lang),
            self.output_format: render.output_format_table(rec, lang),
        }

    def track_of(self, sid: str, token: str | None, profile: object | None = None) -> str | None:
        """The track of a submission the viewer may see (None for anything else)."""
        sid = (sid or "").strip().lower()
        if not is_submission_id(sid):
            return None
        sub = self.ctx.service.submission(sid, self.ctx.viewer(token, profile))
        track = render.record_of(sub).get("track")
        return track if track in TRACKS else None
