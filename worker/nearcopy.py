"""The near-copy probe guard (docs/SECURITY.md, "Label probing").

A submission whose predictions differ from an earlier submission on the same track in only a few rows is a
measurement of those rows' hidden labels (flip one row, compare the two scores). Such a near-copy — fewer
than `max(10, 1 % of rows)` differing rows, but not zero — is held for review instead of being scored.

It needs only the upload and the public inputs (never gold), so it runs in the web process at upload time,
inside the commit that stores the submission (at the head it commits on, so two racing near-copies cannot
both pass). It stays fast at thousands of submissions per track:

- per submission, `<track>/<id>/fingerprint.bin` (private submissions area): one 4-byte hash per row of the
  row's normalised prediction (`Track.prediction_keys`), in public-input order;
- per track, an index of band signatures `nearcopy/<track>/segment-<k>.bin`: the rows are cut into B
  contiguous bands and each band's row hashes are hashed again. Two files that differ in at most D rows
  leave at least B − D bands identical (each differing row spoils at most one band), so with B = 2D + 2 a
  near-copy matches at least D + 2 bands, while unrelated files match few. The check compares the new
  signature with every indexed one in one vectorised pass (B × 4 bytes each, in memory) and reads the full
  fingerprints of the few candidates that match enough bands. Segments hold SEGMENT_SIZE entries; only the
  last, partly filled one is rewritten by an upload, full ones are immutable and cached.
"""

from __future__ import annotations

import hashlib
import math
import struct
import threading
from dataclasses import dataclass, field

import numpy as np

from worker.store import Store
from worker.store.layout import fingerprint_path
from worker.store.layout import nearcopy_segment_path as segment_path

AREA = "submissions"
SEGMENT_SIZE = 256
_HEADER = struct.Struct("<8s8sIH")  # submission id (8 bytes), public-inputs digest (8 bytes), rows, bands


def near_copy_limit(rows: int) -> float:
    """A file differing from an earlier one in fewer rows than this (and more than none) is held."""
    return max(10.0, rows / 100)


def max_differing(rows: int) -> int:
    """The most rows a held near-copy can differ in (k < limit)."""
    return math.ceil(near_copy_limit(rows)) - 1


def band_count(rows: int) -> int:
    return max(1, min(rows, 2 * max_differing(rows) + 2))


def is_near_copy(differing: int, rows: int) -> bool:
    return 0 < differing < near_copy_limit(rows)


def held_reason(differing: int) -> str:
    """What the submitter reads: actionable, naming no other submission or submitter, and no count (the
    number of differing rows would say how many of a probe's rows the guard saw; §3 of the spec)."""
    del differing
    return (
        "differs from an earlier submission in only a few rows; near-copies reveal hidden labels, so they "
        "are held for review. A maintainer will release or reject it; a genuinely new model differs in many "
        "more rows."
    )


COPY_OF_ANOTHER = (
    "identical to an earlier submission by another submitter; held for review. A maintainer will release or "
    "reject it."
)
COPY_OF_CONCEALED = (
    "the same predictions as an earlier submission of yours that is held, rejected or not public; held for "
    "review like it. A maintainer will release or reject it."
)


def inputs_digest(inputs: list[dict]) -> bytes:
    """Identifies the public row set and order the fingerprints refer to (8 bytes)."""
    digest = hashlib.sha256()
    for row in inputs:
        digest.update(str(row["id"]).encode() + b"\0")
    return digest.digest()[:8]


def row_hashes(keys: list[str]) -> np.ndarray:
    """One uint32 per row: a 4-byte BLAKE2b of the row's normalised prediction."""
    joined = b"".join(hashlib.blake2b(k.encode(), digest_size=4).digest() for k in keys)
    return np.frombuffer(joined, dtype="<u4").copy()


def band_signature(hashes: np.ndarray, bands: int) -> np.ndarray:
    """One uint32 per band of contiguous rows (band b: rows b·n//B … (b+1)·n//B − 1)."""
    n = len(hashes)
    edges = [b * n // bands for b in range(bands + 1)]
    raw = hashes.astype("<u4").tobytes()
    return np.frombuffer(
        b"".join(
            hashlib.blake2b(raw[4 * lo : 4 * hi], digest_size=4).digest()
            for lo, hi in zip(edges, edges[1:], strict=False)
        ),
        dtype="<u4",
    ).copy()


@dataclass(frozen=True)
class Fingerprint:
    """A submission's row hashes and band signature for one public row set."""

    digest: bytes
    hashes: np.ndarray

    @property
    def rows(self) -> int:
        return len(self.hashes)

    @property
    def signature(self) -> np.ndarray:
        return band_signature(self.hashes, band_count(self.rows))

    @classmethod
    def of(cls, keys: list[str], inputs: list[dict]) -> Fingerprint:
        return cls(inputs_digest(inputs), row_hashes(keys))


@dataclass
class _Segment:
    ids: list[str] = field(default_factory=list)
    groups: dict[tuple[bytes, int, int], tuple[list[int], np.ndarray]] = field(default_factory=dict)


def encode_entry(submission_id: str, fp: Fingerprint) -> bytes:
    signature = fp.signature
    header = _HEADER.pack(bytes.fromhex(submission_id), fp.digest, fp.rows, len(signature))
    return header + signature.tobytes()


def decode_segment(data: bytes) -> _Segment:
    """A segment's entries grouped by (inputs digest, rows, bands): ids and a (m × bands) matrix."""
    segment = _Segment()
    rows_by_group: dict[tuple[bytes, int, int], list[tuple[int, np.ndarray]]] = {}
    offset = 0
    while offset < len(data):
        sid, digest, rows, bands = _HEADER.unpack_from(data, offset)
        offset += _HEADER.size
        signature = np.frombuffer(data, dtype="<u4", count=bands, offset=offset)
        offset += 4 * bands
        rows_by_group.setdefault((digest, rows, bands), []).append((len(segment.ids), signature))
        segment.ids.append(sid.hex())
    for key, entries in rows_by_group.items():
        segment.groups[key] = ([i for i, _ in entries], np.vstack([s for _, s in entries]))
    return segment


@dataclass(frozen=True)
class NearCopy:
    submission_id: str  # the earlier submission (private: for maintainers only)
    differing: int


@dataclass(frozen=True)
class Match:
    """What the guard found for a fingerprint: the closest near-copy (1 ≤ k < limit), and every earlier
    submission with the very same predictions (k = 0: a copy, whose earlier twin may be held or hidden)."""

    near: NearCopy | None = None
    exact: tuple[str, ...] = ()


class NearCopyIndex:
    """Finds the closest near-copy of a fingerprint among the indexed submissions of a track.

    Full segments are cached (they never change); the last one is read at the revision asked for."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._full: dict[tuple[str, int], _Segment] = {}

    def _segments(self, store: Store, track: str, revision: str | None) -> tuple[list[_Segment], int, bytes]:
        """Every segment at `revision`, the number of the last one, and its raw bytes (b"" if none)."""
        segments, number = [], 0
        while True:
            with self._lock:
                cached = self._full.get((track, number))
            if cached is not None:
                segments.append(cached)
                number += 1
                continue
            raw = store.read(AREA, segment_path(track, number), revision)
            if raw is None:
                return segments, number, b""
            segment = decode_segment(raw)
            segments.append(segment)
            if len(segment.ids) < SEGMENT_SIZE:
                return segments, number, raw
            with self._lock:
                self._full[(track, number)] = segment
            number += 1

    def find(
        self, store: Store, track: str, fp: Fingerprint, revision: str | None = None
    ) -> tuple[Match, IndexAppend]:
        """The near-copy and exact copies of `fp` at `revision`, and how to add `fp` to the index in the
        same commit (`IndexAppend.files(submission_id)`)."""
        segments, last, raw = self._segments(store, track, revision)
        return self._closest(store, track, fp, segments, revision), IndexAppend(track, fp, last, raw)

    def _closest(
        self, store: Store, track: str, fp: Fingerprint, segments: list[_Segment], revision: str | None
    ) -> Match:
        rows, bands = fp.rows, band_count(fp.rows)
        signature = fp.signature
        need = bands - max_differing(rows)  # a near-copy leaves at least this many bands identical
        candidates: list[tuple[int, str]] = []
        for segment in segments:
            group = segment.groups.get((fp.digest, rows, bands))
            if group is None:
                continue
            positions, matrix = group
            matches = np.count_nonzero(matrix == signature, axis=1)
            for k in np.flatnonzero(matches >= need):
                candidates.append((int(matches[k]), segment.ids[positions[k]]))
        best: NearCopy | None = None
        exact: list[str] = []
        for _, sid in sorted(candidates, reverse=True):
            raw = store.read(AREA, fingerprint_path(track, sid), revision)
            if raw is None or len(raw) != 4 * rows:
                continue
            differing = int(np.count_nonzero(np.frombuffer(raw, dtype="<u4") != fp.hashes))
            if differing == 0:
                # The same predictions: no probe by itself, but the search goes on (a copy of a held file
                # re-sent with a near-copy elsewhere is still that near-copy), and the caller decides
                # whether the earlier twin's hold passes on (a copy of a held probe is the probe again).
                exact.append(sid)
            elif is_near_copy(differing, rows) and (best is None or differing < best.differing):
                best = NearCopy(sid, differing)
        return Match(best, tuple(exact))


@dataclass(frozen=True)
class IndexAppend:
    """The files that add one fingerprint to the index: its fingerprint and the grown last segment."""

    track: str
    fp: Fingerprint
    segment: int
    segment_bytes: bytes

    def files(self, submission_id: str) -> dict[str, bytes]:
        return {
            fingerprint_path(self.track, submission_id): self.fp.hashes.astype("<u4").tobytes(),
            segment_path(self.track, self.segment): self.segment_bytes + encode_entry(submission_id, self.fp),
        }
