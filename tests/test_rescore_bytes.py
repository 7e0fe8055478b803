"""A re-score's outputs, byte for byte: what the worker stores for a file (public result, packed row outcomes,
sealed part) on a private test set and on a public one, pinned as sha256 digests (the same bytes with another
host's BLAS kernel and SIMD level: tests/test_blas_threads.py).

The digests were first computed with the scorer BEFORE the re-score speed-ups of issue 26.4 (parse and
target-F1 caches, per-references values, class-code comparisons, slices from the full indicator matrix) and
re-pinned at scorer 4.0.1, whose only change (checked field by field on every case below) was the last bits
of the public T-F1 and CNTP IoU intervals, now summed in an order no CPU kernel chooses. A digest that moves
means a stored result would change without a new SCORER_VERSION. The demo data are inputs: regenerating them
means re-pinning."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from pathlib import Path

import pytest

from tests.factories import DEMO, mixed_predictions

KEY = bytes(range(32))  # a fixed slice key: fixed slices, deterministic seals

# (track, test rows or None for all, file) -> {"private": digest, "public": digest}
PINNED = {
    ("varm", None, "lexicon"): {
        "private": "531e7354cc454e1f24055a60f3f5dab576c4d1b39a44744ad27107282e215e7b",
        "public": "67cda30a123d824760c7e7c5e138343240a58627005d8832213c2ebd6c4ac712",
    },
    ("varm", None, "majority"): {
        "private": "a6b3305476cd438f8afe0b21e524e1aeaa921b3a0e6ab87cf9c27cb416e34f6b",
        "public": "92994b9a214851902e74be9411e3ad2769d0d134346ee731142541131ea0f576",
    },
    ("varm", None, "char-ngram"): {
        "private": "d7951c5aaffdd6889f208f2dbfb669348e71b07b04e60b6e2706aa2c964a22ad",
        "public": "524d91c0745b6a14031eb7af0ef8e60eb4b110c604f56567718260ffae98e985",
    },
    ("varm", None, "mixed"): {
        "private": "4912758bff9731514908301eb771261533c588f1d1a98acd92ffb608c6bb5fef",
        "public": "31e736b32a7d00789e1f57e7afba211182560e7de482b24bb0520bd4cf755a18",
    },
    ("varm", None, "perturbed"): {
        "private": "bf571a6248f28b81e507840e9f9f37cb0f5aa9027019d4003a6cc75011d2c43a",
        "public": "58655c887c8d5cbf0f50358c15a99fc36c0977a30a5af97c6db3d793cc01c682",
    },
    ("varm", 400, "lexicon"): {
        "private": "d088d7bfc0953b1b1a5ee80b77d83d5573b80c3863bc3226babdb3abeb9c20d2",
        "public": "ebec3a9af20d38c1f367f1d75686a9a45830a4051b90b4c5573c6febe400452a",
    },
    ("varm", 400, "perturbed"): {
        "private": "bbbc5409fad7dbcd72e01acc2163db0cc474a1e2dbcc595514aeb8aaa511bc0f",
        "public": "91cac343fcd999fe0e3185308e7e03f5cbe63524b702d8d28091ca8ff8d13f62",
    },
    ("cold", None, "lexicon"): {
        "private": "d8723f557fa6b013a19c2076dbf543b71e1762553d70fc2d92e025fb9b7d35e1",
        "public": "7ebff34226e17f6f8a0d45e7217d38661f1cb4e0b87a80c0ea1cb7a39d4ae56a",
    },
    ("cold", None, "perturbed"): {
        "private": "dc419d0f1a9e05572ba79b37cca69f29d3b66b83ee3eed7ca3d7a71f611bec2d",
        "public": "42a6ba91d096718b6ef530a09b91c50e3ad5001fd1076d6b48d4853df951e03a",
    },
    ("toxicn", None, "mixed"): {
        "private": "7a520b52112ed95243f417d8308ed3ac72d916e5fc5dc5635d96c5fcff742706",
        "public": "5c3877e7b35a8d39757819b2cd40318c455c99d9c9e8caa9e6f6496d721c194f",
    },
    ("cntp", None, "perturbed"): {
        "private": "97dc23fd8b3556ed723ca42876c8cdc45d6f0ffbc3682f4ba5177f7430b89d07",
        "public": "b88632e36194bed47e37ef936dba64277506198b7b54432f211bb3d033959646",
    },
}


def _cut(track: str, rows: int | None, tmp: Path) -> Path:
    """The demo bundle, or its first `rows` test rows (public inputs and subsets with them)."""
    if rows is None:
        return DEMO / track
    out = tmp / track
    shutil.copytree(DEMO / track, out, ignore=shutil.ignore_patterns("baselines", "train.jsonl"))
    kept = {json.loads(line)["id"] for line in (out / "test.jsonl").read_text().splitlines()[:rows]}
    for path in [out / "test.jsonl", out / "public" / "test_inputs.jsonl", *out.glob("subsets/*")]:
        if path.exists():
            lines = path.read_text().splitlines()
            path.write_text("".join(line + "\n" for line in lines if json.loads(line)["id"] in kept))
    return out


def _pinned(track: str, bundle: Path, private: bool):
    from scoring.slices import public_mask, slice_rows
    from scoring.tracks import get_track
    from worker.gold.references import PRIVATE, PUBLIC, Pinned

    subsets = bundle / "subsets"
    refs = get_track(track).load_references(bundle / "test.jsonl", subsets if subsets.is_dir() else None)
    if not private:
        return Pinned(track, "rev", refs, "ab" * 32, PUBLIC)
    slices = slice_rows(public_mask(KEY, refs.ids, refs.strata()))
    return Pinned(track, "rev", refs, "ab" * 32, PRIVATE, slices, KEY)


def _file(track: str, rows: int | None, name: str) -> bytes:
    """A demo baseline, a mixed file (`mixed`), or a mixed file with every 7th output broken and the lines
    shuffled (`perturbed`), cut to the first `rows` test rows."""
    if name in ("mixed", "perturbed"):
        lines = mixed_predictions(track, 0.4).decode().splitlines()
    else:
        lines = (DEMO / track / "baselines" / f"{name}.test.jsonl").read_text().splitlines()
    lines = lines[:rows]
    if name == "perturbed":
        rng = random.Random(7)
        for k in range(0, len(lines), 7):
            obj = json.loads(lines[k])
            if "output" in obj:
                obj["output"] = obj["output"][: len(obj["output"]) // 2]
            else:
                obj["label"] = 1 - obj["label"] if isinstance(obj.get("label"), int) else obj.get("label")
            lines[k] = json.dumps(obj, ensure_ascii=False)
        rng.shuffle(lines)
    return ("\n".join(lines) + "\n").encode()


def digest(pinned, data: bytes) -> str:
    """sha256 over the sha256 of each file the worker stores for `data`."""
    from worker.gold.outcomes import pack
    from worker.gold.scoring_job import compute
    from worker.gold.sealed import seal
    from worker.submissions import dumps

    result, rows, sealed = compute(pinned, data)
    parts = [dumps(result), dumps(pack(rows))]
    if sealed is not None:
        parts.append(seal(pinned.slice_key, sealed))
    return hashlib.sha256(b"".join(hashlib.sha256(p).digest() for p in parts)).hexdigest()


@pytest.mark.parametrize(("track", "rows", "name"), list(PINNED))
def test_rescore_outputs_are_byte_identical_to_the_pinned_digests(
    track: str, rows: int | None, name: str, tmp_path: Path
) -> None:
    bundle = _cut(track, rows, tmp_path)
    data = _file(track, rows, name)
    for private in (True, False):
        pinned = _pinned(track, bundle, private)
        first = digest(pinned, data)
        assert digest(pinned, data) == first  # the second time through every per-process cache
        assert first == PINNED[(track, rows, name)]["private" if private else "public"]
