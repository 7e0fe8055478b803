"""Signed results (../shared/spec/disclosure.md §6): canonical bytes and Ed25519 signature checks.

The workers sign every release row (and, later, every published result) with their Ed25519 key; anyone
with the public key (results dataset `keys/ed25519.pub`, `GET /api/v1/keys`) can check that a row is the
one the service published, byte for byte. The canonical bytes of a value are its JSON with sorted keys,
no spaces and UTF-8 text, without its `signature` field. Pure functions; the key handling is the caller's.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

SIGNATURE = "signature"


def canonical(value: dict[str, Any]) -> bytes:
    unsigned = {k: v for k, v in value.items() if k != SIGNATURE}
    return json.dumps(
        unsigned, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False
    ).encode()


def sign(key: Ed25519PrivateKey, value: dict[str, Any]) -> dict[str, Any]:
    """`value` with its `signature` (base64 of the Ed25519 signature of its canonical bytes)."""
    return {**value, SIGNATURE: base64.b64encode(key.sign(canonical(value))).decode()}


def public_key_text(key: Ed25519PrivateKey) -> str:
    """The public key as published: base64 of its 32 raw bytes."""
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    return base64.b64encode(key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)).decode()


def load_public_key(text: str) -> Ed25519PublicKey:
    """ValueError when `text` is not base64 of 32 bytes."""
    raw = base64.b64decode(text.strip(), validate=True)
    if len(raw) != 32:
        raise ValueError("an Ed25519 public key is 32 bytes")
    return Ed25519PublicKey.from_public_bytes(raw)


def verified(public_key: Ed25519PublicKey, value: dict[str, Any]) -> bool:
    """Does `value` carry a valid signature of its canonical bytes under `public_key`?"""
    signature = value.get(SIGNATURE)
    if not isinstance(signature, str):
        return False
    try:
        public_key.verify(base64.b64decode(signature, validate=True), canonical(value))
    except (InvalidSignature, ValueError):
        return False
    return True
