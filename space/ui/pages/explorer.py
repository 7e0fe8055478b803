"""The Dev explorer tab: dev predictions scored item by item against the PUBLIC dev references.

The computation lives in `space/ui/explorer.py`; nothing here can reach the hidden test.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import gradio as gr

from scoring.protocol import FIELDS, VALUE_SETS

from .. import explorer
from ..context import Context, refused
from ..i18n import both, t
from ..reports import report_frame
from ..tables import HIDE_EMPTY, PHONE_CARDS, WIDE_LAST
from ..upload import drop_zone

DEMO_DIR = Path(__file__).resolve().parents[3] / "data" / "demo"


def any_choice(lang: str) -> list[tuple[str, str]]:
    return [(t("any", lang), "")]


def field_choices(lang: str) -> list[tuple[str, str]]:
    return any_choice(lang) + [(explorer.field_label(f, lang), f) for f in FIELDS]


def value_choices(field: str) -> Callable[[str], list[tuple[str, str]]]:
    """The protocol's values of `field` (Chinese in both languages: they are the data's own words)."""
    return lambda lang: any_choice(lang) + [(v, v) for v in VALUE_SETS[field]]


def dev_file(ctx: Context, track: str) -> bytes | None:
    """The published dev split of `track`, else the demo's copy."""
    try:
        data = ctx.service.public_file(track, "dev.jsonl")
    except Exception:  # an unknown track or a store hiccup: the demo copy below, if any
        data = None
    if not data and (DEMO_DIR / track / "dev.jsonl").is_file():
        data = (DEMO_DIR / track / "dev.jsonl").read_bytes()
    return data


def dev_subsets_file(ctx: Context, track: str) -> bytes | None:
    """Public dev-split cue-subset membership (`<track>/public/dev_subsets.json`), like `dev_file`.

    The demo copy is used only when the dev split itself comes from the demo (same ids).
    """
    try:
        data = ctx.service.public_file(track, "dev_subsets.json")
        published_dev = ctx.service.public_file(track, "dev.jsonl")
    except Exception:
        data = published_dev = None
    demo = DEMO_DIR / track / "public" / "dev_subsets.json"
    if not data and not published_dev and demo.is_file():
        data = demo.read_bytes()
    return data


class ExplorerPage:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.help = ctx.texts(gr.Markdown(), value="explorer_help")
        with gr.Row():
            self.upload = drop_zone(ctx.texts, "dev_upload", "ex-upload")
        self.run_btn = gr.Button(both("explore_btn"), variant="primary", elem_id="ex-run")
        self.items = gr.State([])
        self.summary = gr.Markdown(elem_id="ex-summary")
        self.report = gr.Dataframe(
            interactive=False,
            wrap=True,
            label=both("ex_report"),
            elem_id="ex-report",
            elem_classes=[*PHONE_CARDS, *WIDE_LAST, *HIDE_EMPTY],
        )
        with gr.Row():
            self.field = ctx.texts(
                gr.Dropdown(field_choices("zh"), value="", label=both("ex_field_wrong"), elem_id="ex-field"),
                choices=field_choices,
            )
            self.stance = ctx.texts(
                gr.Dropdown(
                    value_choices("stance")("zh"), value="", label=both("ex_gold_stance"), elem_id="ex-stance"
                ),
                choices=value_choices("stance"),
            )
            self.category = ctx.texts(
                gr.Dropdown(
                    value_choices("category")("zh"),
                    value="",
                    label=both("ex_gold_category"),
                    elem_id="ex-category",
                ),
                choices=value_choices("category"),
            )
            self.subset = gr.Dropdown(
                [], value="", allow_custom_value=True, label=both("ex_subset"), elem_id="ex-subset"
            )
            self.errors = gr.Checkbox(label=both("ex_errors_only"), elem_id="ex-errors")
        with gr.Row():
            self.table = gr.Dataframe(
                interactive=False,
                wrap=False,
                max_height=520,
                scale=3,
                label=both("ex_items"),
                elem_id="ex-table",
                elem_classes=HIDE_EMPTY,
                column_widths=["7%", "23%", "40%", "18%", "12%"],
            )
            with gr.Column(scale=2):
                self.number = gr.Number(label=both("ex_item_no"), precision=0, elem_id="ex-no")
                self.detail = gr.HTML(elem_id="ex-detail", js_on_load=None)

    def wire(self, track: gr.Radio, lang: gr.Radio) -> None:
        """`track` is the shell's one track selector."""
        self.run_btn.click(
            self.explore,
            [track, self.upload, lang],
            self.outputs,
            api_name="explore",
        )
        gr.on(
            [self.field.input, self.stance.input, self.category.input, self.subset.input, self.errors.input],
            self.explore_filter,
            [self.items, self.field, self.stance, self.category, self.subset, self.errors, lang],
            [self.table, self.detail],
            api_name="explore_filter",
        )
        self.number.submit(
            self.explore_item, [self.items, self.number, lang], self.detail, api_name="explore_item"
        )
        self.table.select(
            self.select_item,
            [self.items, lang],
            [self.number, self.detail],
            api_name="explore_select",
            api_visibility="private",
        )

    # -- callbacks ------------------------------------------------------------------------------------

    def explore(self, track: str, path: str | None, lang: str = "zh") -> dict:
        """Score dev predictions item by item against the public dev references."""
        real = self.ctx.checked_upload(path)
        if real is None:
            raise refused(t("need_dev_file", lang))
        with self.ctx.slot(real):  # the same memory bound as validation
            preds = real.read_bytes()
        dev = dev_file(self.ctx, track)
        if not dev:
            raise refused(t("no_dev_split", lang, track=track))
        exp = explorer.explore(track, dev, preds, dev_subsets_file(self.ctx, track))
        items = exp.items
        summary = explorer.summary_markdown(exp, lang)
        if explorer.looks_like_test_file(preds, self.test_inputs(track), explorer.read_lines(dev)):
            summary = f"> ⚠ **{t('test_file_hint', lang)}**\n\n{summary}"
        return {
            self.items: items,
            self.summary: summary,
            self.report: report_frame(exp.report, lang),
            self.table: explorer.items_table(items, lang=lang),
            self.detail: explorer.item_html(items[0] if items else None, lang),
            self.subset: gr.Dropdown(
                choices=any_choice(lang) + sorted({s for it in items for s in it.get("subsets", [])}),
                value="",
            ),
        }

    def relabel(self, track: str, path: str | None, lang: str) -> dict:
        """The exploration on screen again, in `lang` (nothing when no file is loaded)."""
        if not path:
            return {self.summary: gr.skip()}
        try:
            return self.explore(track, path, lang)
        except gr.Error:  # the upload expired meanwhile: keep what is shown
            return {self.summary: gr.skip()}

    @property
    def outputs(self) -> list:
        return [self.items, self.summary, self.report, self.table, self.detail, self.subset]

    def test_inputs(self, track: str) -> list[dict]:
        """The track's public test inputs (empty when none are published), for the test-file hint."""
        try:
            return self.ctx.service.public_inputs(track)
        except Exception:  # no reference set yet: nothing to recognise
            return []

    def explore_filter(
        self,
        items: list[dict] | None,
        wrong_field: str,
        stance: str,
        category: str,
        subset: str,
        only_errors: bool,
        lang: str = "zh",
    ) -> dict:
        chosen = explorer.filter_items(
            items or [],
            wrong_field=wrong_field or "",
            stance=stance or "",
            category=category or "",
            subset=subset or "",
            only_errors=bool(only_errors),
        )
        return {
            self.table: explorer.items_table(chosen, lang=lang),
            self.detail: explorer.item_html(chosen[0] if chosen else None, lang),
        }

    def explore_item(self, items: list[dict] | None, number: float | None, lang: str = "zh") -> str:
        wanted = int(number or 0)
        return explorer.item_html(next((it for it in items or [] if it["n"] == wanted), None), lang)

    def select_item(self, items: list[dict], lang: str, evt: gr.SelectData) -> dict:
        """Clicking a row of the table opens that item (the first column holds its number)."""
        try:
            number = int(evt.row_value[0])
        except (TypeError, ValueError, IndexError):
            return {self.number: gr.skip()}  # an empty dict would be taken for one value
        item = next((it for it in items or [] if it["n"] == number), None)
        return {self.number: number, self.detail: explorer.item_html(item, lang)}
