"""The Publisher: one per worker process, its memo tables (`cache`) kept across publishes."""

from __future__ import annotations

from scoring.signatures import public_key_text
from worker import live_board
from worker.gold.publish import disclosure, laddered, ranking
from worker.gold.publish import incremental as incremental_publish
from worker.gold.publish.cache import Cache
from worker.gold.publish.change import Request, results_change
from worker.gold.publish.laddered import Laddered
from worker.gold.publish.listing import Listing, listing, published_runs
from worker.gold.publish.marks import mark_published
from worker.gold.signing import PUBLIC_KEY_PATH, signing_key
from worker.leaderboard import Entry
from worker.records import staged_result_path
from worker.store import Store, commit_change
from worker.submissions import AREA, load_record, read_json

RESULTS = "results"


class Publisher:
    """Builds and commits a track's public files. Keeps immutable per-version files in memory."""

    def __init__(
        self,
        store: Store,
        *,
        export_every: float = live_board.EXPORT_EVERY_SECONDS,
        incremental: bool = True,
    ) -> None:
        self.store = store
        self.export_every = export_every  # seconds changes may wait for the complete exports
        self.cache = Cache()
        # per track, what the last publish committed, for the next one to apply only the changes since
        # (incremental.py); False: every publish is the full build
        self.incremental = incremental
        self.states: dict[str, incremental_publish.State] = {}
        self._key = None
        self._key_published = False

    def entries(
        self, track: str, rescore_stamp: str | None = None, results_head: str | None = None
    ) -> tuple[list[Entry], list[dict]]:
        """(visible entries, hidden records) of a track as of the submissions head, read now, for a board
        built on `results_head` (default: the results head)."""
        listed = self._listing(track, rescore_stamp, results_head or self.store.head(RESULTS))
        return listed.entries, listed.hidden

    def _listing(self, track: str, rescore_stamp: str | None, results_head: str) -> Listing:
        return listing(
            self.store,
            self.cache,
            track,
            rescore_stamp,
            results_head,
            lambda sid, v: self.result(track, sid, v),
        )

    def envelope(self, track: str, entry: Entry) -> dict:
        """The public result envelope of a new entry."""
        record = load_record(self.store, track, entry.key[0]) or entry.record
        result = entry.result or self.result(track, *entry.key)
        return disclosure.envelope(record, entry.key[1], result, self.signing_key())

    def signing_key(self):
        """The workers' key (worker/gold/signing.py), loaded once per Publisher."""
        if self._key is None:
            self._key = signing_key(self.store)
        return self._key

    def _key_file(self) -> dict[str, bytes]:
        """The public key file, while the results head lacks it (checked once per Publisher)."""
        if self._key_published:
            return {}
        self._key_published = self.store.read(RESULTS, PUBLIC_KEY_PATH) is not None
        return (
            {}
            if self._key_published
            else {PUBLIC_KEY_PATH: (public_key_text(self.signing_key()) + "\n").encode()}
        )

    def result(self, track: str, submission_id: str, version: int) -> dict:
        key = (submission_id, version)
        if key not in self.cache.results:
            self.cache.results[key] = read_json(
                self.store, AREA, staged_result_path(track, submission_id, version)
            )
        return self.cache.results[key]

    def significance(self, track: str) -> ranking.Below:
        """`below(leader, entry)`: is `entry` significantly worse than `leader` on the primary metric?"""
        return ranking.significance(self.store, self.cache, track)

    def recall_verdicts(self, track: str) -> int:
        """Seed the comparison cache from the published board (see `ranking.recall_verdicts`)."""
        return ranking.recall_verdicts(self.store, self.cache, track)

    def board(self, track: str, entries: list[Entry]) -> dict:
        """The board of `entries`, built from the last board of this Publisher (`ranking.board`)."""
        self.recall_verdicts(track)
        return ranking.board(self.cache, track, entries, self.significance(track))

    def publish(
        self,
        track: str,
        *,
        rescore_stamp: str | None = None,
        extra: dict[str, bytes] | None = None,
        note: str = "",
        export: bool = False,
        marks: bool = False,
    ) -> dict:
        """Commit the track's public state; then mark its scored submissions published (while the Hub's
        commit budget is paced, only with `marks`: publish/marks.py). The complete exports are rebuilt when
        due, and always with `export` or a re-score (`rescore_stamp`).

        Returns {"revision", "changed", "added", "removed", "rows"}; "changed" is False when the results
        area already showed exactly this state (so a burst of publish tasks costs one real publish).
        """
        extra = {**self._key_file(), **(extra or {})}
        request = Request(extra, note, export or rescore_stamp is not None, self.export_every)
        built: list[Laddered | None] = []  # the listing of each build (None: incremental); the last committed
        state = self.states.pop(track, None)  # taken: put back only by a commit that leaves it right
        if rescore_stamp is not None:
            state = None
        envelope = lambda e: self.envelope(track, e)  # noqa: E731 - read only for new entries

        def build(store: Store, head: str) -> tuple[dict[str, bytes], list[str], dict]:
            nonlocal state
            if state is not None:
                out = incremental_publish.build(
                    store,
                    self.cache,
                    track,
                    state,
                    head,
                    request,
                    lambda sid, v: self.result(track, sid, v),
                    self.significance(track),
                    envelope,
                )
                if out is not None:
                    built.append(None)
                    return out
                state = None  # partly updated: the full build, and a new state after it
            # Listed from the submissions head read AFTER `head`, on every attempt: the board at `head` was
            # built from records no newer than these, so this board never takes a row off a newer one
            # (a stale listing rebuilt on a conflict's new head did, issue 22 item 8).
            listed = laddered.apply(
                store, self.cache, track, self._listing(track, rescore_stamp, head), rescore_stamp
            )
            built.append(listed)
            board = self.board(track, listed.shown.entries)
            return results_change(store, head, track, self.cache, board, listed.shown, envelope, request)

        before = self.store.head(RESULTS)
        revision, summary = commit_change(self.store, RESULTS, build, f"publish {track}", attempts=10)
        committed = built[-1]
        if committed is None:  # the incremental build of `state`
            assert state is not None
            incremental_publish.committed(state, self.cache, track, revision)
            mark_published(
                self.store,
                track,
                list(state.unmarked.values()),
                state.published,
                state.steps,
                paced_too=marks,
            )
            self.states[track] = state
            return {"revision": revision, "changed": revision != before, **summary}
        entries = committed.shown.entries
        self.cache.columns[track] = (revision, {e.key: disclosure.columns(e) for e in entries})
        # Flags of runs that are published (this one, or an earlier one whose publisher died before this
        # step) are cleared; until then `published_runs` keeps their versions on the board anyway.
        published = published_runs(self.store, track, revision)
        done = published | ({rescore_stamp} if rescore_stamp else set())
        waiting = mark_published(self.store, track, committed.chained, done, committed.steps, paced_too=marks)
        if self.incremental and rescore_stamp is None:
            fresh = incremental_publish.from_publish(
                self.store,
                self.cache,
                track,
                revision,
                entries,
                committed.shown.hidden,
                committed.chained,
                committed.steps,
                self.cache.status[track][1],  # did the Ladder apply to that build (laddered.laddered)
                published,
                waiting,
            )
            if fresh is not None:
                self.states[track] = fresh
        return {"revision": revision, "changed": revision != before, **summary}
