"""Escaping for user text placed in Markdown or HTML (model names, descriptions, dev texts)."""

from __future__ import annotations

import html
import re
from urllib.parse import urlsplit

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~])")


def md(text: object, limit: int = 300) -> str:
    """User text as inert Markdown: HTML-escaped, Markdown syntax backslash-escaped, one line, capped.

    Quotes stay as they are: this is text, never an attribute value, and an entity such as `&#x27;` would
    have its `#` escaped below and show up literally ("word&#x27;s")."""
    s = " ".join(str(text if text is not None else "").split())[:limit]
    return _MD_SPECIAL.sub(r"\\\1", html.escape(s, quote=False))


def code(text: object, limit: int = 200) -> str:
    """User text as a Markdown code span: code spans show HTML literally, so only backticks and line
    breaks need removing (escapes would show up as backslashes)."""
    s = " ".join(str(text if text is not None else "").split())[:limit].replace("`", "'")
    return f"`{s}`" if s else "`—`"


def h(text: object) -> str:
    """User text for an HTML context."""
    return html.escape(str(text if text is not None else ""), quote=True)


def is_http_url(value: str) -> bool:
    """True for an absolute http(s) URL with a host (metadata links)."""
    try:
        parts = urlsplit(value.strip())
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc) and " " not in value.strip()


def md_link(label: str, url: str) -> str:
    """A Markdown link for a URL we validated; anything else is shown as escaped text."""
    if not is_http_url(url):
        return md(url)
    safe_url = url.strip().replace("(", "%28").replace(")", "%29").replace(" ", "%20")
    return f"[{md(label)}](<{h(safe_url)}>)"
