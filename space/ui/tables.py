"""Leaderboard tables: pure functions from leaderboard rows (ARCHITECTURE §5) to display frames.

Every cell a user typed stays inert: organisation, type, setting are "str" columns (gr.Dataframe never
renders them as Markdown or HTML); the model name and the paper/code links are "markdown" columns whose user
text is escaped (`safe.md`) and whose only links are ones we build (the submission page, http(s) URLs).
A metric column is "number", or "markdown" when a row on the page has that metric undefined (0/0): its
"n/a" then carries the scorer's reason (never user text, escaped anyway) as hover text (`metric_cells`).
Either way the browser sorts a metric column by its numbers: an n/a cell holds no value (None) and shows
its text through the Dataframe's per-cell display value (`dataframe_value`).
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Iterable, Sequence
from typing import Literal
from urllib.parse import urlencode

import pandas as pd

from scoring.metrics_spec import MetricSpec
from scoring.tracks import MODEL_TYPES, SETTINGS, metric_spec
from space.board_query import (
    MARKDOWN_TEXT,
    METRICS,
    TEXT_COLUMNS,
    TRACKS,
    default_columns,
    is_explanation,
    sort_keys,
)

from .i18n import t
from .safe import md, md_link
from .scorer_text import say

ColumnType = Literal["str", "markdown", "number"]  # the Gradio Dataframe datatypes this UI uses
# elem_classes of a table that a phone shows as cards, a row each, values under their column names
# (app.py's CSS and CELL_LABELS): it has too many columns for a phone's width, and no column to pin.
PHONE_CARDS = ["phone-cards"]
# With PHONE_CARDS: the last value of a card (a message, a note) takes two of its three columns.
WIDE_LAST = ["wide-last"]
# elem_classes of a table that is not drawn while it has no row (app.py's CSS): a report before any
# validation, a comparison before one was asked for, a submission page before one is opened. Empty, Gradio
# would draw it under placeholder headers ("1 2 3") or headers alone.
HIDE_EMPTY = ["hide-empty"]


def ci_header(spec: MetricSpec, lang: str = "en") -> str:
    return f"{spec.name(lang)} 95% CI"


def metric_header(track: str, key: str, lang: str = "en") -> str:
    """A metric's display name as a column header in `lang`, with its direction ("JREM ↑", "准确率 ↑");
    never the raw key such as `macro_f1.stance`."""
    return metric_spec(track, key).header(lang)


def header(key: str, lang: str = "zh") -> str:
    """A table header in `lang`: "rank", "model" or a text column's row key."""
    return t(f"col_{key}", lang)


def type_choices(lang: str) -> list[tuple[str, str]]:
    return [(t(f"type_{m}", lang), m) for m in MODEL_TYPES]


def setting_choices(lang: str) -> list[tuple[str, str]]:
    return [(t(f"set_{s}", lang), s) for s in SETTINGS]


def _spec(key: str, track: str | None) -> MetricSpec:
    """The spec of `key` on `track`, or (no track) on the first track that lists it."""
    if track is None:
        track = next((t for t in TRACKS if any(m.key == key for m in METRICS[t])), "varm")
    return metric_spec(track, key)


def better_side(key: str, diff: float | None, significant: bool, track: str | None = None) -> str:
    """Which of A and B a significant difference A − B favours, given the metric's direction; "" when the
    difference is not significant (a tie) or unknown."""
    if not significant or diff is None:
        return ""
    return _spec(key, track).better(diff, 0.0)


def column_choices(track: str, lang: str = "zh") -> list[tuple[str, str]]:
    """(label, value) pairs for the column chooser: text columns, then every metric of the track."""
    text = [(header(key, lang), f"text:{key}") for key in TEXT_COLUMNS]
    return text + [(m.header(lang), m.key) for m in METRICS[track]]


def sort_choices(track: str, lang: str = "zh") -> list[tuple[str, str]]:
    """(label, key) for `board_query.sort_keys`: rank, every metric, date and model name."""
    labels = {m.key: m.header(lang) for m in METRICS[track]}
    return [(labels.get(key) or header(key, lang), key) for key in sort_keys(track)]


def rank_label(low: object, high: object) -> str:
    """ "3" for a lone rank, "1–3" (en dash) for a tie group spanning positions 1 to 3."""
    try:
        lo, hi = int(low), int(high)  # type: ignore[call-overload]  # anything a cell holds; bad ones: ''
    except (TypeError, ValueError):
        return ""
    return str(lo) if lo == hi else f"{lo}–{hi}"


def _float(value: object) -> float | None:
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return None if v != v else v  # NaN -> None


def pct(value: object, digits: int = 1) -> float | None:
    """A share in [0, 1] as a percentage rounded for display; None stays None."""
    v = _float(value)
    return None if v is None else round(v * 100, digits)


def when(value: object) -> str:
    """An ISO time as a reader writes it: "2026-12-05 23:36 UTC" ("" for none; anything else as given)."""
    text = str(value or "")
    match = re.fullmatch(r"(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(?::\d{2}(?:\.\d+)?)?(?:Z|\+00:00)", text)
    return f"{match[1]} {match[2]} UTC" if match else text


def pct_text(value: object) -> str:
    """A share as the board shows it, one decimal always ("17.0", not "17"); "" for none."""
    v = pct(value)
    return "" if v is None else f"{v:.1f}"


def number(value: object, digits: int = 2) -> float | None:
    """A plain number (not a share) rounded for display; None and NaN stay None."""
    v = _float(value)
    return None if v is None else round(v, digits)


def metric_value(m: MetricSpec, row: dict | pd.Series) -> float | None:
    return pct(row.get(m.key)) if m.percent else number(row.get(m.key))


def metric_digits(m: MetricSpec) -> int:
    """The decimals `metric_value` keeps: one for a percentage, two for a plain number."""
    return 1 if m.percent else 2


# Undefined metrics (issue 16): a published 0 whose denominator is 0 shows as "n/a", the reason on hover.
UNDEFINED = "undefined."  # row column prefix (worker.leaderboard): the scorer's reason, text


def undefined_reason(row: dict | pd.Series, key: str, lang: str = "en") -> str:
    """The scorer's reason why metric `key` of this row is not a measurement (0/0), in `lang`; or ""."""
    reason = row.get(f"{UNDEFINED}{key}")
    return say(reason, lang) if isinstance(reason, str) else ""


def na_cell(reason: str) -> str:
    """ "n/a" with the reason as hover text (a title attribute), for a "markdown" cell; escaped."""
    return f'<span class="undefined-metric" title="{html.escape(reason, quote=True)}">n/a</span>'


SHOWN = "shown"  # DataFrame.attrs key: {column: the text each cell shows} where it is not the value


def metric_cells(
    values: Sequence[float | None], reasons: Sequence[str], digits: int = 1
) -> tuple[list, ColumnType, list[str]]:
    """One metric column: the values the browser sorts by, the datatype, and the texts shown: each number
    with `digits` decimals ("22.0" beside "47.8", not "22"). Numbers alone are a "number" column. When any
    value is undefined, that value is None (the browser's sort puts it below every number, never between
    two) and the column is "markdown" so its text, `na_cell`, keeps the reason on hover."""
    pairs = list(zip(values, reasons, strict=True))
    texts = [na_cell(r) if r else ("" if v is None else f"{v:.{digits}f}") for v, r in pairs]
    if not any(reasons):
        return list(values), "number", texts
    return [None if r else v for v, r in pairs], "markdown", texts


def dataframe_value(table: pd.DataFrame) -> dict:
    """`table` as a gr.Dataframe value: its values (NaN as None), and, where `table.attrs[SHOWN]` says a
    column shows other text than its values, that text as the cells' display value. Sorting in the browser
    uses the values, the cells show the display value."""
    shown: dict[str, list[str]] = table.attrs.get(SHOWN) or {}

    def plain(v: object) -> object:
        return None if isinstance(v, float) and math.isnan(v) else v

    data = [[plain(v) for v in row] for row in table.itertuples(index=False, name=None)]
    columns = list(table.columns)
    display = [[shown[c][i] if c in shown else None for c in columns] for i in range(len(data))]
    metadata = {"display_value": display, "styling": None} if shown and data else None
    return {"headers": columns, "data": data, "metadata": metadata}


def ci_label(row: dict | pd.Series, key: str) -> str:
    """ "[low, high]" in percent; "" without an interval, or for an undefined metric (no measurement)."""
    if undefined_reason(row, key):
        return ""
    lo, hi = pct(row.get(f"ci.{key}.low")), pct(row.get(f"ci.{key}.high"))
    return "" if lo is None or hi is None else f"[{lo:.1f}, {hi:.1f}]"


def mark(row: dict | pd.Series, lang: str = "zh") -> str:
    marks = []
    if bool(row.get("is_baseline")):
        marks.append(t("mark_baseline", lang))
    if bool(row.get("verified")):
        marks.append(t("mark_verified", lang))
    if row.get("provisional") is True:  # submitted after the latest release: in no official ranking yet
        marks.append(t("mark_provisional", lang))
    return " ".join(marks)


def page_link(submission_id: str, track: str = "", lang: str = "zh") -> str:
    """The relative link to a submission page that keeps the viewer's track and language ("?submission=…
    &track=cold&lang=en"); relative, so it works inside the Space's iframe too. "" for anything that is not
    an id (16 hex characters, worker.records): user text never becomes a link."""
    if not re.fullmatch(r"[0-9a-f]{16}", submission_id):
        return ""
    params = [("submission", submission_id)]
    if track in TRACKS:
        params.append(("track", track))
    if lang == "en":
        params.append(("lang", "en"))
    return "?" + urlencode(params)


def model_cell(row: dict | pd.Series, track: str = "", lang: str = "zh") -> str:
    """The model name (escaped) as a link to its submission page (`page_link`)."""
    name = md(row.get("model_name", "") or t("unnamed", lang))
    link = page_link(str(row.get("submission_id", "")), track, lang)
    return f"[{name}]({link})" if link else name


def links_cell(row: dict | pd.Series, lang: str = "zh") -> str:
    """Paper and code links a submitter gave (http(s) only; anything else is not linked)."""
    given = (
        (t(label, lang), row.get(key))
        for key, label in (("paper_url", "link_paper"), ("code_url", "link_code"))
    )
    return " · ".join(md_link(label, url) for label, url in given if isinstance(url, str) and url)


def _text_cell(row: pd.Series, key: str, lang: str) -> str:
    if key == "mark":
        return mark(row, lang)
    if key == "links":
        return links_cell(row, lang)
    if key == "date":
        return str(row.get("created_at", ""))[:10]
    return str(row.get(key, "") or "")


def display_frame(
    page_rows: pd.DataFrame, track: str, columns: Sequence[str], lang: str = "zh"
) -> tuple[pd.DataFrame, list[ColumnType]]:
    """The visible table for one page of rows and its per-column datatypes ("str", "markdown", "number").

    Metrics are shown as percentages with one decimal; a metric with a CI gets a "95% CI" text column next
    to it so the number column itself stays numeric (and sorts as a number in the browser). The model name
    links to its submission page. A chosen column that is empty on every row of the page is left out.
    """
    chosen = list(columns) or default_columns(track)
    rank, model = header("rank", lang), header("model", lang)
    headers: list[str] = [rank, model]
    types: list[ColumnType] = ["str", "markdown"]
    shown: dict[str, list[str]] = {}
    records = [r for _, r in page_rows.iterrows()]
    data: dict[str, list] = {
        rank: [
            rank_label(lo, hi) for lo, hi in zip(page_rows["rank_low"], page_rows["rank_high"], strict=True)
        ],
        model: [model_cell(r, track, lang) for r in records],
    }

    def add(header: str, kind: ColumnType, values: list, texts: list[str] | None = None) -> None:
        if records and all(v is None or v == "" for v in values) and not any(texts or []):
            return  # empty on this page (no number, no n/a): collapse it
        headers.append(header)
        types.append(kind)
        data[header] = values
        if texts is not None:
            shown[header] = texts

    def add_text() -> None:
        for key in TEXT_COLUMNS:  # in TEXT_COLUMNS order
            if f"text:{key}" in chosen:
                kind: ColumnType = "markdown" if key in MARKDOWN_TEXT else "str"
                add(header(key, lang), kind, [_text_cell(r, key, lang) for r in records])

    # The metrics right after the model (the headline ones fit a 1440 px screen without scrolling sideways),
    # then who (mark, organisation, type, setting, links), then provenance (date, scorer, id).
    for m in METRICS[track]:
        if m.key not in chosen:
            continue
        cells, kind, texts = metric_cells(
            [metric_value(m, r) for r in records],
            [undefined_reason(r, m.key, lang) for r in records],
            metric_digits(m),
        )
        add(m.header(lang), kind, cells, texts)  # empty (explanations): collapses
        if m.ci and m.header(lang) in data:
            add(ci_header(m, lang), "str", [ci_label(r, m.key) for r in records])
    add_text()
    table = pd.DataFrame(data, columns=headers)
    table.attrs[SHOWN] = shown
    return table, types


def top_systems(df: pd.DataFrame, n: int = 5, baselines: bool = True) -> list[str]:
    """Default analysis selection: the top `n` non-baseline systems by rank, plus every baseline."""
    ordered = df.sort_values(["rank", "rank_low"], kind="stable")
    ids = ordered.loc[~ordered["is_baseline"], "submission_id"].head(n).tolist()
    if baselines:
        ids += ordered.loc[ordered["is_baseline"], "submission_id"].tolist()
    return ids


def system_choices(df: pd.DataFrame, limit: int = 500) -> list[tuple[str, str]]:
    """(label, submission_id) for pickers: the top `limit` by rank plus every baseline (labels are plain
    text; Dropdown renders them as text)."""
    ordered = df.sort_values(["rank", "rank_low"], kind="stable")
    picked = pd.concat([ordered.head(limit), ordered.iloc[limit:][ordered["is_baseline"].iloc[limit:]]])
    out = []
    for sid, name, base, low, high in zip(
        picked["submission_id"],
        picked["model_name"],
        picked["is_baseline"],
        picked["rank_low"],
        picked["rank_high"],
        strict=True,
    ):
        tag = " ◆" if base else ""
        out.append((f"{rank_label(low, high)}. {name}{tag} ({sid[:8]})", sid))
    return out


def metric_table(rows: Iterable[dict], track: str, lang: str = "zh") -> tuple[pd.DataFrame, list[ColumnType]]:
    """Analysis metric table for selected systems and its column datatypes: every metric (percent) plus its
    CI when present; an undefined metric (0/0) is "n/a" with the reason on hover, as on the board."""
    rows = list(rows)
    data: dict[str, list] = {header("model", lang): [str(r.get("model_name", "")) for r in rows]}
    types: list[ColumnType] = ["str"]
    shown: dict[str, list[str]] = {}
    for m in METRICS[track]:
        values = [metric_value(m, r) for r in rows]
        if is_explanation(m.key) and all(v is None for v in values):
            continue  # no selected system has explanations: no column
        cells, kind, texts = metric_cells(
            values, [undefined_reason(r, m.key, lang) for r in rows], metric_digits(m)
        )
        data[m.header(lang)] = cells
        types.append(kind)
        shown[m.header(lang)] = texts
        if m.ci:
            data[ci_header(m, lang)] = [ci_label(r, m.key) for r in rows]
            types.append("str")
    table = pd.DataFrame(data)
    table.attrs[SHOWN] = shown
    return table, types
