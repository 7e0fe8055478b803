"""Who is calling: bearer-token identity for the REST API.

Modes (environment `AUTH`, default "hub" when STORE=hub, else "token"):

- "hub":   `Authorization: Bearer <Hugging Face token>`, verified with `HfApi(endpoint).whoami()`; the
           identity is the Hub user name. Answers are cached for a minute (keyed by the token's hash) in a
           bounded LRU; a Hub failure that says nothing about the token (429, 5xx, network) is not cached.
- "token": a local token file `$DATA_DIR/tokens.json` mapping `{"<token>": "<username>"}`. On first start
           it is created with one random token for user `local`, printed once.
- "open":  no authentication (demos, tests): identity from an `X-User` header, else "anonymous". Refused
           at start-up (`open_auth_problem`) unless the service binds only to loopback, and never with
           STORE=hub or inside a Space.

Every identity is normalised by `worker.quotas.normalise_identity` (NFKC, format characters removed,
case-folded) before it is used for quotas, ownership or display; a name that normalises to nothing, or in
open mode to anything but a plain user name, is no identity.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import logging
import os
import re
import secrets
import threading
from pathlib import Path

from cachetools import TTLCache

from worker.config import AUTH_MODES, Config
from worker.identities import identity_problem, look_alike
from worker.quotas import normalise_identity
from worker.token_file import TOKEN_FILE

MODES = AUTH_MODES
CACHE_SECONDS = 60.0
CACHE_ENTRIES = 4096  # distinct tokens remembered; random tokens cannot grow memory past this
INVALID_TOKEN_STATUSES = (401, 403)  # the only Hub answers that say the token itself is bad
_USER = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def auth_mode(config: Config, env=None) -> str:
    chosen = config.auth if env is None else (env.get("AUTH") or "").strip().lower() or None
    mode = chosen or ("hub" if config.store == "hub" else "token")
    if mode not in MODES:
        raise ValueError(f"AUTH must be one of {', '.join(MODES)}, got {mode!r}")
    return mode


def is_loopback(host: str) -> bool:
    host = host.strip().strip("[]")
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


OAUTH_VARIABLES = ("OAUTH_CLIENT_ID", "OAUTH_CLIENT_SECRET", "OAUTH_SCOPES", "OPENID_PROVIDER_URL")


def on_space(env=None) -> bool:
    """Running on a Hugging Face Space, as Gradio itself decides it (`gradio.utils.get_space`)."""
    env = os.environ if env is None else env
    return env.get("SYSTEM") == "spaces" and bool(env.get("SPACE_ID"))


def oauth_enabled(env=None) -> bool:
    """Sign-in with Hugging Face: only on a Space whose OAuth app the Hub configured (`hf_oauth: true` sets
    OAUTH_VARIABLES). Anywhere else Gradio would attach its mocked routes, which sign every visitor in as
    the owner of HF_TOKEN, with session cookies signed by a public key (sha256("-v4"))."""
    env = os.environ if env is None else env
    configured = all(env.get(k) for k in OAUTH_VARIABLES)
    return on_space(env) and configured


def oauth_problem(env=None) -> str | None:
    """Why the OAuth settings must not start this service (one line), or None."""
    env = os.environ if env is None else env
    wanted = bool(env.get("OAUTH_CLIENT_ID")) or (env.get("AUTH") or "").strip().lower() == "oauth"
    if not wanted or oauth_enabled(env):
        return None
    if not on_space(env):
        return (
            "OAUTH_CLIENT_ID (or AUTH=oauth) is set outside a Hugging Face Space: Gradio would sign every "
            "visitor in as the owner of HF_TOKEN. Unset it; here sign-in uses tokens (AUTH=token or hub)."
        )
    return (
        f"OAuth is asked for on this Space but {', '.join(k for k in OAUTH_VARIABLES if not env.get(k))} "
        "is missing: set `hf_oauth: true` in the Space's README front matter (the Hub then sets them)."
    )


def open_auth_problem(mode: str, host: str, config: Config, env=None) -> str | None:
    """Why `AUTH=open` must not run here (one line), or None. Open mode believes any `X-User` header, so
    it is for a single machine only: loopback binding, local store, never a Space."""
    env = os.environ if env is None else env
    if mode != "open":
        return None
    if env.get("SPACE_ID"):
        return "AUTH=open is refused inside a Hugging Face Space (SPACE_ID is set): anyone could be anyone."
    if config.store == "hub":
        return "AUTH=open is refused with STORE=hub: anyone could be anyone on a shared store."
    if not is_loopback(host):
        return (
            f"AUTH=open is refused with HOST={host}: it trusts the X-User header, so it may only bind to "
            "loopback (HOST=127.0.0.1, ::1 or localhost)."
        )
    return None


def bearer(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


log = logging.getLogger(__name__)
_refusals_logged: set[str] = set()


def refused_identity(user: str) -> bool:
    """A user name no sign-in may produce (worker/identities.py): one that looks like a reserved name (the
    baselines' owner) or mixes scripts. Logged once per name."""
    problem = identity_problem(user)
    if problem and user not in _refusals_logged:
        _refusals_logged.add(user)
        log.warning("sign-in refused: %s", problem)
    return problem is not None


def usable_tokens(tokens: dict[str, str]) -> dict[str, str]:
    """The token file's entries whose user may sign in: not refused (`refused_identity`), and not a
    look-alike of another user of the file (`аlice` next to `alice`: both are refused, since which one
    is the impostor cannot be told). Each refused entry is logged once, by user name, never by token."""
    fine = {user for user in tokens.values() if not refused_identity(user)}
    names = {user: normalise_identity(user) for user in fine}
    clashing = {a for a in fine for b in fine if names[a] != names[b] and look_alike(a, b)}
    for user in sorted(clashing - _refusals_logged):
        _refusals_logged.add(user)
        log.warning("tokens.json: user %r refused: it looks like another user of the file", user)
    return {token: user for token, user in tokens.items() if user in fine and user not in clashing}


class Auth:
    """`identify(authorization_header, x_user_header) -> username | None` for the configured mode."""

    def __init__(self, config: Config, mode: str) -> None:
        assert mode in MODES, mode
        self.config = config
        self.mode = mode
        self._lock = threading.Lock()
        self._hub_cache: TTLCache[str, str | None] = TTLCache(CACHE_ENTRIES, CACHE_SECONDS)
        self._tokens: tuple[float, dict[str, str]] = (-1.0, {})

    def identify(self, authorization: str | None, x_user: str | None = None) -> str | None:
        if self.mode == "open":
            given = x_user or ""
            if not given.strip():
                return "anonymous"
            user = normalise_identity(given)
            return user if _USER.fullmatch(user) and not refused_identity(given) else None
        token = bearer(authorization)
        if token is None:
            return None
        found = self._hub_user(token) if self.mode == "hub" else self._local_user(token)
        if not found or refused_identity(
            found
        ):  # the name as given: case matters to look-alikes ("baseIine")
            return None
        return normalise_identity(found) or None

    def _local_user(self, token: str) -> str | None:
        path = Path(self.config.data_dir) / TOKEN_FILE
        try:
            mtime = path.stat().st_mtime
        except FileNotFoundError:
            return None
        with self._lock:
            if mtime != self._tokens[0]:  # re-read when edited, so adding a user needs no restart
                try:
                    self._tokens = (mtime, usable_tokens(json.loads(path.read_text())))
                except PermissionError:  # replaced by a new file the sandboxed web process may not read
                    log.error(
                        "%s was replaced by a file this process may not read (WEB_SANDBOX): edit it in "
                        "place, or restart the web process; the tokens read before stay in use",
                        path,
                    )
                    self._tokens = (mtime, self._tokens[1])
            tokens = self._tokens[1]
        for known, user in tokens.items():
            if secrets.compare_digest(known.encode(), token.encode()):
                return user
        return None

    def _hub_user(self, token: str) -> str | None:
        key = hashlib.sha256(token.encode()).hexdigest()
        with self._lock:
            if key in self._hub_cache:
                return self._hub_cache[key]
        from huggingface_hub import HfApi  # only hub mode needs it

        try:
            user = HfApi(endpoint=self.config.hf_endpoint).whoami(token=token).get("name")
        except Exception as exc:  # not authenticated this time; remembered only if the token is bad
            status = getattr(getattr(exc, "response", None), "status_code", None)
            if status not in INVALID_TOKEN_STATUSES:
                return None  # rate limit, Hub error, network: ask again next time
            user = None
        with self._lock:
            self._hub_cache[key] = user
        return user
