"""The Releases tab (../shared/spec/disclosure.md §4): a track's frozen, signed official numbers.

A release lists each submitter's finals ranked on the private slice (the public test's full board for a
public set), the full-test numbers beside them, and the Rank Delta from the live board; its date, scorer
and a BibTeX block to copy. A release never changes: when a re-score came after it, the tab says an
erratum release may be cut next to it (Maintainers tab).
"""

from __future__ import annotations

import gradio as gr
import pandas as pd

from scoring.tracks import get_track

from ..context import Context
from ..i18n import both, t
from ..safe import md
from ..tables import HIDE_EMPTY, metric_header, pct

COLUMNS = (
    "col_rank",
    "col_model",
    "h_release_metric",
    "h_release_ci",
    "h_release_full",
    "h_live_rank",
    "h_delta",
)


def rank_text(row: dict) -> str:
    low, high = row.get("rank_low", row.get("rank")), row.get("rank_high", row.get("rank"))
    return str(row.get("rank")) if low == high else f"{low}–{high}"


def delta_text(delta: int | None) -> str:
    """Rank Delta (live rank − release rank): ▲ moved up on the private slice, ▼ down, — not on the board."""
    if delta is None:
        return "—"
    return "0" if delta == 0 else (f"▲{delta}" if delta > 0 else f"▼{-delta}")


def release_table(rows: list[dict], track: str, lang: str = "zh") -> pd.DataFrame:
    """The release's rows as the tab shows them (metric values in %)."""
    primary = get_track(track).primary_metric
    out = []
    for row in rows:
        low, high = row.get(f"ci.{primary}.low"), row.get(f"ci.{primary}.high")
        ci = "" if low is None or high is None else f"[{pct(low, 1)}, {pct(high, 1)}]"
        out.append(
            [
                rank_text(row),
                str(row.get("model_name") or ""),
                pct(row.get(primary), 1),
                ci,
                pct(row.get(f"full.{primary}"), 1),
                "—" if row.get("live_rank") is None else str(row["live_rank"]),
                delta_text(row.get("rank_delta")),
            ]
        )
    headers = [t(k, lang) for k in COLUMNS]
    headers[2] = f"{metric_header(track, primary, lang)} · {t('h_release_metric', lang)}"
    return pd.DataFrame(out, columns=headers)


class ReleasesPage:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        ctx.texts(gr.Markdown(), value="releases_intro")
        with gr.Row():
            self.name = gr.Dropdown(choices=[], label=both("release"), elem_id="rel-name", scale=1)
            self.show_btn = gr.Button(both("show_release"), elem_id="rel-show", scale=0)
        self.info = gr.Markdown(elem_id="rel-info")
        self.table = gr.Dataframe(interactive=False, elem_id="rel-table", wrap=True, elem_classes=HIDE_EMPTY)
        self.citation = gr.Code(label=both("citation"), buttons=["copy"], elem_id="rel-citation")

    def wire(self, tab: gr.Tab, track: gr.Radio, lang: gr.Radio) -> None:
        """`track` is the shell's one track selector; the tab lists that track's releases when opened."""
        outputs = [self.name, self.info, self.table, self.citation]
        tab.select(self.open, [track, lang], outputs, api_name="releases")
        track.change(
            self.open, [track, lang], outputs, api_name="releases_on_track", api_visibility="private"
        )
        self.show_btn.click(self.show, [track, self.name, lang], outputs[1:], api_name="release_view")
        self.name.input(
            self.show,
            [track, self.name, lang],
            outputs[1:],
            api_name="release_on_name",
            api_visibility="private",
        )

    def open(self, track: str, lang: str = "zh") -> dict:
        """The track's releases, newest first, the newest shown."""
        names = [r["name"] for r in self.ctx.service.releases(track)]
        newest = names[0] if names else None
        shown = self.show(track, newest, lang)
        return {self.name: gr.Dropdown(choices=names, value=newest), **shown}

    def show(self, track: str, name: str | None, lang: str = "zh") -> dict:
        found = self.ctx.service.published_release(track, name) if name else None
        if found is None:
            empty = pd.DataFrame(columns=[t(k, lang) for k in COLUMNS])
            return {self.info: t("no_releases", lang), self.table: empty, self.citation: ""}
        meta = found["release"]
        counts = meta.get("counts") or {}
        info = (
            f"**{md(meta['name'])}** · {md(meta['date'])} · {t('col_scorer_version', lang)} "
            f"{md(meta.get('scorer_version'))} · {t('release_counts', lang, **counts)}"
        )
        if meta.get("test_status") == "public":
            info += f"\n\n{t('release_public', lang)}"
        if self.ctx.service.erratum_due(meta):
            info += f"\n\n> {t('erratum_due', lang)}"
        return {
            self.info: info,
            self.table: release_table(found["rows"], track, lang),
            self.citation: found.get("citation") or "",
        }
