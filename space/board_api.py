"""The leaderboard as the REST API serves it: encoded once per results revision, then filtered, sorted and
paged with the UI's own query (`space.board_query`: `View` and `filter_rows`), so the API and the page agree.

Every row is encoded to JSON once per (track, results head); a page is those bytes joined, not a dict
re-encoded per request (FastAPI's encoder took 0.55 s for 3,000 rows). The ETag names the results head and
the query, so a client that already has this page gets a 304 without any work.
"""

from __future__ import annotations

import gzip
import hashlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import orjson
import pandas as pd

from scoring.names import MODEL_TYPES, SETTINGS
from space.board_query import View, filter_rows, rows_frame, sort_keys, to_csv
from worker.views import LatestRelease, ReferenceSetView

MAX_PAGE_SIZE = 1000
MAX_PAGE = 1_000_000  # bounds `page` (422 beyond): an unbounded integer overflowed orjson into a 500
DEFAULT_PAGE_SIZE = 100


class BadQuery(ValueError):
    """A query parameter with a value the board does not know (the message names it and the choices)."""


def board_view(
    track: str,
    q: str = "",
    baselines: bool = True,
    model_type: str = "",
    setting: str = "",
    sort: str = "rank",
) -> View:
    """The UI's `View` from REST parameters, strictly: unknown values are errors, not silently dropped.
    `model_type` and `setting` are comma-separated like the UI's URL (`type=open,closed`)."""
    types = tuple(v for v in model_type.split(",") if v)
    settings = tuple(v for v in setting.split(",") if v)
    sorts = sort_keys(track)
    for name, values, allowed in (("type", types, MODEL_TYPES), ("setting", settings, SETTINGS)):
        unknown = [v for v in values if v not in allowed]
        if unknown:
            raise BadQuery(f"{name}: unknown value {unknown[0]!r}; expected any of {', '.join(allowed)}")
    if sort not in sorts:
        raise BadQuery(f"sort: unknown key {sort!r}; expected one of {', '.join(sorts)}")
    if len(q) > 200:
        raise BadQuery("q: at most 200 characters")
    return View(track=track, q=q, baselines=baselines, model_types=types, settings=settings, sort=sort)


@dataclass
class EncodedBoard:
    """One track's board at one results head, encoded once: meta object and one JSON text per row."""

    head: str
    meta: bytes  # `{...}` without rows: track, title, primary_metric, ..., reference_set
    rows: list[bytes]
    frame: pd.DataFrame  # the UI's rows frame (search haystack, filters, sort) over the same rows
    _full_gzip: bytes | None = field(default=None, repr=False)

    def positions(self, view: View) -> list[int]:
        """Row positions matching `view`, in its order (row i of the board is row i of the frame)."""
        return filter_rows(self.frame, view).index.tolist() if self.rows else []

    def body(self, positions: list[int], extra: dict | None = None) -> bytes:
        """`meta` with `"rows": [...]` (the selected rows' stored bytes) and `extra` fields appended."""
        rows = b",".join(self.rows[i] for i in positions)
        tail = orjson.dumps(extra)[1:-1] if extra else b""
        return self.meta[:-1] + b',"rows":[' + rows + b"]" + (b"," + tail if tail else b"") + b"}"

    def full_gzip(self) -> bytes:
        """The whole board (every row, no paging fields) gzip-compressed, built once per revision."""
        if self._full_gzip is None:
            self._full_gzip = gzip.compress(self.body(list(range(len(self.rows)))), compresslevel=6, mtime=0)
        return self._full_gzip

    def csv(self, positions: list[int]) -> bytes:
        return to_csv(self.frame.iloc[positions])


def with_provisional(rows: list[dict], release: LatestRelease | None) -> list[dict]:
    """The rows, each saying whether it is `provisional` (submitted after the track's latest `release`: in
    no release yet); unchanged when the track has none."""
    if release is None:
        return rows
    return [{**r, "provisional": str(r.get("created_at") or "") > release["date"]} for r in rows]


def encode_board(
    head: str, board: dict, reference_set: ReferenceSetView, release: LatestRelease | None = None
) -> EncodedBoard:
    """The board's bytes; with the track's latest `release` ({"name", "date", "url"}), named in the meta,
    each row says whether it is `provisional` (submitted after the cut: in no release yet)."""
    rows = with_provisional([r for r in board.get("rows") or [] if isinstance(r, dict)], release)
    meta = {k: v for k, v in board.items() if k != "rows"} | {"reference_set": reference_set}
    if release is not None:  # a track without releases keeps its board bytes as they were
        meta["latest_release"] = release
    return EncodedBoard(
        head=head,
        meta=orjson.dumps(meta),
        rows=[orjson.dumps(r) for r in rows],
        frame=rows_frame(rows),
    )


class BoardBytes:
    """Encoded boards per track, replaced when the Service's results head moves."""

    def __init__(
        self,
        board_at: Callable[[str], tuple[str, dict]],
        reference_set: Callable[[str], ReferenceSetView],
        latest_release: Callable[[str], LatestRelease | None] = lambda track: None,
    ):
        self._board_at = board_at
        self._reference_set = reference_set
        self._latest_release = latest_release
        self._lock = threading.Lock()
        self._boards: dict[str, EncodedBoard] = {}
        self._track_locks: dict[str, threading.Lock] = {}

    def get(self, track: str) -> EncodedBoard:
        head, board = self._board_at(track)
        with self._lock:
            cached = self._boards.get(track)
            if cached is not None and cached.head == head:
                return cached
            track_lock = self._track_locks.setdefault(track, threading.Lock())
        with track_lock:  # viewers arriving together after a publish wait for one encoding
            with self._lock:
                cached = self._boards.get(track)
            if cached is not None and cached.head == head:
                return cached
            encoded = encode_board(head, board, self._reference_set(track), self._latest_release(track))
            with self._lock:
                self._boards[track] = encoded
        return encoded


def etag(head: str, *parts: object) -> str:
    """A strong ETag for a response derived from the board at `head` and the query `parts`."""
    digest = hashlib.sha256(repr((head, *parts)).encode()).hexdigest()[:32]
    return f'"{digest}"'


def matches(if_none_match: str | None, tag: str) -> bool:
    """Does the client's If-None-Match name `tag` (a list, `*`, or weak validators all count)?"""
    if not if_none_match:
        return False
    candidates = {c.strip().removeprefix("W/") for c in if_none_match.split(",")}
    return "*" in candidates or tag in candidates
