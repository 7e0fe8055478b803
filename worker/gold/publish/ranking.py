"""Ranking: the board of a listing, its rows in order with their tie groups (paired bootstrap on the primary
metric), built from the last board of the same Publisher so that rows whose record and rank did not change
are reused and the tie groups look up the verdicts they used first."""

from __future__ import annotations

from collections.abc import Callable

from scoring.tracks import get_track
from scoring.version import SCORER_VERSION
from worker import live_board
from worker.gold.outcomes import unpack_arrays
from worker.gold.publish import disclosure
from worker.gold.publish.cache import Built, Cache
from worker.leaderboard import Entry, known_verdicts, rank_fields, sort_key, tie_groups, with_ranks
from worker.records import now_iso, rows_path
from worker.store import Store
from worker.submissions import AREA, read_json

TIE_BOOTSTRAP = 1000
TIE_SEED = 0

Below = Callable[[Entry, Entry], bool]  # below(leader, entry): is entry significantly worse than leader?


def competition_ranks(values: list[float | None]) -> list[int]:
    """Competition ranks by value (higher is better), as a re-score report ranks its rows: equal values share
    a rank, missing values rank last."""
    scores = [float("-inf") if v is None else v for v in values]
    first: dict[float, int] = {}
    for position, value in enumerate(sorted(scores, reverse=True), start=1):
        first.setdefault(value, position)
    return [first[v] for v in scores]


def significance(store: Store, cache: Cache, track: str) -> Below:
    """`below(leader, entry)` by the paired bootstrap of their row outcomes (each verdict computed once)."""
    track_obj = get_track(track)
    primary = track_obj.primary_metric

    def outcomes(entry: Entry):
        return prepared_rows(store, cache, track, entry)

    def below(leader: Entry, entry: Entry) -> bool:
        key = (track, leader.key, entry.key)
        if key not in cache.below:
            cmp = track_obj.paired_compare_prepared(
                outcomes(leader),
                outcomes(entry),
                bootstrap=TIE_BOOTSTRAP,
                seed=TIE_SEED,
                metrics=[primary],  # tie groups only need the primary metric
            ).get(primary, {})
            cache.below[key] = bool(cmp.get("significant")) and cmp.get("diff", 0) > 0
        return cache.below[key]

    return below


def prepared_rows(store: Store, cache: Cache, track: str, entry: Entry):
    """The entry's row outcomes in the track's `prepare_compare` form (decoded once, then cached)."""
    if entry.key not in cache.rows:
        rows = unpack_arrays(read_json(store, AREA, rows_path(track, *entry.key)))
        cache.rows[entry.key] = get_track(track).prepare_compare(rows)
    return cache.rows[entry.key]


def recall_verdicts(store: Store, cache: Cache, track: str) -> int:
    """Seed the comparison cache from the published board (once per track and Publisher), so a worker that
    restarts does not recompute every paired bootstrap: the board's tie groups ARE the verdicts it was
    built from (`known_verdicts`). A board from another scorer version is not used. Returns how many
    verdicts were recalled."""
    if track in cache.recalled:
        return 0
    cache.recalled.add(track)
    board = live_board.read(store, track, None, cache.segments)[0]
    if not board or board.get("scorer_version") != SCORER_VERSION:
        return 0
    if board.get("primary_metric") != get_track(track).primary_metric:
        return 0
    recalled = 0
    for (leader, entry), verdict in known_verdicts(board.get("rows") or []).items():
        key = (track, leader, entry)
        if key not in cache.below:
            cache.below[key] = verdict
            recalled += 1
    return recalled


def board(cache: Cache, track: str, entries: list[Entry], slow: Below) -> dict:
    """The board of `entries` (rows as `worker.leaderboard.build_rows` gives them); `slow` decides a pair
    the last board did not."""
    track_obj = get_track(track)
    primary = track_obj.primary_metric
    items = []
    for e in entries:
        hit = cache.built_row(track, e) or Built(
            e.record, disclosure.row(e), sort_key(e, primary), None, None
        )
        items.append((hit, e))
    items.sort(key=lambda item: item[0].sort_key)
    ordered = [e for _, e in items]
    built, rows, contents = {}, [], {}
    for (hit, e), fields in zip(items, rank_fields(_tie_groups(cache, track, ordered, slow)), strict=True):
        if hit.fields != fields:  # a new row, or one whose rank moved: the same content, new rank fields
            hit = Built(hit.record, hit.content, hit.sort_key, fields, with_ranks(hit.content, fields))
        built[e.key] = hit
        rows.append(hit.row)
        contents[e.key[0]] = hit.content
    cache.built[track] = built
    result = {**board_meta(track, now_iso()), "rows": rows}
    cache.contents[track] = (result, contents)
    return result


def board_meta(track: str, generated_at: str) -> dict:
    """A board's fields besides its rows (what the rank table keeps as "board")."""
    track_obj = get_track(track)
    return {
        "track": track,
        "title": track_obj.title,
        "primary_metric": track_obj.primary_metric,
        "headline_metrics": list(track_obj.headline_metrics),
        "scorer_version": SCORER_VERSION,
        "generated_at": generated_at,
    }


def _tie_groups(cache: Cache, track: str, ordered: list[Entry], slow: Below) -> list[int]:
    """Tie groups of `ordered`, the last board's verdicts looked up first (without the bounded cache's
    bookkeeping: most of a board's verdicts are the last one's)."""
    last = cache.last_verdicts.get(track, {})
    used: dict = {}

    def below(leader: Entry, entry: Entry) -> bool:
        key = (leader.key, entry.key)
        verdict = last.get(key)
        if verdict is None:
            verdict = slow(leader, entry)
        used[key] = verdict
        return verdict

    groups = tie_groups(ordered, below)
    cache.last_verdicts[track] = used
    return groups
