"""The near-copy probe guard's cost at N = 100 / 1,000 / 5,000 earlier submissions on one track.

    .venv/bin/python bench/bench_nearcopy.py [--rows 5323] [--sizes 100,1000,5000] [--repeat 20]

Builds a LocalStore whose submissions area holds N earlier submissions of a COLD-sized track (fingerprint
files and the band-signature index segments, written in batches as `Service.submit` writes them), then times
`NearCopyIndex.find` — the check `Service.submit` runs inside its commit — for a new unrelated file and for a
one-row flip of an earlier one: cold (a fresh web process reading every index segment) and warm (full
segments cached, as in a running process). Earlier files are simulated models: a shared latent labelling
with 10–25 % of rows changed per model, so unrelated files agree on most rows, as real systems do. Also
prints the bytes stored per submission and the time to fingerprint one upload. Figures only, no assertions.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scoring.toxitrace.tracks import COLD  # noqa: E402
from worker import nearcopy  # noqa: E402
from worker.store.local import LocalStore  # noqa: E402

TRACK = "cold"


def _model(rng: np.random.Generator, latent: np.ndarray) -> np.ndarray:
    flip = rng.random(len(latent)) < rng.uniform(0.10, 0.25)
    return latent ^ flip


def _fingerprint(labels: np.ndarray, inputs: list[dict]) -> nearcopy.Fingerprint:
    return nearcopy.Fingerprint.of([str(int(v)) for v in labels], inputs)


def build(
    store: LocalStore, n: int, rows: int, inputs: list[dict], rng: np.random.Generator, latent: np.ndarray
) -> list[np.ndarray]:
    """N earlier submissions, committed a segment's worth at a time (so the bench does not take hours)."""
    index = nearcopy.NearCopyIndex()
    models, pending = [], {}
    for k in range(n):
        labels = _model(rng, latent)
        models.append(labels)
        sid = f"{k:016x}"
        _, append = index.find(store, TRACK, _fingerprint(labels, inputs))
        # find() read the store's last segment; grow it in memory until the batch is committed
        segment = nearcopy.segment_path(TRACK, append.segment)
        base = pending.get(segment, append.segment_bytes)
        files = nearcopy.IndexAppend(TRACK, append.fp, append.segment, base).files(sid)
        pending.update(files)
        if len(pending) >= 2 * 128 or k == n - 1 or (k + 1) % nearcopy.SEGMENT_SIZE == 0:
            store.commit("submissions", pending, [], f"bench batch {k}")
            pending = {}
    return models


def timed(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def measure(n: int, inputs: list[dict], rng: np.random.Generator, latent: np.ndarray, repeat: int) -> dict:
    """Check times (cold / warm), whether the one-row flip was found, and full fingerprints read."""
    rows = len(inputs)
    with tempfile.TemporaryDirectory() as tmp:
        store = LocalStore(tmp, areas=("submissions",))
        models = build(store, n, rows, inputs, rng, latent)
        fresh = _fingerprint(_model(rng, latent), inputs)
        probe_labels = models[n // 2].copy()
        probe_labels[rows // 3] ^= True
        probe = _fingerprint(probe_labels, inputs)
        cold, _ = timed(lambda: nearcopy.NearCopyIndex().find(store, TRACK, fresh), 3)
        index = nearcopy.NearCopyIndex()
        index.find(store, TRACK, fresh)
        reads = Counter()
        real_read = store.read

        def counting(area, path, revision=None):
            if path.endswith("/fingerprint.bin"):
                reads["n"] += 1
            return real_read(area, path, revision)

        store.read = counting  # type: ignore[method-assign]
        warm, _ = timed(lambda: index.find(store, TRACK, fresh), repeat)
        reads_fresh, reads["n"] = reads["n"] // repeat, 0
        warm_probe, (match, _) = timed(lambda: index.find(store, TRACK, probe), repeat)
        near = match.near
        return {
            "cold": cold,
            "warm": max(warm, warm_probe),
            "found": f"k={near.differing}" if near else "MISSED",
            "reads_fresh": reads_fresh,
            "reads_probe": reads["n"] // repeat,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5323, help="rows per file (COLD test: 5,323)")
    parser.add_argument("--sizes", default="100,1000,5000")
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    rows = args.rows
    inputs = [{"id": f"cold-test-{k:05d}", "text": ""} for k in range(rows)]
    rng = np.random.default_rng(0)
    latent = rng.integers(0, 2, rows).astype(bool)
    bands = nearcopy.band_count(rows)
    entry = len(nearcopy.encode_entry("0" * 16, _fingerprint(latent, inputs)))
    print(
        f"rows per file {rows:,}; near-copy: 0 < k < {nearcopy.near_copy_limit(rows):g} differing rows "
        f"(k <= {nearcopy.max_differing(rows)}); {bands} bands of ~{rows // bands} rows"
    )
    print(
        f"stored per submission: fingerprint {4 * rows:,} B (read only for candidates) + index entry "
        f"{entry} B (all held in memory by the web process)"
    )
    data = "".join(
        json.dumps({"id": i["id"], "label": int(v)}) + "\n" for i, v in zip(inputs, latent, strict=True)
    ).encode()
    fp_time, _ = timed(
        lambda: _fingerprint(np.array([int(k) for k in COLD.prediction_keys(data, inputs)]), inputs), 5
    )
    print(f"fingerprinting one upload (parse + {rows:,} row hashes + band signature): {fp_time * 1e3:.1f} ms")
    print()
    print(
        f"{'N earlier':>10} | {'check, cold':>12} | {'check, warm':>12} | {'near-copy found':>16} | "
        f"{'candidates read':>15} | {'index in memory':>15}"
    )
    for n in (int(x) for x in args.sizes.split(",")):
        m = measure(n, inputs, rng, latent, args.repeat)
        print(
            f"{n:>10,} | {m['cold'] * 1e3:>9.1f} ms | {m['warm'] * 1e3:>9.2f} ms | {m['found']:>16} | "
            f"{m['reads_fresh']:>6} / {m['reads_probe']:<6} | {n * (bands * 4 + 16) / 1e6:>12.2f} MB"
        )
    print("\ncandidates read: full fingerprints read for an unrelated upload / for the one-row flip")


if __name__ == "__main__":
    main()
