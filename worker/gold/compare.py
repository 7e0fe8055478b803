"""Compare two submissions on the board: the paired bootstrap of their public-slice row outcomes, through
the disclosure gate (rounded), and only between submissions on the board (worker.records.on_board)."""

from __future__ import annotations

from scoring.disclosure import rounded
from scoring.tracks import get_track
from worker.gold.outcomes import unpack
from worker.records import check_track, on_board, rows_path
from worker.store import Store
from worker.submissions import AREA, find_record, read_json

BOOTSTRAP, SEED = 1000, 0


def compare(store: Store, track: str, a_id: str, b_id: str) -> dict:
    track_obj = get_track(check_track(track))
    rows = []
    for sid in (a_id, b_id):
        record = find_record(store, sid)
        if record is None or record["track"] != track or not on_board(record):
            raise ValueError("both submissions must be on this track's board")
        path = rows_path(track, sid, record["versions"][-1]["version"])
        rows.append(unpack(read_json(store, AREA, path)))
    # The rows are a private test's public slice (worker/gold/scoring_job.py); full-precision paired intervals
    # determined joint label counts, so they are rounded like every published number (spec §3).
    return rounded(track_obj.paired_compare(rows[0], rows[1], bootstrap=BOOTSTRAP, seed=SEED))
