"""Marking scored records published without a commit of their own, while the Hub's commit budget is paced.

A publish puts scored submissions on the board and then marks their records published in a submissions
commit; under a paced budget it skips that commit (worker/gold/publish/marks.py). The marks then ride along
with a commit that is made anyway (a batch of scoring, worker/gold/batch.py), or, once the burst has stopped,
one commit of the reconciler per track. A record counts as shown when the results head holds the published
envelope of its latest version: a publish writes it in the same commit as the board that shows it.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TypeVar

from worker.records import PUBLISHED, SCORED, published_result_path, transition
from worker.store import Store, read_many
from worker.submissions import load_keyed

RESULTS = "results"
K = TypeVar("K", bound=Hashable)


def shown_versions(store: Store, records: Mapping[K, dict], results_head: str) -> dict[K, int]:
    """{key: the version number a scored, visible record is shown with on the board at `results_head`}
    for those of `records` that are shown (a version waiting for its re-score run to be published is left
    to the publisher). The published results are read in one go (one request on the Hub)."""
    latest = {
        key: record["versions"][-1]
        for key, record in records.items()
        if record["status"] == SCORED and not record.get("hidden") and record.get("versions")
    }
    paths = {
        key: published_result_path(records[key]["track"], records[key]["submission_id"], version["version"])
        for key, version in latest.items()
        if not version.get("pending_rescore")
    }
    found = read_many(store, RESULTS, paths.values(), results_head)
    return {key: latest[key]["version"] for key, path in paths.items() if found[path] is not None}


def marked(store: Store, head: str, shown: dict[tuple[str, str], int]) -> list[dict]:
    """The records of `shown` ({(track, id): version}) as of submissions `head`, transitioned to published
    (those still scored with that version as their latest)."""
    out = []
    for key, record in load_keyed(store, shown, head).items():
        number = shown[key]
        if record is None or record["status"] != SCORED or record["versions"][-1]["version"] != number:
            continue
        out.append(transition(record, PUBLISHED, f"on the leaderboard as version {number}"))
    return out
