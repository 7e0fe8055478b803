"""Hidden means hidden: a hidden submission is named nowhere at the results head. Its envelopes are deleted,
and every history file (the changelog's head and parts, the re-score reports) that names it is rewritten
without it, in the commit that takes it off the board. Every file written after that leaves it out, so
only a submission shown at the head (on the board, or with an envelope) needs such a rewrite.

Also the changelog: a line per publish, appended to a head file that is sealed into numbered parts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from scoring.tracks import get_track
from worker.gold.publish.cache import Cache
from worker.gold.publish.listing import report_names
from worker.gold.publish.ranking import competition_ranks
from worker.store import Store, codec, layout

RESULTS = "results"
CHANGELOG_HEAD_BYTES = 32_000  # `changelog.jsonl` is sealed into a part once this long (~200 lines)


@dataclass(frozen=True)
class Hiding:
    """What a publish does for the hidden submissions: envelopes deleted, ids they belonged to, and the
    hidden ids shown at the head, whose history files are rewritten (`scrub`)."""

    delete: list[str]
    removed: list[str]
    scrub: frozenset[str]
    hidden: frozenset[str]


def to_look_at(cache: Cache, track: str, hidden: list[dict], board_ids: set[str]) -> list[dict]:
    """The hidden records that may still have envelopes: on the board at the head, or not seen without any
    since their record last changed (a hidden submission off the board is looked at once, not at every
    publish)."""
    return [r for r in hidden if r["submission_id"] in board_ids or not cache.seen_empty(track, r)]


def hiding(
    cache: Cache, track: str, hidden: list[dict], look: list[dict], existing: set[str], board_ids: set[str]
) -> Hiding:
    """The envelopes of the hidden records `look` among `existing` (published files at the head) to delete;
    remembers the ones left without any (in `cache.cleared`)."""
    dirs = tuple(layout.published_result_dir(track, r["submission_id"]) for r in look)
    delete = sorted(p for p in existing if p.startswith(dirs)) if dirs else []
    for r in look:  # off the board with no envelope left (or none after this commit): not again
        if r["submission_id"] not in board_ids and not any(
            p.startswith(layout.published_result_dir(track, r["submission_id"])) for p in delete
        ):
            if r.get("updated_at") is not None:  # without it, a change could not be told: look every time
                cache.cleared[(track, r["submission_id"])] = r["updated_at"]
    removed = sorted({layout.published_result_id(p) for p in delete})
    hidden_ids = frozenset(r["submission_id"] for r in hidden)
    return Hiding(delete, removed, frozenset(hidden_ids & (board_ids | set(removed))), hidden_ids)


def scrubbed_reports(store: Store, head: str, track: str, scrub: frozenset[str]) -> dict[str, bytes]:
    """The re-score reports at `head` that name a submission in `scrub`, without it."""
    files = {}
    for name in report_names(store, track, head) if scrub else []:
        path = f"{layout.rescore_reports_dir(track)}{name}"
        before = store.read(RESULTS, path, head) or b""
        after = scrub_hidden(path, before, scrub)
        if after != before:
            files[path] = after
    return files


def scrub_hidden(path: str, data: bytes, hidden: frozenset[str]) -> bytes:
    """A public history file (the changelog's head or a part, a re-score report) without any mention of the
    `hidden` submission ids, so the results head shows a hidden submission nowhere. Other files: unchanged."""
    if not hidden:
        return data
    if layout.is_changelog(path):
        lines = []
        for raw in data.splitlines():
            line = json.loads(raw)
            line["added"] = [a for a in line.get("added") or [] if a.split("/")[0] not in hidden]
            if isinstance(line.get("removed"), list):  # older lines listed ids; new ones count
                line["removed"] = [r for r in line["removed"] if r not in hidden]
            lines.append(codec.line(line))
        return b"".join(lines)
    if layout.is_rescore_report(path):
        report = json.loads(data)
        rows = report.get("submissions") or []
        kept = [r for r in rows if r.get("submission_id") not in hidden]
        if len(kept) == len(rows):
            return data
        return codec.pretty(_report_without(report, kept))
    return data


def _report_without(report: dict, kept: list[dict]) -> dict:
    """A re-score report with only the `kept` rows, counted and ranked among themselves: a removed row
    leaves neither a count nor a rank gap behind."""
    primary = get_track(report["track"]).primary_metric
    old = competition_ranks([(r.get("old") or {}).get(primary) for r in kept])
    new = competition_ranks([(r.get("new") or r.get("old") or {}).get(primary) for r in kept])
    rows = sorted(
        ({**r, "old_rank": o, "new_rank": n} for r, o, n in zip(kept, old, new, strict=True)),
        key=lambda r: r["new_rank"],
    )
    summary = {
        **(report.get("summary") or {}),
        "submissions": len(rows),
        "rescored": sum(not r.get("skipped") for r in rows),
        "skipped": sum(bool(r.get("skipped")) for r in rows),
        "errors": sum(r.get("error") is not None for r in rows),
        "rank_changes": sum(r["old_rank"] != r["new_rank"] for r in rows),
    }
    return {**report, "summary": summary, "submissions": rows}


def changelog_files(store: Store, head: str, line: dict, scrub: frozenset[str]) -> dict[str, bytes]:
    """The changelog files to commit with a publish: the head `changelog.jsonl` with `line` appended
    (sealed first into the next part `changelog/<NNNNN>.jsonl` once CHANGELOG_HEAD_BYTES long, so a publish
    rewrites a bounded file), and every part that names a submission in `scrub`, without it."""
    files: dict[str, bytes] = {}
    parts = (
        sorted(p for p in store.list(RESULTS, layout.CHANGELOG_PARTS, head) if layout.is_changelog(p))
        if scrub
        else None
    )
    for path in parts or []:
        data = store.read(RESULTS, path, head) or b""
        if (after := scrub_hidden(path, data, scrub)) != data:
            files[path] = after
    current = scrub_hidden(layout.CHANGELOG, store.read(RESULTS, layout.CHANGELOG, head) or b"", scrub)
    if len(current) >= CHANGELOG_HEAD_BYTES:
        if parts is None:
            parts = [p for p in store.list(RESULTS, layout.CHANGELOG_PARTS, head) if layout.is_changelog(p)]
        files[layout.changelog_part(len(parts))] = current
        current = b""
    files[layout.CHANGELOG] = current + codec.line(line)
    return files
