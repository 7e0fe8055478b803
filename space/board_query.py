"""The board query: what a viewer asks of a leaderboard (`View`: search, filters, sort, columns, page) and
its answer over the rows (filter, sort, page, CSV and JSON exports). One module, no Gradio and no labels, so
the REST API (space/board_api.py) and the UI (space/ui/) answer the same query the same way; the UI adds the
labels and the display (space/ui/tables.py)."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlencode

import pandas as pd

from scoring.metrics_spec import MetricSpec
from scoring.tracks import MODEL_TYPES, PRIMARY_METRICS, SETTINGS, TRACK_NAMES, metric_spec, metric_specs

TRACKS = TRACK_NAMES
PRIMARY = PRIMARY_METRICS
# Every metric of a track in board order, and the ones shown by default (scoring/metrics_spec.py).
METRICS: dict[str, tuple[MetricSpec, ...]] = {track: metric_specs(track) for track in TRACKS}
DEFAULT_METRICS: dict[str, tuple[str, ...]] = {
    track: tuple(m.key for m in specs if m.default) for track, specs in METRICS.items()
}
# Text columns by row key (their headers are i18n texts `col_<key>`). Rank and Model are always shown.
TEXT_COLUMNS = (
    "organisation",
    "model_type",
    "setting",
    "mark",
    "links",
    "date",
    "scorer_version",
    "submission_id",
)
DEFAULT_TEXT = ("organisation", "model_type", "setting", "mark", "links", "date", "scorer_version")
MARKDOWN_TEXT = ("links",)  # text columns built as Markdown (escaped; links checked)
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


def is_explanation(key: str) -> bool:
    return key.startswith("explanations.")


def default_columns(track: str) -> list[str]:
    return [f"text:{k}" for k in DEFAULT_TEXT] + list(DEFAULT_METRICS[track])


def sort_keys(track: str) -> list[str]:
    """Sort keys: rank (the official order), every metric, date and model name."""
    return ["rank", *(m.key for m in METRICS[track]), "date", "model"]


def column_keys(track: str) -> list[str]:
    """What the column chooser offers: text columns, then every metric of the track."""
    return [f"text:{key}" for key in TEXT_COLUMNS] + [m.key for m in METRICS[track]]


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

    def to_query(self, submission: str | None = None, lang: str = "zh") -> str:
        """A query string ("?track=varm&q=...") that reopens this view in `lang`; defaults are left out."""
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
        if lang == "en":  # Chinese is the default
            params.append(("lang", "en"))
        return "?" + urlencode(params)

    @classmethod
    def from_query(cls, params: dict[str, str]) -> View:
        """Parse query parameters leniently: anything unknown or malformed falls back to the default."""
        track = params.get("track", "varm")
        track = track if track in TRACKS else "varm"
        valid_sorts = set(sort_keys(track))
        sort = params.get("sort", "rank")
        valid_cols = set(column_keys(track))
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


def csv_header(track: str, column: str) -> str:
    """A readable CSV header for a row key: a metric's display name, direction and unit, then the key in
    brackets so scripts can still find it ("JREM ↑ (0–1) [jrem]", "JREM 95% CI low (0–1) [ci.jrem.low]")."""
    key, bound = column, ""
    if column.startswith("ci.") and column.endswith((".low", ".high")):
        key, _, bound = column[3:].rpartition(".")
    if not any(m.key == key for m in METRICS.get(track, ())):
        return column
    spec = metric_spec(track, key)
    unit = "0–1" if spec.percent else spec.unit
    name = f"{spec.en} 95% CI {bound}" if bound else f"{spec.en} {spec.arrow}".rstrip()
    return f"{name} ({unit}) [{column}]"


def to_csv(df: pd.DataFrame, track: str | None = None) -> bytes:
    """Filtered rows with every raw field and unrounded metric, as UTF-8 CSV (BOM for spreadsheet apps).
    Headers are the row keys (REST); with `track` (the UI's export), readable ones (`csv_header`)."""
    out = df[_raw_columns(df)].copy()
    for col in RAW_TEXT_FIELDS:
        if col in out.columns:
            out[col] = out[col].map(_csv_safe)
    if track is not None:
        out.columns = [csv_header(track, c) for c in out.columns]
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
