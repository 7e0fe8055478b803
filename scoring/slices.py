"""Public and private slices of a private test set (../shared/spec/disclosure.md §2).

Between releases the public sees results on the public slice only (30 % of the items); the private slice
(70 %) decides the official ranking at a release. Membership is drawn from `HMAC-SHA256(slice_key, item id)`,
with a key of 32 random bytes that stays with the references (workers only), so nobody can compute it from
anything published. Within each stratum (the gold label and, where the track has them, the topic or the
cue-subset memberships) the items are ordered by their HMAC and the first `round(0.3 · n)` are public, so
both slices keep the mix of the whole test, exactly, and the split of one stratum does not depend on the
others. Pure functions: the caller reads and stores the key.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Hashable, Sequence

import numpy as np

PUBLIC_SHARE = 0.3
KEY_BYTES = 32
SLICES = ("public", "private")


def new_slice_key() -> bytes:
    return secrets.token_bytes(KEY_BYTES)


def parse_slice_key(text: str) -> bytes:
    """The key from its stored form (hex); ValueError when it is not KEY_BYTES bytes of hex."""
    key = bytes.fromhex(text.strip())
    if len(key) != KEY_BYTES:
        raise ValueError(f"a slice key is {KEY_BYTES} bytes ({2 * KEY_BYTES} hex digits); got {len(key)}")
    return key


def public_mask(key: bytes, ids: Sequence[str], strata: Sequence[Hashable]) -> np.ndarray:
    """Boolean (n,): True for the items of the public slice. `strata[i]` is item i's stratum."""
    if len(ids) != len(strata):
        raise ValueError("one stratum per item")
    if len(key) != KEY_BYTES:
        raise ValueError(f"a slice key is {KEY_BYTES} bytes")
    by_stratum: dict[Hashable, list[tuple[bytes, int]]] = {}
    for row, (item_id, stratum) in enumerate(zip(ids, strata, strict=True)):
        digest = hmac.new(key, str(item_id).encode("utf-8"), hashlib.sha256).digest()
        by_stratum.setdefault(stratum, []).append((digest, row))
    mask = np.zeros(len(ids), dtype=bool)
    for members in by_stratum.values():
        members.sort()
        take = int(round(PUBLIC_SHARE * len(members)))  # round-half-even: the same on every machine
        for _, row in members[:take]:
            mask[row] = True
    return mask


def slice_rows(mask: np.ndarray) -> dict[str, np.ndarray]:
    """{"public": row indices, "private": row indices}, each ascending (reference order kept)."""
    mask = np.asarray(mask, dtype=bool)
    return {"public": np.flatnonzero(mask), "private": np.flatnonzero(~mask)}


def commitment_key(key: bytes) -> bytes:
    """The key of a private set's published commitment, derived from its slice key (one way: publishing it
    when the set is retired reveals nothing of the slices)."""
    return hmac.new(key, b"varm-leaderboard reference commitment", hashlib.sha256).digest()


def commitment(key: bytes, references_sha256: str) -> str:
    """A private set's published identity (../shared/spec/disclosure.md §6): HMAC-SHA256 of its sha256 under
    `commitment_key(key)`. A plain sha256 would let anyone confirm a guessed test set offline; once the
    commitment key is published (at retirement), anyone can check the set against this value."""
    return hmac.new(commitment_key(key), references_sha256.encode(), hashlib.sha256).hexdigest()
