"""The reconciler: finds submissions whose task was lost or whose worker died, and gets them moving.

Runs periodically (celery beat) and on demand (`python -m worker reconcile`). Safe to run any number of
times concurrently with workers: re-sent tasks are idempotent. Each track and each record is handled on its
own: an unreadable record is skipped (and listed by `quarantined`), a failure on one track is logged and
the other tracks are still reconciled.
"""

from __future__ import annotations

import logging
import math
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from scoring.names import TRACK_NAMES
from worker import live_board
from worker.gold import marks
from worker.gold.publish import RESULTS, published_runs, version_for
from worker.records import (
    FAILED,
    MAX_ATTEMPTS,
    PENDING,
    PUBLISHED,
    QUEUED,
    RECEIVED,
    SCORED,
    SCORING,
    not_released,
    parse_iso,
    transition,
)
from worker.store import Store
from worker.submissions import (
    AREA,
    list_records,
    load_records,
    read_index,
    update_record,
    update_records,
)

log = logging.getLogger(__name__)
_lean_resent: dict[str, float] = {}  # submission id -> when this process re-sent it without a commit
MARKS_ASK_AGAIN_SECONDS = 300.0  # a paced publish with marks asked for at the same heads, if still needed
_segments: dict = {}  # live board segments read so far (live_board.read): a round reads the changed ones


def reconcile(
    store: Store,
    enqueue,
    stuck_after: float,
    tracks=TRACK_NAMES,
    *,
    scoring_after: float | None = None,
    holder_gone: Callable[[str], bool] | None = None,
) -> dict:
    """Re-send submissions stuck in received/queued for longer than `stuck_after` seconds (in scoring for
    longer than `scoring_after`, default `stuck_after`: a task may legitimately score until its time limit;
    but after `stuck_after` when `holder_gone(record["holder"])` says the worker scoring it stopped beating:
    a SIGKILLed worker's message waits for the broker's visibility timeout, its record need not),
    fail those that already crashed MAX_ATTEMPTS times, and re-send the publish of a track when a record
    older than `stuck_after` is not shown as its records say (scored but unpublished, hidden but still on
    the board, a changed verified/baseline flag). `enqueue` needs `score(track, id)` and `publish(track)`.
    Returns counts and ids; "errors" lists tracks or records that could not be handled this time.

    While the submissions budget is paced, a publish leaves its marks to the next batch of scoring
    (worker/gold/marks.py); once no first attempt waits on any track (no batch is coming), the scored
    records the board shows are marked published here, all tracks in one commit ("marked"), and a track
    with a stuck scored record the board does not show (one the Ladder did not release has no envelope to
    be found by) gets a publish that commits its marks even though paced ("publish_marks")."""
    summary: dict = {
        "requeued": [],
        "failed": [],
        "publish": [],
        "errors": [],
        "marked": [],
        "publish_marks": [],
    }
    shown: dict[tuple[str, str], int] = {}
    # paced: track -> its stuck scored records the board does not show
    unmarked: dict[str, frozenset[str]] = {}
    waiting = False
    try:  # read once for every track: an idle pass costs these two requests and nothing else
        heads = (store.head(AREA), store.head(RESULTS))
    except Exception as exc:  # the store is down: the next round tries again
        log.warning("reconciler: round skipped (%s: %s)", type(exc).__name__, exc)
        summary["errors"].append(f"heads: {type(exc).__name__}")
        return summary
    for track in tracks:
        try:
            waiting |= _reconcile_track(
                store,
                enqueue,
                track,
                stuck_after,
                scoring_after or stuck_after,
                summary,
                shown,
                unmarked,
                holder_gone,
                heads,
            )
        except Exception as exc:  # one track's trouble must not stop the others
            log.warning("reconciler: track %s skipped this round (%s: %s)", track, type(exc).__name__, exc)
            summary["errors"].append(f"{track}: {type(exc).__name__}")
            waiting = True  # unknown: leave the marks to a batch or the next round
    if shown and not waiting:
        try:
            done = update_records(store, lambda s, head: marks.marked(s, head, shown), "mark published")
            summary["marked"] = [r["submission_id"] for r in done]
        except Exception as exc:  # the next round tries again
            log.warning("reconciler: marks not committed (%s)", type(exc).__name__)
            summary["errors"].append(f"marks: {type(exc).__name__}")
    for track, ids in unmarked.items():
        try:
            _ask_paced_publish(store, enqueue, track, (heads[1], ids), waiting, summary)
        except Exception as exc:  # the broker is down: the next round asks again
            log.warning("reconciler: publish of %s not sent (%s)", track, type(exc).__name__)
            summary["errors"].append(f"{track} publish: {type(exc).__name__}")
    return summary


def _ask_paced_publish(
    store: Store, enqueue, track: str, at: tuple[str, frozenset[str]], waiting: bool, summary: dict
) -> None:
    """While the budget is paced, the board of `track` is not what its settled records say (`at`: the
    results head, and the stuck scored records it does not show).

    While a batch is coming (`waiting`), a plain publish is asked for once per results head: it shows a
    record a publish missed, and the batch's commit carries the marks (a scored record the Ladder did not
    release, never shown, made every pass ask: ~4 publishes a minute per track, each changing nothing).
    Once none is coming, nothing else would commit the marks of a record the board does not show (the
    Ladder withheld it) until the pacing ends, an hour on the Hub: a publish that commits its marks even
    though paced is asked for, once per results head and set of such records, and again after
    MARKS_ASK_AGAIN_SECONDS (a lost task, or a worker that failed it, is not the last word). Recorded only
    once sent: a broker outage raises here, and the next round asks again."""
    seen = _seen.setdefault(store, {}).setdefault(track, _Seen())
    if not waiting:
        asked_at, when = seen.marks_publish_at
        if asked_at != at or time.monotonic() - when >= MARKS_ASK_AGAIN_SECONDS:
            enqueue.publish(track, marks=True)
            summary["publish_marks"].append(track)
            seen.marks_publish_at = (at, time.monotonic())
    elif seen.paced_publish_at != at[0]:
        enqueue.publish(track)
        summary["publish"].append(track)
    seen.paced_publish_at = at[0]


@dataclass
class _Seen:
    """What the last pass read of one track, kept while the heads it was read at have not moved: an idle
    pass then reads two heads and nothing else, whatever the number of submissions (issue 26)."""

    submissions_head: str = ""
    results_head: str = ""
    summaries: list[dict] = field(default_factory=list)  # the index's summaries, oldest first
    shards: dict = field(default_factory=dict)  # read_index's shard cache: only changed shards are read
    board: tuple[set, set] = (set(), set())  # (shown, on_board) of the live board
    published: frozenset[str] = frozenset()
    paced_publish_at: str = ""  # the results head at which a publish was last asked for while paced
    # (the results head and unshown records, when) a publish with marks was last asked for while paced
    marks_publish_at: tuple[tuple[str, frozenset[str]], float] = (("", frozenset()), -math.inf)


_seen: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # store -> {track: _Seen}


def _summaries(store: Store, track: str, seen: _Seen, submissions_head: str) -> list[dict]:
    """The track's record summaries as of `submissions_head`, oldest first: from the record index (only
    the shards whose stamps moved are read; nothing when the head has not moved), or every record of a
    store without one (an older store, until its first publish writes the index)."""
    if submissions_head != seen.submissions_head:
        index = read_index(store, track, submissions_head, seen.shards)
        if index is None:
            seen.summaries = list_records(store, track, submissions_head)
        else:
            seen.summaries = sorted(index.values(), key=lambda r: r["created_at"])
        seen.submissions_head = submissions_head
    return seen.summaries


def _board(store: Store, track: str, seen: _Seen, results_head: str) -> tuple[tuple[set, set], frozenset]:
    """(shown, on_board) of the live board and the published re-score runs, read again only when the
    results head moved."""
    if results_head != seen.results_head:
        board = live_board.read(store, track, results_head, _segments)[0] or {"rows": []}
        seen.board = (
            {_shown(row, row["version"]) for row in board["rows"]},
            {r["submission_id"] for r in board["rows"]},
        )
        seen.published = published_runs(store, track, results_head)
        seen.results_head = results_head
    return seen.board, seen.published


def _reconcile_track(  # noqa: C901, PLR0913
    store: Store,
    enqueue,
    track: str,
    stuck_after: float,
    scoring_after: float,
    summary: dict,
    shown: dict[tuple[str, str], int],
    unmarked: dict[str, frozenset[str]],
    holder_gone: Callable[[str], bool] | None,
    heads: tuple[str, str],
) -> bool:
    """Reconcile one track as of `heads` (submissions, results); add its scored records that the board
    shows but whose marks a paced publish skipped to `shown`, and, paced, the track to `unmarked` (with its
    stuck scored records that are not shown) when its board is not what they say (`reconcile` then asks
    for its publish). Returns whether a first attempt waits to be scored on it.

    Works from the record index's summaries; a whole record is read only for the few the summaries say
    may be stuck (pending or scored, unchanged for `stuck_after`) or waiting for a first attempt."""
    now = datetime.now(UTC)
    unshown: set[str] = set()
    tight = getattr(store, "budget_tight", None)
    paced = tight is not None and tight(AREA)
    seen = _seen.setdefault(store, {}).setdefault(track, _Seen())
    submissions_head, results_head = heads
    summaries = _summaries(store, track, seen, submissions_head)
    # A hidden scored record (a private upload, or one hidden before its publish) is settled: off the board
    # and never marked published (publish/marks.py); taken for stuck, each one made every pass ask for a
    # publish of its track that changed nothing. One still on the board is `_board_disagrees`'s.
    suspects = [
        brief["submission_id"]
        for brief in summaries
        if brief["status"] in (RECEIVED, QUEUED)
        or (
            (brief["status"] in PENDING or (brief["status"] == SCORED and not brief.get("hidden")))
            and (now - parse_iso(brief["updated_at"])).total_seconds() >= stuck_after
        )
    ]
    # None: gone, or unreadable (quarantined, logged once); the others go on
    records = [record for record in load_records(store, track, suspects).values() if record is not None]
    waiting = any(r["status"] in (RECEIVED, QUEUED) and not r.get("attempts") for r in records)
    stuck = [r for r in records if (now - parse_iso(r["updated_at"])).total_seconds() >= stuck_after]
    scored = {r["submission_id"]: r for r in stuck if r["status"] == SCORED}
    shown_now = marks.shown_versions(store, scored, results_head) if paced else {}
    for record in stuck:
        sid, status = record["submission_id"], record["status"]
        age = (now - parse_iso(record["updated_at"])).total_seconds()
        if status == SCORED and record.get("hidden"):
            continue  # settled (see `suspects`)
        if status == SCORED:
            version = shown_now.get(sid)
            if version is None:
                unshown.add(sid)
            else:
                shown[(track, sid)] = version
        elif status in PENDING and age >= (
            scoring_after if status == SCORING and not _holder_gone(record, holder_gone) else stuck_after
        ):
            try:
                # While the Hub's commit budget is paced, a queued record is re-sent without a commit: its
                # message is most likely still waiting in the broker, and a duplicate task is idempotent.
                # Without the commit, `updated_at` does not move: this process remembers its re-sends
                # instead, so a record is re-sent once per `scoring_after` seconds, not at every round.
                lean = status != SCORING and tight is not None and tight(AREA)
                if lean and time.monotonic() - _lean_resent.get(sid, -math.inf) < scoring_after:
                    continue
                outcome = (
                    QUEUED
                    if lean
                    else _requeue_or_fail(store, track, sid, stuck_after, scoring_after, holder_gone)
                )
                if lean:
                    if len(_lean_resent) > 10_000:  # bounded: forget the oldest half
                        for old in sorted(_lean_resent, key=lambda s: _lean_resent[s])[:5_000]:
                            del _lean_resent[old]
                    _lean_resent[sid] = time.monotonic()
                if outcome == QUEUED:
                    enqueue.score(track, sid)
                    summary["requeued"].append(sid)
                elif outcome == FAILED:
                    summary["failed"].append(sid)
            except Exception as exc:  # the next round tries again; the other records go on
                log.warning("reconciler: %s/%s not re-sent (%s)", track, sid, type(exc).__name__)
                summary["errors"].append(f"{track}/{sid}: {type(exc).__name__}")
    board, published = _board(store, track, seen, results_head)
    if not (unshown or _board_disagrees(board, published, summaries, now, stuck_after)):
        return waiting
    if paced:  # asked for by `reconcile`, which knows whether a batch is coming
        unmarked[track] = frozenset(unshown)
    else:
        enqueue.publish(track)
        summary["publish"].append(track)
        seen.paced_publish_at, seen.marks_publish_at = "", (("", frozenset()), -math.inf)
    return waiting


def _holder_gone(record: dict, holder_gone: Callable[[str], bool] | None) -> bool:
    """Did the worker scoring `record` stop beating? (Records scored before leases name no holder.)"""
    holder = record.get("holder")
    return bool(holder and holder_gone is not None and holder_gone(holder))


def _shown(row_or_record: dict, version: int) -> tuple:
    return (
        row_or_record["submission_id"],
        version,
        bool(row_or_record.get("verified")),
        bool(row_or_record.get("is_baseline")),
    )


def _board_disagrees(
    board: tuple[set, set], published: frozenset[str], records: list[dict], now: datetime, settled: float
) -> bool:
    """Does the published board ((shown, on_board), see `_board`) differ from what the settled records or
    their summaries (unchanged for `settled` seconds) say it should show? Catches a publish lost while the
    broker was down, e.g. after a hide."""
    shown, on_board = board
    for record in records:
        if (now - parse_iso(record["updated_at"])).total_seconds() < settled:
            continue
        version = version_for(record, None, published)
        should_show = (
            record["status"] in (SCORED, PUBLISHED)
            and not record.get("hidden")
            and not not_released(record)  # the Ladder withheld it: off the board by design
            and version
        )
        if should_show and version is not None and _shown(record, version["version"]) not in shown:
            return True
        if not should_show and record["submission_id"] in on_board:
            return True
    return False


def _requeue_or_fail(
    store: Store,
    track: str,
    sid: str,
    stuck_after: float,
    scoring_after: float,
    holder_gone: Callable[[str], bool] | None = None,
) -> str | None:
    outcome: dict = {}

    def change(store: Store, head: str, rec: dict):
        # Re-checked at the head: a worker may have moved it on (or another taken it) since we listed it.
        age = (datetime.now(UTC) - parse_iso(rec["updated_at"])).total_seconds()
        gone = rec["status"] == SCORING and _holder_gone(rec, holder_gone)
        limit = scoring_after if rec["status"] == SCORING and not gone else stuck_after
        if rec["status"] not in PENDING or age < limit:
            return None, {}
        if rec["status"] == SCORING and rec.get("attempts", 0) >= MAX_ATTEMPTS:
            outcome["status"] = FAILED
            return transition(
                rec,
                FAILED,
                "reconciler",
                error=f"scoring crashed or timed out {rec['attempts']} times; giving up",
            ), {}
        outcome["status"] = QUEUED
        why = "; the worker scoring it stopped" if gone else ""
        return transition(
            rec, QUEUED, f"re-sent by the reconciler (was {rec['status']} for {int(age)} s{why})"
        ), {}

    update_record(store, track, sid, change, f"reconcile {sid}")
    return outcome.get("status")
