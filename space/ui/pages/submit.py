"""The Submit tab: sign-in, the upload form, instant validation, the submission and its live status, and
the submitter's own submissions ("My submissions", with making a private one public)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gradio as gr
import pandas as pd

from scoring.tracks import TRACK_TITLES
from worker.errors import QuotaExceeded, ServiceError
from worker.own import OwnSubmission
from worker.records import is_submission_id

from .. import submission
from ..answers import answer_text
from ..context import Context, refused
from ..i18n import both, t
from ..reports import report_frame, report_markdown
from ..safe import code, is_http_url, md
from ..tables import (
    HIDE_EMPTY,
    PHONE_CARDS,
    WIDE_LAST,
    metric_header,
    page_link,
    pct,
    setting_choices,
    type_choices,
)
from ..upload import drop_zone

MINE_COLUMNS = ("col_model", "track", "status", "h_primary", "h_format_issues", "h_submitted_at", "h_page")


def quota_line(q: Mapping[str, Any], lang: str) -> str:
    if not q or q.get("limit") is None:
        return ""
    nxt = t("next_slot", lang, at=md(q["next_slot_at"])) if q.get("next_slot_at") else ""
    return t("quota", lang, remaining=q.get("remaining"), limit=q.get("limit"), next=nxt)


def own_row(sub: OwnSubmission, lang: str) -> list:
    """One row of "My submissions": the primary score in percent (one decimal), the page as a link."""
    score = sub.scores.get(sub.primary_metric)
    primary = (
        "" if score is None else f"{metric_header(sub.track, sub.primary_metric, lang)} {pct(score):.1f}"
    )
    status = submission.status_name(sub.status, lang)
    if sub.private:
        status += f" · {t('badge_private', lang)}"
    elif sub.hidden:  # a maintainer took it off the board: it reads so, and why, not "published"
        status = submission.hidden_status(sub.status, sub.hidden_reason, lang)
    if not sub.released:
        status += f" · {t('badge_not_released', lang)}"
    return [
        md(sub.model_name or t("unnamed", lang)),
        TRACK_TITLES.get(sub.track, sub.track),
        status,
        primary,
        "—" if sub.format_issues is None else str(sub.format_issues),
        sub.created_at[:16].replace("T", " "),
        f"[{sub.submission_id}]({page_link(sub.submission_id, sub.track, lang) or sub.link})",
    ]


def percent_text(value: float | None) -> str:
    shown = pct(value, 1)
    return "—" if shown is None else f"{shown:.1f}"


class SubmitPage:
    def __init__(self, ctx: Context, status_seconds: float) -> None:
        self.ctx = ctx
        mode = ctx.auth_mode
        with gr.Row():
            if mode == "oauth":
                gr.LoginButton(elem_id="login")
            self.token = gr.Textbox(
                label=both("token"),
                type="password",
                visible=mode in ("token", "hub"),
                placeholder=both("token_hint"),
                elem_id="token",
            )
            self.sign_in_btn = gr.Button(both("check_sign_in"), scale=0, elem_id="sign-in")
        self.who = gr.Markdown(elem_id="who")
        with gr.Row():
            with gr.Column(scale=1):
                self.upload = drop_zone(ctx.texts, "upload", "upload")
                self.quota = gr.Markdown(elem_id="quota")
                self.private = gr.Checkbox(
                    value=False, label=both("private"), info=both("private_info"), elem_id="private"
                )
            with gr.Column(scale=1):
                self.model_name = gr.Textbox(label=both("model_name"), max_length=100, elem_id="model-name")
                self.organisation = gr.Textbox(
                    label=both("organisation"), max_length=200, elem_id="organisation"
                )
                with gr.Row():
                    self.model_type = ctx.texts(
                        gr.Radio(value="", label=both("model_type"), elem_id="model-type"),
                        choices=lambda lang: [("—", ""), *type_choices(lang)],
                    )
                    self.setting = ctx.texts(
                        gr.Radio(value="", label=both("setting"), elem_id="setting"),
                        choices=lambda lang: [("—", ""), *setting_choices(lang)],
                    )
                self.paper_url = gr.Textbox(
                    label=both("paper_url"), placeholder="https://…", elem_id="paper-url"
                )
                self.code_url = gr.Textbox(
                    label=both("code_url"), placeholder="https://…", elem_id="code-url"
                )
                self.description = gr.Textbox(
                    label=both("description"), lines=2, max_length=2000, elem_id="description"
                )
        with gr.Row():
            self.validate_btn = gr.Button(both("validate_btn"), elem_id="validate")
            self.submit_btn = gr.Button(both("submit_btn"), variant="primary", elem_id="submit")
        ctx.texts(gr.Markdown(elem_id="live-board-rule"), value="live_board_rule")  # disclosure §3
        self.message = gr.Markdown(elem_id="submit-message")
        # Not drawn until a report has a problem to list (HIDE_EMPTY); the language toggle writes it again
        # from `shown_report` (relabel_outcome).
        self.report = ctx.texts(
            gr.Dataframe(
                interactive=False,
                wrap=True,
                label=both("validation_report"),
                elem_id="report",
                elem_classes=[*PHONE_CARDS, *WIDE_LAST, *HIDE_EMPTY],
            ),
            value=lambda lang: report_frame(None, lang),
        )
        self.sub_id = gr.Textbox(label=both("submission_id"), interactive=False, elem_id="new-id")
        self.status = gr.Markdown(elem_id="status")
        self.link = gr.Markdown(elem_id="submission-link")
        self.status_timer = gr.Timer(status_seconds, active=False)
        # The report the message was written from, so the language toggle writes it again in the new
        # language: None until this page has shown an outcome, {} for a message with no report behind it.
        self.shown_report = gr.State(None)
        with gr.Accordion(both("my_submissions"), open=True, elem_id="my-subs-box"):
            self.mine_btn = gr.Button(both("refresh_mine"), size="sm", elem_id="my-subs-refresh")
            self.mine = gr.Dataframe(
                interactive=False,
                wrap=True,
                datatype="markdown",
                elem_id="my-subs",
                elem_classes=[*PHONE_CARDS, *HIDE_EMPTY],
            )
            with gr.Row():
                self.mine_private = gr.Dropdown([], label=both("private_pick"), elem_id="my-private")
                self.make_public_btn = gr.Button(both("make_public"), scale=0, elem_id="make-public")
            self.mine_msg = gr.Markdown(elem_id="make-public-msg")
            with gr.Row():  # the owner takes a public entry back: private (off the board), public again above
                self.mine_public = gr.Dropdown([], label=both("public_pick"), elem_id="my-public")
                self.withdraw_btn = gr.Button(both("withdraw"), scale=0, elem_id="withdraw")
            self.withdraw_msg = gr.Markdown(elem_id="withdraw-msg")
            with gr.Row():  # disclosure §4: at most 2 finals per track go into a release
                self.finals = gr.Dropdown(
                    [], multiselect=True, max_choices=2, label=both("finals_pick"), elem_id="my-finals"
                )
                self.finals_btn = gr.Button(both("save_finals"), scale=0, elem_id="save-finals")
            self.finals_msg = gr.Markdown(elem_id="finals-msg")
            self.notices = gr.Markdown(elem_id="my-notices")

    def wire(self, demo: gr.Blocks, track: gr.Radio, lang: gr.Radio, maint_tab: gr.Tab) -> None:
        """`track` is the shell's one track selector."""
        self.maint_tab = maint_tab  # sign-in shows it to maintainers
        signed = [self.who, maint_tab]
        quota_in = [track, self.token, lang]
        mine_in, mine_out = self.mine_inputs(lang), self.mine_outputs
        self.sign_in_btn.click(self.sign_in, [self.token, lang], signed, api_name="sign_in").then(
            self.quota_text, quota_in, self.quota, api_name="quota"
        ).then(self.my_submissions, mine_in, mine_out, api_name=False)
        gr.on(
            [self.token.submit, self.token.blur], self.sign_in, [self.token, lang], signed, api_name=False
        ).then(self.quota_text, quota_in, self.quota, api_name=False).then(
            self.my_submissions, mine_in, mine_out, api_name=False
        )
        demo.load(self.sign_in, [self.token, lang], signed, api_name="whoami").then(
            self.my_submissions, mine_in, mine_out, api_name=False
        )
        # .change: follows the track however it is set (the selector, or a link opened by load_view).
        track.change(
            self.quota_text, quota_in, self.quota, api_name="quota_for_track", show_progress="hidden"
        )
        checked = [self.message, self.report, self.shown_report]
        self.upload.upload(self.validate, [track, self.upload, lang], checked, api_name="validate_upload")
        self.validate_btn.click(self.validate, [track, self.upload, lang], checked, api_name="validate")
        self.submit_btn.click(
            self.submit,
            [
                track,
                self.upload,
                self.model_name,
                self.organisation,
                self.model_type,
                self.setting,
                self.paper_url,
                self.code_url,
                self.description,
                self.token,
                lang,
                self.private,  # last: earlier inputs keep their /submit API positions
            ],
            [
                self.message,
                self.report,
                self.shown_report,
                self.sub_id,
                self.status,
                self.status_timer,
                self.link,
                self.quota,
            ],
            api_name="submit",
            concurrency_limit=4,
        ).then(self.my_submissions, mine_in, mine_out, api_name=False)
        self.status_timer.tick(
            self.poll_status,
            [self.sub_id, self.token, lang],
            [self.status, self.status_timer],
            api_name="poll_status",
            show_progress="hidden",
        ).then(
            self.my_submissions_when_done,
            [self.sub_id, *mine_in],
            mine_out,
            api_name=False,
            show_progress="hidden",
        )
        self.mine_btn.click(self.my_submissions, mine_in, mine_out, api_name="my_submissions").then(
            self.finals_view, [track, self.token, lang], self.finals, api_name=False
        ).then(self.notices_view, [self.token, lang], self.notices, api_name="my_notices")
        track.change(
            self.finals_view,
            [track, self.token, lang],
            self.finals,
            api_name="finals_on_track",
            api_visibility="private",
        )
        self.finals_btn.click(
            self.save_finals, [track, self.finals, self.token, lang], self.finals_msg, api_name="save_finals"
        )
        self.make_public_btn.click(
            self.make_public, [self.mine_private, self.token, lang], self.mine_msg, api_name="make_public"
        ).then(self.my_submissions, mine_in, mine_out, api_name=False)
        self.withdraw_btn.click(
            self.withdraw,
            [self.mine_public, self.token, lang],
            self.withdraw_msg,
            api_name="withdraw",
            api_visibility="private",  # clients use REST's POST /api/v1/submissions/{id}/withdraw
        ).then(self.my_submissions, mine_in, mine_out, api_name=False)

    def mine_inputs(self, lang: gr.Radio) -> list:
        return [self.token, lang, self.mine_private]

    @property
    def mine_outputs(self) -> list:
        return [self.mine, self.mine_private, self.mine_public]

    # -- callbacks ------------------------------------------------------------------------------------

    def sign_in(self, token: str | None, lang: str, profile: gr.OAuthProfile | None = None) -> dict:
        """Who am I (for the status line) and whether the Maintainers tab is shown."""
        who = self.ctx.identity(token, profile)
        if who.name is None:
            message = who.message or "not_signed_in"
            # Nothing given yet (a first visit) is a hint, not an error; a refused token is an error.
            mark = "" if message in ("need_token", "need_oauth", "not_signed_in") else "**✗** "
            return {self.who: f"{mark}{t(message, lang)}", self.maint_tab: gr.Tab(visible=False)}
        maint = f" · {t('maintainer', lang)}" if who.maintainer else ""
        return {
            self.who: f"{t('signed_in', lang)}: **{md(who.name)}**{maint}",
            self.maint_tab: gr.Tab(visible=who.maintainer),
        }

    def quota_text(
        self, track: str, token: str | None, lang: str, profile: gr.OAuthProfile | None = None
    ) -> str:
        who = self.ctx.identity(token, profile)
        if who.name is None:
            return ""
        try:
            q = self.ctx.service.quota(who.name, track)
        except Exception as exc:  # quota display is informative only
            return f"{t('quota_unavailable', lang)}: {md(str(exc))}"
        return quota_line(q, lang)

    def validate(self, track: str, path: str | None, lang: str) -> dict:
        """Instant validation report of an upload (gold-independent; nothing is stored)."""
        real = self.ctx.checked_upload(path)
        if real is None:
            return {
                self.message: t("need_file", lang),
                self.report: report_frame(None, lang),
                self.shown_report: {},
            }
        try:
            with self.ctx.slot(real):  # the same bound as POST /api/v1/validate
                report = self.ctx.service.validate(track, real.read_bytes())
        except gr.Error:
            raise
        except ServiceError as exc:  # busy, or the track is not ready
            raise refused(answer_text(exc, lang)) from exc
        except Exception as exc:
            raise refused(str(exc)) from exc
        return {
            self.message: report_markdown(report, lang),
            self.report: report_frame(report, lang),
            self.shown_report: report,
        }

    def _refusal(self, message: str, lang: str, report: dict | None = None) -> dict:
        """The form stays as it is: a message and the problems; no id, no status polling."""
        return {
            self.message: message,
            self.report: report_frame(report, lang),
            self.shown_report: report or {},
            self.sub_id: "",
            self.status_timer: gr.Timer(active=False),
        }

    def submit(  # noqa: C901, PLR0913
        self,
        track,
        path,
        model_name,
        organisation,
        model_type,
        setting,
        paper_url,
        code_url,
        description,
        token,
        lang,
        private=False,
        profile: gr.OAuthProfile | None = None,
    ) -> dict:
        """Validate metadata, submit (privately if asked), start the status timer, refresh the quota."""
        who = self.ctx.identity(token, profile)
        if who.name is None:
            return self._refusal(f"**✗** {t(who.message or 'not_signed_in', lang)}", lang)
        real = self.ctx.checked_upload(path)
        if real is None:
            return self._refusal(t("need_file", lang), lang)
        problems = []
        if not (model_name or "").strip():
            problems.append({"line": None, "field": "model_name", "message": t("need_model", lang)})
        for field, value in (("paper_url", paper_url), ("code_url", code_url)):
            if (value or "").strip() and not is_http_url(value):
                problems.append({"line": None, "field": field, "message": t("bad_url", lang, field=field)})
        if problems:
            refusal = {"valid": False, "errors": problems, "errors_total": len(problems)}
            return self._refusal(report_markdown(refusal, lang), lang, refusal)
        metadata = {
            "model_name": model_name,
            "organisation": organisation or "",
            "model_type": model_type or "",
            "setting": setting or "",
            "paper_url": paper_url or "",
            "code_url": code_url or "",
            "description": description or "",
        }
        try:
            with self.ctx.slot(real):  # the same bound as POST /api/v1/submissions
                out = self.ctx.service.submit(
                    identity=who.name,
                    track=track,
                    data=real.read_bytes(),
                    metadata=metadata,
                    private=bool(private),
                )
        except gr.Error:
            raise
        except QuotaExceeded as exc:
            return self._refusal(f"**✗** {t('quota_exceeded', lang, at=md(exc.next_slot_at))}", lang)
        except ServiceError as exc:  # busy, disk full, the track not ready
            raise refused(answer_text(exc, lang)) from exc
        except Exception as exc:
            raise refused(str(exc)) from exc
        report = out.get("report")
        sid = out.get("submission_id") or ""
        quota = quota_line(out.get("quota") or {}, lang)
        if not sid:
            return {
                self.message: report_markdown(report, lang) + "\n\n" + quota,
                self.report: report_frame(report, lang),
                self.shown_report: report or {},
                self.sub_id: "",
                self.status: submission.status_line({"status": out.get("status", "rejected")}, lang),
                self.status_timer: gr.Timer(active=False),
                self.link: "",
                self.quota: quota,
            }
        head = t("duplicate", lang, id=sid) if out.get("duplicate") else t("submitted", lang, id=sid)
        if private and not out.get("duplicate"):
            head += " " + t("submitted_private", lang)
        msg = "\n\n".join(
            x for x in (f"**✓** {head}", report_markdown(report, lang) if report else "", quota) if x
        )
        status = {"status": out.get("status"), "reason": out.get("reason")}
        return {
            self.message: msg,
            self.report: report_frame(report, lang),
            self.shown_report: {},
            self.sub_id: sid,
            self.status: submission.status_line(status, lang),
            self.status_timer: gr.Timer(active=out.get("status") not in submission.TERMINAL),
            self.link: f"[{t('open_submission', lang)} ↗]({page_link(sid, track, lang)})",
            self.quota: quota,
        }

    def relabel_outcome(
        self,
        sid: str,
        track: str,
        shown_report: dict | None,
        token: str | None = None,
        lang: str = "zh",
        profile: gr.OAuthProfile | None = None,
    ) -> dict:
        """The language toggle (or a link's ?lang= on load): a checked file's message and report are written
        again in `lang`; a submission's status line and page link likewise, its message goes (it was written
        in the old language). Before any outcome, the message is left alone: a file checked while the page's
        first relabel was still running keeps its report."""
        if not is_submission_id(sid or ""):
            if shown_report is None:
                return {self.message: gr.skip(), self.report: gr.skip(), self.status: "", self.link: ""}
            return {
                self.message: report_markdown(shown_report, lang) if shown_report else "",
                self.report: report_frame(shown_report or None, lang),
                self.status: "",
                self.link: "",
            }
        return {
            self.message: "",
            **self.poll_status(sid, token, lang, profile),
            self.link: f"[{t('open_submission', lang)} ↗]({page_link(sid, track, lang)})",
        }

    def poll_status(
        self, sid: str, token: str | None = None, lang: str = "zh", profile: gr.OAuthProfile | None = None
    ) -> dict:
        """Status timer tick: the lifecycle line; the timer stops at a final state (a private submission
        rests at "scored")."""
        if not is_submission_id(sid or ""):
            return {self.status_timer: gr.Timer(active=False)}
        sub = self.ctx.service.submission(sid, self.ctx.viewer(token, profile))
        if sub is None:
            return {self.status: t("not_found", lang), self.status_timer: gr.Timer(active=False)}
        return {
            self.status: submission.status_line(sub, lang),
            self.status_timer: gr.Timer(active=not submission.is_final(sub)),
        }

    def my_submissions(
        self,
        token: str | None,
        lang: str = "zh",
        picked: str | None = None,
        profile: gr.OAuthProfile | None = None,
    ) -> dict:
        """The signed-in submitter's own submissions (status, primary score, format report, page link) and
        the private ones they may make public (`picked` stays selected while it is one of them: the list
        refreshes while a new submission is scored)."""
        who = self.ctx.identity(token, profile)
        columns = submission.columns(MINE_COLUMNS, lang)
        if who.name is None:
            return {
                self.mine: pd.DataFrame(columns=columns),
                self.mine_private: gr.Dropdown(choices=[], value=None),
                self.mine_public: gr.Dropdown(choices=[], value=None),
            }
        mine = self.ctx.service.my_submissions(who.name)
        private = [(f"{s.model_name} ({s.submission_id})", s.submission_id) for s in mine if s.private]
        # Nothing picked when the refresh started: send the choices only, so a pick made while it ran (a late
        # status tick, on a loaded machine) is not cleared; a pick that is no longer private is cleared.
        if not picked:
            pick = gr.Dropdown(choices=private)
        else:
            still_private = picked in {sid for _, sid in private}
            pick = gr.Dropdown(choices=private, value=picked if still_private else None)
        # Public ones the owner may withdraw (not one a maintainer hid: it is off the board already).
        public = [(f"{s.model_name} ({s.submission_id})", s.submission_id) for s in mine if not s.hidden]
        rows = pd.DataFrame([own_row(s, lang) for s in mine], columns=columns)
        return {self.mine: rows, self.mine_private: pick, self.mine_public: gr.Dropdown(choices=public)}

    def my_submissions_when_done(
        self,
        sid: str,
        token: str | None,
        lang: str = "zh",
        picked: str | None = None,
        profile: gr.OAuthProfile | None = None,
    ) -> dict:
        """After a status tick: "My submissions" again once the new submission reached its final state
        (not on every tick, which would keep resetting what the viewer is picking)."""
        viewer = self.ctx.viewer(token, profile)
        sub = self.ctx.service.submission(sid, viewer) if is_submission_id(sid or "") else None
        if not submission.is_final(sub):
            return {self.mine: gr.skip(), self.mine_private: gr.skip(), self.mine_public: gr.skip()}
        return self.my_submissions(token, lang, picked, profile)

    def finals_view(
        self, track: str, token: str | None, lang: str = "zh", profile: gr.OAuthProfile | None = None
    ) -> gr.Dropdown:
        """The caller's released submissions on `track` to choose finals from, the chosen ones selected."""
        who = self.ctx.identity(token, profile)
        if who.name is None:
            return gr.Dropdown(choices=[], value=[])
        mine = self.ctx.service.my_submissions(who.name, track)
        choices = [
            (f"{s.model_name} ({s.submission_id})", s.submission_id)
            for s in mine
            if s.status == "published" and s.released and not s.hidden
        ]
        return gr.Dropdown(choices=choices, value=self.ctx.service.finals(who.name, track))

    def notices_view(
        self, token: str | None, lang: str = "zh", profile: gr.OAuthProfile | None = None
    ) -> str:
        """What re-scores and releases changed for the caller (old -> new), newest first."""
        who = self.ctx.identity(token, profile)
        if who.name is None:
            return ""
        lines = []
        for n in self.ctx.service.notices(who.name)[:20]:
            what = f"{md(n['model_name'] or '')} ({code(n['submission_id'])}, {md(n['track'])})"
            if n["kind"] == "rescore":
                header = metric_header(n["track"], n["metric"], lang)
                text = t(
                    "notice_rescore",
                    lang,
                    what=what,
                    metric=header,
                    old=percent_text(n["old"]),
                    new=percent_text(n["new"]),
                    old_rank=n["old_rank"],
                    new_rank=n["new_rank"],
                )
            else:
                delta = "—" if n["rank_delta"] is None else f"{n['rank_delta']:+d}"
                text = t("notice_release", lang, what=what, release=n["release"], rank=n["rank"], delta=delta)
            lines.append(f"- {text} ([{t('details', lang)}]({n['link']}))")
        return f"**{t('notices', lang)}**\n\n" + "\n".join(lines) if lines else ""

    def save_finals(
        self,
        track: str,
        picked: list[str] | None,
        token: str | None,
        lang: str = "zh",
        profile: gr.OAuthProfile | None = None,
    ) -> str:
        who = self.ctx.identity(token, profile)
        if who.name is None:
            raise refused(t(who.message or "not_signed_in", lang))
        try:
            chosen = self.ctx.service.set_finals(who.name, track, list(picked or []))
        except ServiceError as exc:
            raise refused(answer_text(exc, lang)) from None
        names = ", ".join(code(sid) for sid in chosen) or t("finals_default", lang)
        return f"**✓** {t('finals_saved', lang, finals=names)}"

    def make_public(
        self, sid: str | None, token: str | None, lang: str = "zh", profile: gr.OAuthProfile | None = None
    ) -> str:
        """The owner puts a private submission on the board (it joins at the next publish)."""
        return self._own_action("make_public", sid, token, lang, profile)

    def withdraw(
        self, sid: str | None, token: str | None, lang: str = "zh", profile: gr.OAuthProfile | None = None
    ) -> str:
        """The owner takes a public submission off the board: private at once, gone at the next publish."""
        return self._own_action("withdraw", sid, token, lang, profile)

    # action -> (the text asking to pick a submission first, the text saying it is done)
    OWN_ACTIONS = {"make_public": ("pick_private", "made_public"), "withdraw": ("pick_public", "withdrawn")}

    def _own_action(
        self, action: str, sid: str | None, token: str | None, lang: str, profile: gr.OAuthProfile | None
    ) -> str:
        """`Service.make_public` or `Service.withdraw` of the signed-in owner's submission `sid`."""
        pick, done = self.OWN_ACTIONS[action]
        who = self.ctx.identity(token, profile)
        if who.name is None:
            raise refused(t(who.message or "not_signed_in", lang))
        if not sid:
            raise refused(t(pick, lang))
        try:
            getattr(self.ctx.service, action)(sid, identity=who.name)
        except ServiceError as exc:
            raise refused(answer_text(exc, lang)) from None
        return f"**✓** {t(done, lang, id=code(sid))}"
