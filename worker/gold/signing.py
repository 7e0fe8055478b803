"""The workers' Ed25519 signing key: kept in the references area (workers only), made on first use.

A deployment may give it as a secret instead (`SIGNING_KEY`: the PEM text), e.g. a Space secret, so that a
new references repository keeps the same key. Its public half is published with every release
(`keys/ed25519.pub` in the results area) and at `GET /api/v1/keys`.
"""

from __future__ import annotations

import os

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    load_pem_private_key,
)

from worker.store import Store, StoreError, commit_with_retry

REFERENCES = "references"
KEY_PATH = "signing/ed25519.pem"
PUBLIC_KEY_PATH = "keys/ed25519.pub"


def _load(pem: bytes) -> Ed25519PrivateKey:
    key = load_pem_private_key(pem, password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError("the signing key is not an Ed25519 key")
    return key


def signing_key(store: Store) -> Ed25519PrivateKey:
    """The workers' key: $SIGNING_KEY, else the references area's, made and stored there once."""
    given = os.environ.get("SIGNING_KEY")
    if given:
        return _load(given.encode())
    stored = store.read(REFERENCES, KEY_PATH)
    if stored is None:
        fresh = Ed25519PrivateKey.generate().private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())

        def build(s: Store, head: str) -> tuple[dict[str, bytes], list[str]]:
            return ({} if s.read(REFERENCES, KEY_PATH, head) else {KEY_PATH: fresh}), []

        commit_with_retry(store, REFERENCES, build, "signing key")  # a racing worker's key wins
        stored = store.read(REFERENCES, KEY_PATH)
        if stored is None:  # the commit above landed one key or found another's
            raise StoreError("the signing key is not in the store after writing it")
    return _load(stored)
