"""The UI's `page` query parameter, taken away from Gradio.

The board's shareable links carry `page=N` (space/ui/tables.py, the table's page), but Gradio's own "/"
route reads a `page` query parameter as the name of one of its multipage pages and answers a 500 with a
KeyError traceback for any name it does not know (`/?track=cold&page=-5`, and even `page=2`). The browser
keeps the full URL, which the UI's load handler reads; only the server-side copy Gradio sees loses it.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode

UI_ROOTS = ("/", "")


class UiPageParam:
    """Pure ASGI middleware: drop `page` from the query string of the UI's page request (GET/HEAD "/")."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if (
            scope["type"] == "http"
            and scope.get("method") in ("GET", "HEAD")
            and scope.get("path") in UI_ROOTS
            and b"page" in scope.get("query_string", b"")
        ):
            pairs = parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True)
            kept = [(k, v) for k, v in pairs if k != "page"]
            scope = {**scope, "query_string": urlencode(kept).encode("latin-1")}
        await self.app(scope, receive, send)
