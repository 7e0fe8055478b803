"""Server-side caches shared by every browser session: leaderboards and published results.

The leaderboard of a track is read once and kept until the results area's head revision changes. The head
comes from `Service.results_head()`, the one place that decides freshness (it re-reads the store at most
every `Service.head_ttl` seconds however many sessions poll, so a Hub-backed store sees one light request
per interval instead of one per viewer, and the REST leaderboard and the UI agree on what is current).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

import pandas as pd

from space.board_api import with_provisional
from space.board_query import TRACKS, rows_frame
from worker.service import Service

from .submission import result_of

_SAFE_ID = re.compile(r"[0-9a-f]{16}")


@dataclass
class Board:
    head: str
    meta: dict  # leaderboard.json without its rows: track, generated_at, scorer_version, ...
    df: pd.DataFrame
    _pos: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._pos = {sid: i for i, sid in enumerate(self.df["submission_id"].tolist())}

    def row(self, submission_id: str) -> dict | None:
        """One leaderboard row as plain Python values (None when not on the board)."""
        i = self._pos.get(submission_id)
        if i is None:
            return None
        return {k: _plain(v) for k, v in self.df.iloc[i].items() if not str(k).startswith("_")}


def _plain(value: object) -> object:
    # numpy scalars -> Python (the figures and the JSON encoder want plain values); NaN -> None.
    if hasattr(value, "item"):
        value = value.item()
    return None if isinstance(value, float) and value != value else value


def load_board_frame(service: Service, track: str) -> tuple[dict, pd.DataFrame]:
    """(meta, rows frame) of a track from `Service.leaderboard`: the live board, the same rows the REST API
    serves (the complete `leaderboard.parquet` export may lag it: `worker.live_board.export_interval`)."""
    data = service.leaderboard(track) or {}
    rows = [r for r in data.get("rows") or [] if isinstance(r, dict)]
    rows = with_provisional(rows, service.latest_release(track))  # rows newer than the official numbers
    return {k: v for k, v in data.items() if k != "rows"}, rows_frame(rows)


class BoardCache:
    """Leaderboards per track keyed by the results head; results per (submission, version)."""

    def __init__(self, service: Service, results_max: int = 512) -> None:
        self.service = service
        self._lock = threading.Lock()
        self._head: str = ""
        self._boards: dict[str, Board] = {}
        self._results: OrderedDict[tuple[str, object], dict | None] = OrderedDict()
        self._results_max = results_max

    def head(self) -> str:
        """The results area's head revision as `Service.results_head()` has it (cached there)."""
        try:
            head = self.service.results_head()
        except Exception:  # a store hiccup must not blank the page: keep showing what we have
            with self._lock:
                return self._head or "unknown"
        with self._lock:
            self._head = head
        return head

    def board(self, track: str) -> Board:
        head = self.head()
        cached = self._boards.get(track)
        if cached is not None and cached.head == head:
            return cached
        meta, df = load_board_frame(self.service, track)
        board = Board(head=head, meta=meta, df=df)
        with self._lock:
            self._boards[track] = board
        return board

    def warm(self, tracks: tuple[str, ...] = TRACKS) -> None:
        """Load every board once (run in a background thread at start-up: the first viewer is not cold)."""
        for track in tracks:
            try:
                self.board(track)
            except Exception:  # a track without results yet must not stop the others
                continue

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
        if hasattr(version, "item"):
            version = version.item()  # numpy integer from the board frame
        if isinstance(version, int) and _SAFE_ID.fullmatch(submission_id):
            try:
                result = result_of(self.service.published_result(track, submission_id, version))
            except Exception:  # fall back to the service below
                result = None
        if result is None:
            result = result_of(self.service.submission(submission_id))
        with self._lock:
            self._results[key] = result
            while len(self._results) > self._results_max:
                self._results.popitem(last=False)
        return result
