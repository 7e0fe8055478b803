"""The ASGI app of the web process: REST API under /api/v1 and the Gradio UI at /, over one Service."""

from __future__ import annotations

import importlib.util
import logging
import math
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.middleware.cors import CORSMiddleware
from starlette.middleware.gzip import GZipMiddleware

from scoring.limits import MAX_FILE_BYTES
from space import uploads, webhook
from space.api import FORM_OVERHEAD, UPLOAD_PATHS, BodyLimit, create_router, service_error_handler
from space.auth import Auth, auth_mode
from space.origins import OriginGuard
from space.page_head import PageHead
from space.querystring import UiPageParam
from worker import head_signal
from worker.celery import make_app
from worker.config import Config
from worker.disk import DISK_FULL_ERRNOS
from worker.enqueue import CeleryEnqueuer
from worker.errors import DiskFull, ServiceError
from worker.heartbeat import HEARTBEAT_STALE, Heartbeats
from worker.service import Service
from worker.store import StoreError, open_web_store
from worker.store.outage import StoreUnavailable

if TYPE_CHECKING:
    import gradio as gr

log = logging.getLogger(__name__)
REPO_DATA = Path(__file__).resolve().parents[1] / "data"  # the demo bundles (with their references)


def build_service(config: Config) -> Service:
    """The web process's Service: a store WITHOUT the references area (opened with HF_WEB_TOKEN when set),
    and Celery for everything else; health asks the workers' heartbeats."""
    return Service(
        config,
        open_web_store(config),
        CeleryEnqueuer(make_app(config)),
        liveness=Heartbeats(config),
        stale_after=HEARTBEAT_STALE,
        # The Hub's head is polled only as a fallback: workers announce new heads (worker/head_signal.py) and
        # the Hub's webhook says so too. The local store's head is a file: read on every request.
        head_ttl=config.head_poll_seconds if config.store == "hub" else 0.0,
    )


async def _os_error(request: Request, exc: Exception) -> JSONResponse:
    """A full disk (e.g. while a request body is spooled to a temporary file) is named, as a 507."""
    if isinstance(exc, OSError) and exc.errno in DISK_FULL_ERRNOS:
        log.warning("%s %s refused: the disk is full", request.method, request.url.path)
        return JSONResponse({"detail": str(DiskFull()), "problem": "disk_full"}, status_code=507)
    log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    return JSONResponse({"detail": "internal error"}, status_code=500)


STORE_RETRY_AFTER_SECONDS = 30


async def _store_error(request: Request, exc: Exception) -> JSONResponse:
    """The store (the Hub, or the data folder) failed after its own retries: a 503 the client can retry.

    The store's message names areas and paths, so it goes to the log only; the client learns that nothing
    was saved (every write is one commit, so a failed request wrote nothing) and when to try again.
    """
    retry_after = STORE_RETRY_AFTER_SECONDS
    if isinstance(exc, StoreUnavailable):  # the Hub is refusing: its window says when to come back
        retry_after = max(1, math.ceil(exc.retry_after))
        log.info("%s %s refused: %s", request.method, request.url.path, exc)  # the gate logged the outage
    else:
        log.error("%s %s failed: the store is unavailable (%s)", request.method, request.url.path, exc)
    return JSONResponse(
        {
            "detail": (
                "The results store is not reachable right now; nothing was saved. Try again in a minute."
            ),
            "problem": "store_unavailable",
        },
        status_code=503,
        headers={"Retry-After": str(retry_after)},
    )


def _ui(service: Service) -> gr.Blocks:
    import gradio as gr  # here, not at the top: the REST API alone (tests, workers' imports) needs no Gradio

    if importlib.util.find_spec("space.ui") is not None:
        try:
            from space.ui import build_demo
        except ImportError as exc:  # the UI package is still being built: serve the API anyway
            log.warning("space.ui.build_demo is not available (%s); serving a placeholder page", exc)
        else:
            return build_demo(service)
    with gr.Blocks(title="Leaderboard") as demo:  # placeholder until the UI package is installed
        gr.Markdown(
            "# Chinese abusive-speech moderation leaderboard\nThe REST API is documented at [/docs](/docs)."
        )
    return demo


def create_app(
    config: Config,
    *,
    service: Service | None = None,
    auth: Auth | None = None,
    max_file_bytes: int = MAX_FILE_BYTES,
    with_ui: bool = True,
) -> FastAPI:
    service = service or build_service(config)
    auth = auth or Auth(config, auth_mode(config))
    app = FastAPI(
        title="VARM-Bench / ToxiTrace leaderboard API",
        version="1",
        description="Submit predictions, follow their status and read the leaderboards. "
        "Authentication: `Authorization: Bearer <token>` (see space/auth.py).",
    )
    # The last middleware added runs first: an oversized request is refused before it counts as space.
    app.add_middleware(uploads.UploadSpace, max_bytes=config.ui_files_max_bytes)
    app.add_middleware(uploads.FileRefusals)
    if with_ui:  # inside GZip: the page's head gets the language script while it is still plain HTML
        from space.ui.app import HEAD

        app.add_middleware(PageHead, head=HEAD)
    # Uploads to the REST API and to Gradio: one request holds at most one file of the REST limit.
    app.add_middleware(
        BodyLimit,
        max_bytes=max_file_bytes + FORM_OVERHEAD,
        paths=(*UPLOAD_PATHS, uploads.GRADIO_UPLOAD_PATH),
    )
    # Outermost, on responses only: compresses the API and the UI page (292 kB -> 27 kB); Starlette leaves
    # text/event-stream (Gradio's queue) and responses that already carry a Content-Encoding alone.
    app.add_middleware(GZipMiddleware, minimum_size=1024, compresslevel=6)
    app.add_middleware(
        UiPageParam
    )  # the board's `page` link parameter is not Gradio's (space/querystring.py)
    # CORS: an allow-list on the parent app, so Gradio adds no CORS headers of its own (it reflected any
    # origin with credentials); and foreign origins refused for state-changing requests, first of all.
    app.add_middleware(
        CORSMiddleware,
        allow_origins=list(config.cors_origins),
        allow_credentials=True,
        allow_methods=["*"],
        allow_headers=["*"],
    )
    app.add_middleware(OriginGuard, allowed=config.cors_origins)
    app.add_exception_handler(ServiceError, service_error_handler)  # before OSError: AlreadyExists is one
    app.add_exception_handler(OSError, _os_error)
    app.add_exception_handler(StoreError, _store_error)
    app.include_router(create_router(service, auth, max_file_bytes))
    app.include_router(webhook.router(service, config))
    stop_listening = threading.Event()
    head_signal.listen(config, service.head_moved, stop_listening)
    app.router.on_shutdown.append(stop_listening.set)
    app.state.service = service
    if with_ui:
        from space.ui.footer import GRADIO_FOOTER_LINKS

        # Mounted last, so the /api routes above take precedence over the UI's catch-all "/".
        app = uploads.mount(
            app,
            _ui(service),
            data_dir=Path(config.data_dir),
            repo_data=REPO_DATA,
            ttl_seconds=config.ui_file_ttl_seconds,
            max_file_size=max_file_bytes,
            footer_links=GRADIO_FOOTER_LINKS,
        )
    return app
