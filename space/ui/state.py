"""Server-side caches shared by every browser session: leaderboards and published results.

The leaderboard of a track is read once and kept until the results area's head revision changes; the head
itself is checked at most every `head_ttl` seconds however many sessions poll, so a Hub-backed store sees
one light request per interval instead of one per viewer.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

import pandas as pd

from .submission import result_of
from .tables import rows_frame

_SAFE_ID = re.compile(r"[0-9a-f]{16}")


@dataclass
class Board:
    head: str
    meta: dict  # leaderboard.json without its rows: track, generated_at, scorer_version, ...
    rows: list[dict]
    df: pd.DataFrame
    by_id: dict[str, dict] = field(default_factory=dict)


class BoardCache:
    """Leaderboards per track keyed by the results head; results per (submission, version)."""

    def __init__(self, service: object, head_ttl: float = 5.0, results_max: int = 512) -> None:
        self.service = service
        self.head_ttl = head_ttl
        self._lock = threading.Lock()
        self._head: str = ""
        self._head_at = 0.0
        self._boards: dict[str, Board] = {}
        self._results: OrderedDict[tuple[str, object], dict | None] = OrderedDict()
        self._results_max = results_max

    def head(self, force: bool = False) -> str:
        """The results area's head revision, re-read at most every `head_ttl` seconds."""
        now = time.monotonic()
        with self._lock:
            if not force and self._head and now - self._head_at < self.head_ttl:
                return self._head
        try:
            head = str(self.service.store.head("results"))  # type: ignore[attr-defined]
        except Exception:  # a store hiccup must not blank the page: keep showing what we have
            head = self._head or "unknown"
        with self._lock:
            self._head, self._head_at = head, now
        return head

    def board(self, track: str) -> Board:
        head = self.head()
        cached = self._boards.get(track)
        if cached is not None and cached.head == head:
            return cached
        data = self.service.leaderboard(track) or {}  # type: ignore[attr-defined]
        rows = [r for r in data.get("rows") or [] if isinstance(r, dict)]
        meta = {k: v for k, v in data.items() if k != "rows"}
        board = Board(head=head, meta=meta, rows=rows, df=rows_frame(rows),
                      by_id={str(r.get("submission_id")): r for r in rows})
        with self._lock:
            self._boards[track] = board
        return board

    def changed(self, seen: str) -> tuple[bool, str]:
        """(whether the head moved since `seen`, the current head) — for the light refresh timer."""
        head = self.head()
        return bool(seen) and head != seen, head

    def result(self, track: str, submission_id: str, version: object = None) -> dict | None:
        """The published scorer result of a leaderboard row (cached per version; versions never change).

        Reads the public envelope `<track>/results/<id>/v<N>.json` so the analysis shows exactly the
        published version; falls back to `Service.submission` when the row has no version.
        """
        key = (submission_id, version)
        with self._lock:
            if key in self._results:
                self._results.move_to_end(key)
                return self._results[key]
        result = None
        if isinstance(version, int) and _SAFE_ID.fullmatch(submission_id):
            try:
                raw = self.service.store.read(  # type: ignore[attr-defined]
                    "results", f"{track}/results/{submission_id}/v{version}.json")
                result = result_of(json.loads(raw)) if raw else None
            except Exception:  # fall back to the service below
                result = None
        if result is None:
            result = result_of(self.service.submission(submission_id))  # type: ignore[attr-defined]
        with self._lock:
            self._results[key] = result
            while len(self._results) > self._results_max:
                self._results.popitem(last=False)
        return result
