"""Who is acting: an OAuth profile on a Space, a token (local or Hugging Face) elsewhere, or open mode.

Token checks go through `space.auth.Auth`, the same code the REST API uses, so both agree on identities;
an OAuth user name is normalised by the same `worker.quotas.normalise_identity`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from worker.quotas import normalise_identity

OPEN_IDENTITY = "anonymous"
UI_MODES = ("oauth", "token", "hub", "open")


@dataclass(frozen=True)
class Identity:
    name: str | None  # None: not signed in
    maintainer: bool = False
    message: str = ""  # why not signed in: an i18n key (space/ui/i18n.py), shown in the page's language


def ui_auth_mode(service: object, env: dict | None = None) -> str:
    """ "oauth" on a Space (SPACE_ID) or with OAuth configured (OAUTH_CLIENT_ID), else space.auth's mode."""
    env = os.environ if env is None else env
    if env.get("SPACE_ID") or env.get("OAUTH_CLIENT_ID") or (env.get("AUTH") or "").lower() == "oauth":
        return "oauth"
    config = getattr(service, "config", None)
    if config is not None:
        from space.auth import auth_mode

        return auth_mode(config, env)
    mode = (env.get("AUTH") or "token").lower()
    return mode if mode in UI_MODES else "token"


def is_maintainer(service: object, name: str) -> bool:
    check = getattr(service, "is_maintainer", None)
    if callable(check):
        return bool(check(name))
    maintainers = getattr(getattr(service, "config", None), "maintainers", ()) or ()
    return normalise_identity(name) in {normalise_identity(m) for m in maintainers}


class Resolver:
    """Resolves (token, OAuth profile) to an Identity for one UI mode."""

    def __init__(self, service: object, mode: str) -> None:
        self.service = service
        self.mode = mode
        self._auth = None
        config = getattr(service, "config", None)
        if config is not None and mode in ("token", "hub"):
            from space.auth import Auth

            self._auth = Auth(config, mode)

    def __call__(self, token: str | None, profile: object | None) -> Identity:
        username = getattr(profile, "username", None) if profile is not None else None
        username = normalise_identity(username) if username else None
        if username:
            return Identity(username, is_maintainer(self.service, username))
        token = (token or "").strip()
        if self.mode == "open":
            return Identity(OPEN_IDENTITY, False)
        if self.mode == "oauth":
            return Identity(None, message="need_oauth")
        if not token:
            return Identity(None, message="need_token")
        name = self._auth.identify(f"Bearer {token}") if self._auth is not None else None
        if not name:
            return Identity(None, message="bad_token")
        return Identity(name, is_maintainer(self.service, name))
