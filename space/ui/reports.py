"""Validation reports (the Submit page and the dev explorer): pure functions to a table and a verdict."""

from __future__ import annotations

import pandas as pd

from .i18n import t
from .safe import md
from .scorer_text import say

REPORT_COLUMNS = ("h_line", "h_field", "h_message")  # i18n keys


FORMAT_SHOWN = 3  # schema-invalid outputs the summary names before "and N more"


def report_frame(report: dict | None, lang: str = "zh") -> pd.DataFrame:
    """Validation problems as a (line, field, message) table in line order, file-level problems ("file")
    first."""
    rows = []
    problems = (report or {}).get("errors") or []
    for p in sorted(problems, key=lambda p: -1 if p.get("line") is None else p["line"]):
        line = p.get("line")
        rows.append(
            [
                t("file", lang) if line is None else str(line),
                p.get("field") or "",
                say(p.get("message") or "", lang),
            ]
        )
    return pd.DataFrame(rows, columns=[t(key, lang) for key in REPORT_COLUMNS])


def report_markdown(report: dict | None, lang: str) -> str:
    """Verdict, hidden-problem count and lenient-parser advice (advice is scorer text: escaped anyway)."""
    if not report:
        return ""
    if report.get("valid"):
        parts = [f"**✓** {t('valid_ok', lang, rows=report.get('rows', 0))}"]
    else:
        total = report.get("errors_total", len(report.get("errors") or []))
        parts = [f"**✗** {t('valid_bad', lang, n=total)}"]
        shown = len(report.get("errors") or [])
        if total > shown:
            parts.append(t("showing_first", lang, shown=shown, n=total))
    fmt = report.get("format_report") or []
    if fmt:
        where = ", ".join(
            t("line_id", lang, line=e.get("line"), id=md(str(e.get("id")), 80)) for e in fmt[:FORMAT_SHOWN]
        )
        if len(fmt) > FORMAT_SHOWN:
            where += " " + t("and_more", lang, n=len(fmt) - FORMAT_SHOWN)
        parts.append(f"**!** {t('will_count_wrong', lang, n=len(fmt), where=where)}")
    for advice in report.get("advice") or []:
        parts.append(f"{t('advice', lang)}: {md(say(advice, lang), 600)}")
    return "\n\n".join(parts)
