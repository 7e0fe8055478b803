"""Leaderboard tables: pure functions from leaderboard rows (ARCHITECTURE §5) to display frames.

Every cell a user typed stays inert: organisation, type, setting are "str" columns (gr.Dataframe never
renders them as Markdown or HTML); the model name and the paper/code links are "markdown" columns whose user
text is escaped (`safe.md`) and whose only links are ones we build (the submission page, http(s) URLs).
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urlencode

import pandas as pd

from .i18n import t
from .safe import md, md_link

TRACKS = ("varm", "cold", "toxicn", "cntp")
TRACK_TITLES = {"varm": "VARM-Bench", "cold": "COLD", "toxicn": "ToxiCN", "cntp": "CNTP"}
PRIMARY = {"varm": "jrem", "cold": "f1", "toxicn": "f1", "cntp": "spans.overlap_f1"}


@dataclass(frozen=True)
class Metric:
    """A numeric leaderboard column: dotted path into the row, display header, whether it has a CI column."""

    key: str
    header: str
    ci: bool = False
    percent: bool = True  # False: a plain number (a count or a length), shown with two decimals


_VARM_METRICS = (
    Metric("jrem", "JREM", ci=True),
    Metric("macro_f1.label", "Label Macro-F1"),
    Metric("macro_f1.category", "Category Macro-F1"),
    Metric("her_c", "HER-C"),
    Metric("her_l", "HER-L"),
    Metric("t_f1", "T-F1"),
    Metric("parse_success", "Parse success"),
    Metric("field_accuracy.target", "Target acc."),
    Metric("field_accuracy.target_type", "Type acc."),
    Metric("field_accuracy.target_explicitness", "Explicitness acc."),
    Metric("field_accuracy.stance", "Stance acc."),
    Metric("field_accuracy.label", "Label acc."),
    Metric("field_accuracy.category", "Category acc."),
    Metric("anchor_schema_valid", "Anchor schema valid"),
)
_TT_METRICS = (
    Metric("f1", "F1", ci=True),
    Metric("accuracy", "Accuracy"),
    Metric("precision", "Precision"),
    Metric("recall", "Recall"),
    Metric("macro_f1", "Macro-F1"),
)
_SPAN_METRICS = (
    Metric("spans.overlap_f1", "Span overlap F1", ci=True),
    Metric("spans.overlap_precision", "Span overlap P"),
    Metric("spans.overlap_recall", "Span overlap R"),
    Metric("spans.recipe_overlap", "Span recipe overlap"),
    Metric("spans.char_f1", "Span char F1"),
    Metric("spans.iou", "Span IoU"),
)
# The "Expl." column group (spec §3): blank for systems without explanations, and left out of a page on
# which no system has them, so a board without explanations looks as before.
_EXPLANATION_METRICS = (
    Metric("explanations.comprehensiveness", "Expl. comprehensiveness", ci=True),
    Metric("explanations.sufficiency", "Expl. sufficiency (lower better)"),
    Metric("explanations.spans_per_item", "Expl. spans per item", percent=False),
)
_AUPRC = Metric("explanations.auprc", "Expl. attribution AUPRC")
METRICS: dict[str, tuple[Metric, ...]] = {
    "varm": _VARM_METRICS,
    "cold": _TT_METRICS + _EXPLANATION_METRICS,
    "toxicn": _TT_METRICS + _EXPLANATION_METRICS,
    # CNTP's primary metric is the span overlap F1, so it leads; classification follows.
    "cntp": _SPAN_METRICS + _TT_METRICS + (_AUPRC,) + _EXPLANATION_METRICS,
}
# Shown by default (the column chooser adds the rest).
DEFAULT_METRICS: dict[str, tuple[str, ...]] = {
    "varm": ("jrem", "macro_f1.label", "macro_f1.category", "her_c", "her_l", "t_f1", "parse_success"),
    "cold": ("f1", "accuracy", "precision", "recall", "macro_f1"),
    "toxicn": ("f1", "accuracy", "precision", "recall", "macro_f1"),
    "cntp": (
        "spans.overlap_f1",
        "spans.overlap_precision",
        "spans.overlap_recall",
        "spans.char_f1",
        "spans.iou",
        "f1",
        "accuracy",
        "macro_f1",
    ),
}
# Text columns by row key (their headers are i18n texts `col_<key>`). Rank and Model are always shown.
TEXT_COLUMNS = ("organisation", "model_type", "setting", "mark", "links", "date", "scorer_version",
                "submission_id")
DEFAULT_TEXT = ("organisation", "model_type", "setting", "mark", "links", "date", "scorer_version")
MARKDOWN_TEXT = ("links",)  # text columns built as Markdown (escaped; links checked)
MODEL_TYPES = ("open", "closed")
SETTINGS = ("zero-shot", "taxonomy", "fine-tuned")
PAGE_SIZE = 100
RAW_TEXT_FIELDS = (
    "submission_id",
    "model_name",
    "organisation",
    "model_type",
    "setting",
    "submitter",
    "created_at",
    "scored_at",
    "scorer_version",
    "references_sha256",
    "predictions_sha256",
)


# Lower is better for these (hidden error rates); every other metric is higher-is-better.
LOWER_BETTER = frozenset({"her_c", "her_l"})
_FIELD_NAMES = {"target": "Target", "target_type": "Type", "target_explicitness": "Explicitness",
                "stance": "Stance", "label": "Label", "category": "Category"}


def metric_header(track: str, key: str) -> str:
    """A metric's display name: the board's header, else one derived from its dotted key (never the raw
    key such as `macro_f1.stance`)."""
    for m in METRICS.get(track, ()):
        if m.key == key:
            return m.header
    head, _, leaf = key.partition(".")
    words = _FIELD_NAMES.get(leaf, leaf.replace("_", " ").capitalize())
    if head == "macro_f1" and leaf:
        return f"{words} Macro-F1"
    if head == "field_accuracy" and leaf:
        return f"{words} acc."
    if head == "spans" and leaf:
        return f"Span {leaf.replace('_', ' ')}"
    return key.replace("_", " ").replace(".", " · ").capitalize()


def header(key: str, lang: str = "zh") -> str:
    """A table header in `lang`: "rank", "model" or a text column's row key."""
    return t(f"col_{key}", lang)


def better_arrow(key: str, lang: str = "zh") -> str:
    return t("lower_better" if key in LOWER_BETTER else "higher_better", lang)


def better_side(key: str, diff: float | None, significant: bool) -> str:
    """Which of A and B a significant difference A − B favours, given the metric's direction; "" when the
    difference is not significant (a tie) or unknown."""
    if not significant or diff is None or diff == 0:
        return ""
    a_higher = diff > 0
    return "A" if a_higher != (key in LOWER_BETTER) else "B"


def column_choices(track: str, lang: str = "zh") -> list[tuple[str, str]]:
    """(label, value) pairs for the column chooser: text columns, then every metric of the track."""
    text = [(header(key, lang), f"text:{key}") for key in TEXT_COLUMNS]
    return text + [(m.header, m.key) for m in METRICS[track]]


def is_explanation(key: str) -> bool:
    return key.startswith("explanations.")


def default_columns(track: str) -> list[str]:
    explanations = [m.key for m in METRICS[track] if is_explanation(m.key)]
    return [f"text:{k}" for k in DEFAULT_TEXT] + list(DEFAULT_METRICS[track]) + explanations


def sort_choices(track: str, lang: str = "zh") -> list[tuple[str, str]]:
    """Sort keys: rank (the official order), every metric, date and model name."""
    return (
        [(header("rank", lang), "rank")]
        + [(m.header, m.key) for m in METRICS[track]]
        + [(header("date", lang), "date"), (header("model", lang), "model")]
    )


@dataclass(frozen=True)
class View:
    """What the viewer asked for; round-trips through the URL query (`to_query` / `from_query`)."""

    track: str = "varm"
    q: str = ""
    baselines: bool = True
    model_types: tuple[str, ...] = ()  # empty: all
    settings: tuple[str, ...] = ()  # empty: all
    sort: str = "rank"
    columns: tuple[str, ...] = ()  # empty: the track's defaults
    page: int = 1

    def to_query(self, submission: str | None = None) -> str:
        """A query string ("?track=varm&q=...") that reopens this view; defaults are left out."""
        params: list[tuple[str, str]] = [("track", self.track)]
        if self.q:
            params.append(("q", self.q))
        if not self.baselines:
            params.append(("baselines", "0"))
        if self.model_types:
            params.append(("type", ",".join(self.model_types)))
        if self.settings:
            params.append(("setting", ",".join(self.settings)))
        if self.sort != "rank":
            params.append(("sort", self.sort))
        if self.columns and list(self.columns) != default_columns(self.track):
            params.append(("cols", ",".join(self.columns)))
        if self.page > 1:
            params.append(("page", str(self.page)))
        if submission:
            params.append(("submission", submission))
        return "?" + urlencode(params)

    @classmethod
    def from_query(cls, params: dict[str, str]) -> View:
        """Parse query parameters leniently: anything unknown or malformed falls back to the default."""
        track = params.get("track", "varm")
        track = track if track in TRACKS else "varm"
        valid_sorts = {k for _, k in sort_choices(track)}
        sort = params.get("sort", "rank")
        valid_cols = {v for _, v in column_choices(track)}
        cols = tuple(c for c in params.get("cols", "").split(",") if c in valid_cols)
        try:
            page = max(1, int(params.get("page", "1")))
        except ValueError:
            page = 1
        return cls(
            track=track,
            q=params.get("q", "")[:200],
            baselines=params.get("baselines", "1") not in ("0", "false", "no"),
            model_types=tuple(v for v in params.get("type", "").split(",") if v in MODEL_TYPES),
            settings=tuple(v for v in params.get("setting", "").split(",") if v in SETTINGS),
            sort=sort if sort in valid_sorts else "rank",
            columns=cols,
            page=page,
        )


def rows_frame(rows: Sequence[dict] | pd.DataFrame) -> pd.DataFrame:
    """All rows of one leaderboard as a DataFrame (built once per store revision and cached)."""
    df = rows.copy() if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    for col in RAW_TEXT_FIELDS:
        if col not in df.columns:
            df[col] = ""
        df[col] = df[col].fillna("").astype(str)
    for col, default in (("is_baseline", False), ("verified", False)):
        if col not in df.columns:
            df[col] = default
        df[col] = df[col].fillna(default).astype(bool)
    for col in ("rank", "rank_low", "rank_high"):
        if col not in df.columns:
            df[col] = range(1, len(df) + 1)
    # Lower-cased haystack for search, computed once instead of per keystroke.
    df["_search"] = (df["model_name"] + "\n" + df["organisation"] + "\n" + df["submitter"]).str.lower()
    return df


def filter_rows(df: pd.DataFrame, view: View) -> pd.DataFrame:
    """Apply search, filters and sort (ranks stay the official ones: filtering never re-ranks)."""
    mask = pd.Series(True, index=df.index)
    if view.q.strip():
        mask &= df["_search"].str.contains(view.q.strip().lower(), regex=False)
    if not view.baselines:
        mask &= ~df["is_baseline"]
    if view.model_types:
        mask &= df["model_type"].isin(view.model_types)
    if view.settings:
        mask &= df["setting"].isin(view.settings)
    out = df[mask]
    if view.sort == "date":
        return out.sort_values("created_at", ascending=False, kind="stable")
    if view.sort == "model":
        return out.sort_values("model_name", key=lambda s: s.str.lower(), kind="stable")
    if view.sort != "rank" and view.sort in out.columns:
        return out.sort_values(view.sort, ascending=False, kind="stable", na_position="last")
    return out.sort_values(["rank", "rank_low"], kind="stable")


def rank_label(low: object, high: object) -> str:
    """ "3" for a lone rank, "1–3" (en dash) for a tie group spanning positions 1 to 3."""
    try:
        lo, hi = int(low), int(high)  # type: ignore[arg-type]
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


def number(value: object, digits: int = 2) -> float | None:
    """A plain number (not a share) rounded for display; None and NaN stay None."""
    v = _float(value)
    return None if v is None else round(v, digits)


def metric_value(m: Metric, row: dict | pd.Series) -> float | None:
    return pct(row.get(m.key)) if m.percent else number(row.get(m.key))


def ci_label(row: dict | pd.Series, key: str) -> str:
    lo, hi = pct(row.get(f"ci.{key}.low")), pct(row.get(f"ci.{key}.high"))
    return "" if lo is None or hi is None else f"[{lo:.1f}, {hi:.1f}]"


def mark(row: dict | pd.Series, lang: str = "zh") -> str:
    marks = []
    if bool(row.get("is_baseline")):
        marks.append(t("mark_baseline", lang))
    if bool(row.get("verified")):
        marks.append(t("mark_verified", lang))
    return " ".join(marks)


def model_cell(row: dict | pd.Series) -> str:
    """The model name (escaped) as a link to its submission page; relative, so it works inside the Space's
    iframe too. Ids are 16 hex characters (worker.records); anything else gets no link."""
    name = md(row.get("model_name", "") or "(unnamed)")
    sid = str(row.get("submission_id", ""))
    return f"[{name}](?submission={sid})" if re.fullmatch(r"[0-9a-f]{16}", sid) else name


def links_cell(row: dict | pd.Series, lang: str = "zh") -> str:
    """Paper and code links a submitter gave (http(s) only; anything else is not linked)."""
    given = ((t(label, lang), row.get(key)) for key, label in (("paper_url", "link_paper"),
                                                               ("code_url", "link_code")))
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
) -> tuple[pd.DataFrame, list[str]]:
    """The visible table for one page of rows and its per-column datatypes ("str", "markdown", "number").

    Metrics are shown as percentages with one decimal; a metric with a CI gets a "95% CI" text column next
    to it so the number column itself stays numeric (and sorts as a number in the browser). The model name
    links to its submission page. A chosen column that is empty on every row of the page is left out.
    """
    chosen = list(columns) or default_columns(track)
    rank, model = header("rank", lang), header("model", lang)
    headers: list[str] = [rank, model]
    types: list[str] = ["str", "markdown"]
    records = [r for _, r in page_rows.iterrows()]
    data: dict[str, list] = {
        rank: [
            rank_label(lo, hi) for lo, hi in zip(page_rows["rank_low"], page_rows["rank_high"], strict=True)
        ],
        model: [model_cell(r) for r in records],
    }

    def add(header: str, kind: str, values: list) -> None:
        if records and all(v is None or v == "" for v in values):
            return  # empty on this page: collapse it
        headers.append(header)
        types.append(kind)
        data[header] = values

    def add_text() -> None:
        for key in TEXT_COLUMNS:  # in TEXT_COLUMNS order
            if f"text:{key}" in chosen:
                kind = "markdown" if key in MARKDOWN_TEXT else "str"
                add(header(key, lang), kind, [_text_cell(r, key, lang) for r in records])

    # The metrics right after the model (the headline ones fit a 1440 px screen without scrolling sideways),
    # then who (mark, organisation, type, setting, links), then provenance (date, scorer, id).
    for m in METRICS[track]:
        if m.key not in chosen:
            continue
        add(m.header, "number", [metric_value(m, r) for r in records])  # empty (explanations): collapses
        if m.ci and m.header in data:
            add(f"{m.header} 95% CI", "str", [ci_label(r, m.key) for r in records])
    add_text()
    return pd.DataFrame(data, columns=headers), types


def page_slice(df: pd.DataFrame, page: int, size: int = PAGE_SIZE) -> tuple[pd.DataFrame, int, int, int]:
    """Rows of page `page` (1-based, clamped) and (page, first, last) positions for the caption."""
    pages = max(1, -(-len(df) // size))
    page = min(max(1, int(page)), pages)
    start = (page - 1) * size
    part = df.iloc[start : start + size]
    return part, page, start + 1 if len(part) else 0, start + len(part)


def _raw_columns(df: pd.DataFrame) -> list[str]:
    return [c for c in df.columns if not c.startswith("_")]


_CSV_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def _csv_safe(value: object) -> object:
    # Spreadsheet formula injection: a cell a submitter wrote must not start a formula when opened.
    if isinstance(value, str) and value.startswith(_CSV_TRIGGERS):
        return "'" + value
    return value


def to_csv(df: pd.DataFrame) -> bytes:
    """Filtered rows with every raw field and unrounded metric, as UTF-8 CSV (BOM for spreadsheet apps)."""
    out = df[_raw_columns(df)].copy()
    for col in RAW_TEXT_FIELDS:
        if col in out.columns:
            out[col] = out[col].map(_csv_safe)
    buf = io.StringIO()
    out.to_csv(buf, index=False)
    return ("\ufeff" + buf.getvalue()).encode("utf-8")


def to_json(df: pd.DataFrame, track: str) -> bytes:
    """Filtered rows as leaderboard.json-shaped JSON; floats keep every digit (json's repr), NaN -> null."""
    raw = df[_raw_columns(df)]
    rows = raw.astype(object).where(raw.notna(), None).to_dict(orient="records")
    return json.dumps({"track": track, "rows": rows}, ensure_ascii=False, default=_plain).encode("utf-8")


def _plain(value: object) -> object:
    # numpy scalars that survive astype(object) (e.g. numpy bool) -> Python values.
    return value.item() if hasattr(value, "item") else str(value)


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


def metric_table(rows: Iterable[dict], track: str, lang: str = "zh") -> pd.DataFrame:
    """Analysis metric table for selected systems: every metric (percent) plus its CI when present."""
    out = []
    for r in rows:
        rec: dict[str, object] = {header("model", lang): str(r.get("model_name", ""))}
        for m in METRICS[track]:
            rec[m.header] = metric_value(m, r)
            if m.ci:
                rec[f"{m.header} 95% CI"] = ci_label(r, m.key)
        out.append(rec)
    table = pd.DataFrame(out)
    unused = [c for m in METRICS[track] if is_explanation(m.key) and m.header in table
              and table[m.header].isna().all() for c in (m.header, f"{m.header} 95% CI") if c in table]
    return table.drop(columns=unused)
