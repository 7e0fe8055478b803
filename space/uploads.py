"""Files that reach the web process through Gradio: only real uploads are read, and nothing stays long.

Gradio checks that a `FileData` input names a file in its upload folder only once `Blocks.has_launched`
is set (`gradio.processing_utils._check_allowed`), which `demo.launch()` does and `gr.mount_gradio_app`
does not: without the flag, any server path posted to `/gradio_api/call/<api>` was copied into the cache
and read as the upload. `mount` sets it, blocks the data folders from every Gradio file route, and caps
upload sizes; `checked_upload` checks again in our own handlers (the path must be a file that came through
`/gradio_api/upload`), so a future Gradio that drops the check does not reopen the hole.

Upload and export files live in Gradio's upload folder (a private temporary folder made by
`python -m space`, removed at exit) and are deleted by Gradio's `delete_cache` timer once older than
`UI_FILE_TTL_SECONDS`; `UploadSpace` refuses new uploads while the folder is over `UI_FILES_MAX_BYTES`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
import tempfile
import threading
import time
from collections.abc import Collection
from pathlib import Path

from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from scoring.limits import MAX_FILE_BYTES

GRADIO_UPLOAD_PATH = "/gradio_api/upload"
# One fixed answer for every refused file: Gradio's own texts name the blocked folders (the data folder and
# the repository's), the working directory and the temp directory to anonymous callers.
REFUSED_FILE = "This file is not available: only files uploaded through this page can be used."
FILE_ROUTES = ("/gradio_api/file=", "/file=")
MAX_FILES = 10_000  # files in the upload folder; a flood of tiny uploads is refused like a big one
EXPORTS = "exports"
PRIVATE_PREFIX = "varm-gradio-"


class UploadRefused(ValueError):
    """A file input that is not a file uploaded through the page (or no longer there, or too large)."""


def upload_folder() -> Path:
    """Gradio's upload folder (`GRADIO_TEMP_DIR`, else `<tmp>/gradio`), as Gradio itself resolves it."""
    from gradio.utils import get_upload_folder

    return Path(get_upload_folder()).resolve()


def checked_upload(path: str | None, uploaded: Collection[str] | None = None) -> Path | None:
    """The real path of a file the user uploaded, or None when no file was given; nothing is read.

    Refused (UploadRefused): anything outside Gradio's upload folder, a symlink, a path that did not come
    through `/gradio_api/upload` (`uploaded`: the Blocks' `upload_file_set`), a file over MAX_FILE_BYTES.
    """
    if not path:
        return None
    given = Path(path)
    try:
        real = given.resolve(strict=True)
    except OSError:
        raise UploadRefused("The uploaded file is no longer available; please upload it again.") from None
    if given.is_symlink() or not real.is_file() or not real.is_relative_to(upload_folder()):
        raise UploadRefused("Only files uploaded through this page are accepted.")
    if uploaded is not None and real not in {Path(p).resolve() for p in list(uploaded)}:
        raise UploadRefused("Only files uploaded through this page are accepted.")
    if real.stat().st_size > MAX_FILE_BYTES:
        raise UploadRefused(f"The file is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB.")
    return real


def make_private_folder() -> Path:
    """A new upload folder of this process only (inside GRADIO_TEMP_DIR when set, else the system temp
    folder), made Gradio's upload folder; `python -m space` removes it at exit. Call before the app is
    built: Gradio reads GRADIO_TEMP_DIR then."""
    parent = os.environ.get("GRADIO_TEMP_DIR") or None
    if parent:
        Path(parent).mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix=PRIVATE_PREFIX, dir=parent)).resolve()
    os.environ["GRADIO_TEMP_DIR"] = str(folder)
    return folder


def sweep(folder: Path, age: float) -> int:
    """Delete files (and then empty folders) under `folder` last changed more than `age` seconds ago.

    Gradio's own timer deletes only the files it tracks; this also takes what it leaves behind (the
    multipart temp file of a refused upload, empty per-upload folders). Returns the files deleted."""
    cutoff = time.time() - age
    deleted = 0
    for root, dirs, files in os.walk(folder, topdown=False):
        for name in files:
            path = os.path.join(root, name)
            with contextlib.suppress(OSError):
                if os.lstat(path).st_ctime < cutoff:
                    os.remove(path)
                    deleted += 1
        for name in dirs:
            path = os.path.join(root, name)
            with contextlib.suppress(OSError):
                if os.lstat(path).st_ctime < cutoff:
                    os.rmdir(path)  # only when empty
    return deleted


def _sweep_lifespan(app, every: float, age: float) -> None:
    """Run `sweep` on the private upload folder every `every` seconds while the app runs, and remove the
    folder's content at shutdown. Does nothing for a shared upload folder (another app's files)."""
    folder = upload_folder()
    if not folder.name.startswith(PRIVATE_PREFIX):
        return
    inner = app.router.lifespan_context

    async def sweeper() -> None:
        while True:
            await asyncio.sleep(every)
            await asyncio.to_thread(sweep, folder, age)

    @contextlib.asynccontextmanager
    async def lifespan(a):
        async with inner(a) as state:
            task = asyncio.create_task(sweeper())
            try:
                yield state
            finally:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                for child in folder.iterdir():
                    with contextlib.suppress(OSError):
                        shutil.rmtree(child) if child.is_dir() else child.unlink()

    app.router.lifespan_context = lifespan


def output_dir() -> Path:
    """A new folder for files the UI hands out (exports, downloads): inside Gradio's upload folder, so
    Gradio serves them without copying and its `delete_cache` timer removes them."""
    folder = upload_folder() / EXPORTS / secrets.token_hex(8)
    folder.mkdir(parents=True)
    return folder


def delete_cache(ttl_seconds: int) -> tuple[int, int]:
    """Gradio's `Blocks(delete_cache=(every, age))`: files older than the TTL go within a few seconds."""
    return max(1, min(60, ttl_seconds // 3)), ttl_seconds


def blocked_paths(data_dir: Path, repo_data: Path) -> list[str]:
    """Folders no Gradio route may read or serve: the runtime data (store, tokens), the repository's data
    folder (the demo references) and the Hugging Face Hub cache (STORE=hub keeps its downloads there).
    Refuses an upload folder inside them (nothing would work)."""
    from huggingface_hub.constants import HF_HUB_CACHE

    folders = (data_dir, repo_data, HF_HUB_CACHE)
    blocked = sorted({str(Path(folder).expanduser().resolve()) for folder in folders})
    uploads = upload_folder()
    for folder in blocked:
        if uploads.is_relative_to(folder):
            raise ValueError(f"GRADIO_TEMP_DIR ({uploads}) must not be inside {folder}")
    return blocked


def mount(
    app,
    blocks,
    *,
    data_dir: Path,
    repo_data: Path,
    ttl_seconds: int,
    max_file_size: int = MAX_FILE_BYTES,
    footer_links: list[str] | None = None,
):
    """`gr.mount_gradio_app` at "/" with uploads checked, bounded and kept away from the data folders;
    files in a private upload folder older than twice the TTL are swept (Gradio's timer takes the rest).
    `footer_links`: Gradio's own footer links (None: Gradio's default)."""
    import gradio as gr

    app = gr.mount_gradio_app(
        app,
        blocks,
        path="/",
        max_file_size=max_file_size,
        blocked_paths=blocked_paths(data_dir, repo_data),
        footer_links=footer_links,
    )
    # What launch() sets and mount_gradio_app does not: turns on "only uploaded files" for inputs.
    blocks.has_launched = True
    _calm_queue(blocks._queue)
    _fixed_path_refusals()
    every, age = delete_cache(ttl_seconds)
    _sweep_lifespan(app, every, 2 * age)
    return app


# How often Gradio's event queue looks for work while it has none. Its Linux defaults (1 ms, and 10 ms for
# progress updates) wake the event loop ~1,100 times a second: 4-7% of a core with no one on the site
# (measured with bench/bench_burst.py --idle), a third of the web process's CPU per upload in a burst.
# An event now waits at most 20 ms longer to start; Gradio's own Windows values are 50 and 100 ms.
QUEUE_IDLE_POLL_SECONDS = 0.02
QUEUE_PROGRESS_POLL_SECONDS = 0.1


def _calm_queue(queue) -> None:
    queue.sleep_when_free = QUEUE_IDLE_POLL_SECONDS
    queue.progress_update_sleep_when_free = QUEUE_PROGRESS_POLL_SECONDS


def _fixed_path_refusals() -> None:
    """Make Gradio's refusal of a `FileData` path (`processing_utils._check_allowed`, which every event's
    file input goes through) say REFUSED_FILE instead of the folders it refused it for. Idempotent."""
    from gradio import processing_utils
    from gradio.exceptions import InvalidPathError

    original = processing_utils._check_allowed
    if getattr(original, "fixed_refusal", False):
        return

    def check(path, check_in_upload_folder: bool) -> None:
        try:
            original(path, check_in_upload_folder)
        except InvalidPathError:
            raise InvalidPathError(REFUSED_FILE) from None

    check.fixed_refusal = True  # type: ignore[attr-defined]
    processing_utils._check_allowed = check


class FileRefusals:
    """ASGI middleware: a refused Gradio file route (`/gradio_api/file=<path>`: 403, which names the path
    and says whether it exists) answers 404 with REFUSED_FILE, whatever the path; served files pass."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(FILE_ROUTES):
            return await self.app(scope, receive, send)
        refused = False

        async def answer(message) -> None:
            nonlocal refused
            if message["type"] == "http.response.start" and message["status"] in (403, 404):
                refused = True
                await PlainTextResponse(REFUSED_FILE, status_code=404)(scope, receive, send)
                return
            if not refused:
                await send(message)

        await self.app(scope, receive, answer)


class UploadSpace:
    """ASGI middleware: refuse `/gradio_api/upload` with 507 while the upload folder holds more than
    `max_bytes` (or MAX_FILES files). Usage is re-measured at most once a second."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._measured: tuple[float, int, int] = (-1.0, 0, 0)  # (when, bytes, files)

    def usage(self) -> tuple[int, int]:
        now = time.monotonic()
        with self._lock:
            if now - self._measured[0] < 1.0:
                return self._measured[1], self._measured[2]
        size = count = 0
        for root, _, files in os.walk(upload_folder()):
            for name in files:
                try:
                    size += os.lstat(os.path.join(root, name)).st_size
                except OSError:  # deleted meanwhile by the cleanup timer
                    continue
                count += 1
        with self._lock:
            self._measured = (now, size, count)
        return size, count

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == GRADIO_UPLOAD_PATH and scope["method"] == "POST":
            size, count = self.usage()
            if size >= self.max_bytes or count >= MAX_FILES:
                response = PlainTextResponse(
                    "The upload space is full; please try again in a few minutes.", status_code=507
                )
                return await response(scope, receive, send)
            declared = dict(scope["headers"]).get(b"content-length", b"0")
            with self._lock:  # count this upload at once: a burst within the second cannot overshoot
                when, size, count = self._measured
                self._measured = (when, size + (int(declared) if declared.isdigit() else 0), count + 1)
            try:
                return await self.app(scope, receive, send)
            finally:
                with self._lock:  # measure again next time: the upload may have been refused
                    self._measured = (-1.0, 0, 0)
        await self.app(scope, receive, send)
