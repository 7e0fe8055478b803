"""Marking scored records published without a commit of their own, while the Hub's commit budget is paced.

A publish puts scored submissions on the board and then marks their records published in a submissions
commit; under a paced budget it skips that commit (worker/gold/publish/marks.py). The marks then ride along
with a commit that is made anyway (a batch of scoring, worker/gold/batch.py), or, once the burst has stopped,
one commit of the reconciler per track. A record counts as shown when the results head holds the published
envelope of its latest version: a publish writes it in the same commit as the board that shows it.
"""

from __future__ import annotations

from worker.records import PUBLISHED, SCORED, published_result_path, transition
from worker.store import Store
from worker.submissions import load_record

RESULTS = "results"


def shown_version(store: Store, record: dict, results_head: str) -> int | None:
    """The version number a scored, visible record is shown with on the board at `results_head`, if any
    (a version waiting for its re-score run to be published is left to the publisher)."""
    if record["status"] != SCORED or record.get("hidden") or not record.get("versions"):
        return None
    version = record["versions"][-1]
    if version.get("pending_rescore"):
        return None
    path = published_result_path(record["track"], record["submission_id"], version["version"])
    return version["version"] if store.read(RESULTS, path, results_head) is not None else None


def marked(store: Store, head: str, shown: dict[tuple[str, str], int]) -> list[dict]:
    """The records of `shown` ({(track, id): version}) as of submissions `head`, transitioned to published
    (those still scored with that version as their latest)."""
    out = []
    for (track, sid), number in shown.items():
        record = load_record(store, track, sid, head)
        if record is None or record["status"] != SCORED or record["versions"][-1]["version"] != number:
            continue
        out.append(transition(record, PUBLISHED, f"on the leaderboard as version {number}"))
    return out
