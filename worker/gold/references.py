"""Reference sets pinned to a revision of the references area, loaded once per (track, revision)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from scoring.api import references_sha256
from scoring.slices import commitment, parse_slice_key, public_mask, slice_rows
from scoring.tracks import get_track
from worker.store import Store, layout

AREA = "references"
MAX_CACHED = 8
PRIVATE, PUBLIC = "private", "public"


@dataclass(frozen=True)
class Pinned:
    track: str
    revision: str
    refs: Any  # the track's References object; never logged, never returned to a caller outside the worker
    sha256: str  # the set's published identity: its sha256, or for a private set the keyed commitment
    test_status: str = PRIVATE  # ../shared/spec/disclosure.md §1
    # A private set's row indices per slice ({"public", "private"}, §2); None for a public set or a set
    # installed without a slice key (nothing to hide then, or nothing to hide it with).
    slices: dict[str, np.ndarray] | None = None
    slice_key: bytes | None = None  # seals the private and full results (worker/gold/sealed.py)
    gold_match_hold: float = 0.99  # a public test's uploads agreeing this much with the gold are held (§5)


def test_status(snapshot: Path) -> str:
    """The set's test status from its manifest; a manifest without one (or none at all) is private."""
    manifest = snapshot / layout.REFERENCE_SET
    try:
        status = json.loads(manifest.read_bytes()).get("test_status", PRIVATE) if manifest.is_file() else None
    except (OSError, ValueError, AttributeError):
        status = None
    return PUBLIC if status == PUBLIC else PRIVATE


def slice_key(snapshot: Path) -> bytes | None:
    key_file = snapshot / layout.SLICE_KEY
    return parse_slice_key(key_file.read_text()) if key_file.is_file() else None


class ReferenceCache:
    """Worker-process cache. A new commit to the references area yields a new revision, so entries never
    go stale; old ones are simply evicted."""

    def __init__(self, store: Store, *, gold_match_hold: float = 0.99) -> None:
        self.store = store
        self.gold_match_hold = gold_match_hold
        self._cache: dict[tuple[str, str], Pinned] = {}

    def get(self, track: str, revision: str | None = None) -> Pinned:
        revision = revision or self.store.head(AREA)
        key = (track, revision)
        if key not in self._cache:
            snapshot = self.store.local_snapshot(AREA, revision) / track
            test = snapshot / "test.jsonl"
            if not test.is_file():
                raise LookupError(f"no reference set for track {track!r} at revision {revision[:12]}")
            subsets = snapshot / "subsets"
            subsets_dir = subsets if subsets.is_dir() else None
            refs = get_track(track).load_references(test, subsets_dir)
            status, secret = test_status(snapshot), slice_key(snapshot)
            slices, identity = None, references_sha256(test, subsets_dir)
            if status == PRIVATE and secret is not None:
                slices = slice_rows(public_mask(secret, refs.ids, refs.strata()))
                identity = commitment(secret, identity)  # what every result and row publishes (§6)
            if len(self._cache) >= MAX_CACHED:
                self._cache.pop(next(iter(self._cache)))
            self._cache[key] = Pinned(track, revision, refs, identity, status, slices, secret)
        return self._cache[key]


GOLD_MATCH = "gold_match"
GOLD_MATCH_REASON = (
    "held for review: its labels agree with the published test labels almost everywhere. This track's test "
    "labels are public, so such a file is checked by a maintainer before it is published"
)


def gold_match(pinned: Pinned, result: dict) -> bool:
    """Should this scored upload of a PUBLIC test be held (§5)? Its label agreement with the gold (accuracy;
    VARM: the label field's accuracy) reaches the pinned GOLD_MATCH_HOLD."""
    if pinned.test_status != PUBLIC:
        return False
    metrics = result.get("metrics") or {}
    agreement = metrics.get("accuracy")
    if agreement is None:
        agreement = (metrics.get("field_accuracy") or {}).get("label")
    return isinstance(agreement, int | float) and agreement >= pinned.gold_match_hold
