"""The local token file `$DATA_DIR/tokens.json` (`{"<token>": "<username>"}`), AUTH=token's identities: made
on first start with one token for user `local`; the CLI reads that token to call the local service. The web
process checks tokens against it (space/auth.py)."""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

TOKEN_FILE = "tokens.json"


def ensure_token_file(data_dir: Path) -> str | None:
    """Create `tokens.json` with a random token for user `local` if missing; return that new token."""
    path = Path(data_dir) / TOKEN_FILE
    if path.exists():
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(24)
    # Group-readable as the umask allows: in the image's two-user mode the web process reads it through the
    # shared group (docker/two_users.py); never readable by others.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o660)
    with os.fdopen(fd, "w") as f:
        json.dump({token: "local"}, f, indent=1)
    return token


def local_token(data_dir: Path) -> str | None:
    """The token of user `local` in the token file (None when there is none or the file is unreadable)."""
    try:
        tokens = json.loads((Path(data_dir) / TOKEN_FILE).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(tokens, dict):
        return None
    return next((t for t, user in tokens.items() if user == "local"), None)
