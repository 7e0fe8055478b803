"""The Leaderboard tab: search, filters, sort, columns, paging, the table, its view link and the export."""

from __future__ import annotations

import gradio as gr

from scoring.tracks import TRACK_TITLES
from space.board_query import TRACKS, View, default_columns, filter_rows, page_slice, to_csv, to_json
from space.uploads import output_dir

from ..context import Context
from ..i18n import both, t
from ..safe import md
from ..tables import (
    column_choices,
    dataframe_value,
    display_frame,
    setting_choices,
    sort_choices,
    type_choices,
    when,
)


def link_markdown(query: str, lang: str = "zh") -> str:
    """The view link as Markdown; `query` comes from urlencode, so it holds no Markdown syntax."""
    return f"{t('link', lang)}: [{query}]({query})"


def reference_banner(ctx: Context, track: str, lang: str = "zh") -> str:
    """A banner over the board: no reference set yet; else the synthetic demo's warning, and what the board
    shows: a public test's self-reported scores, or a private test's public slice through the Ladder."""
    try:
        kind = ctx.service.reference_set(track)
    except Exception:  # a store hiccup must not blank the board
        return ""
    if not kind["ready"]:
        return f"> **{t('no_reference_set', lang)}**"
    lines = [f"> ⚠ **{t('demo_banner', lang)}**"] if kind["kind"] == "demo" else []
    if kind.get("test_status") == "public":  # ../shared/spec/disclosure.md §5
        lines.append(f"> **{t('public_test_banner', lang).format(track=TRACK_TITLES.get(track, track))}**")
    else:  # §3: what the live board of a private test shows, and when the official numbers come
        lines.append(f"> {t('live_board_rule', lang)}")
    release = ctx.service.latest_release(track)
    if release is not None:  # disclosure §4: the frozen official numbers, and what is newer than them
        lines.append(f"> {t('latest_release', lang).format(**release)}")
    return "\n>\n".join(lines)


def controls_view(track, q, types, settings, baselines, sort, columns, page) -> View:
    """The controls' values as a View (anything unknown falls back to the default)."""
    track = track if track in TRACKS else "varm"
    valid_sorts = {k for _, k in sort_choices(track)}
    valid_cols = {k for _, k in column_choices(track)}
    return View(
        track=track,
        q=(q or "")[:200],
        baselines=bool(baselines),
        model_types=tuple(types or ()),
        settings=tuple(settings or ()),
        sort=sort if sort in valid_sorts else "rank",
        columns=tuple(c for c in columns or () if c in valid_cols),
        page=int(page or 1),
    )


class BoardPage:
    """Layout (built inside its tab) and callbacks of the Leaderboard tab."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        # Issue 28.15: the rows start high on the page. Above the table one row of what a viewer uses most
        # (search, sort, baselines) and a closed box of the rest; the pager sits under the table.
        with gr.Row(elem_id="board-controls"):
            self.search = gr.Textbox(
                label=both("search"),
                placeholder=both("search_hint"),
                scale=3,
                min_width=150,
                elem_id="search",
            )
            self.sort = gr.Dropdown(
                sort_choices("varm"), value="rank", label=both("sort"), scale=2, min_width=130, elem_id="sort"
            )
            self.baselines = gr.Checkbox(
                value=True, label=both("baselines"), scale=0, min_width=130, elem_id="baselines"
            )
        with gr.Accordion(both("filters"), open=False, elem_id="filters-box"):
            with gr.Row():
                self.types = ctx.texts(
                    gr.CheckboxGroup(label=both("model_type"), scale=1, elem_id="filter-type"),
                    choices=type_choices,
                )
                self.settings = ctx.texts(
                    gr.CheckboxGroup(label=both("setting"), scale=2, elem_id="filter-setting"),
                    choices=setting_choices,
                )
            self.columns = gr.Dropdown(
                column_choices("varm"),
                value=default_columns("varm"),
                multiselect=True,
                label=both("columns"),
                elem_id="columns",
            )
        self.caption = gr.Markdown(elem_id="board-caption")
        self.table = gr.Dataframe(
            interactive=False,
            wrap=False,
            max_height=640,
            pinned_columns=2,
            show_search="none",
            elem_id="board",
            buttons=["fullscreen", "copy"],
        )
        with gr.Row(elem_id="board-pager"):
            self.prev_btn = gr.Button(both("prev"), scale=0, min_width=70, elem_id="lb-prev")
            self.page = gr.Number(
                value=1, precision=0, minimum=1, label=both("page"), scale=0, min_width=90, elem_id="page"
            )
            self.next_btn = gr.Button(both("next"), scale=0, min_width=70, elem_id="lb-next")
        with gr.Row(elem_id="board-link-row"):
            # Relative link: the browser resolves it against the page (also in the Space iframe).
            self.link = gr.Markdown(elem_id="view-link")
            self.export_btn = gr.Button("⬇ CSV / JSON", scale=1, elem_id="export")
        self.export_files = gr.File(
            label=both("downloads"),
            file_count="multiple",
            interactive=False,
            visible=False,
            elem_id="export-files",
        )
        self.head_state = gr.State("")  # the results head the table was rendered at (light refresh timer)

    @property
    def outputs(self) -> list:
        """What a render updates (in the order the `leaderboard` API has always returned)."""
        return [self.table, self.caption, self.link, self.page, self.head_state]

    def inputs(self, track: gr.Radio, lang: gr.Radio) -> list:
        """What a render reads: the shell's track selector, this page's controls, the language."""
        return [
            track,
            self.search,
            self.types,
            self.settings,
            self.baselines,
            self.sort,
            self.columns,
            self.page,
            lang,
        ]

    def wire(self, track: gr.Radio, lang: gr.Radio, refresh_seconds: float) -> None:
        inputs = self.inputs(track, lang)
        gr.on(
            [
                self.search.input,
                self.types.input,
                self.settings.input,
                self.baselines.input,
                self.sort.input,
                self.columns.input,
                self.page.submit,
            ],
            self.render_board,
            inputs,
            self.outputs,
            api_name="leaderboard",
            trigger_mode="always_last",
        )
        # Same render path as the page box; render_board clamps the page to the board's bounds.
        self.prev_btn.click(self.prev_page, inputs, self.outputs, api_name="leaderboard_prev")
        self.next_btn.click(self.next_page, inputs, self.outputs, api_name="leaderboard_next")
        gr.Timer(refresh_seconds).tick(
            self.refresh_if_changed,
            [self.head_state, *inputs],
            self.outputs,
            api_name="refresh",
            show_progress="hidden",
        )
        self.export_btn.click(self.export, inputs[:-1], self.export_files, api_name="export")  # no language

    # -- callbacks ------------------------------------------------------------------------------------

    def render_board(self, track, q, types, settings, baselines, sort, columns, page, lang="zh") -> dict:  # noqa: PLR0913
        """Table page, caption, link and the (clamped) page number for the current view."""
        view = controls_view(track, q, types, settings, baselines, sort, columns, page)
        board = self.ctx.cache.board(view.track)
        df = filter_rows(board.df, view)
        part, page_no, first, last = page_slice(df, view.page)
        table, types_ = display_frame(part, view.track, view.columns or default_columns(view.track), lang)
        if board.df.empty:
            caption = t("empty_board", lang)
        elif df.empty:
            caption = t("no_rows", lang)
        else:
            caption = t("rows_shown", lang, a=first, b=last, n=len(df))
        caption += " · " + t(
            "board_notes",
            lang,
            at=md(when(board.meta.get("generated_at")) or "—"),
            scorer=md(board.meta.get("scorer_version") or "—"),
        )
        banner = reference_banner(self.ctx, view.track, lang)
        if banner:
            caption = f"{banner}\n\n{caption}"
        view = View(**{**view.__dict__, "page": page_no})
        return {
            self.table: gr.Dataframe(
                value=dataframe_value(table), datatype=types_, headers=list(table.columns)
            ),
            self.caption: caption,
            self.link: link_markdown(view.to_query(lang=lang), lang),
            self.page: page_no,
            self.head_state: board.head,
        }

    def prev_page(self, track, q, types, settings, baselines, sort, columns, page, lang="zh") -> dict:  # noqa: PLR0913
        """The "‹ Prev" button: render the previous page (clamped to page 1)."""
        previous = int(page or 1) - 1
        return self.render_board(track, q, types, settings, baselines, sort, columns, previous, lang)

    def next_page(self, track, q, types, settings, baselines, sort, columns, page, lang="zh") -> dict:  # noqa: PLR0913
        """The "Next ›" button: render the next page (clamped to the last page)."""
        following = int(page or 1) + 1
        return self.render_board(track, q, types, settings, baselines, sort, columns, following, lang)

    def refresh_if_changed(  # noqa: PLR0913
        self, seen: str, track, q, types, settings, baselines, sort, columns, page, lang="zh"
    ) -> dict:
        """Light timer: re-render only when the results area's head moved (a publish happened)."""
        changed, head = self.ctx.cache.changed(seen or "")
        if not changed:
            # (An empty dict would be taken for one value: name a component.)
            return {self.head_state: gr.skip() if seen else head}
        return self.render_board(track, q, types, settings, baselines, sort, columns, page, lang)

    def export(self, track, q, types, settings, baselines, sort, columns, page) -> gr.File:
        """CSV and JSON of every filtered row (all fields, unrounded)."""
        view = controls_view(track, q, types, settings, baselines, sort, columns, page)
        df = filter_rows(self.ctx.cache.board(view.track).df, view)
        out = output_dir()
        csv_path, json_path = out / f"{view.track}-leaderboard.csv", out / f"{view.track}-leaderboard.json"
        csv_path.write_bytes(to_csv(df, view.track))
        json_path.write_bytes(to_json(df, view.track))
        return gr.File(value=[str(csv_path), str(json_path)], visible=True)

    # -- updates other events compose -----------------------------------------------------------------

    def track_controls(self, track: str, lang: str = "zh") -> dict:
        """The per-track controls after a track switch: sort keys and columns reset, page 1."""
        return {**self.view_choices(track, "rank", None, lang), self.page: 1}

    def view_choices(self, track: str, sort: str | None, columns: list[str] | None, lang: str) -> dict:
        """The sort and column choosers in `lang` with these values (a track switch, or the language
        toggle, which keeps them)."""
        track = track if track in TRACKS else "varm"
        return {
            self.sort: gr.Dropdown(choices=sort_choices(track, lang), value=sort or "rank"),
            self.columns: gr.Dropdown(
                choices=column_choices(track, lang), value=columns or default_columns(track), multiselect=True
            ),
        }

    def restore(self, view: View, lang: str = "zh") -> dict:
        """Every control set from a view link, and the table rendered for it."""
        columns = list(view.columns) or default_columns(view.track)
        return {
            self.search: view.q,
            self.types: list(view.model_types),
            self.settings: list(view.settings),
            self.baselines: view.baselines,
            **self.view_choices(view.track, view.sort, columns, lang),
            **self.render_board(
                view.track,
                view.q,
                list(view.model_types),
                list(view.settings),
                view.baselines,
                view.sort,
                list(view.columns),
                view.page,
                lang,
            ),
        }
