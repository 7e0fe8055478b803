"""Publishing a track: the live board, changelog, new result envelopes and (when due) the complete exports
and dataset card in ONE commit.

A reader of the results area therefore sees either the old leaderboard or the new one, never a mix. The
commit is optimistic (parent = head), and every attempt lists the records anew after reading the head it
builds on, so several publishers are safe: a publish overtaken by a newer one is rebuilt, never committed
stale. A publish writes a bounded amount however long the board is: the live board's rank table and changed
segments (worker/live_board.py), the open head of the changelog, and the new envelopes; the complete
`leaderboard.json`/`.parquet` exports are rebuilt when `live_board.export_due` says so, always when a
submission leaves the board hidden, and on a re-score or maintainer publish (`export=True`).

The parts, around one value each:
- `listing`: what is on the board (entries and hidden records, from the record index);
- `ranking`: the board of a listing, its order and tie groups (paired bootstrap verdicts);
- `disclosure`: the gate, the only way a stored result becomes a published value (rows, envelopes);
- `history`: hidden means hidden (envelopes deleted, history files scrubbed) and the changelog;
- `change`: the results commit, steps returning `Change(add, delete, value)` composed in one function;
- `marks`: the submissions commit that marks published records;
- `cache`: a Publisher's memo tables and what invalidates each;
- `incremental` and `board_model`: what the last publish of a track committed, kept by its Publisher, so
  that the next publish on that results head applies only the records that changed since (O(changes), not
  O(rows)) and commits exactly what the full build would; anything else is the full build;
- `publisher`: the `Publisher` that runs them.
"""

from worker.gold.publish.history import CHANGELOG_HEAD_BYTES, scrub_hidden
from worker.gold.publish.listing import RESULTS, published_runs, version_for
from worker.gold.publish.publisher import Publisher
from worker.gold.publish.ranking import competition_ranks

__all__ = [
    "CHANGELOG_HEAD_BYTES",
    "RESULTS",
    "Publisher",
    "competition_ranks",
    "published_runs",
    "scrub_hidden",
    "version_for",
]
