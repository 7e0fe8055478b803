"""The submission page: pure functions from `Service.submission(id)` to tables, text and figures."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pandas as pd

from scoring.tracks import TRACK_TITLES, metric_spec
from space.board_query import METRICS, PRIMARY

from .i18n import breakdown_name, subset_name, t
from .safe import code, md, md_link
from .scorer_text import say
from .tables import ColumnType, metric_header, na_cell, pct, rank_label, when

TERMINAL = ("published", "rejected", "failed", "held")  # held waits for a maintainer, not a worker
LIFECYCLE = ("received", "queued", "scoring", "scored", "published")


def result_of(sub: Mapping[str, Any] | None) -> dict | None:
    """The scorer result in a submission page (`SubmissionView`: `{"result": {"version", "result"}}`) or in a
    published result envelope (`{"result": result}`); None when there is none (not scored, not shown)."""
    value = (sub or {}).get("result")
    if isinstance(value, dict) and isinstance(value.get("result"), dict):
        return value["result"]
    return value if isinstance(value, dict) and "metrics" in value else None


def version_of(sub: Mapping[str, Any] | None) -> int | None:
    """The shown result's version, else the latest scored one."""
    value = (sub or {}).get("result")
    if isinstance(value, dict) and isinstance(value.get("version"), int):
        return value["version"]
    versions = (sub or {}).get("versions") or []
    return versions[-1].get("version") if versions else None


def record_of(sub: Mapping[str, Any] | None) -> dict:
    """The submission page as a plain dict ({} for none): the renderers below read it with `.get`."""
    return dict(sub) if sub else {}


def _leaves(prefix: str, value: object) -> Iterator[tuple[str, float]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(f"{prefix}.{k}" if prefix else str(k), v)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield prefix, float(value)


LISTED = frozenset(m.key for specs in METRICS.values() for m in specs)


def flatten_metrics(result: dict) -> dict[str, float]:
    """Every numeric leaf of `result.metrics` by dotted path, and the listed explanation metrics of a
    ToxiTrace result (`explanations.<name>`, spec §3): the leaderboard row convention, so the submission
    page shows what its board row shows."""
    flat = dict(_leaves("", result.get("metrics") or {}))
    explained = _leaves("explanations", result.get("explanations") or {})
    flat.update((key, value) for key, value in explained if key in LISTED)
    return flat


def columns(keys: tuple[str, ...], lang: str) -> list[str]:
    """Table headers in `lang` from i18n keys (neutral ones such as "95% CI" are the same in both)."""
    return [t(k, lang) for k in keys]


METRIC_COLUMNS = ("h_metric", "h_value", "h_ci", "h_direction")
# The value is Markdown so an undefined metric (0/0) can show "n/a" with its reason on hover (`na_cell`).
METRIC_TYPES: list[ColumnType] = ["markdown" if c == "h_value" else "str" for c in METRIC_COLUMNS]


def metrics_table(result: dict | None, track: str, lang: str = "zh") -> pd.DataFrame:
    """Every metric by display name (the board's, plus the Chinese one in Chinese) with its value (percent
    with one decimal like the board, or a number with its unit), 95% CI and whether higher or lower is
    better; headline metrics first in the track's order (scoring/metrics_spec.py). A metric the scorer
    names undefined (0/0, published as 0) shows "n/a" with the reason on hover, and no interval."""
    cols = columns(METRIC_COLUMNS, lang)
    if not result:
        return pd.DataFrame(columns=cols)
    flat = flatten_metrics(result)
    ci = result.get("ci") or {}
    undefined = result.get("undefined") or {}
    order = [m.key for m in METRICS.get(track, ())]
    keys = [k for k in order if k in flat] + sorted(k for k in flat if k not in order)
    out = []
    for k in keys:
        spec = metric_spec(track, k)
        c = ci.get(k)
        if spec.percent:
            ci_text = f"[{pct(c[0]):.1f}, {pct(c[1]):.1f}]" if isinstance(c, list) and len(c) == 2 else ""
            shown = f"{pct(flat[k]):.1f} %"  # text: "63.0 %", not "63", one decimal as on the board
        else:
            ci_text = f"[{c[0]:.2f}, {c[1]:.2f}]" if isinstance(c, list) and len(c) == 2 else ""
            shown = f"{flat[k]:.2f} {t(f'unit_{spec.unit}', lang)}"
        if k in undefined:
            shown, ci_text = na_cell(say(str(undefined[k]), lang)), ""
        # The board's names in the page's language; an acronym keeps its name, with the Chinese one beside it.
        name = spec.name(lang)
        if lang == "zh" and name == spec.en != spec.zh:  # an acronym: its Chinese name beside it
            name = f"{spec.en} · {spec.zh}"
        out.append([name, shown, ci_text, spec.direction(lang)])
    return pd.DataFrame(out, columns=cols)


def rank_markdown(row: dict | None, board_size: int, track: str, lang: str = "zh") -> str:
    """Where the submission stands on its board: rank or tie range, and what a range means."""
    if not row:
        return f"**{t('col_rank', lang)}**: {t('not_on_board', lang)}"
    label = rank_label(row.get("rank_low"), row.get("rank_high"))
    primary = metric_header(track, PRIMARY.get(track, ""), lang)
    tied = ""
    if row.get("rank_low") != row.get("rank_high"):
        tied = " · " + t("tied_with", lang, label=label, primary=primary)
    return f"**{t('col_rank', lang)}**: {t('rank_of', lang, label=label, n=board_size)}{tied}"


def subsets_table(result: dict | None, lang: str = "zh") -> pd.DataFrame:
    """VARM cue subsets: rows, JREM (harmful / non-harmful / gap), HER-C, HER-L, parse success; a value
    the scorer withholds (small or label-defined group) shows as n/a, with the reason in the last column."""
    keys = ("jrem", "jrem_harmful", "jrem_non_harmful", "jrem_gap", "her_c", "her_l", "parse_success")
    names = {
        "jrem_harmful": f"{t('h_jrem_harmful', lang)} ↑",
        "jrem_non_harmful": f"{t('h_jrem_non_harmful', lang)} ↑",
        "jrem_gap": f"{t('h_gap', lang)} (pp)",
    }
    cols = [
        t("h_subset", lang),
        t("h_rows", lang),
        *(names.get(k) or metric_header("varm", k, lang) for k in keys),
        t(WITHHELD_COLUMN, lang),
    ]
    subsets = (result or {}).get("subsets") or {}
    out = []
    for name, s in sorted(subsets.items()):
        withheld = say(str(s.get("withheld") or ""), lang)
        out.append([subset_name(name, lang), s.get("rows"), *(_shown(s, k) for k in keys), withheld])
    return pd.DataFrame(out, columns=cols)


def breakdowns_table(result: dict | None, lang: str = "zh") -> pd.DataFrame:
    """ToxiTrace breakdowns; withheld cells (under 30 rows, or P/R/F1 of a label-defined group) and undefined
    ones (0/0, published as 0) show n/a with the reason."""
    keys = ("accuracy", "precision", "recall", "f1", "macro_f1")
    cols = [
        *columns(("h_breakdown", "h_breakdown_value", "h_rows"), lang),
        *(metric_header("cold", k, lang) for k in keys),
        t(WITHHELD_COLUMN, lang),
    ]
    out = []
    for field, values in sorted(((result or {}).get("breakdowns") or {}).items()):
        for value, m in sorted(values.items()):
            out.append(
                [
                    breakdown_name(field, lang),
                    breakdown_name(value, lang),
                    m.get("rows"),
                    *(_shown(m, k) for k in keys),
                    _note(m, lang),
                ]
            )
    return pd.DataFrame(out, columns=cols)


def _note(cell: dict, lang: str = "en") -> str:
    """Why values of this cell are n/a: the withheld reason, then each undefined metric's reason."""
    undefined = cell.get("undefined") or {}
    named = [f"{metric_header('cold', k, lang)}: {say(str(r), lang)}" for k, r in sorted(undefined.items())]
    return " · ".join(note for note in [say(cell.get("withheld") or "", lang), *named] if note)


WITHHELD_COLUMN = "h_note"  # an i18n key: the note column's header in the page's language
NOT_AVAILABLE = "n/a"


def _shown(cell: dict, key: str) -> float | str | None:
    """A percentage, or "n/a" for a value the scorer withheld (present as null next to a reason) or named
    undefined (0/0; the reason is in the note)."""
    if cell.get(key) is None and cell.get("withheld") or key in (cell.get("undefined") or {}):
        return NOT_AVAILABLE
    return pct(cell.get(key))


def format_table(result: dict | None, record: dict, lang: str = "zh") -> pd.DataFrame:
    """The submitter's own format report: issue counts (gold-independent) and any rejected-file problems."""
    issues = (result or {}).get("format_issues") or {}
    out = [["format_issue", k, v] for k, v in sorted(issues.items()) if v]
    if issues and not out:
        out.append(["format_issue", t("none", lang), t("all_formats_ok", lang)])
    report = record.get("report") or {}
    for p in (report.get("errors") or [])[:200]:
        out.append(
            [
                t("line_n", lang, n=p.get("line")) if p.get("line") is not None else t("file", lang),
                p.get("field") or "",
                say(p.get("message") or "", lang),
            ]
        )
    return pd.DataFrame(out, columns=columns(("h_where", "h_issue", "h_count_message"), lang))


OUTPUT_FORMAT_COLUMNS = ("h_line", "ID", "h_issues")


def output_format_table(record: dict, lang: str = "zh") -> pd.DataFrame:
    """The intake format report of the submitter's own outputs (`Service.submission(...)["format_report"]`):
    one row per output that is not schema-valid, with its line number, row id and issue names. Computed from
    the upload and the public inputs only, so it says nothing about the gold answers."""
    entries = (record.get("format_report") or {}).get("entries") or []
    out = [
        [e.get("line"), str(e.get("id") or "—"), ", ".join(str(i) for i in e.get("issues") or [])]
        for e in entries
        if isinstance(e, dict)
    ]
    return pd.DataFrame(out, columns=columns(OUTPUT_FORMAT_COLUMNS, lang))


def output_format_markdown(record: dict, lang: str = "zh") -> str:
    """Count of non-schema-valid outputs (and how many the table shows) plus the lenient-parser advice."""
    report = record.get("format_report")
    if not isinstance(report, dict):
        return ""
    total = int(report.get("total") or 0)
    shown = len(report.get("entries") or [])
    title = f"**{t('output_format', lang)}**"
    if total == 0:
        parts = [f"{title}: {t('outputs_all_valid', lang)}"]
    else:
        more = t("first_listed", lang, n=f"{shown:,}") if shown < total else ""
        parts = [f"{title}: {t('outputs_invalid', lang, n=f'{total:,}')}{more}"]
    parts += [f"{t('advice', lang)}: {md(a, 600)}" for a in report.get("advice") or []]
    return "\n\n".join(parts)


def versions_table(record: dict, lang: str = "zh") -> pd.DataFrame:
    cols = columns(("h_version", "col_scorer_version", "references_sha", "h_scored_at"), lang)
    out = [
        [v.get("version"), v.get("scorer_version"), v.get("references_sha256"), when(v.get("scored_at"))]
        for v in record.get("versions") or []
    ]
    return pd.DataFrame(out, columns=cols)


def history_table(record: dict, lang: str = "zh") -> pd.DataFrame:
    out = [
        [status_name(str(h.get("status")), lang), when(h.get("at")), say(h.get("note") or "", lang)]
        for h in record.get("history") or []
    ]
    return pd.DataFrame(out, columns=columns(("status", "h_at", "h_history_note"), lang))


def header_markdown(  # noqa: C901
    sub: Mapping[str, Any] | None, rank: str = "", lang: str = "zh", hidden_reason: str | None = None
) -> str:
    """Title, status, rank (`rank_markdown`) and metadata block; all user text escaped. One a maintainer
    hid reads hidden in its status, with the maintainer's reason (`hidden_reason`)."""
    rec = record_of(sub)
    if not rec:
        return f"**{t('not_found', lang)}**"
    meta = rec.get("metadata") or {}
    track = str(rec.get("track", ""))
    badges = []
    if rec.get("is_baseline"):
        badges.append(t("mark_baseline", lang))
    if rec.get("verified"):
        badges.append(t("mark_verified", lang))
    if rec.get("hidden"):
        badges.append(t("badge_private" if rec.get("private") else "badge_hidden", lang))

    def field(key: str, value: object) -> str:
        return f"**{t(key, lang)}**: {value}"

    lines = [
        f"## {md(meta.get('model_name') or t('unnamed', lang))} {' · '.join(badges)}",
        " · ".join(
            (
                field("track", md(TRACK_TITLES.get(track, track))),
                field(
                    "status",
                    hidden_status(str(rec.get("status")), None, lang)
                    if hidden_by_maintainer(sub)
                    else code(status_name(str(rec.get("status")), lang)),
                ),
                field("col_submission_id", code(rec.get("submission_id"))),
            )
        ),
        *([rank] if rank else []),
        " · ".join(
            (
                field("col_organisation", md(meta.get("organisation") or "—")),
                field("col_model_type", md(vocabulary("type_", meta.get("model_type"), lang))),
                field("col_setting", md(vocabulary("set_", meta.get("setting"), lang))),
                field("submitter", md(rec.get("submitter") or "—")),
            )
        ),
    ]
    links = [
        md_link(t(label, lang), str(meta[key]))
        for key, label in (("paper_url", "link_paper"), ("code_url", "link_code"))
        if meta.get(key)
    ]
    if links:
        lines.append(" · ".join(links))
    if meta.get("description"):
        lines.append(f"> {md(meta['description'], 1000)}")
    if hidden_by_maintainer(sub) and hidden_reason:
        lines.append(field("hidden_reason", md(say(hidden_reason, lang), 1000)))
    if rec.get("error"):
        lines.append(field("error", md(say(str(rec["error"]), lang), 1000)))
    if (sub or {}).get("released") is False:
        lines.append(f"**{t('badge_not_released', lang)}**: {t('not_released_line', lang)}")
    result = ((sub or {}).get("result") or {}).get("result") or {}
    if result.get("slice") == "public":  # what these numbers are (../shared/spec/disclosure.md §3)
        lines.append(f"> {t('live_board_rule', lang)}")
    return "\n\n".join(lines)


def vocabulary(prefix: str, value: object, lang: str) -> str:
    """A metadata value of a fixed vocabulary (model type, setting) in `lang`; "—" when not given."""
    if not value:
        return "—"
    text = t(f"{prefix}{value}", lang)
    return str(value) if text == f"{prefix}{value}" else text


def provenance_markdown(sub: Mapping[str, Any] | None, lang: str = "zh") -> str:
    rec = record_of(sub)
    result = result_of(sub) or {}
    prov = result.get("provenance") or {}
    boot = result.get("bootstrap") or {}
    scorer = prov.get("scorer_version") or result.get("scorer_version") or "—"
    predictions = prov.get("predictions_sha256") or rec.get("sha256") or "—"
    return "\n".join(
        [
            f"### {t('provenance', lang)}",
            f"- {t('scorer_version', lang)}: {code(scorer)}",
            f"- {t('references_sha', lang)}: {code(prov.get('references_sha256') or '—')}",
            f"- {t('predictions_sha', lang)}: {code(predictions)}",
            f"- {t('h_version', lang)}: {code(version_of(sub) or '—')} · "
            f"{t('h_rows', lang)}: {code(result.get('rows', '—'))}",
            f"- {t('bootstrap', lang, n=code(boot.get('resamples', '—')), seed=code(boot.get('seed', '—')))}",
        ]
    )


def bibtex(sub: Mapping[str, Any] | None) -> str:
    """A BibTeX snippet for citing this result (user text stripped of braces so the entry stays valid)."""
    rec = record_of(sub)
    meta = rec.get("metadata") or {}

    def clean(s: object) -> str:
        return "".join(ch for ch in str(s or "") if ch not in "{}\\%\n\r")[:200]

    sid = clean(rec.get("submission_id"))
    scorer = clean((result_of(sub) or {}).get("scorer_version"))
    track = clean(rec.get("track"))
    year = clean(str(rec.get("created_at") or "")[:4]) or "2026"
    return (
        f"@misc{{{track}-{sid},\n"
        f"  title  = {{{clean(meta.get('model_name'))} on {TRACK_TITLES.get(track, track)}}},\n"
        f"  author = {{{clean(meta.get('organisation') or rec.get('submitter'))}}},\n"
        f"  note   = {{Leaderboard result {sid}, scorer {scorer}}},\n"
        f"  year   = {{{year}}}\n}}"
    )


def is_final(sub: Mapping[str, Any] | None) -> bool:
    """Nothing more will happen to it without a person: a terminal status, or scored and hidden (a hidden
    result is never published, so "scored" is where a private submission rests)."""
    rec = record_of(sub)
    status = str(rec.get("status", ""))
    return status in TERMINAL or (status == "scored" and bool(rec.get("hidden")))


def status_name(status: str, lang: str = "zh") -> str:
    """A lifecycle status in `lang` (an unknown one as it is)."""
    key = f"st_{status}"
    text = t(key, lang)
    return status if text == key else text


def hidden_status(status: str, reason: str | None, lang: str = "zh") -> str:
    """The status of a submission a maintainer hid, as its owner reads it: hidden (off the board), not
    "published" or "scored" (an earlier stage keeps its name), and the maintainer's reason."""
    hidden = t("badge_hidden_by_maintainer", lang)
    text = hidden if status in ("published", "scored") else f"{status_name(status, lang)} · {hidden}"
    return text + (f": {md(say(reason, lang), 200)}" if reason else "")


def hidden_by_maintainer(sub: Mapping[str, Any] | None) -> bool:
    rec = record_of(sub)
    return bool(rec.get("hidden")) and not (sub or {}).get("private")


def status_line(sub: Mapping[str, Any] | None, lang: str = "zh", hidden_reason: str | None = None) -> str:
    """The live lifecycle indicator: every stage, the current one in bold (plain text, no user input); a
    submission a maintainer hid says so instead, with the reason (`hidden_reason`)."""
    rec = record_of(sub)
    status = str(rec.get("status", ""))
    if hidden_by_maintainer(sub) and status in ("published", "scored"):
        return f"**{hidden_status(status, hidden_reason, lang)}**"
    # The reason is the pipeline's English sentence (worker/): said in the page's language (issue 28.9).
    reason = say(str(rec.get("error") or rec.get("reason") or ""), lang)
    if status in ("rejected", "failed"):
        return f"**{status_name(status, lang)}** ✗ — {md(reason, 500)}"
    if status == "held":  # a near-copy: not scored, no score shown, until a maintainer reviews it
        # It used a quota slot, and says so and why (issue 28.14).
        return f"**{status_name(status, lang)}** ‖ — {md(reason, 500)} · {t('held_slot', lang)}"
    if (sub or {}).get("released") is False:  # the Ladder did not release it: no number (disclosure §3)
        return f"**{status_name(status, lang)}** — {t('not_released_line', lang)}"
    parts = []
    for stage in LIFECYCLE:
        name = status_name(stage, lang)
        parts.append(f"**{name}** ●" if stage == status else name)
    return " → ".join(parts)
