"""Cutting a release (../shared/spec/disclosure.md §4): the official, frozen, signed numbers of a track.

`python -m worker release cut --track T --name 2027-03` (a maintainer's process with the workers' store):
1. the finals: each submitter's chosen ones (at most 2, `Service.set_finals`) among their released, visible
   submissions; without a choice, their best released one by the live board's (public-slice) primary metric.
   Each baseline is a submitter of its own (worker/gold/ladder.py);
2. each final is scored again on the private slice, with intervals, and on the full test (exact; the sealed
   results of scoring time are the same numbers, and are checked against);
3. ranks and tie groups on the private slice (the paired bootstrap of the live board, on the private rows),
   the live public rank beside them and the Rank Delta (live rank − private rank);
4. every row signed (Ed25519, scoring/signatures.py); written ONCE under `releases/<track>/<name>/`
   (`release.json`, `rows.json`, `rows.parquet`, `CITATION.cff`, `citation.bib`) with the public key at
   `keys/ed25519.pub`, in one results commit, tagged `<track>-<name>` (a git tag on the Hub's results
   repository, `tags.json` in the local store) so the snapshot can be fetched by name. A release that
   exists is never written again: a metric fix afterwards is an erratum release (`<name>.1`).
A public test set's release freezes its full-test board the same way (no private slice: its rows are the
full-test results, ranked as on the live board).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from scoring.signatures import public_key_text, sign
from scoring.tracks import get_track
from scoring.version import SCORER_VERSION
from worker import live_board
from worker.gold.ladder import chain_of
from worker.gold.references import PUBLIC, ReferenceCache
from worker.gold.sealed import unseal
from worker.gold.signing import PUBLIC_KEY_PATH, signing_key
from worker.leaderboard import Entry, build_rows, metric
from worker.records import PUBLISHED, now_iso, predictions_path, sealed_result_path, staged_result_path
from worker.records import shows_result as released_result
from worker.store import Store, codec, commit_with_retry, layout
from worker.submissions import AREA, list_records, read_json

RESULTS = "results"
NAME = re.compile(r"^\d{4}-\d{2}(\.\d{1,3})?$")
MAX_FINALS = 2
BOOTSTRAP, SEED = 1000, 0


class ReleaseRefused(Exception):
    """The release cannot be cut; the message says why."""


@dataclass
class Final:
    record: dict
    version: dict
    public: dict  # the live board's result (public slice, rounded)


def release_dir(track: str, name: str) -> str:
    return f"releases/{layout.check_track(track)}/{name}/"


def finals(store: Store, track: str) -> list[Final]:
    """Each submitter's finals: the chosen ones, else the best released one (module docstring)."""
    primary = get_track(track).primary_metric
    chains: dict[str, list[Final]] = {}
    for record in list_records(store, track):
        if record["status"] != PUBLISHED or record.get("hidden") or not record["versions"]:
            continue
        version = record["versions"][-1]
        result = read_json(
            store, AREA, staged_result_path(track, record["submission_id"], version["version"])
        )
        if not released_result(record, result):
            continue
        chains.setdefault(chain_of(record), []).append(Final(record, version, result))
    out = []
    for candidates in chains.values():
        chosen = [c for c in candidates if c.record.get("final")][:MAX_FINALS]
        if not chosen:  # the best released one; an earlier submission wins an exact tie
            chosen = [min(candidates, key=lambda c: (-_value(c.public, primary), c.record["created_at"]))]
        out += chosen
    return out


def _value(result: dict, primary: str) -> float:
    value = metric(result, primary)
    return float("-inf") if value is None else value


def cut(store: Store, track: str, name: str, *, actor: str) -> dict:
    """Cut and publish the release `name` of `track`; returns its `release.json`. ReleaseRefused when the
    name is malformed or taken, or the track has no final."""
    if not NAME.match(name):
        raise ReleaseRefused(f"a release is named like 2027-03 (an erratum: 2027-03.1), not {name!r}")
    folder = release_dir(track, name)
    if store.list(RESULTS, folder):
        raise ReleaseRefused(f"release {name} of {track} exists; a release is never changed (cut an erratum)")
    pinned = ReferenceCache(store).get(track)
    chosen = finals(store, track)
    if not chosen:
        raise ReleaseRefused(f"{track} has no released submission to put in a release")
    scorer = get_track(track)
    primary = scorer.primary_metric
    private_slice = (
        pinned.slices["private"] if pinned.slices is not None and pinned.test_status != PUBLIC else None
    )
    private = private_slice is not None
    scored: dict[tuple[str, int], tuple[Final, dict, dict, object]] = {}
    for final in chosen:
        sid = final.record["submission_id"]
        data = store.read(AREA, predictions_path(track, sid)) or b""
        if private_slice is not None:
            out = scorer.score_slices(
                pinned.refs,
                data,
                {"private": private_slice},
                bootstrap={"full": 0, "private": BOOTSTRAP},
                seed=SEED,
                full_rows=False,
            )
            (result, rows), full = out["private"], out["full"][0]
            _check_sealed(store, pinned.slice_key, track, sid, final.version["version"], result, full)
        else:
            result, rows = scorer.score_with_rows(pinned.refs, data, bootstrap=BOOTSTRAP, seed=SEED)
            full = result
        scored[(sid, final.version["version"])] = (final, result, full, scorer.prepare_compare(rows))

    def below(leader: Entry, entry: Entry) -> bool:
        cmp = scorer.paired_compare_prepared(
            scored[leader.key][3], scored[entry.key][3], bootstrap=BOOTSTRAP, seed=SEED, metrics=[primary]
        )[primary]
        return bool(cmp["significant"]) and cmp["diff"] > 0

    entries = [Entry(final.record, final.version, result) for final, result, _, _ in scored.values()]
    live = _live_ranks(store, track)
    key = signing_key(store)
    identity = pinned.sha256  # a private set's keyed commitment (worker/gold/references.py), else its sha256
    signed_rows = []
    for row in build_rows(entries, primary, below):
        final, _, full, _ = scored[(row["submission_id"], row["version"])]
        full_columns = Entry(final.record, final.version, full).metric_columns()
        live_rank = live.get((row["submission_id"], row["version"]))
        row = {
            **row,
            "references_sha256": identity,
            "slice": "private" if private else "full",
            **{f"full.{k}": v for k, v in full_columns.items()},
            "live_rank": live_rank,
            "rank_delta": None if live_rank is None else live_rank - row["rank"],
            "release": name,
        }
        signed_rows.append(sign(key, row))
    release = {
        "track": track,
        "name": name,
        "date": now_iso(),
        "scorer_version": SCORER_VERSION,
        "test_status": "public" if not private else "private",
        "references": {"commitment" if private else "sha256": identity},
        "counts": {
            "submitters": len({chain_of(f.record) for f in chosen}),
            "finals": len(signed_rows),
            "rows_scored": len(private_slice) if private_slice is not None else len(pinned.refs),
            "rows_full": len(pinned.refs),
        },
        "cut_by": actor,
        "public_key": public_key_text(key),
    }
    files = {
        folder + "release.json": codec.pretty(sign(key, release)),
        folder + "rows.json": codec.pretty({"release": name, "track": track, "rows": signed_rows}),
        folder + "rows.parquet": _parquet(signed_rows),
        folder + "CITATION.cff": citation_cff(release).encode(),
        folder + "citation.bib": bibtex(release).encode(),
        PUBLIC_KEY_PATH: (public_key_text(key) + "\n").encode(),
    }

    def build(s: Store, head: str) -> tuple[dict[str, bytes], list[str]]:
        if s.list(RESULTS, folder, head):
            raise ReleaseRefused(f"release {name} of {track} exists (cut at the same time elsewhere)")
        return files, []

    revision = commit_with_retry(store, RESULTS, build, f"release {track} {name}")
    store.tag(RESULTS, release_tag(track, name), revision, f"release {name} of {track}")
    return release


def release_tag(track: str, name: str) -> str:
    """The results repository's tag of a release's commit (no slash: it is also a URL path segment)."""
    return f"{track}-{name}"


def _parquet(rows: list[dict]) -> bytes:
    import io

    import pandas as pd

    buffer = io.BytesIO()
    pd.DataFrame(rows).to_parquet(buffer, index=False)
    return buffer.getvalue()


def _check_sealed(store: Store, key, track: str, sid: str, version: int, private: dict, full: dict) -> None:
    """The numbers scored again equal those sealed at scoring time (same scorer, same bytes)."""
    sealed = store.read(AREA, sealed_result_path(track, sid, version))
    if sealed is None or key is None:
        return
    kept = unseal(key, sealed)
    if kept["full"]["metrics"] != json.loads(json.dumps(full["metrics"])):
        raise ReleaseRefused(f"{sid}: its full-test result differs from the one sealed at scoring time")
    if kept["private"]["metrics"] != json.loads(json.dumps(private["metrics"])):
        raise ReleaseRefused(f"{sid}: its private-slice result differs from the one sealed at scoring time")


def _live_ranks(store: Store, track: str) -> dict[tuple[str, int], int]:
    board = live_board.read(store, track, None, {})[0] or {}
    return {(r["submission_id"], r["version"]): r["rank"] for r in board.get("rows") or []}


def citation_cff(release: dict) -> str:
    title = f"{get_track(release['track']).title} leaderboard release {release['name']}"
    return "\n".join(
        [
            "cff-version: 1.2.0",
            "message: If you use these results, please cite this leaderboard release.",
            f'title: "{title}"',
            "type: dataset",
            f'version: "{release["name"]}"',
            f'date-released: "{release["date"][:10]}"',
            "authors:",
            "  - name: VARM-Bench leaderboard maintainers",
            "",
        ]
    )


def bibtex(release: dict) -> str:
    key = f"varm-leaderboard-{release['track']}-{release['name']}".replace(".", "-")
    title = f"{get_track(release['track']).title} leaderboard release {release['name']}"
    return (
        f"@misc{{{key},\n"
        f"  title = {{{title}}},\n"
        "  author = {{VARM-Bench leaderboard maintainers}},\n"
        f"  year = {{{release['date'][:4]}}},\n"
        f"  note = {{Scorer {release['scorer_version']}; {release['counts']['finals']} finals, "
        f"test status {release['test_status']}}},\n"
        "}\n"
    )
