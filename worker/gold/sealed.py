"""What a private test's private and full results are kept in until a release: sealed for the workers.

The submissions area is read by the web process too (records, the staged public result), so the private
slice's result, its row outcomes and the full-test result (../shared/spec/disclosure.md §2: "stay with the
workers until a release") are written there only encrypted, with AES-256-GCM under a key derived from the
track's slice key, which lives in the references area (workers only). Written in the same commit as the
public result, so a version never has one without the other. The nonce is derived from the key and the
bytes (deterministic: the same result seals to the same bytes, and different bytes never share a nonce).
"""

from __future__ import annotations

import hashlib
import hmac

import orjson
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from worker.store import codec

FORMAT = b"sealed-1:"
NONCE_BYTES = 12


def _key(slice_key: bytes) -> bytes:
    return hmac.new(slice_key, b"varm-leaderboard sealed private results v1", hashlib.sha256).digest()


def seal(slice_key: bytes, value: dict) -> bytes:
    key = _key(slice_key)
    plain = codec.compact(value)
    nonce = hmac.new(key, plain, hashlib.sha256).digest()[:NONCE_BYTES]
    return FORMAT + nonce + AESGCM(key).encrypt(nonce, plain, FORMAT)


def unseal(slice_key: bytes, data: bytes) -> dict:
    """The sealed value; ValueError when the bytes are not sealed under this key (or were changed)."""
    if not data.startswith(FORMAT):
        raise ValueError("not a sealed result")
    body = data[len(FORMAT) :]
    try:
        plain = AESGCM(_key(slice_key)).decrypt(body[:NONCE_BYTES], body[NONCE_BYTES:], FORMAT)
    except Exception as error:  # cryptography's InvalidTag: wrong key or changed bytes
        raise ValueError("a sealed result that does not open with this track's key") from error
    return orjson.loads(plain)
