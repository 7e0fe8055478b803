"""Scoring one submission inside a worker: the lifecycle steps around the scoring library.

Idempotent by (file sha256, scorer version, references sha256): a redelivered or re-sent task finds the
version already attached and writes nothing new. Gold data stays here: errors are reported by type only.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
import traceback

from celery.exceptions import SoftTimeLimitExceeded

from scoring.disclosure import rounded
from scoring.problems import InputError
from scoring.tracks import get_track
from scoring.version import SCORER_VERSION
from worker.gold.outcomes import pack
from worker.gold.references import GOLD_MATCH, GOLD_MATCH_REASON, Pinned, gold_match
from worker.gold.sealed import seal
from worker.heartbeat import holder
from worker.records import (
    FAILED,
    HELD,
    MAX_ATTEMPTS,
    PENDING,
    REJECTED,
    SCORED,
    SCORING,
    find_version,
    now_iso,
    predictions_path,
    rows_path,
    sealed_result_path,
    staged_result_path,
    transition,
)
from worker.store import Store
from worker.submissions import AREA, dumps, load_record, update_record

log = logging.getLogger(__name__)
BOOTSTRAP = 1000
SEED = 0
TEST_DELAY_ENV = (
    "VARM_TEST_SCORE_DELAY"  # test-only: seconds to sleep inside scoring, to kill a worker mid-task
)


class CpuClock:
    """CPU seconds of this thread spent inside `with clock:` blocks (summed; kept when the block raises).
    The workers log what scoring itself cost, measured in the same processes and under the same load as
    the rest of the service's work (bench/bench_burst.py compares the two)."""

    def __init__(self) -> None:
        self.spent = 0.0

    def __enter__(self) -> CpuClock:
        self._start = time.thread_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.spent += time.thread_time() - self._start


def compute(pinned: Pinned, data: bytes) -> tuple[dict, dict, dict | None]:
    """(the result the board may show, its private row outcomes, the sealed part or None) for one file.

    A private test set (../shared/spec/disclosure.md §2) is scored once on its public slice, its private
    slice and in full: the public slice's result and rows are what is staged for the board (and every
    comparison and tie group built on the rows); the private and full results, with the private slice's
    rows, are the sealed part, kept for releases. A public test set (or one without a slice key) is scored
    in full, and that is what the board shows."""
    delay = float(os.environ.get(TEST_DELAY_ENV) or 0)
    if delay:
        time.sleep(delay)
    track = get_track(pinned.track)
    provenance = {  # as scoring.api.score_file does, with the hash cached per revision
        "scorer_version": SCORER_VERSION,
        "references_sha256": pinned.sha256,
        "predictions_sha256": hashlib.sha256(data).hexdigest(),
    }
    if pinned.slices is None:
        result, rows = track.score_with_rows(pinned.refs, data, bootstrap=BOOTSTRAP, seed=SEED)
        return {**result, "provenance": provenance}, rows, None
    # Intervals for the public slice only: a release re-derives the private slice's for its finals (at most
    # two per submitter), and the full test's numbers are shown without them (spec §4).
    resamples = {"public": BOOTSTRAP, "private": 0, "full": 0}
    scored = track.score_slices(
        pinned.refs, data, pinned.slices, bootstrap=resamples, seed=SEED, full_rows=False, arrays=True
    )
    (public, public_rows), (private, private_rows) = scored["public"], scored["private"]
    sealed = {
        "private": {**private, "slice": "private", "provenance": provenance},
        "private_rows": pack(private_rows),
        "full": {**scored["full"][0], "slice": "full", "provenance": provenance},
    }
    # The disclosure gate (scoring/disclosure.py, spec §3): what is staged here is all the web side sees.
    return {**rounded(public), "slice": "public", "provenance": provenance}, public_rows, sealed


def attach_version(
    record: dict,
    pinned: Pinned,
    result: dict,
    rows: dict,
    *,
    sealed: dict | None = None,
    pending_rescore: str | None = None,
) -> tuple[dict, dict[str, bytes]] | None:
    """`record` with a new result version and the files to write with it; None when already attached."""
    if find_version(record, SCORER_VERSION, pinned.sha256) is not None:
        return None
    track, sid = record["track"], record["submission_id"]
    number = max((v["version"] for v in record["versions"]), default=0) + 1
    version = {
        "version": number,
        "scorer_version": SCORER_VERSION,
        "references_sha256": pinned.sha256,
        "references_revision": pinned.revision,
        "scored_at": now_iso(),
    }
    if pending_rescore:
        version["pending_rescore"] = pending_rescore
    new = {**record, "versions": [*record["versions"], version]}
    files = {
        rows_path(track, sid, number): dumps(pack(rows)),  # compact columns (worker/gold/outcomes.py)
        staged_result_path(track, sid, number): dumps(result),
    }
    if sealed is not None and pinned.slice_key is not None:
        files[sealed_result_path(track, sid, number)] = seal(pinned.slice_key, sealed)
    return new, files


def scored_or_held(record: dict, pinned: Pinned, result: dict, *, note: str) -> dict:
    """`record` (with its new version) moved to scored, or held for review when it matches a public test's
    gold (§5 of ../shared/spec/disclosure.md); a maintainer's release lets it through
    (`gold_match_released`)."""
    if gold_match(pinned, result) and not record.get("gold_match_released"):
        return transition(
            record, HELD, note + "; " + GOLD_MATCH_REASON, error=GOLD_MATCH_REASON, held_for=GOLD_MATCH
        )
    return transition(record, SCORED, note)


def safe_error(exc: BaseException) -> str:
    """Log a scoring failure without its message (which could quote gold data); return a public reason."""
    log.error(
        "scoring failed with %s:\n%s", type(exc).__name__, "".join(traceback.format_tb(exc.__traceback__))
    )
    return f"internal error while scoring ({type(exc).__name__}); the maintainers can see the log"


def score_submission(store: Store, pinned_for, track: str, submission_id: str, *, time_limit: float) -> str:  # noqa: C901
    """Run one scoring attempt. Returns the outcome: "missing", "final", "already", "scored", "rejected",
    "failed". `pinned_for(track)` gives the pinned reference set (a ReferenceCache.get)."""
    record = load_record(store, track, submission_id)
    if record is None:
        return "missing"
    if record["status"] == SCORED:
        return "already"  # scored, not yet published: the caller re-sends the publish
    if record["status"] not in PENDING:
        return "final"
    pinned = pinned_for(track)
    started: dict = {}

    def start(store: Store, head: str, rec: dict):
        if rec["status"] not in PENDING:
            started["outcome"] = "already"
            return None, {}
        if find_version(rec, SCORER_VERSION, pinned.sha256) is not None:
            started["outcome"] = "already"  # a previous delivery scored it; just finish the transition
            return transition(rec, SCORED, "already scored by an earlier delivery"), {}
        attempts = rec.get("attempts", 0) + 1
        if attempts > MAX_ATTEMPTS:
            started["outcome"] = "failed"
            return transition(
                rec,
                FAILED,
                "too many attempts",
                attempts=attempts,
                error=f"scoring did not finish after {MAX_ATTEMPTS} attempts "
                "(the worker crashed or timed out)",
            ), {}
        started["outcome"] = "started"
        return transition(rec, SCORING, f"attempt {attempts}", attempts=attempts, holder=holder()), {}

    update_record(store, track, submission_id, start, f"start scoring {submission_id}")
    if started.get("outcome") != "started":
        return started.get("outcome", "missing")

    clock = CpuClock()
    try:
        data = store.read(AREA, predictions_path(track, submission_id)) or b""
        with clock:
            result, rows, sealed = compute(pinned, data)
    except InputError as exc:
        report = {"errors": [p.as_dict() for p in exc.problems], "errors_total": exc.total}
        update_record(
            store,
            track,
            submission_id,
            lambda s, h, rec: (
                transition(
                    rec,
                    REJECTED,
                    "invalid at scoring time",
                    report=report,
                    error="the predictions file could not be scored",
                ),
                {},
            ),
            f"reject {submission_id}",
        )
        return "rejected"
    except SoftTimeLimitExceeded:
        reason = f"scoring took longer than {time_limit} seconds"
        update_record(
            store,
            track,
            submission_id,
            lambda s, h, rec: (transition(rec, FAILED, "time limit", error=reason), {}),
            f"fail {submission_id}",
        )
        return "failed"
    except Exception as exc:  # noqa: BLE001 - any scorer bug becomes a failed submission, not a lost one
        reason = safe_error(exc)
        update_record(
            store,
            track,
            submission_id,
            lambda s, h, rec: (transition(rec, FAILED, "scorer error", error=reason), {}),
            f"fail {submission_id}",
        )
        return "failed"

    def finish(store: Store, head: str, rec: dict):
        attached = attach_version(rec, pinned, result, rows, sealed=sealed)
        if attached is None:  # another delivery won the race: keep its version, write nothing
            return (transition(rec, SCORED, "scored") if rec["status"] in PENDING else None), {}
        new, files = attached
        return scored_or_held(
            new, pinned, result, note=f"scored as version {new['versions'][-1]['version']}"
        ), files

    update_record(store, track, submission_id, finish, f"scored {submission_id}")
    log.info("scored %s/%s alone, scoring %.4f s CPU", track, submission_id, clock.spent)
    return "scored"
