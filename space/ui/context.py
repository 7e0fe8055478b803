"""What every page shares: the Service, the board cache, who is acting, and the rules for uploads.

Every identity-bearing action re-checks the identity on the server: hidden components are not security.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from contextlib import AbstractContextManager
from pathlib import Path

import gradio as gr

from space.uploads import UploadRefused, checked_upload
from worker.service import Service
from worker.slots import Held

from . import figures
from .i18n import Localised, t
from .identity import Identity, Resolver
from .state import BoardCache

log = logging.getLogger(__name__)


def refused(message: str) -> gr.Error:
    """A call the user got wrong (or must retry): they see `message`, the log gets one line instead of
    Gradio's traceback (tracebacks stay for real bugs)."""
    log.warning("refused UI call: %s", message.splitlines()[0][:200] if message else "")
    return gr.Error(message, print_exception=False)


class Context:
    """State shared by all sessions and pages: the Service, caches, the identity resolver."""

    def __init__(self, service: Service, *, auth_mode: str) -> None:
        self.service = service
        self.auth_mode = auth_mode
        self.resolve = Resolver(service, auth_mode)
        self.cache = BoardCache(service)
        # Component texts that follow the language toggle: pages bind them as they build their layout, the
        # shell adopts every `both(key)` label and wires the toggle to `texts.updates`.
        self.texts = Localised("zh")
        # Paths that came through /gradio_api/upload (the Blocks' upload_file_set, bound by build_app):
        # the only files a file input may name.
        self.uploaded: Collection[str] | None = None

    def warm(self) -> None:
        """One-off start-up work: every published board, and plotly's template (0.5 s+ on first use)."""
        self.cache.warm()
        figures.empty_figure("warm-up")

    def identity(self, token: str | None, profile: object | None) -> Identity:
        return self.resolve(token, profile)

    def viewer(self, token: str | None, profile: object | None) -> str | None:
        """The signed-in identity looking at a submission (None: anonymous), for hidden submissions."""
        return self.identity(token, profile).name if (token or profile) else None

    def maintainer(self, token: str | None, profile: object | None, lang: str = "zh") -> str:
        """The maintainer's name, or a refusal (in `lang`) for anyone else."""
        who = self.identity(token, profile)
        if who.name is None or not who.maintainer:
            raise refused(t("maint_only", lang))
        return who.name

    def checked_upload(self, path: str | None) -> Path | None:
        """The real path of the user's upload (space/uploads.py rules); read it inside `slot`."""
        try:
            return checked_upload(path, self.uploaded)
        except UploadRefused as exc:  # a user error, not a server fault: one log line, no traceback
            raise refused(str(exc)) from None

    def slot(self, path: Path) -> AbstractContextManager[Held]:
        """The web process's work slot for reading and validating an upload (see worker/slots.py)."""
        return self.service.slots.hold(path.stat().st_size)
