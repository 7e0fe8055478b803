"""Reference sets pinned to a revision of the references area, loaded once per (track, revision)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scoring.api import references_sha256
from scoring.tracks import get_track
from worker.store import Store

AREA = "references"
MAX_CACHED = 8


@dataclass(frozen=True)
class Pinned:
    track: str
    revision: str
    refs: Any  # the track's References object; never logged, never returned to a caller outside the worker
    sha256: str


class ReferenceCache:
    """Worker-process cache. A new commit to the references area yields a new revision, so entries never
    go stale; old ones are simply evicted."""

    def __init__(self, store: Store) -> None:
        self.store = store
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
            if len(self._cache) >= MAX_CACHED:
                self._cache.pop(next(iter(self._cache)))
            self._cache[key] = Pinned(track, revision, refs, references_sha256(test, subsets_dir))
        return self._cache[key]
