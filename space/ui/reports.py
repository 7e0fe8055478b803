"""Validation reports (the Submit page and the dev explorer): pure functions to a table and a verdict."""

from __future__ import annotations

import pandas as pd

from .i18n import t
from .safe import md

REPORT_COLUMNS = ["Line 行", "Field 字段", "Message 说明"]


def report_frame(report: dict | None) -> pd.DataFrame:
    """Validation problems as a (line, field, message) table; file-level problems show "file"."""
    rows = []
    for p in (report or {}).get("errors") or []:
        line = p.get("line")
        rows.append(["file" if line is None else str(line), p.get("field") or "", p.get("message") or ""])
    return pd.DataFrame(rows, columns=REPORT_COLUMNS)


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
            parts.append(f"(showing the first {shown} of {total} 仅显示前 {shown} 个)")
    fmt = report.get("format_report") or []
    if fmt:
        parts.append(
            f"**!** {len(fmt)} output(s) are not schema-valid and will count as wrong "
            f"{len(fmt)} 条输出不符合格式，所有字段将记为错误。"
        )
    for advice in report.get("advice") or []:
        parts.append(f"Advice 建议: {md(advice, 600)}")
    return "\n\n".join(parts)
