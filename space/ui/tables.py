"""Leaderboard tables: pure functions from leaderboard rows (ARCHITECTURE §5) to display frames.

Every cell a user typed (model name, organisation, ...) stays plain text: the display frame declares those
columns as "str" so gr.Dataframe never renders them as Markdown or HTML.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urlencode

import pandas as pd

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
# Text columns: (row key, header). Rank and Model are always shown.
TEXT_COLUMNS = (
    ("organisation", "Organisation 机构"),
    ("model_type", "Type 类型"),
    ("setting", "Setting 设置"),
    ("mark", "Mark 标记"),
    ("date", "Date 日期"),
    ("scorer_version", "Scorer 评分器"),
    ("submission_id", "ID"),
)
DEFAULT_TEXT = ("organisation", "model_type", "setting", "mark", "date", "scorer_version")
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


def metric_header(track: str, key: str) -> str:
    for m in METRICS[track]:
        if m.key == key:
            return m.header
    return key


def column_choices(track: str) -> list[tuple[str, str]]:
    """(label, value) pairs for the column chooser: text columns, then every metric of the track."""
    text = [(header, f"text:{key}") for key, header in TEXT_COLUMNS]
    return text + [(m.header, m.key) for m in METRICS[track]]


def is_explanation(key: str) -> bool:
    return key.startswith("explanations.")


def default_columns(track: str) -> list[str]:
    explanations = [m.key for m in METRICS[track] if is_explanation(m.key)]
    return [f"text:{k}" for k in DEFAULT_TEXT] + list(DEFAULT_METRICS[track]) + explanations


def sort_choices(track: str) -> list[tuple[str, str]]:
    """Sort keys: rank (the official order), every metric, date and model name."""
    return (
        [("Rank 排名", "rank")]
        + [(m.header, m.key) for m in METRICS[track]]
        + [("Date 日期", "date"), ("Model 模型", "model")]
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


def mark(row: dict | pd.Series) -> str:
    marks = []
    if bool(row.get("is_baseline")):
        marks.append("◆ baseline")
    if bool(row.get("verified")):
        marks.append("✓ verified")
    return " ".join(marks)


def _text_cell(row: pd.Series, key: str) -> str:
    if key == "mark":
        return mark(row)
    if key == "date":
        return str(row.get("created_at", ""))[:10]
    return str(row.get(key, "") or "")


def display_frame(
    page_rows: pd.DataFrame, track: str, columns: Sequence[str]
) -> tuple[pd.DataFrame, list[str]]:
    """The visible table for one page of rows and its per-column datatypes ("str" or "number").

    Metrics are shown as percentages with one decimal; a metric with a CI gets a "95% CI" text column next
    to it so the number column itself stays numeric (and sorts as a number in the browser).
    """
    chosen = list(columns) or default_columns(track)
    headers: list[str] = ["Rank 排名", "Model 模型"]
    types: list[str] = ["str", "str"]
    data: dict[str, list] = {
        "Rank 排名": [
            rank_label(lo, hi) for lo, hi in zip(page_rows["rank_low"], page_rows["rank_high"], strict=True)
        ],
        "Model 模型": page_rows["model_name"].tolist(),
    }
    records = [r for _, r in page_rows.iterrows()]

    def add_text(keys: tuple[str, ...]) -> None:
        for key, header in TEXT_COLUMNS:
            if key in keys and f"text:{key}" in chosen:
                headers.append(header)
                types.append("str")
                data[header] = [_text_cell(r, key) for r in records]

    # Who (mark, organisation, type, setting), then the metrics, then provenance (date, scorer, id).
    add_text(("mark", "organisation", "model_type", "setting"))
    for m in METRICS[track]:
        if m.key not in chosen:
            continue
        values = [metric_value(m, r) for r in records]
        if is_explanation(m.key) and all(v is None for v in values):
            continue
        headers.append(m.header)
        types.append("number")
        data[m.header] = values
        if m.ci:
            h = f"{m.header} 95% CI"
            headers.append(h)
            types.append("str")
            data[h] = [ci_label(r, m.key) for r in records]
    add_text(("date", "scorer_version", "submission_id"))
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


def metric_table(rows: Iterable[dict], track: str) -> pd.DataFrame:
    """Analysis metric table for selected systems: every metric (percent) plus its CI when present."""
    out = []
    for r in rows:
        rec: dict[str, object] = {"Model 模型": str(r.get("model_name", ""))}
        for m in METRICS[track]:
            rec[m.header] = metric_value(m, r)
            if m.ci:
                rec[f"{m.header} 95% CI"] = ci_label(r, m.key)
        out.append(rec)
    table = pd.DataFrame(out)
    unused = [c for m in METRICS[track] if is_explanation(m.key) and m.header in table
              and table[m.header].isna().all() for c in (m.header, f"{m.header} 95% CI") if c in table]
    return table.drop(columns=unused)
