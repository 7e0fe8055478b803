"""A re-score's outputs, byte for byte: what the worker stores for a file (public result, packed row outcomes,
sealed part) on a private test set and on a public one, pinned as sha256 digests computed with the scorer
BEFORE the re-score speed-ups of issue 26.4 (parse and target-F1 caches, per-references values, class-code
comparisons, slices from the full indicator matrix). A digest that moves means a stored result would
change without a new SCORER_VERSION. The demo data are inputs: regenerating them means re-pinning."""

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
        "private": "995ee6414b57ce455536705e11b559208e37ec6663a4814d4f1670885b807551",
        "public": "ebbf02546abf2ded91fb7841bfbe61c0e8d7c2a2857d778a671ee4a8035d12db",
    },
    ("varm", None, "majority"): {
        "private": "beb75165ebf21caf9d42438cfe2f4faa91f71c792e61ba41c9b1cde9da9b7ff7",
        "public": "9a0506c45993fd850883709f6eca82c62aa90e14b7457f20ebb8746053794308",
    },
    ("varm", None, "char-ngram"): {
        "private": "e5b482cb8558fbe993b839c9ccc5a1dab57132694dcacfbdee6ea6468518f1f1",
        "public": "4a639a6ff953008a1a9fcfbb76c3e4208284912a3b94d340be22703854cf7353",
    },
    ("varm", None, "mixed"): {
        "private": "6d6baa0147c15af0063118ff14c627ac9a2d0485b00a84eca29d1b641753a25b",
        "public": "c4a4a3164860d7c32ed6d85f557f7e009fc6d74ba23632aed686246d48e85aa6",
    },
    ("varm", None, "perturbed"): {
        "private": "274386e601283939d61e590cdb563ff93645bd677b71dc62e9a449c13649dea9",
        "public": "25fe39f6844c89e010b26caabc8d34d920386a97e01b9aabf347ee168232c6a8",
    },
    ("varm", 400, "lexicon"): {
        "private": "08d75fc6361cee4b9339edfaaaa2b84a1b1632b32ae25e6d1c4331bca62624e5",
        "public": "210d08e4076b534329aed52d9906edf52e98328926a06b22d4be0a7f7051315c",
    },
    ("varm", 400, "perturbed"): {
        "private": "2c35c61313aba0d017fc089f7b03fb6d9d373401f3b782a0169173bffb14b76b",
        "public": "1342feba8998e6c183a8382ac224fd24a050ea4e3eb52c0c513085bfc414636b",
    },
    ("cold", None, "lexicon"): {
        "private": "9a99a72eec00a5974b9718d16c290f78945bb4ed889c86de93a395ed903a3240",
        "public": "906e67e7958e4a035ebe80a29043218353b406dea77180a296998633b91a9a84",
    },
    ("cold", None, "perturbed"): {
        "private": "26f4b61b4033220bf3dac2c837bfa816a62a1a271f855e6775b4163c4c24f2de",
        "public": "b0b8c73ccff59d87ffa9050f9ebe19c5aa8e8eebf35e94c48bac6241513fda2a",
    },
    ("toxicn", None, "mixed"): {
        "private": "908ed21ae76eec4c7d45d6c2b7c38f4b53f09e4a5e5a20ab97006916af74f78a",
        "public": "93d98afa620689d7e05a6cfacb4e23320dd236b193e0917a2f0999e47094a7fc",
    },
    ("cntp", None, "perturbed"): {
        "private": "f7d69036ceab4d18df7100f6d06c1269495602b5c4760617baf524b06766b71f",
        "public": "9b49ef2c6657cfad50d3bfa8efd1fba99b26006a197b3f394e5ea0f0183caf16",
    },
}


# OPEN (2026-12-07): the same code gives other last bits for these three public VARM results on a host
# whose numpy has no AVX-512 kernels (this machine that day: AVX2 only, OpenBLAS "Haswell") than on the
# AVX-512 host the digests above were pinned on; OpenBLAS's kernel is not the cause (Haswell, Sandybridge
# and Prescott kernels give the same bytes here). Until the host-dependent operation is found and made exact
# (a SCORER_VERSION bump if the bytes move), each host class keeps its own pinned bytes: a change of the
# scorer's output on either class still fails here.
WITHOUT_AVX512 = {
    ("varm", None, "lexicon"): "00bb7e362a6eedec1aab191d8116e464aac961360c817d13c75f2aa15152f69f",
    ("varm", None, "mixed"): "94ba40e75b5bd9d1000223720af5bebaeaae5ed5e506ccbfd6d6d4381746ee90",
    ("varm", None, "perturbed"): "a6dd8c553a0beade5c7488315187998433ac3b44cd6b49129b64ba127d00360e",
}


def _has_avx512() -> bool:
    from numpy._core._multiarray_umath import __cpu_features__

    return bool(__cpu_features__.get("AVX512F"))


def _expected(key: tuple[str, int | None, str], private: bool) -> str:
    if not private and key in WITHOUT_AVX512 and not _has_avx512():
        return WITHOUT_AVX512[key]
    return PINNED[key]["private" if private else "public"]


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
        assert first == _expected((track, rows, name), private)
