"""The Ladder applied to a listing (../shared/spec/disclosure.md §3): which entries the board shows.

Each submitter's chain is replayed at every publish (worker/gold/ladder.py): the listing's visible entries
and the submitters' own private submissions (a private upload's number would otherwise be an oracle beside
the Ladder). Entries not released join the hidden records: no envelope, no row, named in no history file.
A public test set (§5), or one without slices, has no Ladder: everything listed is shown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from scoring.ladder import Margin
from scoring.tracks import get_track
from worker.gold.ladder import Step, replay
from worker.gold.publish.cache import Cache, Key
from worker.gold.publish.listing import Listing, published_runs, version_for
from worker.gold.publish.ranking import TIE_BOOTSTRAP, TIE_SEED, prepared_rows
from worker.gold.references import PRIVATE, PUBLIC
from worker.leaderboard import Entry
from worker.own import PRIVATE_REASON
from worker.records import FINAL_BAD
from worker.store import Store, layout
from worker.submissions import read_json

REFERENCES = "references"
RELEASED = Step(True)


@dataclass(frozen=True)
class Laddered:
    shown: Listing  # released entries; hidden records plus the records of entries not released
    chained: list[Entry]  # every entry the Ladder decided on (the records to mark with their step)
    steps: dict[Key, Step]


def apply(store: Store, cache: Cache, track: str, listed: Listing, rescore_stamp: str | None) -> Laddered:
    if not laddered(store, cache, track):
        return Laddered(listed, listed.entries, {})
    private = _private_entries(store, track, listed.hidden, rescore_stamp)
    chained = listed.entries + private
    steps = replay(chained, margins(store, cache, track))
    shown = [e for e in listed.entries if steps.get(e.key, RELEASED).released]
    withheld = [e.record for e in listed.entries if not steps.get(e.key, RELEASED).released]
    return Laddered(Listing(shown, listed.hidden + withheld), chained, steps)


def margins(store: Store, cache: Cache, track: str) -> Callable[[Entry, Entry], Margin]:
    """`margin(new, best)`: the Ladder's comparison of two entries of one chain (each computed once)."""
    scorer = get_track(track)

    def margin(new: Entry, best: Entry) -> Margin:
        key = (track, new.key, best.key)
        if key not in cache.margins:
            cache.margins[key] = scorer.release_margin(
                prepared_rows(store, cache, track, new),
                prepared_rows(store, cache, track, best),
                bootstrap=TIE_BOOTSTRAP,
                seed=TIE_SEED,
            )
        return cache.margins[key]

    return margin


def is_private(record: dict) -> bool:
    """A hidden record in its submitter's chain: made private by its submitter, and not rejected or failed."""
    return record.get("hidden_reason") == PRIVATE_REASON and record["status"] not in FINAL_BAD


def laddered(store: Store, cache: Cache, track: str) -> bool:
    """Does the Ladder apply: a private test (§1) with its slices (a slice key; a set installed before
    slices existed shows full-test results, with nothing for a Ladder to keep apart)? Read once per
    references revision."""
    head = store.head(REFERENCES)
    cached = cache.status.get(track)
    if cached is None or cached[0] != head:
        manifest = read_json(store, REFERENCES, layout.reference_set(track), head) or {}
        keyed = store.read(REFERENCES, layout.slice_key(track), head) is not None
        cached = (head, keyed and manifest.get("test_status", PRIVATE) != PUBLIC)
        cache.status[track] = cached
    return cached[1]


def _private_entries(store: Store, track: str, hidden: list[dict], rescore_stamp: str | None) -> list[Entry]:
    """Entries of the submitters' own private submissions (hidden, but in their chains)."""
    private = [r for r in hidden if is_private(r)]
    if not private:
        return []
    published = published_runs(store, track)
    out = []
    for record in private:
        version = version_for(record, rescore_stamp, published)
        if version is not None:
            out.append(Entry(record, version, None))
    return out
