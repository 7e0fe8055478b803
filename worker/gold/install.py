"""Installing a reference set into the store (`python -m worker install --track T DIR [--replace]`).

A reference set is a bundle folder as `python -m scoring import` writes it. Installing it:
1. runs the track's reference checker and refuses a bad bundle with its report;
2. refuses to replace a *real* set that submissions were scored on, unless `replace` is given;
3. writes the hidden files (`<track>/test.jsonl`, `subsets/`) and the manifest `<track>/reference_set.json`
   to the references area in one commit, deleting what the new set does not have;
4. retires every submission of the track when the set it replaces is the synthetic demo (hidden, flagged
   `retired`, never re-scored): the board of a real track never shows demo entries;
5. publishes the public files (test inputs without labels, dev when present, subset sizes, the manifest
   without anything secret) in one results commit, deleting stale ones, and rebuilds the board.
Re-installing the set that is already installed changes nothing but repairs missing public files, so a
container may run the same install on every start.

The manifest: `{"track", "kind": "real"|"demo", "sha256", "rows": {split: n}, "installed_at"}`. Stores
seeded before manifests existed are recognised by comparing their set's hash with the shipped demo's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from scoring import bundle_info
from scoring.api import references_sha256
from scoring.problems import InputError, Problem
from scoring.slices import commitment, new_slice_key, parse_slice_key
from scoring.tracks import get_track
from worker.gold.bundle_files import public_files, reference_files, subsets_dir
from worker.gold.publish import Publisher
from worker.gold.signing import signing_key
from worker.records import FINAL_BAD, check_track, now_iso, record_path
from worker.store import Store, codec, commit_with_retry, layout
from worker.submissions import AREA as SUBMISSIONS
from worker.submissions import list_records, read_json, record_files

REFERENCES, RESULTS = "references", "results"
MANIFEST = layout.REFERENCE_SET
SPLITS = ("test", "dev", "train")
DEMO, REAL = "demo", "real"


class InstallRefused(Exception):
    """The install was refused; the message says why and what to do."""


@dataclass
class Installed:
    track: str
    sha256: str
    rows: dict[str, int]
    changed: bool
    replaced: dict | None = None  # the manifest of the set this one replaced
    retired: list[dict] = field(default_factory=list)  # demo submissions retired
    needs_rescore: list[dict] = field(default_factory=list)  # submissions scored on a replaced real set
    public: list[str] = field(default_factory=list)  # public files written
    test_status: str = "private"  # ../shared/spec/disclosure.md §1

    def lines(self) -> list[str]:
        verb = "installed" if self.changed else "already installed (nothing changed)"
        out = [
            f"{self.track}: reference set {verb}, sha256 {self.sha256}",
            f"  test status: {self.test_status}",
        ]
        for split in SPLITS:
            if split in self.rows:
                where = {
                    "test": "hidden references; public inputs published",
                    "dev": "public with labels",
                    "train": "not stored",
                }[split]
                out.append(f"  {split}: {self.rows[split]:,} rows ({where})")
        if self.replaced:
            out.append(f"  replaced the {self.replaced['kind']} set sha256 {self.replaced['sha256']}")
        if self.retired:
            out.append(
                f"  retired {len(self.retired)} submission(s) scored on the demo set: "
                + ", ".join(_name(r) for r in self.retired)
            )
        if self.needs_rescore:
            out.append(
                f"  {len(self.needs_rescore)} submission(s) were scored on the replaced set and need "
                f"a re-score (python -m worker rescore --track {self.track}): "
                + ", ".join(_name(r) for r in self.needs_rescore)
            )
        return out

    def as_dict(self) -> dict:
        return {
            "track": self.track,
            "sha256": self.sha256,
            "rows": self.rows,
            "changed": self.changed,
            "replaced": self.replaced,
            "retired": self.retired,
            "needs_rescore": self.needs_rescore,
            "public": self.public,
            "test_status": self.test_status,
        }


def _name(entry: dict) -> str:
    return f"{entry['submission_id']} ({entry['model_name'] or 'unnamed'})"


def _summary(record: dict) -> dict:
    return {"submission_id": record["submission_id"], "model_name": record["metadata"].get("model_name", "")}


def count_rows(path: Path) -> int:
    with path.open("rb") as handle:
        return sum(1 for line in handle if line.strip())


def check_bundle(track: str, bundle: Path) -> dict[str, int]:
    """Run the track's reference checker; rows per split. InstallRefused with the report when bad."""
    bundle = Path(bundle)
    if not (bundle / "test.jsonl").is_file():
        raise InstallRefused(
            f"{bundle} is not a reference bundle: expected a folder holding test.jsonl "
            f"(as `python -m scoring import` writes it)"
        )
    track_obj = get_track(track)
    problems: list[Problem] = list(track_obj.check_reference_bundle(bundle))
    try:  # the worker's own reader must accept it too
        track_obj.load_references(bundle / "test.jsonl", subsets_dir(bundle))
    except InputError as error:
        problems += list(error.problems)
    if problems:
        shown = "\n".join(f"  {p}" for p in problems[:20])
        more = f"\n  ... and {len(problems) - 20:,} more" if len(problems) > 20 else ""
        raise InstallRefused(
            f"{bundle} is not a valid {track} reference bundle ({len(problems):,} "
            f"problem(s); `python -m scoring check-references --track {track} {bundle}` "
            "lists them all):"
            f"\n{shown}{more}"
        )
    return {s: count_rows(bundle / f"{s}.jsonl") for s in SPLITS if (bundle / f"{s}.jsonl").is_file()}


def bundle_sha256(bundle: Path) -> str:
    return references_sha256(Path(bundle) / "test.jsonl", subsets_dir(Path(bundle)))


def current_set(store: Store, track: str, demo_dir: Path | None) -> dict | None:
    """The manifest of the track's installed set; None when it has none at all."""
    manifest = read_json(store, REFERENCES, layout.reference_set(track))
    if manifest is not None:
        return manifest
    if store.read(REFERENCES, layout.references_file(track)) is None:
        return None
    # A store seeded before manifests existed: the demo iff its set hashes like the shipped demo's.
    snapshot = store.local_snapshot(REFERENCES) / track
    sha = bundle_sha256(snapshot)
    demo = (
        demo_dir is not None
        and (demo_dir / track / "test.jsonl").is_file()
        and (bundle_sha256(demo_dir / track) == sha)
    )
    return {"track": track, "kind": DEMO if demo else REAL, "sha256": sha, "rows": {}, "installed_at": None}


def manifest_bytes(track: str, kind: str, sha: str, rows: dict[str, int], test_status: str) -> bytes:
    body = {
        "track": track,
        "kind": kind,
        "sha256": sha,
        "rows": rows,
        "installed_at": now_iso(),
        "test_status": test_status,
    }
    return codec.pretty(body)


def install(  # noqa: C901
    store: Store,
    track: str,
    bundle: Path,
    *,
    replace: bool = False,
    kind: str = REAL,
    demo_dir: Path | None = None,
    test_status: str | None = None,
) -> Installed:
    """Install `bundle` as the reference set of `track` (see the module docstring). `test_status` (§1 of
    ../shared/spec/disclosure.md): `public` or `private`; default: what the bundle's importer recorded
    (`bundle.json`), else private."""
    check_track(track)
    bundle = Path(bundle)
    if not (bundle / "test.jsonl").is_file():
        check_bundle(track, bundle)  # raises, naming what was expected
    sha = bundle_sha256(bundle)
    status = test_status or bundle_info.test_status(bundle) or "private"
    if status not in bundle_info.TEST_STATUSES:
        raise InstallRefused(f"--test-status must be private or public, not {status!r}")
    current = current_set(store, track, demo_dir)
    same_set = current is not None and current["sha256"] == sha and current["kind"] == kind
    # Only the test status changed: the same set (its key, its submissions), a new manifest and board.
    same = same_set and current is not None and current.get("test_status", "private") == status
    # The installed set passed the checker when it was installed: a re-run (every start) skips it.
    rows = (
        {s: count_rows(bundle / f"{s}.jsonl") for s in SPLITS if (bundle / f"{s}.jsonl").is_file()}
        if same_set
        else check_bundle(track, bundle)
    )
    live = [r for r in list_records(store, track) if not r.get("retired") and r["status"] not in FINAL_BAD]
    if current and current["kind"] == REAL and not same_set and live and not replace:
        names = ", ".join(_name(_summary(r)) for r in live[:20]) + (" ..." if len(live) > 20 else "")
        raise InstallRefused(
            f"refused: track {track} already has a real reference set (sha256 {current['sha256']}) and "
            f"{len(live)} submission(s) scored on it would need a re-score: {names}. Re-run with --replace "
            f"to install anyway, then `python -m worker rescore --track {track}`."
        )

    signing_key(store)  # made now, with the set, rather than by the first publish (one references commit)
    refs = reference_files(track, bundle)
    manifest = manifest_bytes(track, kind, sha, rows, status)
    if not same_set:
        # A new set gets a new slice key, so its public slice says nothing about the old set's.
        key = {layout.slice_key(track): _key()}

        def build_refs(s: Store, head: str) -> tuple[dict[str, bytes], list[str]]:
            add = {**refs, **key, layout.reference_set(track): manifest}
            return add, [p for p in s.list(REFERENCES, layout.references_dir(track), head) if p not in add]

        commit_with_retry(store, REFERENCES, build_refs, f"install {kind} reference set {track} {sha[:12]}")
    elif not same or read_json(store, REFERENCES, layout.reference_set(track)) is None:  # status; legacy
        commit_with_retry(
            store,
            REFERENCES,
            lambda s, h: ({layout.reference_set(track): manifest}, []),
            f"record reference set {track} {sha[:12]}",
        )

    if same_set and store.read(REFERENCES, layout.slice_key(track)) is None:  # installed before slices
        commit_with_retry(
            store,
            REFERENCES,
            lambda s, h: (
                {} if s.read(REFERENCES, layout.slice_key(track), h) else {layout.slice_key(track): _key()},
                [],
            ),
            f"slice key for {track}",
        )

    retired: list[dict] = []
    needs_rescore: list[dict] = []
    if not same_set and current is not None and current["kind"] == DEMO:
        retired = _retire(store, track, live, current["sha256"])
    elif not same_set and current is not None:
        needs_rescore = [_summary(r) for r in live]

    public = public_files(track, bundle)
    identity = published_identity(store, manifest, sha, track)
    public[layout.public_file(track, MANIFEST)] = codec.pretty({**json.loads(manifest), "sha256": identity})

    def build_public(s: Store, head: str) -> tuple[dict[str, bytes], list[str]]:
        existing = s.list(RESULTS, layout.public_dir(track), head)
        old = read_json(s, RESULTS, layout.public_file(track, MANIFEST), head)
        unchanged = old is not None and old.get("sha256") == identity and old.get("test_status") == status
        if same and unchanged and all(p in existing for p in public):
            return {}, []  # nothing to repair (an unchanged manifest keeps its installed_at)
        return public, [p for p in existing if p not in public]

    commit_with_retry(store, RESULTS, build_public, f"publish {kind} reference set {track} {sha[:12]}")
    if not same:
        Publisher(store).publish(track, note=f"{kind} reference set {sha[:12]} installed", export=True)
    return Installed(
        track,
        sha,
        rows,
        changed=not same,
        replaced=None if same_set else current,
        test_status=status,
        retired=retired,
        needs_rescore=needs_rescore,
        public=sorted(public),
    )


def published_identity(store: Store, manifest: bytes, sha: str, track: str) -> str:
    """What the public manifest names the set by (../shared/spec/disclosure.md §6): a private set's keyed
    commitment, a public set's sha256."""
    key = store.read(REFERENCES, layout.slice_key(track))
    if json.loads(manifest).get("test_status", "private") == "public" or key is None:
        return sha
    return commitment(parse_slice_key(key.decode()), sha)


def _key() -> bytes:
    return new_slice_key().hex().encode()


def _retire(store: Store, track: str, records: list[dict], demo_sha: str) -> list[dict]:
    """Hide every given submission as scored on the demo set, in one submissions commit."""
    at = now_iso()
    reason = "retired: scored on the synthetic demo reference set, which a real set replaced"

    def build(s: Store, head: str) -> tuple[dict[str, bytes], list[str]]:
        changed = []
        for record in records:
            fresh = read_json(s, SUBMISSIONS, record_path(track, record["submission_id"]), head)
            if fresh is None or fresh.get("retired"):
                continue
            fresh.update(
                hidden=True,
                hidden_reason=reason,
                updated_at=at,
                retired={"at": at, "references_sha256": demo_sha},
            )
            fresh["history"] = [*fresh["history"], {"status": fresh["status"], "at": at, "note": reason}]
            changed.append(fresh)
        return record_files(s, head, changed), []

    if records:
        commit_with_retry(store, SUBMISSIONS, build, f"retire demo submissions of {track}", attempts=20)
    return [_summary(r) for r in records]
