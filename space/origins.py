"""Which web pages may drive this service from a browser (issue 23, item 4).

Gradio answers any `Origin` with `Access-Control-Allow-Credentials: true` once the `Host` is not local, so a
page on another site could make a signed-in maintainer's browser moderate or re-score. Two layers:

- Starlette's `CORSMiddleware` on the parent app with an allow-list — the Space's own origin
  (`https://<SPACE_HOST>`) and `CORS_ORIGINS` — so Gradio defers to it (it adds no CORS headers when the
  parent configures them) and no other origin gets a readable answer or passes a preflight;
- `OriginGuard`: a state-changing request (POST, PUT, PATCH, DELETE) that carries an `Origin` which is
  neither this host nor allowed is refused with 403 before anything runs, so a "simple" cross-site form post
  (which needs no preflight) changes nothing either. Requests without `Origin` (scripts, the CLI) pass.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
REFUSED = "cross-origin request refused: this origin is not allowed to change anything here"


def same_origin(origin: str, host: str) -> bool:
    """Does `origin` (scheme://host[:port]) name the host the request was sent to (its Host header)?"""
    netloc = urlsplit(origin).netloc
    return bool(netloc) and netloc.lower() == host.strip().lower()


class OriginGuard:
    """ASGI middleware: refuse state-changing requests from foreign origins (see the module docstring)."""

    def __init__(self, app: ASGIApp, allowed: tuple[str, ...]) -> None:
        self.app = app
        self.allowed = frozenset(origin.lower() for origin in allowed)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in UNSAFE_METHODS:
            headers = Headers(scope=scope)
            origin = headers.get("origin")
            if origin is not None and not (
                origin.lower() in self.allowed or same_origin(origin, headers.get("host", ""))
            ):
                return await JSONResponse({"detail": REFUSED}, status_code=403)(scope, receive, send)
        await self.app(scope, receive, send)
