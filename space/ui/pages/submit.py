"""The Submit tab: sign-in, the upload form, instant validation, the submission and its live status."""

from __future__ import annotations

import gradio as gr

from worker.quotas import QuotaExceeded
from worker.records import is_submission_id

from .. import submission
from ..context import Context, refused
from ..i18n import both, t
from ..reports import report_frame, report_markdown
from ..safe import is_http_url, md
from ..tables import SETTINGS, TRACK_TITLES, TRACKS


def quota_line(q: dict, lang: str) -> str:
    if not q or q.get("limit") is None:
        return ""
    nxt = t("next_slot", lang, at=md(q["next_slot_at"])) if q.get("next_slot_at") else ""
    return t("quota", lang, remaining=q.get("remaining"), limit=q.get("limit"), next=nxt)


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
                placeholder="printed at start-up / $DATA_DIR/tokens.json",
                elem_id="token",
            )
            self.sign_in_btn = gr.Button("Check sign-in 检查登录", scale=0, elem_id="sign-in")
        self.who = gr.Markdown(elem_id="who")
        with gr.Row():
            with gr.Column(scale=1):
                self.track = gr.Radio(
                    [(TRACK_TITLES[t_], t_) for t_ in TRACKS],
                    value="varm",
                    label=both("track"),
                    elem_id="sub-track",
                )
                self.upload = gr.File(
                    label=both("upload"),
                    file_types=[".jsonl", ".json", ".txt"],
                    type="filepath",
                    elem_id="upload",
                )
                self.quota = gr.Markdown(elem_id="quota")
            with gr.Column(scale=1):
                self.model_name = gr.Textbox(label=both("model_name"), max_length=100, elem_id="model-name")
                self.organisation = gr.Textbox(
                    label=both("organisation"), max_length=200, elem_id="organisation"
                )
                with gr.Row():
                    self.model_type = gr.Radio(
                        [("—", ""), ("open", "open"), ("closed", "closed")],
                        value="",
                        label=both("model_type"),
                        elem_id="model-type",
                    )
                    self.setting = gr.Radio(
                        [("—", "")] + [(s, s) for s in SETTINGS],
                        value="",
                        label=both("setting"),
                        elem_id="setting",
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
        self.message = gr.Markdown(elem_id="submit-message")
        self.report = gr.Dataframe(
            headers=["Line 行", "Field 字段", "Message 说明"],
            interactive=False,
            wrap=True,
            label="Validation report 验证报告",
            elem_id="report",
        )
        self.sub_id = gr.Textbox(label=both("submission_id"), interactive=False, elem_id="new-id")
        self.status = gr.Markdown(elem_id="status")
        self.link = gr.Markdown(elem_id="submission-link")
        self.status_timer = gr.Timer(status_seconds, active=False)

    def wire(self, demo: gr.Blocks, lang: gr.Radio, maint_tab: gr.Tab) -> None:
        self.maint_tab = maint_tab  # sign-in shows it to maintainers
        signed = [self.who, maint_tab]
        self.sign_in_btn.click(self.sign_in, [self.token, lang], signed, api_name="sign_in").then(
            self.quota_text, [self.track, self.token, lang], self.quota, api_name="quota"
        )
        gr.on(
            [self.token.submit, self.token.blur], self.sign_in, [self.token, lang], signed, api_name=False
        ).then(self.quota_text, [self.track, self.token, lang], self.quota, api_name=False)
        demo.load(self.sign_in, [self.token, lang], signed, api_name="whoami")
        self.track.input(
            self.quota_text, [self.track, self.token, lang], self.quota, api_name="quota_for_track"
        )
        checked = [self.message, self.report]
        self.upload.upload(
            self.validate, [self.track, self.upload, lang], checked, api_name="validate_upload"
        )
        self.validate_btn.click(self.validate, [self.track, self.upload, lang], checked, api_name="validate")
        self.submit_btn.click(
            self.submit,
            [
                self.track,
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
            ],
            [self.message, self.report, self.sub_id, self.status, self.status_timer, self.link],
            api_name="submit",
            concurrency_limit=4,
        )
        self.status_timer.tick(
            self.poll_status,
            [self.sub_id, self.token],
            [self.status, self.status_timer],
            api_name="poll_status",
            show_progress="hidden",
        )

    # -- callbacks ------------------------------------------------------------------------------------

    def sign_in(self, token: str | None, lang: str, profile: gr.OAuthProfile | None = None) -> dict:
        """Who am I (for the status line) and whether the Maintainers tab is shown."""
        who = self.ctx.identity(token, profile)
        if who.name is None:
            text = f"**✗** {md(who.message) if who.message else t('not_signed_in', lang)}"
            return {self.who: text, self.maint_tab: gr.Tab(visible=False)}
        maint = " · maintainer 维护者" if who.maintainer else ""
        return {
            self.who: f"Signed in 已登录: **{md(who.name)}**{maint}",
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
            return f"quota unavailable: {md(str(exc))}"
        return quota_line(q, lang)

    def validate(self, track: str, path: str | None, lang: str) -> dict:
        """Instant validation report of an upload (gold-independent; nothing is stored)."""
        real = self.ctx.checked_upload(path)
        if real is None:
            return {self.message: t("need_file", lang), self.report: report_frame(None)}
        try:
            with self.ctx.slot(real):  # the same bound as POST /api/v1/validate
                report = self.ctx.service.validate(track, real.read_bytes())
        except gr.Error:
            raise
        except Exception as exc:
            raise refused(str(exc)) from exc
        return {self.message: report_markdown(report, lang), self.report: report_frame(report)}

    def _refusal(self, message: str, report: dict | None = None) -> dict:
        """The form stays as it is: a message and the problems; no id, no status polling."""
        return {
            self.message: message,
            self.report: report_frame(report),
            self.sub_id: "",
            self.status_timer: gr.Timer(active=False),
        }

    def submit(
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
        profile: gr.OAuthProfile | None = None,
    ) -> dict:
        """Validate metadata, submit, and start the status timer."""
        who = self.ctx.identity(token, profile)
        if who.name is None:
            return self._refusal(f"**✗** {md(who.message) if who.message else t('not_signed_in', lang)}")
        real = self.ctx.checked_upload(path)
        if real is None:
            return self._refusal(t("need_file", lang))
        problems = []
        if not (model_name or "").strip():
            problems.append({"line": None, "field": "model_name", "message": t("need_model", lang)})
        for field, value in (("paper_url", paper_url), ("code_url", code_url)):
            if (value or "").strip() and not is_http_url(value):
                problems.append({"line": None, "field": field, "message": t("bad_url", lang, field=field)})
        if problems:
            report = {"valid": False, "errors": problems, "errors_total": len(problems)}
            return self._refusal(report_markdown(report, lang), report)
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
                    identity=who.name, track=track, data=real.read_bytes(), metadata=metadata
                )
        except gr.Error:
            raise
        except QuotaExceeded as exc:
            return self._refusal(f"**✗** {t('quota_exceeded', lang, at=md(exc.next_slot_at))}")
        except Exception as exc:
            raise refused(str(exc)) from exc
        report = out.get("report")
        sid = out.get("submission_id") or ""
        quota = quota_line(out.get("quota") or {}, lang)
        if not sid:
            return {
                self.message: report_markdown(report, lang) + "\n\n" + quota,
                self.report: report_frame(report),
                self.sub_id: "",
                self.status: submission.status_line({"status": out.get("status", "rejected")}),
                self.status_timer: gr.Timer(active=False),
                self.link: "",
            }
        head = t("duplicate", lang, id=sid) if out.get("duplicate") else t("submitted", lang, id=sid)
        msg = "\n\n".join(
            x for x in (f"**✓** {head}", report_markdown(report, lang) if report else "", quota) if x
        )
        return {
            self.message: msg,
            self.report: report_frame(report),
            self.sub_id: sid,
            self.status: submission.status_line({"status": out.get("status"), "reason": out.get("reason")}),
            self.status_timer: gr.Timer(active=out.get("status") not in submission.TERMINAL),
            self.link: f"[{t('open_submission', lang)} ↗](?submission={sid})",
        }

    def poll_status(self, sid: str, token: str | None = None, profile: gr.OAuthProfile | None = None) -> dict:
        """Status timer tick: the lifecycle line; the timer stops at a terminal state."""
        if not is_submission_id(sid or ""):
            return {self.status_timer: gr.Timer(active=False)}
        sub = self.ctx.service.submission(sid, self.ctx.viewer(token, profile))
        if sub is None:
            return {self.status: t("not_found", "en"), self.status_timer: gr.Timer(active=False)}
        status = str(submission.record_of(sub).get("status", ""))
        return {
            self.status: submission.status_line(sub),
            self.status_timer: gr.Timer(active=status not in submission.TERMINAL),
        }
