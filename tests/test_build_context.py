"""Every path the Dockerfile copies is in the image's build context: .dockerignore leaves out everything
but what it re-includes, and a COPY of a left-out path fails only when the image is built (the container
smoke, minutes into CI). Checked here in milliseconds, with the path that once was missing as the control."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def copied_sources(dockerfile: str) -> list[str]:
    """The source paths of the Dockerfile's COPY instructions (not --from stages)."""
    sources = []
    for line in dockerfile.splitlines():
        match = re.match(r"\s*COPY\s+(.*)", line)
        if not match or "--from" in match.group(1):
            continue
        words = [w for w in match.group(1).split() if not w.startswith("--")]
        sources += words[:-1]  # the last word is the destination
    return sources


def in_context(path: str, dockerignore: str) -> bool:
    """Is `path` in the build context of a deny-all .dockerignore that re-includes with `!` lines?"""
    included = [line[1:].strip().rstrip("/") for line in dockerignore.splitlines() if line.startswith("!")]
    path = path.rstrip("/")
    return any(path == entry or path.startswith(entry + "/") for entry in included)


def test_every_copied_path_is_in_the_build_context() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    dockerignore = (ROOT / ".dockerignore").read_text(encoding="utf-8")
    assert "\n*\n" in dockerignore  # deny-all, then re-include
    sources = copied_sources(dockerfile)
    assert "varm_client" in sources and "requirements.lock" in sources, sources
    assert [s for s in sources if not in_context(s, dockerignore)] == []
    # Positive control: without its `!` line the client's folder is out of the context.
    assert not in_context("varm_client", dockerignore.replace("!varm_client/\n", ""))
