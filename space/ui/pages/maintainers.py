"""The Maintainers tab (shown to maintainers only; every action re-checks the identity and is audit-logged):
re-scoring and its diff report, moderation, and submissions held for review (near-copies, gold matches)."""

from __future__ import annotations

import gradio as gr
import pandas as pd

from space.board_query import DEFAULT_METRICS
from worker.errors import ServiceError
from worker.nearcopy import COPY_OF_ANOTHER, COPY_OF_CONCEALED
from worker.service import RescoreReport

from ..answers import answer_text
from ..context import Context, refused
from ..i18n import both, t
from ..safe import code, md
from ..tables import HIDE_EMPTY, PHONE_CARDS, WIDE_LAST, metric_header, page_link, pct, when

# (i18n key of the label, action)
MODERATION = (
    ("act_hide", "hide"),
    ("act_unhide", "unhide"),
    ("act_flag", "flag"),
    ("act_verify", "verify"),
    ("act_unverify", "unverify"),
    ("act_baseline", "baseline"),
    ("act_unbaseline", "unbaseline"),
    ("act_release", "release"),
    ("act_reject", "reject"),
)
FLAGS: dict[str, dict[str, bool]] = {
    "hide": {"hidden": True},
    "unhide": {"hidden": False},
    "verify": {"verified": True},
    "unverify": {"verified": False},
    "baseline": {"is_baseline": True},
    "unbaseline": {"is_baseline": False},
    "flag": {},
}
DIFF_COLUMNS = ("h_submission", "col_model", "h_metric", "h_old", "h_new", "h_change", "col_rank")
HELD_COLUMNS = (
    "col_submission_id",
    "submitter",
    "col_model",
    "h_submitted_at",
    "h_rows_differing",
    "h_near_copy_of",
    "h_held_for",  # last: a sentence, two of a phone card's three columns (WIDE_LAST)
)
# Why a submission is held, from its record's reason (worker/service/intake.py `_hold`): an exact copy is
# one of these two; any other near_copy hold is a near-copy (a few rows differ).
COPY_REASONS = {COPY_OF_ANOTHER: "held_for_copy_other", COPY_OF_CONCEALED: "held_for_copy_own"}


def near_copy_link(submission_id: str | None, track: str, lang: str) -> str:
    """The earlier submission a held one nearly copies, as a link to its page (its id as the text)."""
    link = page_link(submission_id or "", track, lang)
    return f"[{submission_id}]({link})" if link else md(submission_id or "")


def held_for_text(row: dict, lang: str) -> str:
    """Why a held submission is held, in a short sentence: a gold match (its labels agree with a public test's
    references, ../shared/spec/disclosure.md §5), an identical copy (of another submitter's file, or of the
    same submitter's concealed one) or a near-copy of an earlier submission."""
    if row.get("held_for") == "gold_match":
        return t("held_for_gold_match", lang)
    return t(COPY_REASONS.get(row.get("reason") or "", "held_for_near_copy"), lang)


def held_row(row: dict, track: str, lang: str) -> list:
    """One row of the held list (HELD_COLUMNS). A gold match copies nothing: no rows differing, no earlier
    submission (a record released from a near-copy hold and then held as a gold match still has one)."""
    gold = row.get("held_for") == "gold_match"
    return [
        row["submission_id"],
        row["submitter"],
        (row.get("metadata") or {}).get("model_name"),
        when(row["created_at"]),
        "" if gold else row["rows_differing"],
        "" if gold else near_copy_link(row["near_copy_of"], track, lang),
        held_for_text(row, lang),
    ]


def moderation_choices(lang: str) -> list[tuple[str, str]]:
    return [(t(key, lang), action) for key, action in MODERATION]


def quarantine_markdown(items: list[dict], lang: str = "zh") -> str:
    """The maintainer report's list of unreadable submission records ("" when there are none)."""
    if not items:
        return ""
    lines = [f"- {code(i['path'])}: {md(i['problem'])}" for i in items[:50]]
    more = "\n- " + t("and_more", lang, n=len(items) - 50) if len(items) > 50 else ""
    return f"\n\n{t('quarantined', lang, n=len(items))}\n" + "\n".join(lines) + more


def check_note(sub: dict, lang: str) -> str | None:
    """What a forced re-score found for one submission: reproduced, or which stored files differ."""
    version = md(sub.get("compared_version", "?"))
    if sub.get("check") == "reproduced":
        return t("row_reproduced", lang, v=version)
    if sub.get("check") == "differs":
        parts = "、" if lang != "en" else ", "
        named = parts.join(md(t(f"part_{p}", lang)) for p in sub.get("differs") or [])
        return t("row_differs", lang, v=version, parts=named)
    return None


def diff_rows(data: dict, track: str, lang: str = "zh") -> list[list]:
    """Rows of a re-score report: one per (submission, headline metric), deltas in points; in a forced run
    a first row per submission says whether it reproduced its stored version."""
    rows: list[list] = []
    for sub in data.get("submissions") or []:
        if not isinstance(sub, dict):
            continue
        old, new = sub.get("old") or {}, sub.get("new") or {}
        rank = f"{sub.get('old_rank', '?')} → {sub.get('new_rank', '?')}"
        checked = None if sub.get("error") else check_note(sub, lang)
        if checked is not None:
            rows.append([sub.get("submission_id"), sub.get("model_name"), checked, None, None, None, rank])
            if sub.get("check") == "reproduced":
                continue
        if sub.get("skipped") or sub.get("error"):
            note = f"{t('error', lang)}: {sub['error']}" if sub.get("error") else t("skipped_current", lang)
            rows.append([sub.get("submission_id"), sub.get("model_name"), note, None, None, None, rank])
            continue
        for metric in [m for m in DEFAULT_METRICS.get(track, ()) if m in old or m in new]:
            before, after = old.get(metric), new.get(metric)
            change = None if before is None or after is None else pct(after - before, 2)
            rows.append(
                [
                    sub.get("submission_id"),
                    sub.get("model_name"),
                    metric_header(track, metric, lang),
                    pct(before, 2),
                    pct(after, 2),
                    change,
                    rank,
                ]
            )
    return rows


def empty_diff(lang: str) -> pd.DataFrame:
    return pd.DataFrame(columns=[t(k, lang) for k in DIFF_COLUMNS])


def empty_held(lang: str) -> pd.DataFrame:
    return pd.DataFrame(columns=[t(k, lang) for k in HELD_COLUMNS])


def shows_rows(table: pd.DataFrame | None) -> bool:
    """Does a table the page sends back hold data? (Gradio may send an empty one as a row of blanks.)"""
    if table is None or table.empty:
        return False
    # Cell by cell: pandas 3 keeps a missing value missing through astype(str) (a held gold match's empty
    # count comes back from the page as NaN), and "NaN".strip() was the language toggle's error toast.
    return any(
        not pd.isna(cell) and str(cell).strip() not in ("", "nan", "None")
        for cell in table.to_numpy().ravel()
    )


SUMMARY_KEYS = {
    "submissions": "sum_submissions",
    "rescored": "sum_rescored",
    "skipped": "sum_skipped",
    "errors": "sum_errors",
    "rank_changes": "sum_rank_changes",
    "reproduced": "sum_reproduced",
    "differs": "sum_differs",
}


def summary_text(summary: dict, lang: str) -> str:
    """A re-score summary's counts in words ("3 re-scored · 1 skipped"); a key without a text stays as is."""
    parts = []
    known = [k for k in SUMMARY_KEYS if k in summary]  # in a reader's order (the stored JSON sorts keys)
    for key, value in [(k, summary[k]) for k in known] + [i for i in summary.items() if i[0] not in known]:
        if isinstance(value, (dict, list)):
            continue  # per-submission details: the table shows them
        text = SUMMARY_KEYS.get(key)
        parts.append(t(text, lang, n=md(value)) if text else f"{md(key)}: {md(value)}")
    return " · ".join(parts)


def moderation_text(action: str, answer: dict, lang: str) -> str:
    """What a moderation did, in a sentence: the action, the submission and where it stands now."""
    sid = str(answer.get("submission_id", ""))
    name = md((answer.get("metadata") or {}).get("model_name") or sid)
    link = page_link(sid, str(answer.get("track", "")), lang)
    where = f"[{name}]({link})" if link else name
    state = []
    if "status" in answer:
        state.append(f"{t('status', lang)}: {md(answer['status'])}")
    if "hidden" in answer:
        state.append(t("now_hidden" if answer["hidden"] else "now_visible", lang))
    for flag in ("verified", "is_baseline"):
        if flag in FLAGS.get(action, {}):
            state.append(f"{md(flag)}: {md(answer.get(flag))}")
    label = next((text for text, key in moderation_choices(lang) if key == action), action)
    return f"✓ {md(label)} · {where} · " + " · ".join(state)


def report_view(report: RescoreReport | None, track: str, lang: str = "zh") -> tuple[str, pd.DataFrame]:
    """A re-score report as (summary, table)."""
    empty = empty_diff(lang)
    columns = list(empty.columns)
    if report is None:
        return t("no_report", lang), empty
    if report.data is None:
        return f"{t('unreadable_report', lang)} {md(report.path)}", empty
    summary = report.data.get("summary") or {}
    kind = t("dry_run" if report.dry_run else "st_published", lang)
    if report.data.get("force"):
        kind += f" · {t('forced', lang)}"
    head = (
        f"**{md(report.run)}** · {kind} · {t('by', lang)} {md(report.data.get('actor') or '—')} · "
        f"{t('col_scorer_version', lang)} {md(report.data.get('scorer_version') or '—')} · "
        + summary_text(summary, lang)
    )
    return head, pd.DataFrame(diff_rows(report.data, track, lang), columns=columns)


class MaintainersPage:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        ctx.texts(gr.Markdown(), value="maint_intro")
        with gr.Row():
            self.dry = gr.Checkbox(value=True, label=both("dry_run"), elem_id="m-dry")
            self.force = gr.Checkbox(value=False, label=both("force_rescore"), elem_id="m-force")
            self.rescore_btn = gr.Button(both("rescore"), elem_id="m-rescore")
            self.report_btn = gr.Button(both("latest_report"), elem_id="m-report")
        self.out = gr.Markdown(elem_id="m-out")
        # Data tables: not bound to the toggle's texts (that would empty them); `relabel` redraws them.
        # On a phone each row is a card (PHONE_CARDS): the verdict and the numbers on screen, no sideways
        # scroll; nothing is drawn before a report has rows (HIDE_EMPTY).
        self.diff = gr.Dataframe(
            empty_diff("zh"),
            interactive=False,
            wrap=True,
            label=both("rescore_diff"),
            elem_id="m-diff",
            elem_classes=[*PHONE_CARDS, *HIDE_EMPTY],
        )
        with gr.Row():
            self.id = gr.Textbox(label=both("submission_id"), elem_id="m-id")
            self.action = ctx.texts(
                gr.Dropdown(moderation_choices("zh"), value="hide", label=both("action"), elem_id="m-action"),
                choices=moderation_choices,
            )
            self.reason = gr.Textbox(label=both("reason_required"), elem_id="m-reason")
            self.apply_btn = gr.Button(both("apply"), variant="stop", elem_id="m-apply")
        self.moderated = gr.Markdown(elem_id="m-mod-out")
        ctx.texts(gr.Markdown(), value="cut_intro")
        with gr.Row():
            self.release_name = gr.Textbox(
                label=both("release_name"), placeholder="2027-03", elem_id="m-rel-name"
            )
            self.cut_btn = gr.Button(both("cut_release"), variant="stop", elem_id="m-cut")
        self.cut_out = gr.Markdown(elem_id="m-cut-out")
        ctx.texts(gr.Markdown(), value="held_intro")
        with gr.Row():
            self.held_btn = gr.Button(both("held_btn"), elem_id="m-held-btn")
        self.held_table = gr.Dataframe(
            empty_held("zh"),
            interactive=False,
            label=both("held"),
            elem_id="m-held",
            wrap=True,
            elem_classes=[*PHONE_CARDS, *WIDE_LAST, *HIDE_EMPTY],
            datatype=["str", "str", "str", "str", "number", "markdown", "str"],
        )

    def wire(self, track: gr.Radio, token: gr.Textbox, lang: gr.Radio) -> None:
        """`track` is the shell's one track selector."""
        report = [self.out, self.diff]
        # `force` last: a caller of the API written before it may leave it out (unchecked).
        rescore_inputs = [track, self.dry, token, lang, self.force]
        self.rescore_btn.click(self.rescore, rescore_inputs, report, api_name="maint_rescore")
        self.report_btn.click(self.maint_report, [track, token, lang], report, api_name="maint_report")
        self.apply_btn.click(
            self.moderate,
            [self.id, self.action, self.reason, token, lang],
            self.moderated,
            api_name="maint_moderate",
        ).success(self.held_after, [self.action, track, token, lang], self.held_table, api_name=False)
        self.held_btn.click(self.held, [track, token, lang], self.held_table, api_name="maint_held")
        cut_inputs = [track, self.release_name, token, lang]
        self.cut_btn.click(self.cut_release, cut_inputs, self.cut_out, api_name="maint_cut_release")

    def relabel_inputs(self, track: gr.Radio, token: gr.Textbox, lang: gr.Radio) -> list:
        return [track, self.diff, self.held_table, token, lang]

    @property
    def relabel_outputs(self) -> list:
        return [self.out, self.diff, self.held_table]

    def relabel(
        self,
        track: str,
        diff: pd.DataFrame | None,
        held: pd.DataFrame | None,
        token: str | None,
        lang: str = "zh",
        profile: gr.OAuthProfile | None = None,
    ) -> dict:
        """The tables in the page's new language: what they showed is read again in it (a maintainer's
        report and held list), an empty one gets this language's headers."""
        out: dict = {self.out: gr.skip(), self.diff: empty_diff(lang), self.held_table: empty_held(lang)}
        try:
            if shows_rows(diff):
                out.update(self.maint_report(track, token, lang, profile))
            if shows_rows(held):
                out[self.held_table] = self.held(track, token, lang, profile)
        except gr.Error:  # signed out since: the tables empty, no error for a language switch
            pass
        return out

    def rescore(
        self,
        track: str,
        dry_run: bool,
        token: str | None,
        lang: str = "zh",
        force: bool = False,
        profile: gr.OAuthProfile | None = None,
    ) -> dict:
        actor = self.ctx.maintainer(token, profile, lang)
        out = self.ctx.service.rescore(track, dry_run=bool(dry_run), actor=actor, force=bool(force))
        # The re-score runs on a worker: its report is not there yet, and the newest one is an earlier
        # run's, so none is shown as if it were this one's ("Latest diff report" shows it when done).
        task = code(out.get("task_id", ""))
        kind = t("dry_run" if dry_run else "real_run", lang) + (f" · {t('forced', lang)}" if force else "")
        started = f"{t('started', lang)}: {task} · {kind} · {t('report_when_done', lang)}"
        return {self.out: started, self.diff: empty_diff(lang)}

    def maint_report(
        self, track: str, token: str | None, lang: str = "zh", profile: gr.OAuthProfile | None = None
    ) -> dict:
        """The latest diff report (dry-run reports are private: maintainers only), and the track's
        quarantined (unreadable, skipped) submission records."""
        self.ctx.maintainer(token, profile, lang)
        summary, table = report_view(self.ctx.service.latest_rescore_report(track), track, lang)
        return {
            self.out: summary + quarantine_markdown(self.ctx.service.quarantined(track), lang),
            self.diff: table,
        }

    def moderate(
        self,
        sid: str,
        action: str,
        reason: str,
        token: str | None,
        lang: str = "zh",
        profile: gr.OAuthProfile | None = None,
    ) -> str:
        actor = self.ctx.maintainer(token, profile, lang)
        sid, reason = (sid or "").strip(), (reason or "").strip()
        if not reason:
            raise refused(t("need_reason", lang))
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
        except ServiceError as exc:  # unknown id, not held, no reason
            raise refused(answer_text(exc, lang)) from exc
        return moderation_text(action, dict(out), lang)

    def cut_release(
        self,
        track: str,
        name: str,
        token: str | None,
        lang: str = "zh",
        profile: gr.OAuthProfile | None = None,
    ) -> str:
        """Send the cut of release `name` of `track` to a worker (the same cut as the CLI and REST)."""
        actor = self.ctx.maintainer(token, profile, lang)
        try:
            out = self.ctx.service.cut_release(track, (name or "").strip(), actor)
        except ServiceError as exc:  # a malformed name, or one taken
            raise refused(answer_text(exc, lang)) from exc
        return t("cut_sent", lang, task=code(out["task_id"]))

    def held_after(
        self,
        action: str,
        track: str,
        token: str | None,
        lang: str = "zh",
        profile: gr.OAuthProfile | None = None,
    ) -> object:
        """The held list again after a review ended a hold; other moderation leaves it (the list reads every
        record of the track)."""
        if action not in ("release", "reject"):
            return gr.skip()
        return self.held(track, token, lang, profile)

    def held(
        self, track: str, token: str | None, lang: str = "zh", profile: gr.OAuthProfile | None = None
    ) -> pd.DataFrame:
        """Submissions held for review on `track`, each with why (maintainers: a near-copy's row names the
        earlier submission; a gold match's names none, whatever an earlier hold of it left in the record)."""
        self.ctx.maintainer(token, profile, lang)
        rows = self.ctx.service.held(track)
        return pd.DataFrame(
            [held_row(dict(r), track, lang) for r in rows],
            columns=[t(k, lang) for k in HELD_COLUMNS],
            dtype=object,  # a count stays 1 (not 1.0) beside a gold match's empty cell
        )
