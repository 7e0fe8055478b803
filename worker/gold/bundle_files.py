"""The files an installed reference bundle puts in the store: the references (private) and what the public
may see of the set (its test inputs, the dev split, subset names and sizes, dev-id subset membership).
Used by the installer (worker/gold/install.py) for real and demo sets alike."""

from __future__ import annotations

import json
from pathlib import Path

from scoring.api import read_public_inputs
from scoring.tracks import get_track
from worker.store import codec, layout


def reference_files(track: str, bundle: Path) -> dict[str, bytes]:
    files = {layout.references_file(track): (bundle / "test.jsonl").read_bytes()}
    for subset in sorted((bundle / "subsets").glob("*.jsonl")):
        files[layout.reference_subset(track, subset.name)] = subset.read_bytes()
    return files


def public_files(track: str, bundle: Path) -> dict[str, bytes]:
    inputs = bundle / "public" / "test_inputs.jsonl"
    if inputs.is_file():
        data = inputs.read_bytes()
        read_public_inputs(data)  # refuse to publish a malformed inputs file
    else:
        track_obj = get_track(track)
        refs = track_obj.load_references(bundle / "test.jsonl", subsets_dir(bundle))
        data = b"".join(
            json.dumps(row, ensure_ascii=False).encode() + b"\n" for row in track_obj.public_inputs(refs)
        )
    files = {layout.public_file(track, "test_inputs.jsonl"): data}
    if (bundle / "dev.jsonl").is_file():
        dev = (bundle / "dev.jsonl").read_bytes()
        files[layout.public_file(track, "dev.jsonl")] = dev
        dev_subsets = bundle / "public" / "dev_subsets.json"
        if dev_subsets.is_file():
            data = dev_subsets.read_bytes()
            _check_dev_subsets(data, dev)  # refuse to publish anything but dev-id membership
            files[layout.public_file(track, "dev_subsets.json")] = data
    sizes = {
        p.stem: sum(1 for line in p.read_bytes().splitlines() if line.strip())
        for p in sorted((bundle / "subsets").glob("*.jsonl"))
    }
    files[layout.public_file(track, "subsets.json")] = codec.line({"subsets": sizes})
    return files


def _check_dev_subsets(data: bytes, dev: bytes) -> None:
    """`{"<subset>": ["<dev id>", ...]}` naming only ids of the public dev split (never a test id)."""
    membership = json.loads(data)
    dev_ids = {json.loads(line).get("id") for line in dev.splitlines() if line.strip()}
    if not isinstance(membership, dict) or not all(
        isinstance(ids, list) and all(isinstance(i, str) and i in dev_ids for i in ids)
        for ids in membership.values()
    ):
        raise ValueError("public/dev_subsets.json must map subset names to lists of dev ids")


def subsets_dir(bundle: Path) -> Path | None:
    """A bundle's `subsets/` folder, None when it has none."""
    return bundle / "subsets" if (bundle / "subsets").is_dir() else None
