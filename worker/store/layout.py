"""Every path of the store layout, in one place. Pure functions; a path is built only from validated parts
(a known track, a 16-hex submission id, an int version), so no caller can write outside its folder.

references (private, workers only)
    <track>/test.jsonl                        the hidden references
    <track>/subsets/<name>.jsonl              hidden subset membership
    <track>/reference_set.json                which set is installed (kind, sha256, rows)

submissions (private)
    <track>/<id>/submission.json              the record (status, metadata, versions, history)
    <track>/<id>/predictions.jsonl            the upload
    <track>/<id>/format_report.json           the intake report kept for the submitter
    <track>/<id>/result_v<N>.json             the scorer's result, staged until a publish copies it
    <track>/<id>/rows_v<N>.json               per-row outcomes (paired comparisons for tie groups)
    <track>/<id>/fingerprint.bin              the near-copy guard's fingerprint
    <track>/index.json                        the record index: shard -> a stamp of its bytes
    <track>/index/<xx>.json                   a shard: summaries of the records whose id starts with xx
    identities/<sha256>/<track>.json          a submitter's quota index
    nearcopy/<track>/segment-<NNNNN>.bin      the near-copy guard's fingerprint segments
    rescore/<track>/<run>/chunk_<NNNNN>.json  a re-score's per-chunk summaries
    rescore/<track>/<run>/report.json         a dry run's diff report (private)

results (public)
    README.md                                 dataset card (one `datasets` config per track)
    changelog.jsonl                           the newest lines of the publishing history (one per publish;
                                              at most CHANGELOG_LINES, then sealed into a part)
    changelog/<NNNNN>.jsonl                   sealed parts of the history, oldest first, then changelog.jsonl
    <track>/board/rank.json                   the live board: meta, stamps of the rank parts and segments
    <track>/board/ranks/<stamp>.json          a part of the rank order and its tie-group starts, named by
                                              the stamp of its bytes (cut where the rows' ids say)
    <track>/board/rows/<NNNNN>.json           the live board's rows without their rank fields, SEGMENT_ROWS a
                                              file, in (created_at, id) order (worker/live_board.py)
    <track>/leaderboard.json                  export: the complete board (rank order) as of its generated_at,
                                              rebuilt on a cadence (EXPORT_EVERY_SECONDS, 10 % rows changed)
    <track>/leaderboard.parquet               the same rows as leaderboard.json, for pandas and `datasets`
    <track>/results/<id>/v<N>.json            a published result envelope
    <track>/public/<name>                     public inputs, dev split, subset sizes, reference_set.json
    rescore/<track>/<run>.json                a published re-score's diff report
"""

from __future__ import annotations

import re

from scoring.names import TRACK_NAMES

_ID = re.compile(r"[0-9a-f]{16}")
_STAMP = _ID  # a change stamp: the first 16 hex digits of a sha256
REFERENCE_SET = "reference_set.json"
SLICE_KEY = "slice_key.txt"
CHANGELOG = "changelog.jsonl"
CHANGELOG_PARTS = "changelog/"
DATASET_CARD = "README.md"
INDEX_SHARD_CHARS = 2  # shards by the first 2 hex digits of the id: 256 shards of a few kB at N = 3,000
_SHARD = re.compile(rf"[0-9a-f]{{{INDEX_SHARD_CHARS}}}")


def is_submission_id(value: str) -> bool:
    return isinstance(value, str) and _ID.fullmatch(value) is not None


def check_track(track: str) -> str:
    if track not in TRACK_NAMES:
        raise ValueError(f"unknown track {track!r}; expected one of {', '.join(TRACK_NAMES)}")
    return track


def _run(run: str) -> str:
    """A re-score run stamp (UTC, `20260101T000000000000Z`): one path segment."""
    if not re.fullmatch(r"[0-9A-Za-z]+", run or ""):
        raise ValueError(f"malformed re-score run {run!r}")
    return run


# -- references ------------------------------------------------------------------------------------------


def references_file(track: str) -> str:
    return f"{check_track(track)}/test.jsonl"


def reference_subset(track: str, name: str) -> str:
    return f"{check_track(track)}/subsets/{name}"


def reference_set(track: str) -> str:
    return f"{check_track(track)}/{REFERENCE_SET}"


def slice_key(track: str) -> str:
    """The key of the public/private slices (hex; scoring/slices.py): private, workers only."""
    return f"{check_track(track)}/{SLICE_KEY}"


def references_dir(track: str) -> str:
    return f"{check_track(track)}/"


# -- submissions -----------------------------------------------------------------------------------------


def sub_dir(track: str, submission_id: str) -> str:
    """The submission's folder in the submissions area."""
    if not is_submission_id(submission_id):
        raise ValueError(f"malformed submission id {submission_id!r}")
    return f"{check_track(track)}/{submission_id}"


def record_path(track: str, submission_id: str) -> str:
    return f"{sub_dir(track, submission_id)}/submission.json"


def is_record_path(path: str) -> bool:
    return path.endswith("/submission.json")


def track_dir(track: str) -> str:
    """Prefix of everything a track keeps in the submissions area (records, index)."""
    return f"{check_track(track)}/"


def predictions_path(track: str, submission_id: str) -> str:
    return f"{sub_dir(track, submission_id)}/predictions.jsonl"


def format_report_path(track: str, submission_id: str) -> str:
    return f"{sub_dir(track, submission_id)}/format_report.json"


def rows_path(track: str, submission_id: str, version: int) -> str:
    return f"{sub_dir(track, submission_id)}/rows_v{int(version)}.json"


def staged_result_path(track: str, submission_id: str, version: int) -> str:
    """The scorer's result, staged privately until a publish copies it into the results area."""
    return f"{sub_dir(track, submission_id)}/result_v{int(version)}.json"


def sealed_result_path(track: str, submission_id: str, version: int) -> str:
    """A private test's private-slice result, its row outcomes and the full-test result, sealed for the
    workers (worker/gold/sealed.py) until a release."""
    return f"{sub_dir(track, submission_id)}/sealed_v{int(version)}.bin"


def fingerprint_path(track: str, submission_id: str) -> str:
    return f"{sub_dir(track, submission_id)}/fingerprint.bin"


def index_path(track: str) -> str:
    """The record index's shard table: `{"shards": {xx: 16 hex digits of the shard's sha256}}`."""
    return f"{check_track(track)}/index.json"


def index_shard_path(track: str, shard: str) -> str:
    if not _SHARD.fullmatch(shard):
        raise ValueError(f"malformed index shard {shard!r}")
    return f"{check_track(track)}/index/{shard}.json"


def quota_index_path(identity_key: str, track: str) -> str:
    """A submitter's quota index; `identity_key` is the sha256 of the normalised identity."""
    if not re.fullmatch(r"[0-9a-f]{64}", identity_key):
        raise ValueError("malformed identity key")
    return f"identities/{identity_key}/{check_track(track)}.json"


def nearcopy_segment_path(track: str, number: int) -> str:
    return f"nearcopy/{check_track(track)}/segment-{int(number):05d}.bin"


def rescore_dir(track: str, run: str) -> str:
    """A re-score run's private folder (submissions area)."""
    return f"rescore/{check_track(track)}/{_run(run)}/"


def rescore_chunk(track: str, run: str, index: int) -> str:
    return f"{rescore_dir(track, run)}chunk_{int(index):05d}.json"


def is_rescore_chunk(path: str) -> bool:
    return "/chunk_" in path


def dry_run_report(track: str, run: str) -> str:
    return f"{rescore_dir(track, run)}report.json"


# -- results ---------------------------------------------------------------------------------------------


def leaderboard_json(track: str) -> str:
    return f"{check_track(track)}/leaderboard.json"


def leaderboard_parquet(track: str) -> str:
    return f"{check_track(track)}/leaderboard.parquet"


def board_rank(track: str) -> str:
    """The live board's rank table (worker/live_board.py)."""
    return f"{check_track(track)}/board/rank.json"


def board_segments_dir(track: str) -> str:
    return f"{check_track(track)}/board/rows/"


def board_segment(track: str, number: int) -> str:
    return f"{board_segments_dir(track)}{int(number):05d}.json"


def board_rank_parts_dir(track: str) -> str:
    return f"{check_track(track)}/board/ranks/"


def board_rank_part(track: str, part_stamp: str) -> str:
    """A part of the live board's rank order, named by the stamp of its bytes (16 hex digits)."""
    if not _STAMP.fullmatch(part_stamp):
        raise ValueError(f"not a rank part stamp: {part_stamp!r}")
    return f"{board_rank_parts_dir(track)}{part_stamp}.json"


def changelog_part(number: int) -> str:
    """A sealed part of the publishing history (`changelog.jsonl` holds the newest lines)."""
    return f"{CHANGELOG_PARTS}{int(number):05d}.jsonl"


def is_changelog(path: str) -> bool:
    """The open head `changelog.jsonl` or a sealed part `changelog/<NNNNN>.jsonl`."""
    return path == CHANGELOG or re.fullmatch(rf"{CHANGELOG_PARTS}\d{{5}}\.jsonl", path) is not None


def board_track(path: str) -> str | None:
    """The track whose `leaderboard.json` this results path is, else None."""
    track, _, name = path.partition("/")
    return track if name == "leaderboard.json" and track in TRACK_NAMES else None


def results_dir(track: str) -> str:
    """Prefix of a track's published result envelopes."""
    return f"{check_track(track)}/results/"


def published_result_dir(track: str, submission_id: str) -> str:
    if not is_submission_id(submission_id):
        raise ValueError(f"malformed submission id {submission_id!r}")
    return f"{results_dir(track)}{submission_id}/"


def published_result_path(track: str, submission_id: str, version: int) -> str:
    return f"{published_result_dir(track, submission_id)}v{int(version)}.json"


def published_result_id(path: str) -> str:
    """The submission id of a `<track>/results/<id>/v<N>.json` path."""
    return path.split("/")[2]


def public_dir(track: str) -> str:
    return f"{check_track(track)}/public/"


def public_file(track: str, name: str) -> str:
    return f"{public_dir(track)}{name}"


def rescore_reports_dir(track: str) -> str:
    """Prefix of a track's published re-score diff reports (results area)."""
    return f"rescore/{check_track(track)}/"


def rescore_report(track: str, run: str) -> str:
    return f"{rescore_reports_dir(track)}{_run(run)}.json"


def is_rescore_report(path: str) -> bool:
    return path.startswith("rescore/") and path.endswith(".json")
