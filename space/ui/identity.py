"""Who is acting: an OAuth profile on a Space, a token (local or Hugging Face) elsewhere, or open mode.

Token checks go through `space.auth.Auth`, the same code the REST API uses, so both agree on identities;
an OAuth user name is normalised by the same `worker.quotas.normalise_identity`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from space.auth import Auth, auth_mode, oauth_enabled, refused_identity
from worker.quotas import normalise_identity
from worker.service import Service

OPEN_IDENTITY = "anonymous"


@dataclass(frozen=True)
class Identity:
    name: str | None  # None: not signed in
    maintainer: bool = False
    message: str = ""  # why not signed in: an i18n key (space/ui/i18n.py), shown in the page's language


def ui_auth_mode(service: Service, env: Mapping[str, str] | None = None) -> str:
    """ "oauth" on a Space with the Hub's OAuth app configured (`space.auth.oauth_enabled`), else
    space.auth's mode (tokens). OAuth asked for anywhere else is refused at start-up (`oauth_problem`)."""
    env = os.environ if env is None else env
    return "oauth" if oauth_enabled(env) else auth_mode(service.config, env)


class Resolver:
    """Resolves (token, OAuth profile) to an Identity for one UI mode."""

    def __init__(self, service: Service, mode: str) -> None:
        self.service = service
        self.mode = mode
        self._auth = Auth(service.config, mode) if mode in ("token", "hub") else None

    def __call__(self, token: str | None, profile: object | None) -> Identity:
        given = getattr(profile, "username", None) if profile is not None else None
        if given and refused_identity(given):
            return Identity(None, message="refused_identity")
        username = normalise_identity(given) if given else None
        if username:
            return Identity(username, self.service.is_maintainer(username))
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
        return Identity(name, self.service.is_maintainer(name))
