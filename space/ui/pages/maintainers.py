"""The Maintainers tab (shown to maintainers only; every action re-checks the identity and is audit-logged):
re-scoring and its diff report, moderation, and near-copies held for review."""

from __future__ import annotations

import json

import gradio as gr
import pandas as pd

from worker.service import RescoreReport

from ..context import Context, refused
from ..i18n import both
from ..safe import code, md
from ..tables import DEFAULT_METRICS, metric_header, pct

MODERATION = [
    ("hide 隐藏", "hide"),
    ("unhide 取消隐藏", "unhide"),
    ("flag only 仅标记（审计）", "flag"),
    ("mark verified 标记已验证", "verify"),
    ("unmark verified", "unverify"),
    ("mark baseline 标记基线", "baseline"),
    ("unmark baseline", "unbaseline"),
    ("release held near-copy 放行待审提交", "release"),
    ("reject held near-copy 驳回待审提交", "reject"),
]
FLAGS: dict[str, dict[str, bool]] = {
    "hide": {"hidden": True},
    "unhide": {"hidden": False},
    "verify": {"verified": True},
    "unverify": {"verified": False},
    "baseline": {"is_baseline": True},
    "unbaseline": {"is_baseline": False},
    "flag": {},
}
DIFF_COLUMNS = [
    "Submission 提交",
    "Model 模型",
    "Metric 指标",
    "Old 旧 (%)",
    "New 新 (%)",
    "Change 变化 (points)",
    "Rank 名次",
]
HELD_COLUMNS = [
    "submission_id",
    "submitter",
    "model_name",
    "created_at",
    "rows differing 差异行数",
    "near copy of 相近的提交",
]


def quarantine_markdown(items: list[dict]) -> str:
    """The maintainer report's list of unreadable submission records ("" when there are none)."""
    if not items:
        return ""
    lines = [f"- {code(i['path'])}: {md(i['problem'])}" for i in items[:50]]
    more = f"\n- … and {len(items) - 50} more" if len(items) > 50 else ""
    return (
        f"\n\n**Quarantined records 隔离的记录** ({len(items)}; skipped by the pipeline, "
        "`python -m worker quarantine`):\n" + "\n".join(lines) + more
    )


def diff_rows(data: dict, track: str) -> list[list]:
    """Rows of a re-score report: one per (submission, headline metric), deltas in points."""
    rows: list[list] = []
    for sub in data.get("submissions") or []:
        if not isinstance(sub, dict):
            continue
        old, new = sub.get("old") or {}, sub.get("new") or {}
        rank = f"{sub.get('old_rank', '?')} → {sub.get('new_rank', '?')}"
        if sub.get("skipped") or sub.get("error"):
            note = f"error: {sub['error']}" if sub.get("error") else "skipped (already current) 已是最新"
            rows.append([sub.get("submission_id"), sub.get("model_name"), note, None, None, None, rank])
            continue
        for metric in [m for m in DEFAULT_METRICS.get(track, ()) if m in old or m in new]:
            before, after = old.get(metric), new.get(metric)
            change = None if before is None or after is None else pct(after - before, 2)
            rows.append(
                [
                    sub.get("submission_id"),
                    sub.get("model_name"),
                    metric_header(track, metric),
                    pct(before, 2),
                    pct(after, 2),
                    change,
                    rank,
                ]
            )
    return rows


def report_view(report: RescoreReport | None, track: str) -> tuple[str, pd.DataFrame]:
    """A re-score report as (summary, table)."""
    empty = pd.DataFrame(columns=DIFF_COLUMNS)
    if report is None:
        return "No re-score report yet. 暂无重新评分报告。", empty
    if report.data is None:
        return f"Unreadable report {md(report.path)}", empty
    summary = report.data.get("summary") or {}
    kind = "dry run 试运行" if report.dry_run else "published 已发布"
    head = (
        f"**{md(report.run)}** · {kind} · by {md(report.data.get('actor') or '—')} · scorer "
        f"{md(report.data.get('scorer_version') or '—')} · "
        + " · ".join(f"{md(k)}: {md(v)}" for k, v in summary.items())
    )
    return head, pd.DataFrame(diff_rows(report.data, track), columns=DIFF_COLUMNS)


class MaintainersPage:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        gr.Markdown(
            "Every action re-checks your identity and is audit-logged. 所有操作均复核身份并记入审计日志。"
        )
        with gr.Row():
            self.dry = gr.Checkbox(value=True, label="Dry run 试运行", elem_id="m-dry")
            self.rescore_btn = gr.Button("Re-score 重新评分", elem_id="m-rescore")
            self.report_btn = gr.Button("Latest diff report 最新差异报告", elem_id="m-report")
        self.out = gr.Markdown(elem_id="m-out")
        self.diff = gr.Dataframe(interactive=False, label="Re-score diff 差异", elem_id="m-diff")
        with gr.Row():
            self.id = gr.Textbox(label=both("submission_id"), elem_id="m-id")
            self.action = gr.Dropdown(MODERATION, value="hide", label="Action 操作", elem_id="m-action")
            self.reason = gr.Textbox(label="Reason 理由 (required)", elem_id="m-reason")
            self.apply_btn = gr.Button("Apply 执行", variant="stop", elem_id="m-apply")
        self.moderated = gr.Markdown(elem_id="m-mod-out")
        gr.Markdown(
            "**Held for review 待审**: near-copies of an earlier submission (they would reveal "
            "hidden labels); release or reject one above by its id. "
            "与已有提交几乎相同的文件，需审核。"
        )
        with gr.Row():
            self.held_btn = gr.Button("Held submissions 待审提交", elem_id="m-held-btn")
        self.held_table = gr.Dataframe(interactive=False, label="Held 待审", elem_id="m-held")

    def wire(self, track: gr.Radio, token: gr.Textbox) -> None:
        """`track` is the shell's one track selector."""
        report = [self.out, self.diff]
        self.rescore_btn.click(self.rescore, [track, self.dry, token], report, api_name="maint_rescore")
        self.report_btn.click(self.maint_report, [track, token], report, api_name="maint_report")
        self.apply_btn.click(
            self.moderate,
            [self.id, self.action, self.reason, token],
            self.moderated,
            api_name="maint_moderate",
        )
        self.held_btn.click(self.held, [track, token], self.held_table, api_name="maint_held")

    def rescore(
        self, track: str, dry_run: bool, token: str | None, profile: gr.OAuthProfile | None = None
    ) -> dict:
        actor = self.ctx.maintainer(token, profile)
        out = self.ctx.service.rescore(track, dry_run=bool(dry_run), actor=actor)
        # The re-score runs on a worker; its report appears when it is done ("Latest diff report" reloads).
        summary, table = report_view(self.ctx.service.latest_rescore_report(track), track)
        started = f"Started 已开始: {code(out.get('task_id', ''))} · dry run 试运行: {bool(dry_run)}"
        return {self.out: f"{started}\n\nLatest report 最新报告: {summary}", self.diff: table}

    def maint_report(self, track: str, token: str | None, profile: gr.OAuthProfile | None = None) -> dict:
        """The latest diff report (dry-run reports are private: maintainers only), and the track's
        quarantined (unreadable, skipped) submission records."""
        self.ctx.maintainer(token, profile)
        summary, table = report_view(self.ctx.service.latest_rescore_report(track), track)
        return {
            self.out: summary + quarantine_markdown(self.ctx.service.quarantined(track)),
            self.diff: table,
        }

    def moderate(
        self, sid: str, action: str, reason: str, token: str | None, profile: gr.OAuthProfile | None = None
    ) -> str:
        actor = self.ctx.maintainer(token, profile)
        sid, reason = (sid or "").strip(), (reason or "").strip()
        if not reason:
            raise refused("A reason is required (it goes to the audit log). 请填写理由（写入审计日志）。")
        service = self.ctx.service
        try:
            if action == "release":
                out = service.release(sid, actor=actor, reason=reason)
            elif action == "reject":
                out = service.reject(sid, actor=actor, reason=reason)
            elif action in FLAGS:
                out = service.moderate(sid, actor=actor, reason=reason, **FLAGS[action])
            else:
                raise refused(f"unknown action {action!r}")
        except ValueError as exc:  # unknown id, or not held (worker.service.NotHeld)
            raise refused(str(exc)) from exc
        return f"```json\n{json.dumps(out, ensure_ascii=False, indent=2)[:4000]}\n```"

    def held(self, track: str, token: str | None, profile: gr.OAuthProfile | None = None) -> pd.DataFrame:
        """Near-copies held for review on `track` (maintainers: it names the earlier submission)."""
        self.ctx.maintainer(token, profile)
        rows = self.ctx.service.held(track)
        return pd.DataFrame(
            [
                [
                    r["submission_id"],
                    r["submitter"],
                    (r.get("metadata") or {}).get("model_name"),
                    r["created_at"],
                    r["rows_differing"],
                    r["near_copy_of"],
                ]
                for r in rows
            ],
            columns=HELD_COLUMNS,
        )
