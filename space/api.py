"""The REST API (`/api/v1`), documented by FastAPI's OpenAPI schema at `/docs` and `/openapi.json`."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Body, Depends, File, Form, Header, HTTPException, Query, Request, UploadFile
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from scoring.limits import MAX_FILE_BYTES
from scoring.tracks import TRACK_NAMES, metric_specs
from space import feeds, sandbox
from space.auth import Auth
from space.board_api import (
    DEFAULT_PAGE_SIZE,
    MAX_PAGE,
    MAX_PAGE_SIZE,
    BadQuery,
    BoardBytes,
    EncodedBoard,
    board_view,
    etag,
    matches,
)
from space.board_query import View
from worker.errors import (
    AlreadyExists,
    BadRequest,
    Busy,
    DiskFull,
    NotAllowed,
    NotHeld,
    NotReady,
    QuotaExceeded,
    ServiceError,
    UnknownSubmission,
)
from worker.quotas import parse_iso
from worker.records import check_track
from worker.service import Service

UPLOAD_PATHS = ("/api/v1/submissions", "/api/v1/validate")
FORM_OVERHEAD = 64 * 1024  # room for the metadata fields and multipart boundaries
BUSY_DOC = "Busy (every upload slot taken; see Retry-After) or track not ready"


class BodyLimit:
    """ASGI middleware: refuse upload bodies beyond the cap while they stream in, not after buffering."""

    def __init__(self, app: ASGIApp, max_bytes: int, paths: tuple[str, ...] = UPLOAD_PATHS) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.paths = paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] not in self.paths:
            return await self.app(scope, receive, send)
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            return await _too_large(self.max_bytes)(scope, receive, send)
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.max_bytes:
                # FastAPI re-raises HTTPExceptions from body parsing, which become a 413 response.
                raise HTTPException(413, _too_large_text(self.max_bytes))
            return message

        await self.app(scope, limited, send)


PRIVATE_DOC = (
    "true: scored, counted in the quota and by the near-copy guard, but off the board and visible "
    "to you (and the maintainers) only until you make it public"
)


def _too_large_text(limit: int) -> str:
    return f"upload too large: the limit is {limit} bytes"


def _too_large(limit: int) -> JSONResponse:
    return JSONResponse({"detail": _too_large_text(limit)}, status_code=413)


# Each answer the service gives on purpose (worker/errors.py), as an HTTP status: said once, here.
STATUS_OF: dict[type[ServiceError], int] = {
    BadRequest: 422,
    UnknownSubmission: 404,
    NotAllowed: 403,
    NotHeld: 409,
    AlreadyExists: 409,
    NotReady: 503,
    Busy: 503,
    DiskFull: 507,
    QuotaExceeded: 429,
}


def service_error_response(exc: ServiceError) -> JSONResponse:
    """The response of a service answer: its status, `detail` (the message) and what the kind adds."""
    status = next(code for kind, code in STATUS_OF.items() if isinstance(exc, kind))
    body: dict = {"detail": str(exc)}
    headers: dict[str, str] = {}
    if isinstance(exc, Busy):
        body["retry_after"] = exc.retry_after
        headers["Retry-After"] = str(exc.retry_after)
    elif isinstance(exc, DiskFull):
        body["problem"] = "disk_full"
    elif isinstance(exc, QuotaExceeded):
        body.update(kind=exc.kind, limit=exc.limit, next_slot_at=exc.next_slot_at)
        wait = (parse_iso(exc.next_slot_at) - datetime.now(UTC)).total_seconds()
        headers["Retry-After"] = str(max(1, math.ceil(wait)))
    return JSONResponse(body, status_code=status, headers=headers)


async def service_error_handler(request: Request, exc: Exception) -> JSONResponse:
    """The app's handler for ServiceError (space/server.py registers it)."""
    assert isinstance(exc, ServiceError)
    return service_error_response(exc)


def _rejected(report: dict) -> JSONResponse:
    return JSONResponse(
        {
            "errors": report["errors"],
            "errors_total": report["errors_total"],
            "advice": report["advice"],
            "format_report": report.get("format_report", []),
        },
        status_code=422,
    )


def _field_error(field: str, message: str) -> JSONResponse:
    return _rejected(
        {"errors": [{"line": None, "field": field, "message": message}], "errors_total": 1, "advice": []}
    )


def _size(upload: UploadFile) -> int:
    """The upload's size as spooled (to a temporary file, not memory, past 1 MB) by the form parser."""
    if upload.size is not None:
        return upload.size
    upload.file.seek(0, 2)
    size = upload.file.tell()
    upload.file.seek(0)
    return size


async def _read_capped(upload: UploadFile, limit: int) -> bytes | None:
    """The upload's bytes, or None when it is larger than `limit` (reading stops at limit + 1)."""
    chunks, size = [], 0
    while size <= limit:
        chunk = await upload.read(min(1 << 20, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return None if size > limit else b"".join(chunks)


def create_router(service: Service, auth: Auth, max_file_bytes: int = MAX_FILE_BYTES) -> APIRouter:  # noqa: C901
    router = APIRouter(prefix="/api/v1", tags=["leaderboard"])

    def identity(authorization: str | None, x_user: str | None) -> str:
        user = auth.identify(authorization, x_user)
        if user is None:
            raise HTTPException(
                401,
                "a valid bearer token is required (Authorization: Bearer <token>)",
                headers={"WWW-Authenticate": "Bearer"},
            )
        return user

    def track_or_404(track: str) -> str:
        try:
            return check_track(track)
        except ValueError as exc:
            raise HTTPException(404, str(exc)) from None

    @router.post(
        "/submissions",
        status_code=202,
        summary="Submit a predictions file",
        responses={
            200: {"description": "This submitter already sent this exact file: its id"},
            401: {"description": "No valid token"},
            413: {"description": "File too large"},
            422: {"description": "Invalid file or metadata: line-numbered errors"},
            429: {"description": "Over quota; see next_slot_at and Retry-After"},
            503: {"description": BUSY_DOC},
            507: {"description": "The server's disk is full; nothing was stored"},
        },
    )
    async def submit(  # noqa: PLR0913
        file: Annotated[UploadFile, File(description="predictions JSONL")],
        track: Annotated[str, Form()] = "",
        model_name: Annotated[str, Form(description="required, at most 100 characters")] = "",
        organisation: Annotated[str, Form()] = "",
        model_type: Annotated[str, Form(description="open | closed")] = "",
        setting: Annotated[str, Form(description="zero-shot | taxonomy | fine-tuned")] = "",
        paper_url: Annotated[str, Form()] = "",
        code_url: Annotated[str, Form()] = "",
        description: Annotated[str, Form()] = "",
        private: Annotated[bool, Form(description=PRIVATE_DOC)] = False,
        authorization: Annotated[str | None, Header()] = None,
        x_user: Annotated[str | None, Header()] = None,
    ):
        user = identity(authorization, x_user)
        try:
            check_track(track)
        except ValueError as exc:
            return _field_error("track", str(exc))
        try:
            async with service.slots.hold_async(_size(file)) as held:  # the bytes are in memory only inside
                return await _store_upload(
                    user,
                    track,
                    file,
                    {
                        "model_name": model_name,
                        "organisation": organisation,
                        "model_type": model_type,
                        "setting": setting,
                        "paper_url": paper_url,
                        "code_url": code_url,
                        "description": description,
                    },
                    private,
                    held.park,
                )
        except ServiceError as exc:  # here, not the app's handler: the upload's slot is released first
            return service_error_response(exc)

    async def _store_upload(
        user: str, track: str, file: UploadFile, metadata: dict, private: bool = False, park=None
    ) -> JSONResponse:
        data = await _read_capped(file, max_file_bytes)
        if data is None:
            return _too_large(max_file_bytes)
        # Validation and the store commit block: keep them off the event loop.
        out = await run_in_threadpool(
            service.submit,
            identity=user,
            track=track,
            data=data,
            metadata=metadata,
            private=private,
            park=park,
        )
        if out["status"] == "rejected" and out["report"] is not None:
            return _rejected(out["report"])
        body = {
            "submission_id": out["submission_id"],
            "status": out["status"],
            "duplicate": out["duplicate"],
            "quota": out["quota"],
        }
        if out["report"]:
            body["advice"] = out["report"]["advice"]
        if out.get("reason"):  # held for review: why, in words the submitter can act on
            body["reason"] = out["reason"]
        return JSONResponse(body, status_code=200 if out["duplicate"] else 202)

    @router.get(
        "/submissions/{submission_id}",
        summary="Status, error and (once scored) the result",
        description="A hidden submission answers 404 except to its submitter and the maintainers "
        "(send your token to see your own).",
    )
    def submission(
        submission_id: str,
        authorization: Annotated[str | None, Header()] = None,
        x_user: Annotated[str | None, Header()] = None,
    ):
        viewer = auth.identify(authorization, x_user) if authorization or x_user else None
        found = service.submission(submission_id, viewer)
        if found is None:
            raise HTTPException(404, "unknown submission id")
        return found

    @router.get(
        "/me/submissions",
        summary="Your own submissions, newest first (private and held ones included): status, headline "
        "scores, format-report count and the submission page link",
        responses={401: {"description": "No valid token"}},
    )
    def my_submissions(
        track: Annotated[str | None, Query(description="one track; all when left out")] = None,
        limit: Annotated[int, Query(ge=1, le=500)] = 200,
        authorization: Annotated[str | None, Header()] = None,
        x_user: Annotated[str | None, Header()] = None,
    ):
        user = identity(authorization, x_user)
        found = service.my_submissions(user, track_or_404(track) if track else None, limit)
        return {"submitter": user, "submissions": [s.as_dict() for s in found]}

    @router.get("/me/finals", summary="Your chosen finals on a track (what a release reveals of you)")
    def my_finals(
        track: Annotated[str, Query()],
        authorization: Annotated[str | None, Header()] = None,
        x_user: Annotated[str | None, Header()] = None,
    ):
        user = identity(authorization, x_user)
        return {"track": track_or_404(track), "finals": service.finals(user, track)}

    @router.put(
        "/me/finals",
        summary="Choose at most 2 of your released submissions as your finals on a track (an empty list: "
        "your best released one); changeable until a release is cut",
    )
    def set_my_finals(
        track: Annotated[str, Query()],
        body: Annotated[dict, Body(examples=[{"submission_ids": ["0123456789abcdef"]}])],
        authorization: Annotated[str | None, Header()] = None,
        x_user: Annotated[str | None, Header()] = None,
    ):
        user = identity(authorization, x_user)
        ids = body.get("submission_ids") if isinstance(body, dict) else None
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise HTTPException(422, 'send {"submission_ids": [id, ...]} (at most 2)')
        return {"track": track, "finals": service.set_finals(user, track_or_404(track), ids)}

    boards = BoardBytes(service.leaderboard_at, service.reference_set, service.latest_release)

    def board_query(
        track: Annotated[str, Query()] = "varm",
        q: Annotated[str, Query(description="search in model, organisation and submitter")] = "",
        baselines: Annotated[bool, Query(description="include the baselines")] = True,
        model_type: Annotated[str, Query(alias="type", description="open,closed (comma-separated)")] = "",
        setting: Annotated[str, Query(description="zero-shot,taxonomy,fine-tuned (comma-separated)")] = "",
        sort: Annotated[str, Query(description="rank (default), a metric key, date or model")] = "rank",
    ) -> tuple[EncodedBoard, View]:
        """The board at the current results head and the UI's view of it asked for by the query."""
        track = track_or_404(track)
        try:
            view = board_view(track, q, baselines, model_type, setting, sort)
        except BadQuery as exc:
            raise HTTPException(422, str(exc)) from None
        return boards.get(track), view

    @router.get(
        "/leaderboard",
        summary="One page of leaderboard rows (headline metrics, CIs), searched, filtered and sorted "
        "as in the UI",
        responses={304: {"description": "Not modified (If-None-Match named the current ETag)"}},
    )
    def leaderboard(
        page: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 1,
        page_size: Annotated[int, Query(ge=1, le=MAX_PAGE_SIZE)] = DEFAULT_PAGE_SIZE,
        if_none_match: Annotated[str | None, Header()] = None,
        query: tuple[EncodedBoard, View] = Depends(board_query),  # noqa: B008 - FastAPI's idiom
    ):
        board, view = query
        tag = etag(board.head, "page", view, page, page_size)
        if matches(if_none_match, tag):
            return Response(status_code=304, headers={"ETag": tag, "Cache-Control": "no-cache"})
        found = board.positions(view)
        start = (page - 1) * page_size
        paging = {
            "total": len(board.rows),
            "matched": len(found),
            "page": page,
            "page_size": page_size,
            "pages": -(-len(found) // page_size),
        }
        return Response(
            board.body(found[start : start + page_size], paging),
            media_type="application/json",
            headers={"ETag": tag, "Cache-Control": "no-cache"},
        )

    @router.get(
        "/leaderboard/download",
        summary="Every row of the leaderboard (or every row matching the same filters as /leaderboard), "
        "as JSON or CSV",
        responses={304: {"description": "Not modified (If-None-Match named the current ETag)"}},
    )
    def leaderboard_download(
        format: Annotated[Literal["json", "csv"], Query()] = "json",
        if_none_match: Annotated[str | None, Header()] = None,
        accept_encoding: Annotated[str, Header()] = "",
        query: tuple[EncodedBoard, View] = Depends(board_query),  # noqa: B008 - FastAPI's idiom
    ):
        board, view = query
        track = view.track
        tag = etag(board.head, "download", view, format)
        headers = {
            "ETag": tag,
            "Cache-Control": "no-cache",
            "Content-Disposition": f'attachment; filename="{track}-leaderboard.{format}"',
            "Vary": "Accept-Encoding",
        }
        if matches(if_none_match, tag):
            return Response(status_code=304, headers=headers)
        if format == "csv":
            return Response(board.csv(board.positions(view)), media_type="text/csv", headers=headers)
        if view == View(track=view.track) and "gzip" in accept_encoding.lower():
            # The whole board, compressed once per revision (GZipMiddleware skips an encoded response).
            headers["Content-Encoding"] = "gzip"
            return Response(board.full_gzip(), media_type="application/json", headers=headers)
        return Response(board.body(board.positions(view)), media_type="application/json", headers=headers)

    @router.get("/tracks", summary="Each track and what it is scored on: a real set, the demo, or none")
    def tracks():
        # Each track's metrics as scoring/metrics_spec.py describes them (names, direction, unit): clients
        # label the result keys with these instead of re-typing them.
        described = [(t, [m.as_dict() for m in metric_specs(t)]) for t in TRACK_NAMES]
        return {"tracks": [{**service.reference_set(t), "metrics": specs} for t, specs in described]}

    @router.get("/releases", summary="Every release: its date, scorer version, reference commitment, counts")
    def releases(track: Annotated[str | None, Query()] = None):
        return {"releases": service.releases(track_or_404(track) if track else None)}

    @router.get("/releases/{track}/{name}", summary="One release: the frozen, signed rows of its finals")
    def one_release(track: str, name: str):
        found = service.published_release(track_or_404(track), name)
        if found is None:
            raise HTTPException(404, "no such release")
        # A release never changes; cut under an older scorer, an erratum (`<name>.1`) may be cut next to it.
        return {**found, "erratum_due": service.erratum_due(found["release"])}

    @router.post(
        "/releases/{track}",
        status_code=202,
        summary="Maintainers: cut a release of the track (its finals' private-slice and full-test numbers)",
    )
    def cut_release(
        track: str,
        name: Annotated[str, Body(embed=True)],
        authorization: Annotated[str | None, Header()] = None,
        x_user: Annotated[str | None, Header()] = None,
    ):
        user = identity(authorization, x_user)
        if not service.is_maintainer(user):
            raise HTTPException(403, "only maintainers can cut a release")
        return service.cut_release(track_or_404(track), name, user)

    @router.get("/rescore/{track}/{run}", summary="One published re-score: its diff report")
    def rescore_report(track: str, run: str):
        found = service.rescore_report(track_or_404(track), run)
        if found is None:
            raise HTTPException(404, "no such re-score")
        return found

    @router.get(
        "/feeds/{track}.atom",
        summary="Atom feed of the track's releases and re-scores",
        response_class=Response,
        responses={200: {"content": {"application/atom+xml": {}}}},
    )
    def feed(track: str, request: Request):
        track = track_or_404(track)
        base = str(request.base_url).rstrip("/")
        entries = [feeds.release_entry(r, base) for r in service.releases(track)]
        entries += [feeds.rescore_entry(r, base) for r in service.rescore_reports(track)]
        return Response(feeds.atom(track, entries, base), media_type="application/atom+xml")

    @router.get("/keys", summary="The public key (Ed25519, base64) that signs every result and release row")
    def keys():
        key = service.public_key()
        if key is None:
            raise HTTPException(404, "no key published yet (it comes with the first publish)")
        return {"ed25519": key, "verify": "python -m scoring verify RELEASE --public-key KEY"}

    @router.get("/quota", summary="The caller's quota on a track")
    def quota(
        track: Annotated[str, Query()],
        authorization: Annotated[str | None, Header()] = None,
        x_user: Annotated[str | None, Header()] = None,
    ):
        return service.quota(identity(authorization, x_user), track_or_404(track))

    @router.get("/health", summary="Store and broker reachability")
    def health():
        status = service.health()
        # The web process's own file-system boundary, checked live (space/sandbox.py); not part of "ok"
        # unless a private path it should be refused is readable.
        status["sandbox"] = sandbox.status()
        status["ok"] = status["ok"] and not status["sandbox"].startswith("BROKEN")
        return JSONResponse(status, status_code=200 if status["ok"] else 503)

    @router.post(
        "/validate",
        summary="Validate a predictions file against the public test inputs",
        responses={503: {"description": BUSY_DOC}},
    )
    async def validate(file: Annotated[UploadFile, File()], track: Annotated[str, Form()]):
        try:
            check_track(track)
        except ValueError as exc:
            return _field_error("track", str(exc))
        try:
            async with service.slots.hold_async(_size(file)):  # the bytes are in memory only inside
                data = await _read_capped(file, max_file_bytes)
                if data is None:
                    return _too_large(max_file_bytes)
                return await run_in_threadpool(service.validate, track, data)
        except ServiceError as exc:
            return service_error_response(exc)

    @router.post(
        "/submissions/{submission_id}/make-public",
        summary="Put your private submission on the board (its submitter only)",
        description="Answers the submission's public fields; `changed` is false when it already was public "
        "(nothing was done).",
    )
    def make_public(
        submission_id: str,
        authorization: Annotated[str | None, Header()] = None,
        x_user: Annotated[str | None, Header()] = None,
    ):
        return service.make_public(submission_id, identity=identity(authorization, x_user))

    @router.post(
        "/submissions/{submission_id}/withdraw",
        summary="Take your submission off the board (it becomes private; make-public puts it back)",
    )
    def withdraw(
        submission_id: str,
        authorization: Annotated[str | None, Header()] = None,
        x_user: Annotated[str | None, Header()] = None,
    ):
        return service.withdraw(submission_id, identity=identity(authorization, x_user))

    # -- held near-copies (worker/nearcopy.py): maintainers only -------------------------------------

    def maintainer(authorization: str | None, x_user: str | None) -> str:
        user = identity(authorization, x_user)
        if not service.is_maintainer(user):
            raise HTTPException(403, "only maintainers can review held submissions")
        return user

    @router.get("/held", summary="Near-copies held for review, with the earlier submission (maintainers)")
    def held(
        track: Annotated[str | None, Query()] = None,
        authorization: Annotated[str | None, Header()] = None,
        x_user: Annotated[str | None, Header()] = None,
    ):
        maintainer(authorization, x_user)
        return {"held": service.held(track_or_404(track) if track else None)}

    @router.post("/submissions/{submission_id}/release", summary="Score and publish a held submission")
    def release(
        submission_id: str,
        reason: Annotated[str, Body(embed=True)] = "",
        authorization: Annotated[str | None, Header()] = None,
        x_user: Annotated[str | None, Header()] = None,
    ):
        actor = maintainer(authorization, x_user)
        return service.release(submission_id, actor=actor, reason=reason)

    @router.post("/submissions/{submission_id}/reject", summary="End a held submission unscored")
    def reject(
        submission_id: str,
        reason: Annotated[str, Body(embed=True)],
        authorization: Annotated[str | None, Header()] = None,
        x_user: Annotated[str | None, Header()] = None,
    ):
        actor = maintainer(authorization, x_user)
        return service.reject(submission_id, actor=actor, reason=reason)

    @router.get(
        "/public/{track}/{name}",
        summary="Public files: test_inputs.jsonl, dev.jsonl, subsets.json, dev_subsets.json, "
        "reference_set.json",
    )
    def public(track: str, name: str):
        data = service.public_file(track_or_404(track), name)
        if data is None:
            raise HTTPException(404, "no such public file")
        media = "application/json" if name.endswith(".json") else "application/jsonl"
        return Response(data, media_type=media)

    return router
