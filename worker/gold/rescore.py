"""Re-scoring a track with the current scorer (maintainers): plan, score in chunks, report, publish once.

Chunks attach new result *versions* to the existing submissions, flagged `pending_rescore` so that an
ordinary publish keeps showing the old ones; the final step publishes every new version together with
the diff report in one results commit. A version whose (scorer version, references hash) already exists
is not recomputed, unless the re-score is *forced*: then every submission is recomputed and compared byte
for byte with the files of its stored version of the same key (public result, row outcomes, sealed part).
One that comes back identical is "reproduced" and nothing is attached; one that does not (a determinism
bug) "differs": it is attached as a further version as any re-score would (published with the run, or not
at all in a dry run) and the report names what differed, never the values of the sealed part.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from scoring.tracks import get_track
from scoring.version import SCORER_VERSION
from worker.gold.publish import Publisher, competition_ranks, published_runs, version_for
from worker.gold.references import Pinned
from worker.gold.scoring_job import attach_version, compute, safe_error
from worker.leaderboard import metric
from worker.records import (
    FINAL_BAD,
    noted,
    predictions_path,
    rows_path,
    sealed_result_path,
    staged_result_path,
    version_key,
)
from worker.store import Store, codec, commit_change, commit_with_retry, layout
from worker.submissions import AREA, dumps, list_records, load_record, read_index, read_json, record_files

CHUNK = 25


STAMP = "%Y%m%dT%H%M%S%fZ"
POLL_FIRST, POLL_MIN, POLL_MAX = 1.0, 0.2, 10.0  # seconds between the finalizer's looks at the chunks


def stamp() -> str:
    return datetime.now(UTC).strftime(STAMP)


def poll_delay(run: str, done: int, expected: int, now: datetime | None = None) -> float:
    """How long the finalizer waits before it looks again: half the time the chunks still need at the rate
    they have gone so far (the run's stamp is its start), within [POLL_MIN, POLL_MAX], and POLL_MIN once the
    last two chunks (already running on the usual 2 scoring processes) are all that is left. So it looks a
    few times before the end instead of once a second throughout (each look takes a scoring process's
    slot), and often at the end."""
    if expected - done <= 2:
        return POLL_MIN
    if done <= 0:
        return POLL_FIRST
    now = now or datetime.now(UTC)
    elapsed = (now - datetime.strptime(run, STAMP).replace(tzinfo=UTC)).total_seconds()
    left = (expected - done) * max(elapsed, 0.0) / done
    return min(max(left / 2, POLL_MIN), POLL_MAX)


def plan(store: Store, track: str) -> list[list[str]]:
    """Ids of the track's scored submissions (oldest first), in chunks. From the record index (the
    summaries hold status, flags and versions), else, in a store without one, from every record."""
    head = store.head(AREA)
    index = read_index(store, track, head)
    records = (
        list_records(store, track, head)
        if index is None
        else sorted(index.values(), key=lambda r: r["created_at"])
    )
    ids = [
        r["submission_id"]
        for r in records
        if r["versions"] and r["status"] not in FINAL_BAD and not r.get("retired")  # retired: demo rows
    ]
    return [ids[i : i + CHUNK] for i in range(0, len(ids), CHUNK)]


def _headline(track: str, result: dict | None) -> dict:
    return {m: metric(result, m) for m in get_track(track).headline_metrics} if result else {}


# What a forced re-score compares, by the name the report gives it: the path of each file of a version.
COMPARED = {"result": staged_result_path, "rows": rows_path, "sealed": sealed_result_path}


def current_version(record: dict, pinned: Pinned) -> dict | None:
    """The record's newest version of the current (scorer version, references hash), if any."""
    key = (SCORER_VERSION, pinned.sha256)
    return next((v for v in reversed(record["versions"]) if version_key(v) == key), None)


def attach_again(
    record: dict, pinned: Pinned, result: dict, rows: dict, sealed: dict | None, run: str
) -> tuple[dict, dict[str, bytes]]:
    """`attach_version` although a version of the same key exists (a forced re-score whose result differs):
    a further version, numbered after every existing one, written as any new version is."""
    masked = {**record, "versions": [{**v, "scorer_version": ""} for v in record["versions"]]}
    attached = attach_version(masked, pinned, result, rows, sealed=sealed, pending_rescore=run)
    assert attached is not None  # no version of the masked record has the current key
    new, files = attached
    return {**new, "versions": [*record["versions"], new["versions"][-1]]}, files


def differences(
    store: Store, pinned: Pinned, record: dict, stored: dict, computed: tuple[dict, dict, dict | None]
) -> list[str]:
    """What of version `stored` the recomputation does not give back byte for byte ("result", "rows",
    "sealed"; [] when it reproduces it). The new bytes are those `attach_version` would write."""
    track, sid = record["track"], record["submission_id"]
    _, files = attach_again(record, pinned, *computed, run="compare")
    number = max(v["version"] for v in record["versions"]) + 1
    differ = []
    for name, path in COMPARED.items():
        new = files.get(path(track, sid, number))
        if new is None and name == "sealed":
            continue  # a public test set seals nothing
        if new != store.read(AREA, path(track, sid, stored["version"])):
            differ.append(name)
    return differ


def score_chunk(  # noqa: C901 - one pass: the plain, the skipped, the failed and the forced submission
    store: Store,
    pinned: Pinned,
    track: str,
    run: str,
    index: int,
    ids: list[str],
    dry_run: bool,
    force: bool = False,
) -> dict:
    """Score `ids`, attach versions (unless dry_run) and the chunk's summary in one submissions commit;
    `force` recomputes the submissions whose current version exists too (see the module's text)."""
    summary: dict[str, dict] = {}
    computed: dict[str, tuple[dict, dict, dict | None]] = {}
    published = published_runs(store, track)
    start = store.head(AREA)
    loaded: dict[str, dict] = {}  # the records as read at `start`
    for sid in ids:
        record = load_record(store, track, sid, start)
        if record is not None:
            loaded[sid] = record
        if record is None:  # unreadable (quarantined and logged) or gone since the plan: not in the report
            summary[sid] = dict(hidden=True, old_version=None, old={}, skipped=True, new_version=None, new={})
            summary[sid]["error"] = "the record is missing or unreadable"
            continue
        old = version_for(record, published=published)
        old_result = read_json(store, AREA, staged_result_path(track, sid, old["version"])) if old else None
        entry = {
            "model_name": record["metadata"].get("model_name", ""),
            "hidden": record.get("hidden", False),
            "old_version": old and old["version"],
            "old": _headline(track, old_result),
        }
        same = current_version(record, pinned)
        if same is not None and not force:
            result = read_json(store, AREA, staged_result_path(track, sid, same["version"]))
            entry.update(skipped=True, new_version=same["version"], new=_headline(track, result))
        else:
            try:
                result, rows, sealed = compute(pinned, store.read(AREA, predictions_path(track, sid)) or b"")
            except Exception as exc:  # noqa: BLE001 - one bad file must not stop a re-score
                entry.update(skipped=True, new_version=None, new={}, error=safe_error(exc))
            else:
                entry.update(skipped=False, new_version=None, new=_headline(track, result))
                if same is None:
                    computed[sid] = (result, rows, sealed)
                else:  # forced: compare with the stored version; attach only what does not reproduce it
                    differ = differences(store, pinned, record, same, (result, rows, sealed))
                    entry.update(
                        check="differs" if differ else "reproduced",
                        compared_version=same["version"],
                        differs=differ,
                    )
                    if differ:
                        computed[sid] = (result, rows, sealed)
                    else:
                        entry["new_version"] = same["version"]
        summary[sid] = entry

    # A commit that lost the race to another chunk's is built again on the new head; a record found there
    # as it was gets the version attached the first time (its packed rows, result and sealed part are most
    # of a build's time), not a new one.
    attached_to: dict[str, tuple[dict, tuple[dict, dict[str, bytes]] | None]] = {}

    def build(store: Store, head: str) -> tuple[dict[str, bytes], list[str], dict[str, dict]]:
        add: dict[str, bytes] = {}
        chunk = {sid: dict(entry) for sid, entry in summary.items()}  # this head's version numbers
        changed = []
        for sid, (result, rows, sealed) in computed.items():
            record = loaded.get(sid) if head == start else load_record(store, track, sid, head)
            attached = None
            if not (dry_run or record is None):
                before = attached_to.get(sid)
                if before is not None and before[0] == record:
                    attached = before[1]
                elif chunk[sid].get("check") == "differs":
                    attached = attach_again(record, pinned, result, rows, sealed, run)
                else:
                    attached = attach_version(
                        record, pinned, result, rows, sealed=sealed, pending_rescore=run
                    )
                attached_to[sid] = (record, attached)
            if attached is not None:
                new, files = attached
                number = new["versions"][-1]["version"]
                note = f"re-scored as version {number} (scorer {SCORER_VERSION}, re-score {run})"
                if chunk[sid].get("check") == "differs":
                    parts = ", ".join(chunk[sid]["differs"])
                    note += f"; forced: differs from version {chunk[sid]['compared_version']} ({parts})"
                new = noted(new, note)
                chunk[sid]["new_version"] = number
                add.update(files)
                changed.append(new)
        add.update(record_files(store, head, changed))
        add[layout.rescore_chunk(track, run, index)] = dumps(chunk)
        return add, [], chunk

    return commit_change(store, AREA, build, f"rescore {track} {run} chunk {index}", attempts=20)[1]


def chunks_done(store: Store, track: str, run: str) -> list[dict]:
    paths = [p for p in store.list(AREA, layout.rescore_dir(track, run)) if layout.is_rescore_chunk(p)]
    return [json.loads(store.read(AREA, p) or b"{}") for p in paths]


def report(track: str, run: str, actor: str, dry_run: bool, chunks: list[dict], force: bool = False) -> dict:
    """The diff report: per submission metric deltas and rank changes (visible submissions only); a forced
    run says per submission whether it reproduced its stored version (`check`, `differs`)."""
    entries = {sid: e for chunk in chunks for sid, e in chunk.items() if not e["hidden"]}
    primary = get_track(track).primary_metric
    ids = list(entries)
    old_rank = dict(zip(ids, competition_ranks([entries[s]["old"].get(primary) for s in ids]), strict=True))
    new_rank = dict(
        zip(
            ids,
            competition_ranks([(entries[s]["new"] or entries[s]["old"]).get(primary) for s in ids]),
            strict=True,
        )
    )
    rows = []
    for sid, e in entries.items():
        deltas = {
            m: (e["new"][m] - v) for m, v in e["old"].items() if v is not None and e["new"].get(m) is not None
        }
        rows.append(
            {
                "submission_id": sid,
                "model_name": e["model_name"],
                "old_version": e["old_version"],
                "new_version": e["new_version"],
                "skipped": e["skipped"],
                "error": e.get("error"),
                "old": e["old"],
                "new": e["new"],
                "delta": deltas,
                "old_rank": old_rank[sid],
                "new_rank": new_rank[sid],
            }
            | ({k: e.get(k) for k in ("check", "compared_version", "differs")} if force else {})
        )
    rows.sort(key=lambda r: r["new_rank"])
    return {
        "track": track,
        "run": run,
        "actor": actor,
        "dry_run": dry_run,
        "force": force,
        "scorer_version": SCORER_VERSION,
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "summary": {
            "submissions": len(rows),
            "rescored": sum(not r["skipped"] for r in rows),
            "skipped": sum(r["skipped"] for r in rows),
            "errors": sum(r["error"] is not None for r in rows),
            "rank_changes": sum(r["old_rank"] != r["new_rank"] for r in rows),
        }
        | (
            {
                "reproduced": sum(r["check"] == "reproduced" for r in rows),
                "differs": sum(r["check"] == "differs" for r in rows),
            }
            if force
            else {}
        ),
        "submissions": rows,
    }


def finalize(
    store: Store,
    publisher: Publisher,
    track: str,
    run: str,
    actor: str,
    dry_run: bool,
    chunks: list[dict],
    force: bool = False,
) -> dict:
    """Publish the new versions with the report in one commit, or (dry run) keep the report private."""
    diff = report(track, run, actor, dry_run, chunks, force)
    body = codec.pretty(diff)
    if dry_run:
        commit_with_retry(
            store,
            AREA,
            lambda s, h: ({layout.dry_run_report(track, run): body}, []),
            f"rescore {track} {run} dry-run report",
            attempts=20,
        )
    else:
        publisher.publish(
            track,
            rescore_stamp=run,
            extra={layout.rescore_report(track, run): body},
            note=f"re-scored with scorer {SCORER_VERSION} by {actor}",
        )
    return diff
