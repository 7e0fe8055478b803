"""ASGI middleware: the UI page (`GET /`) carries a snippet at the top of its <head>.

Gradio puts a mount's `head` into its config and adds it to the page from its own script, after the app
has painted once; a script that must run before the first paint (space/ui/app.py HEAD: the link's
language) has to be in the HTML the server sends."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

UI_PAGE = "/"


class PageHead:
    def __init__(self, app: ASGIApp, head: str) -> None:
        self.app = app
        self.head = head.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "GET" or scope["path"] != UI_PAGE:
            return await self.app(scope, receive, send)
        start: Message | None = None
        body = bytearray()

        async def collect(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
                return
            if message["type"] != "http.response.body" or start is None:
                return await send(message)
            body.extend(message.get("body", b""))
            if message.get("more_body"):
                return
            headers = [(k, v) for k, v in start["headers"] if k.lower() != b"content-length"]
            page = bytes(body)
            if any(k.lower() == b"content-type" and v.startswith(b"text/html") for k, v in headers):
                page = page.replace(b"<head>", b"<head>" + self.head, 1)
            headers.append((b"content-length", str(len(page)).encode()))
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": page})

        await self.app(scope, receive, collect)
