"""Callback bodies for every tab, kept free of layout so they can be unit-tested with a fake service.

Each method returns plain values (DataFrames, figures, strings) or Gradio updates; `app.py` wires them.
Every identity-bearing action re-checks the identity on the server: hidden components are not security.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import Collection
from pathlib import Path

import gradio as gr
import pandas as pd

from space.uploads import UploadRefused, checked_upload, output_dir
from worker.own import OwnSubmission

from . import explorer, figures, submission
from .i18n import t
from .identity import Identity, Resolver
from .safe import code, is_http_url, md
from .state import BoardCache
from .tables import (
    DEFAULT_METRICS,
    METRICS,
    TRACK_TITLES,
    TRACKS,
    View,
    better_arrow,
    better_side,
    column_choices,
    default_columns,
    display_frame,
    filter_rows,
    is_explanation,
    metric_header,
    metric_table,
    page_slice,
    pct,
    sort_choices,
    system_choices,
    to_csv,
    to_json,
    top_systems,
)

log = logging.getLogger(__name__)
SUBMISSION_ID = re.compile(r"[0-9a-f]{16}")
PAGE_OUTPUTS = 12  # what show_submission returns (app.py `page_outputs`)
DEMO_DIR = Path(__file__).resolve().parents[2] / "data" / "demo"
REPORT_COLUMNS = ("h_line", "h_field", "h_message")
_FIELD_KEYS = ("target", "target_type", "target_explicitness", "stance", "label", "category")


def refused(message: str) -> gr.Error:
    """A call the user got wrong (or must retry): they see `message`, the log gets one line instead of
    Gradio's traceback (tracebacks stay for real bugs)."""
    log.warning("refused UI call: %s", message.splitlines()[0][:200] if message else "")
    return gr.Error(message, print_exception=False)


def _slot(service: object, path: str):
    """The web process's work slot for reading and validating an upload (see worker/slots.py)."""
    slots = getattr(service, "slots", None)
    return slots.hold(Path(path).stat().st_size) if slots is not None else contextlib.nullcontext()


def report_frame(report: dict | None, lang: str = "zh") -> pd.DataFrame:
    """Validation problems as a (line, field, message) table; file-level problems show "file"."""
    rows = []
    for p in (report or {}).get("errors") or []:
        line = p.get("line")
        rows.append([t("file", lang) if line is None else str(line), p.get("field") or "",
                     p.get("message") or ""])
    return pd.DataFrame(rows, columns=submission.columns(REPORT_COLUMNS, lang))


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
        parts.append(f"**!** {t('will_count_wrong', lang, n=len(fmt))}")
    for advice in report.get("advice") or []:
        parts.append(f"{t('advice', lang)}: {md(advice, 600)}")
    return "\n\n".join(parts)


class UI:
    """State shared by all sessions (service, caches) plus the callbacks."""

    def __init__(self, service: object, *, auth_mode: str) -> None:
        self.service = service
        self.auth_mode = auth_mode
        self.resolve = Resolver(service, auth_mode)
        self.cache = BoardCache(service)
        # Paths that came through /gradio_api/upload (the Blocks' upload_file_set, bound by build_demo):
        # the only files a file input may name.
        self.uploaded: Collection[str] | None = None

    def checked_upload(self, path: str | None) -> Path | None:
        """The real path of the user's upload (space/uploads.py rules); read it inside a work slot."""
        try:
            return checked_upload(path, self.uploaded)
        except UploadRefused as exc:  # a user error, not a server fault: one log line, no traceback
            raise refused(str(exc)) from None

    def warm(self) -> None:
        """One-off start-up work: every published board, and plotly's template (0.5 s+ on first use)."""
        self.cache.warm()
        figures.empty_figure("warm-up")

    # -- leaderboard ----------------------------------------------------------------------------------

    def view(
        self,
        track: str,
        q: str,
        types: list[str] | None,
        settings: list[str] | None,
        baselines: bool,
        sort: str,
        columns: list[str] | None,
        page: float | None,
    ) -> View:
        track = track if track in TRACKS else "varm"
        valid_sorts = {k for _, k in sort_choices(track)}
        valid_cols = {k for _, k in column_choices(track)}
        return View(
            track=track,
            q=(q or "")[:200],
            baselines=bool(baselines),
            model_types=tuple(types or ()),
            settings=tuple(settings or ()),
            sort=sort if sort in valid_sorts else "rank",
            columns=tuple(c for c in columns or () if c in valid_cols),
            page=int(page or 1),
        )

    def render_board(self, track, q, types, settings, baselines, sort, columns, page, lang="zh"):
        """Table page, caption, link and the (clamped) page number for the current view."""
        view = self.view(track, q, types, settings, baselines, sort, columns, page)
        board = self.cache.board(view.track)
        df = filter_rows(board.df, view)
        part, page_no, first, last = page_slice(df, view.page)
        table, types_ = display_frame(part, view.track, view.columns or default_columns(view.track), lang)
        meta = board.meta
        if board.df.empty:
            caption = t("empty_board", lang)
        elif df.empty:
            caption = t("no_rows", lang)
        else:
            caption = t("rows_shown", lang, a=first, b=last, n=len(df))
        caption += " · " + t("board_notes", lang, at=md(meta.get("generated_at") or "—"),
                             scorer=md(meta.get("scorer_version") or "—"))
        banner = self.reference_banner(view.track, lang)
        if banner:
            caption = f"{banner}\n\n{caption}"
        view = View(**{**view.__dict__, "page": page_no})
        return (
            gr.Dataframe(value=table, datatype=types_, headers=list(table.columns)),
            caption,
            link_markdown(view.to_query(), lang),
            page_no,
            board.head,
        )

    def reference_banner(self, track: str, lang: str = "zh") -> str:
        """A banner over the board: the synthetic demo, or no reference set yet; nothing for a real set."""
        try:
            kind = self.service.reference_set(track)  # type: ignore[attr-defined]
        except Exception:  # a store hiccup must not blank the board
            return ""
        if kind["kind"] == "demo":
            return f"> ⚠ **{t('demo_banner', lang)}**"
        if not kind["ready"]:
            return f"> **{t('no_reference_set', lang)}**"
        return ""

    def view_choices(self, track: str, sort: str, columns: list[str] | None, lang: str):
        """The sort and column choosers relabelled in `lang`, their values kept (the language toggle)."""
        track = track if track in TRACKS else "varm"
        return (
            gr.Dropdown(choices=sort_choices(track, lang), value=sort or "rank"),
            gr.Dropdown(choices=column_choices(track, lang), value=columns or default_columns(track),
                        multiselect=True),
        )

    def switch_track(self, track: str, lang: str = "zh"):
        """New choices for the per-track controls (sort keys, columns, pickers) after a track switch."""
        track = track if track in TRACKS else "varm"
        board = self.cache.board(track)
        choices = system_choices(board.df)
        default = top_systems(board.df)
        return (
            gr.Dropdown(choices=sort_choices(track, lang), value="rank"),
            gr.Dropdown(choices=column_choices(track, lang), value=default_columns(track), multiselect=True),
            gr.Dropdown(choices=choices, value=default, multiselect=True),
            gr.Dropdown(choices=choices, value=default[0] if default else None),
            gr.Dropdown(choices=choices, value=default[1] if len(default) > 1 else None),
            1,
        )

    def load_view(self, request: gr.Request | None, profile: gr.OAuthProfile | None = None):
        """Page load: restore the view from the URL query (?track=&q=&baselines=&sort=&submission=)."""
        params = dict(request.query_params) if request is not None and request.query_params else {}
        lang = "en" if params.get("lang") == "en" else "zh"
        sub_id = str(params.get("submission", ""))[:32]
        # A link to a submission sets the one track selector to that submission's track.
        linked = self.submission_track(sub_id, None, profile)
        if linked:
            params["track"] = linked
        view = View.from_query(params)
        board_out = self.render_board(
            view.track,
            view.q,
            list(view.model_types),
            list(view.settings),
            view.baselines,
            view.sort,
            list(view.columns),
            view.page,
            lang,
        )
        switch = self.switch_track(view.track, lang)
        columns = list(view.columns) or default_columns(view.track)
        tab = gr.Tabs(selected="submission") if sub_id else gr.Tabs()
        sub_out = (
            self.show_submission(sub_id, None, lang, profile)
            if sub_id
            else tuple(gr.skip() for _ in range(PAGE_OUTPUTS))
        )
        return (
            view.track,
            view.q,
            list(view.model_types),
            list(view.settings),
            view.baselines,
            gr.Dropdown(choices=sort_choices(view.track, lang), value=view.sort),
            gr.Dropdown(choices=column_choices(view.track, lang), value=columns, multiselect=True),
            *board_out,
            switch[2],
            switch[3],
            switch[4],
            tab,
            sub_id,
            *sub_out,
            lang,  # appended last: earlier outputs keep their /load_view API positions
        )

    def submission_track(self, sid: str, token: str | None, profile: object | None = None) -> str | None:
        """The track of a submission the viewer may see (None for anything else)."""
        sid = (sid or "").strip().lower()
        if not SUBMISSION_ID.fullmatch(sid):
            return None
        sub = self.service.submission(sid, self.viewer(token, profile))  # type: ignore[attr-defined]
        track = submission.record_of(sub).get("track")
        return track if track in TRACKS else None

    def follow_submission(self, sid, token, track, q, types, settings, baselines, sort, columns, page,
                          lang="zh", profile: gr.OAuthProfile | None = None):
        """After opening a submission by id: the one track selector, its per-track controls and the board
        move to the submission's track (nothing changes when it is already there)."""
        linked = self.submission_track(sid, token, profile)
        if not linked or linked == track:
            return (gr.skip(),) * 11
        switch = self.switch_track(linked, lang)
        board = self.render_board(linked, q, types, settings, baselines, "rank", [], 1, lang)
        return (linked, *switch[:5], *board)

    def prev_page(self, track, q, types, settings, baselines, sort, columns, page, lang="zh"):
        """The "‹ Prev" button: render the previous page (clamped to page 1)."""
        return self.render_board(track, q, types, settings, baselines, sort, columns, int(page or 1) - 1,
                                 lang)

    def next_page(self, track, q, types, settings, baselines, sort, columns, page, lang="zh"):
        """The "Next ›" button: render the next page (clamped to the last page)."""
        return self.render_board(track, q, types, settings, baselines, sort, columns, int(page or 1) + 1,
                                 lang)

    def refresh_if_changed(self, seen: str, track, q, types, settings, baselines, sort, columns, page,
                           lang="zh"):
        """Light timer: re-render only when the results area's head moved (a publish happened)."""
        changed, head = self.cache.changed(seen or "")
        if not changed:
            return (gr.skip(),) * 4 + (head if not seen else gr.skip(),)
        return self.render_board(track, q, types, settings, baselines, sort, columns, page, lang)

    def export(self, track, q, types, settings, baselines, sort, columns, page, lang="zh"):
        """CSV and JSON of every filtered row (all fields, unrounded)."""
        view = self.view(track, q, types, settings, baselines, sort, columns, page)
        df = filter_rows(self.cache.board(view.track).df, view)
        out = output_dir()
        csv_path, json_path = out / f"{view.track}-leaderboard.csv", out / f"{view.track}-leaderboard.json"
        csv_path.write_bytes(to_csv(df))
        json_path.write_bytes(to_json(df, view.track))
        return gr.File(value=[str(csv_path), str(json_path)], visible=True)

    # -- analysis -------------------------------------------------------------------------------------

    def _selected(self, track: str, systems: list[str] | None) -> tuple[list[dict], list[dict | None]]:
        board = self.cache.board(track)
        ids = [s for s in systems or [] if board.row(s) is not None] or top_systems(board.df)
        rows = [r for r in (board.row(i) for i in ids[:20]) if r is not None]
        results = [self.cache.result(track, str(r["submission_id"]), r.get("version")) for r in rows]
        return rows, results

    def analysis(self, track: str, systems: list[str] | None):
        """Five chart slots and the metric table for the selected systems (aggregates only)."""
        track = track if track in TRACKS else "varm"
        rows, results = self._selected(track, systems)
        if track == "varm":
            figs = [
                figures.field_error_bars(rows),
                figures.label_vs_jrem(rows),
                figures.her_bars(rows),
                figures.format_issue_bars(rows, results),
                figures.cue_heatmap(rows, results),
            ]
        else:
            cls = [(m.key, m.header) for m in METRICS["cold"] if not is_explanation(m.key)]
            figs = [
                figures.metric_bars(rows, cls, f"{TRACK_TITLES[track]}: classification 分类指标 (95% CI)")
            ]
            fields = figures.breakdown_fields(results)
            figs += [figures.breakdown_bars(rows, results, f) for f in fields[:2]]
            if track == "cntp":
                spans = [(m.key, m.header) for m in METRICS["cntp"] if m.key.startswith("spans.")]
                figs.append(figures.metric_bars(rows, spans, "CNTP: toxic spans 毒性片段 (95% CI)"))
            if any(r.get("explanations.comprehensiveness") is not None for r in rows):
                figs.append(figures.comprehensiveness_vs_f1(rows))
        plots = [gr.Plot(value=f, visible=True) for f in figs]
        plots += [gr.Plot(value=None, visible=False) for _ in range(5 - len(plots))]
        return (*plots, metric_table(rows, track))

    # -- submit ---------------------------------------------------------------------------------------

    def identity(self, token: str | None, profile: object | None) -> Identity:
        return self.resolve(token, profile)

    def sign_in(self, token: str | None, lang: str, profile: gr.OAuthProfile | None = None):
        """Who am I (for the status line) and whether the Maintainers tab is shown."""
        who = self.identity(token, profile)
        if who.name is None:
            return f"**✗** {t(who.message or 'not_signed_in', lang)}", gr.Tab(
                visible=False
            )
        maint = f" · {t('maintainer', lang)}" if who.maintainer else ""
        return f"{t('signed_in', lang)}: **{md(who.name)}**{maint}", gr.Tab(visible=who.maintainer)

    def quota_text(
        self, track: str, token: str | None, lang: str, profile: gr.OAuthProfile | None = None
    ) -> str:
        who = self.identity(token, profile)
        if who.name is None:
            return ""
        try:
            q = self.service.quota(who.name, track)  # type: ignore[attr-defined]
        except Exception as exc:  # quota display is informative only
            return f"{t('quota_unavailable', lang)}: {md(str(exc))}"
        return _quota_line(q, lang)

    def validate(self, track: str, path: str | None, lang: str):
        """Instant validation report of an upload (gold-independent; nothing is stored)."""
        real = self.checked_upload(path)
        if real is None:
            return t("need_file", lang), report_frame(None, lang)
        try:
            with _slot(self.service, real):  # the same bound as POST /api/v1/validate
                report = self.service.validate(track, real.read_bytes())  # type: ignore[attr-defined]
        except gr.Error:
            raise
        except Exception as exc:
            raise refused(str(exc)) from exc
        return report_markdown(report, lang), report_frame(report, lang)

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
        private=False,
        profile: gr.OAuthProfile | None = None,
    ):
        """Validate metadata, submit, and start the status timer; returns message, report, id, status,
        timer, link and the refreshed quota line."""
        stay = (gr.skip(), gr.Timer(active=False), gr.skip(), gr.skip())
        who = self.identity(token, profile)
        if who.name is None:
            return (
                f"**✗** {t(who.message or 'not_signed_in', lang)}",
                report_frame(None, lang),
                "",
                *stay,
            )
        real = self.checked_upload(path)
        if real is None:
            return t("need_file", lang), report_frame(None, lang), "", *stay
        problems = []
        if not (model_name or "").strip():
            problems.append({"line": None, "field": "model_name", "message": t("need_model", lang)})
        for field, value in (("paper_url", paper_url), ("code_url", code_url)):
            if (value or "").strip() and not is_http_url(value):
                problems.append({"line": None, "field": field, "message": t("bad_url", lang, field=field)})
        if problems:
            report = {"valid": False, "errors": problems, "errors_total": len(problems)}
            return report_markdown(report, lang), report_frame(report, lang), "", *stay
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
            with _slot(self.service, real):  # the same bound as POST /api/v1/submissions
                out = self.service.submit(
                    identity=who.name,
                    track=track,
                    data=real.read_bytes(),  # type: ignore[attr-defined]
                    metadata=metadata,
                    private=bool(private),
                )
        except gr.Error:
            raise
        except Exception as exc:
            if type(exc).__name__ == "QuotaExceeded":
                at = getattr(exc, "next_slot_at", "")
                return f"**✗** {t('quota_exceeded', lang, at=md(at))}", report_frame(None, lang), "", *stay
            raise refused(str(exc)) from exc
        report = out.get("report")
        sid = out.get("submission_id") or ""
        quota = _quota_line(out.get("quota") or {}, lang)
        if not sid:
            return (
                report_markdown(report, lang) + "\n\n" + quota,
                report_frame(report, lang),
                "",
                submission.status_line({"status": out.get("status", "rejected")}, lang),
                gr.Timer(active=False),
                "",
                quota,
            )
        head = t("duplicate", lang, id=sid) if out.get("duplicate") else t("submitted", lang, id=sid)
        if private and not out.get("duplicate"):
            head += " " + t("submitted_private", lang)
        msg = "\n\n".join(
            x for x in (f"**✓** {head}", report_markdown(report, lang) if report else "", quota) if x
        )
        link = f"[{t('open_submission', lang)} ↗](?submission={sid})"
        return (
            msg,
            report_frame(report, lang),
            sid,
            submission.status_line({"status": out.get("status"), "reason": out.get("reason")}, lang),
            gr.Timer(active=out.get("status") not in submission.TERMINAL),
            link,
            quota,  # appended last: earlier outputs keep their /submit API positions
        )

    def my_submissions(self, token: str | None, lang: str = "zh", picked: str | None = None,
                       profile: gr.OAuthProfile | None = None):
        """The signed-in submitter's own submissions (status, primary score, format report, page link) and
        the private ones they may make public (`picked` stays selected while it is one of them: the list
        refreshes while a new submission is scored)."""
        who = self.identity(token, profile)
        columns = submission.columns(MINE_COLUMNS, lang)
        if who.name is None:
            return pd.DataFrame(columns=columns), gr.Dropdown(choices=[], value=None)
        mine = self.service.my_submissions(who.name)  # type: ignore[attr-defined]
        private = [(f"{s.model_name} ({s.submission_id})", s.submission_id) for s in mine if s.private]
        return (
            pd.DataFrame([own_row(s, lang) for s in mine], columns=columns),
            gr.Dropdown(choices=private, value=picked if picked in {sid for _, sid in private} else None),
        )

    def my_submissions_when_done(self, sid: str, token: str | None, lang: str = "zh",
                                 picked: str | None = None, profile: gr.OAuthProfile | None = None):
        """After a status tick: "My submissions" again once the new submission reached its final state
        (not on every tick, which would keep resetting what the viewer is picking)."""
        viewer = self.viewer(token, profile)
        sub = self.service.submission(sid, viewer) if SUBMISSION_ID.fullmatch(sid or "") else None  # type: ignore[attr-defined]
        if not submission.is_final(sub):
            return gr.skip(), gr.skip()
        return self.my_submissions(token, lang, picked, profile)

    def make_public(self, sid: str | None, token: str | None, lang: str = "zh",
                    profile: gr.OAuthProfile | None = None) -> str:
        """The owner puts a private submission on the board (it joins at the next publish)."""
        who = self.identity(token, profile)
        if who.name is None:
            raise refused(t(who.message or "not_signed_in", lang))
        if not sid:
            raise refused(t("pick_private", lang))
        try:
            self.service.make_public(sid, identity=who.name)  # type: ignore[attr-defined]
        except (LookupError, PermissionError, ValueError) as exc:
            raise refused(str(exc)) from None
        return f"**✓** {t('made_public', lang, id=code(sid))}"

    def viewer(self, token: str | None, profile: object | None) -> str | None:
        """The signed-in identity looking at a submission (None: anonymous), for hidden submissions."""
        return self.identity(token, profile).name if (token or profile) else None

    def poll_status(self, sid: str, token: str | None = None, lang: str = "zh",
                    profile: gr.OAuthProfile | None = None):
        """Status timer tick: the lifecycle line; the timer stops at a terminal state."""
        if not SUBMISSION_ID.fullmatch(sid or ""):
            return gr.skip(), gr.Timer(active=False)
        sub = self.service.submission(sid, self.viewer(token, profile))  # type: ignore[attr-defined]
        if sub is None:
            return t("not_found", lang), gr.Timer(active=False)
        return submission.status_line(sub, lang), gr.Timer(active=not submission.is_final(sub))

    # -- submission page ------------------------------------------------------------------------------

    def show_submission(
        self, sid: str, token: str | None = None, lang: str = "zh", profile: gr.OAuthProfile | None = None
    ):
        """Everything about one submission (PAGE_OUTPUTS outputs, in app.py's `page_outputs` order).
        A hidden one shows only to its submitter and the maintainers (signed in), like "not found" else."""
        sid = (sid or "").strip().lower()
        # Ids are 16 hex characters; anything else is not looked up at all.
        sub = (
            self.service.submission(sid, self.viewer(token, profile))  # type: ignore[attr-defined]
            if SUBMISSION_ID.fullmatch(sid)
            else None
        )
        rec = submission.record_of(sub)
        track = str(rec.get("track", "varm"))
        result = submission.result_of(sub)
        fig = (
            figures.submission_field_bars(result)
            if track == "varm" and result
            else figures.metric_bars(
                [_row_of(result)] if result else [],
                [(m.key, m.header) for m in METRICS.get(track, ())][:6],
                t("metrics_ci", lang),
            )
        )
        sub_tables = (
            submission.subsets_table(result, lang) if track == "varm"
            else submission.breakdowns_table(result, lang)
        )
        rank = ""
        if sub and track in TRACKS and rec.get("status") == "published":
            board = self.cache.board(track)
            rank = submission.rank_markdown(board.row(sid), len(board.df), track, lang)
        return (
            submission.header_markdown(sub, rank, lang),
            submission.status_line(sub, lang) if sub else "",
            submission.metrics_table(result, track, lang),
            sub_tables,
            fig,
            submission.format_table(result, rec, lang),
            submission.provenance_markdown(sub, lang) if sub else "",
            submission.versions_table(rec, lang),
            submission.history_table(rec, lang),
            submission.bibtex(sub) if sub else "",
            submission.output_format_markdown(rec, lang),
            submission.output_format_table(rec, lang),
        )

    # -- explorer -------------------------------------------------------------------------------------

    def dev_file(self, track: str) -> bytes | None:
        data = None
        try:
            data = self.service.public_file(track, "dev.jsonl")  # type: ignore[attr-defined]
        except Exception:
            data = None
        if not data and (DEMO_DIR / track / "dev.jsonl").is_file():
            data = (DEMO_DIR / track / "dev.jsonl").read_bytes()
        return data

    def dev_subsets_file(self, track: str) -> bytes | None:
        """Public dev-split cue-subset membership (`<track>/public/dev_subsets.json`), like `dev_file`.

        The demo copy is used only when the dev split itself comes from the demo (same ids).
        """
        try:
            data = self.service.public_file(track, "dev_subsets.json")  # type: ignore[attr-defined]
            published_dev = self.service.public_file(track, "dev.jsonl")  # type: ignore[attr-defined]
        except Exception:
            data = published_dev = None
        demo = DEMO_DIR / track / "public" / "dev_subsets.json"
        if not data and not published_dev and demo.is_file():
            data = demo.read_bytes()
        return data

    def explore(self, track: str, path: str | None, lang: str = "zh"):
        """Score dev predictions item by item against the public dev references."""
        real = self.checked_upload(path)
        if real is None:
            raise refused("Please upload dev predictions first. 请先上传开发集预测。")
        with _slot(self.service, real):  # the same memory bound as validation
            preds = real.read_bytes()
        dev = self.dev_file(track)
        if not dev:
            raise refused(f"No public dev split for {track}. 该赛道没有公开开发集。")
        exp = explorer.explore(track, dev, preds, self.dev_subsets_file(track))
        items = exp.items
        summary = explorer.summary_markdown(exp)
        if explorer.looks_like_test_file(preds, self.test_inputs(track), explorer.read_lines(dev)):
            summary = f"> ⚠ **{t('test_file_hint', lang)}**\n\n{summary}"
        return (
            items,
            summary,
            report_frame(exp.report),
            explorer.items_table(items),
            explorer.item_html(items[0] if items else None),
            gr.Dropdown(
                choices=[("any 任意", "")] + sorted({s for it in items for s in it.get("subsets", [])}),
                value="",
            ),
        )

    def test_inputs(self, track: str) -> list[dict]:
        """The track's public test inputs (empty when none are published), for the test-file hint."""
        try:
            return self.service.public_inputs(track)  # type: ignore[attr-defined]
        except Exception:  # no reference set yet: nothing to recognise
            return []

    def explore_filter(
        self,
        items: list[dict] | None,
        wrong_field: str,
        stance: str,
        category: str,
        subset: str,
        only_errors: bool,
    ):
        chosen = explorer.filter_items(
            items or [],
            wrong_field=wrong_field or "",
            stance=stance or "",
            category=category or "",
            subset=subset or "",
            only_errors=bool(only_errors),
        )
        return explorer.items_table(chosen), explorer.item_html(chosen[0] if chosen else None)

    def explore_item(self, items: list[dict] | None, number: float | None):
        wanted = int(number or 0)
        item = next((it for it in items or [] if it["n"] == wanted), None)
        return explorer.item_html(item)

    # -- compare --------------------------------------------------------------------------------------

    def compare(self, track: str, a: str, b: str):
        """Paired-bootstrap differences for the headline metrics, plus per-field deltas from the board."""
        if not a or not b or a == b:
            raise refused("Pick two different systems. 请选择两个不同的系统。")
        board = self.cache.board(track)
        ra, rb = board.row(a), board.row(b)
        if ra is None or rb is None:
            # Only published, visible systems can be compared (no probing of hidden or pending ones).
            raise refused(
                "Both systems must be on this track's leaderboard. 两个系统都必须在该赛道排行榜上。"
            )
        name_a, name_b = str(ra.get("model_name", a)), str(rb.get("model_name", b))
        try:
            comp = self.service.compare(a, b)  # type: ignore[attr-defined]
        except Exception as exc:
            raise refused(f"Comparison failed 对比失败: {exc}") from exc
        rows = []
        for metric, v in (comp or {}).items():
            if not isinstance(v, dict) or "diff" not in v:
                continue
            ci = v.get("ci") or [None, None]
            side = better_side(metric, v.get("diff"), bool(v.get("significant")))
            rows.append(
                [
                    f"{metric_header(track, metric)} {better_arrow(metric).split()[0]}",
                    pct(v.get("a"), 2),
                    pct(v.get("b"), 2),
                    pct(v.get("diff"), 2),
                    "" if ci[0] is None else f"[{pct(ci[0], 2)}, {pct(ci[1], 2)}]",
                    "yes 是" if v.get("significant") else "no 否",
                    {"A": "A", "B": "B", "": "—"}[side],
                ]
            )
        table = pd.DataFrame(
            rows, columns=["Metric 指标", "A", "B", "A − B", "95% CI", "Significant 显著", "Better 更好"]
        )
        keys = (
            [f"field_accuracy.{f}" for f in _FIELD_KEYS]
            if track == "varm"
            else [m.key for m in METRICS[track] if m.percent]
        )
        deltas = pd.DataFrame(
            [
                [
                    f"{metric_header(track, k)} {better_arrow(k).split()[0]}",
                    pct(ra.get(k), 2),
                    pct(rb.get(k), 2),
                    None if ra.get(k) is None or rb.get(k) is None else pct(ra[k] - rb[k], 2),
                ]
                for k in keys
            ],
            columns=["Field / metric 字段/指标", "A", "B", "A − B"],
        )
        title = f"A = {md(name_a)} · B = {md(name_b)}"
        return title, table, figures.compare_bars(comp, name_a, name_b, track), deltas

    # -- about ----------------------------------------------------------------------------------------

    def downloads(self, track: str) -> list[str]:
        """Public test inputs and dev split of a track, as files."""
        out = output_dir()
        files = []
        for name in ("test_inputs.jsonl", "dev.jsonl"):
            data = self.service.public_file(track, name)  # type: ignore[attr-defined]
            if data is None and name == "dev.jsonl":
                data = self.dev_file(track)
            if data:
                p = out / f"{track}-{name}"
                p.write_bytes(data)
                files.append(str(p))
        if not files:
            raise refused("No public files for this track yet. 该赛道尚无公开文件。")
        return gr.File(value=files, visible=True)

    # -- maintainers ----------------------------------------------------------------------------------

    def _maintainer(self, token: str | None, profile: object | None) -> str:
        who = self.identity(token, profile)
        if who.name is None or not who.maintainer:
            raise refused(t("maint_only", "en") + " " + t("maint_only", "zh"))
        return who.name

    def rescore(self, track: str, dry_run: bool, token: str | None, profile: gr.OAuthProfile | None = None):
        actor = self._maintainer(token, profile)
        out = self.service.rescore(track, dry_run=bool(dry_run), actor=actor)  # type: ignore[attr-defined]
        # The re-score runs on a worker; its report appears when it is done ("Latest diff report" reloads).
        summary, table = self.rescore_report(track)
        started = f"Started 已开始: {code(out.get('task_id', ''))} · dry run 试运行: {bool(dry_run)}"
        return f"{started}\n\nLatest report 最新报告: {summary}", table

    def maint_report(self, track: str, token: str | None, profile: gr.OAuthProfile | None = None):
        """The latest diff report (dry-run reports are private: maintainers only), and the track's
        quarantined (unreadable, skipped) submission records."""
        self._maintainer(token, profile)
        summary, table = self.rescore_report(track)
        listed = getattr(self.service, "quarantined", None)
        return summary + quarantine_markdown(listed(track) if callable(listed) else []), table

    def rescore_report(self, track: str) -> tuple[str, pd.DataFrame]:
        """The newest re-score diff report of a track as (summary, table).

        Dry runs leave `rescore/<track>/<run>/report.json` in the private submissions area; real runs
        publish `rescore/<track>/<run>.json` in the results area. Run names are UTC stamps, so the
        lexically last one is the newest.
        """
        store = getattr(self.service, "store", None)
        found: list[tuple[str, str, str]] = []  # (run, area, path)
        for area, suffix in (("submissions", "/report.json"), ("results", ".json")):
            try:
                paths = store.list(area, f"rescore/{track}/") if store else []
            except Exception:  # an area this process cannot open: skip it
                paths = []
            for path in paths:
                if path.endswith(suffix):
                    found.append((path[len(f"rescore/{track}/") :].removesuffix(suffix), area, path))
        empty = pd.DataFrame(columns=DIFF_COLUMNS)
        if not found:
            return "No re-score report yet. 暂无重新评分报告。", empty
        run, area, path = max(found)
        try:
            data = json.loads(store.read(area, path) or b"{}")
        except ValueError:
            return f"Unreadable report {md(path)}", empty
        summary = data.get("summary") or {}
        kind = "dry run 试运行" if data.get("dry_run", area == "submissions") else "published 已发布"
        head = (
            f"**{md(run)}** · {kind} · by {md(data.get('actor') or '—')} · scorer "
            f"{md(data.get('scorer_version') or '—')} · "
            + " · ".join(f"{md(k)}: {md(v)}" for k, v in summary.items())
        )
        return head, pd.DataFrame(_diff_rows(data, self._headline(track)), columns=DIFF_COLUMNS)

    @staticmethod
    def _headline(track: str) -> tuple[str, ...]:
        return DEFAULT_METRICS.get(track, ())

    def moderate(
        self, sid: str, action: str, reason: str, token: str | None, profile: gr.OAuthProfile | None = None
    ):
        actor = self._maintainer(token, profile)
        if not (reason or "").strip():
            raise refused("A reason is required (it goes to the audit log). 请填写理由（写入审计日志）。")
        flags = {
            "hide": {"hidden": True},
            "unhide": {"hidden": False},
            "verify": {"verified": True},
            "unverify": {"verified": False},
            "baseline": {"is_baseline": True},
            "unbaseline": {"is_baseline": False},
            "flag": {},
        }.get(action)
        if action in ("release", "reject"):
            return self._review(action, (sid or "").strip(), actor, reason.strip())
        if flags is None:
            raise refused(f"unknown action {action!r}")
        try:
            out = self.service.moderate(
                (sid or "").strip(),
                actor=actor,
                reason=reason.strip(),  # type: ignore
                **flags,
            )
        except ValueError as exc:
            raise refused(str(exc)) from exc
        return f"```json\n{json.dumps(out, ensure_ascii=False, indent=2)[:4000]}\n```"


    def _review(self, action: str, sid: str, actor: str, reason: str) -> str:
        review = self.service.release if action == "release" else self.service.reject  # type: ignore[attr-defined]
        try:
            out = review(sid, actor=actor, reason=reason)
        except ValueError as exc:  # unknown id, or not held (worker.service.NotHeld)
            raise refused(str(exc)) from exc
        return f"```json\n{json.dumps(out, ensure_ascii=False, indent=2)[:4000]}\n```"

    def held(self, track: str, token: str | None, profile: gr.OAuthProfile | None = None) -> pd.DataFrame:
        """Near-copies held for review on `track` (maintainers: it names the earlier submission)."""
        self._maintainer(token, profile)
        rows = self.service.held(track)  # type: ignore[attr-defined]
        return pd.DataFrame(
            [
                [r["submission_id"], r["submitter"], (r.get("metadata") or {}).get("model_name"),
                 r["created_at"], r["rows_differing"], r["near_copy_of"]]
                for r in rows
            ],
            columns=HELD_COLUMNS,
        )


HELD_COLUMNS = ["submission_id", "submitter", "model_name", "created_at", "rows differing 差异行数",
                "near copy of 相近的提交"]


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


def link_markdown(query: str, lang: str = "zh") -> str:
    """The view link as Markdown; `query` comes from urlencode, so it holds no Markdown syntax."""
    return f"{t('link', lang)}: [{query}]({query})"


MINE_COLUMNS = ("col_model", "track", "status", "h_primary", "h_format_issues", "h_submitted_at", "h_page")


def own_row(sub: OwnSubmission, lang: str) -> list:
    """One row of "My submissions": the primary score in percent (one decimal), the page as a link."""
    score = sub.scores.get(sub.primary_metric)
    primary = "" if score is None else f"{metric_header(sub.track, sub.primary_metric)} {pct(score):.1f}"
    status = submission.status_name(sub.status, lang)
    if sub.private:
        status += f" · {t('badge_private', lang)}"
    return [
        md(sub.model_name or t("unnamed", lang)),
        TRACK_TITLES.get(sub.track, sub.track),
        status,
        primary,
        "—" if sub.format_issues is None else str(sub.format_issues),
        sub.created_at[:16].replace("T", " "),
        f"[{sub.submission_id}]({sub.link})",
    ]


def _row_of(result: dict | None) -> dict:
    """A leaderboard-row-shaped dict (flattened metrics, ci.<k>.low/high) from one scorer result."""
    if not result:
        return {}
    row: dict = dict(submission.flatten_metrics(result))
    for k, v in (result.get("ci") or {}).items():
        if isinstance(v, list) and len(v) == 2:
            row[f"ci.{k}.low"], row[f"ci.{k}.high"] = v
    row["model_name"] = "this submission"
    return row


def _quota_line(q: dict, lang: str) -> str:
    if not q or q.get("limit") is None:
        return ""
    nxt = t("next_slot", lang, at=md(q["next_slot_at"])) if q.get("next_slot_at") else ""
    return t("quota", lang, remaining=q.get("remaining"), limit=q.get("limit"), next=nxt)


DIFF_COLUMNS = [
    "Submission 提交",
    "Model 模型",
    "Metric 指标",
    "Old 旧",
    "New 新",
    "Change 变化",
    "Rank 名次",
]


def _diff_rows(data: dict, headline: tuple[str, ...]) -> list[list]:
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
        for metric in [m for m in headline if m in old or m in new]:
            before, after = old.get(metric), new.get(metric)
            change = None if before is None or after is None else pct(after - before, 2)
            rows.append(
                [
                    sub.get("submission_id"),
                    sub.get("model_name"),
                    metric,
                    pct(before, 2),
                    pct(after, 2),
                    change,
                    rank,
                ]
            )
    return rows


def _sub(a: object, b: object) -> object:
    try:
        return float(a) - float(b)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
