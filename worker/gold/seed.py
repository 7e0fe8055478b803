"""First-start seeding of the embedded default from `data/demo/<track>/` (idempotent).

Each demo track is installed as a `demo` reference set (worker/gold/install.py: references, manifest, public
files `test_inputs.jsonl`, `dev.jsonl`, `subsets.json` (names and sizes only), `dev_subsets.json` (cue-subset
membership of DEV ids, when the bundle has `public/dev_subsets.json`), `reference_set.json`), and every demo
baseline `<track>/baselines/<name>.test.jsonl` is submitted as `baseline` with is_baseline set. A track with
a real reference set installed is skipped. A second run finds everything present (and the baselines as
duplicates) and writes nothing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from scoring.api import read_public_inputs
from scoring.tracks import TRACK_NAMES, get_track
from worker.service import BASELINE_SUBMITTER, Service
from worker.store import Store, codec, layout

DEMO_DIR = Path(os.environ.get("DEMO_DIR") or Path(__file__).resolve().parents[2] / "data" / "demo")


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
        refs = track_obj.load_references(bundle / "test.jsonl", _subsets(bundle))
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


def _subsets(bundle: Path) -> Path | None:
    return bundle / "subsets" if (bundle / "subsets").is_dir() else None


def _baseline_info(demo_dir: Path) -> dict[str, dict]:
    path = demo_dir / "baselines.json"
    if not path.is_file():
        return {}
    return {b["name"]: b for b in json.loads(path.read_text()).get("baselines", [])}


class SeedError(Exception):
    """Seeding was asked for something it cannot do (no demo data, a baseline the scorer rejects)."""


def seed(store: Store, service: Service, demo_dir: Path = DEMO_DIR) -> dict:
    """Install each demo track's reference set (unless the track has a real one) and submit its baselines.

    Returns {"tracks": {track: what happened}, "baselines": ["track/name", ...] newly submitted}; a second
    run reports every track as already present and submits nothing. Raises SeedError when `demo_dir`
    holds no demo track or a baseline is rejected.
    """
    from worker.gold.install import DEMO, REAL, current_set, install

    demo_dir = Path(demo_dir)
    tracks = [t for t in TRACK_NAMES if (demo_dir / t / "test.jsonl").is_file()]
    if not tracks:
        raise SeedError(
            f"{demo_dir} holds no demo track (expected <track>/test.jsonl for one of "
            f"{', '.join(TRACK_NAMES)})"
        )
    info = _baseline_info(demo_dir)
    done: dict[str, str] = {}
    submitted: list[str] = []
    failures: list[str] = []
    for track in tracks:
        current = current_set(store, track, demo_dir)
        if current is not None and current["kind"] == REAL:
            done[track] = f"skipped: a real reference set is installed (sha256 {current['sha256'][:12]})"
            continue
        installed = install(store, track, demo_dir / track, kind=DEMO, demo_dir=demo_dir)
        done[track] = "demo installed" if installed.changed else "demo already present"
        for path in sorted((demo_dir / track / "baselines").glob("*.test.jsonl")):
            name = path.name.removesuffix(".test.jsonl")
            about = info.get(name, {})
            description = " ".join(
                x
                for x in (about.get("description", ""), about.get("model_type", ""), about.get("setting", ""))
                if x
            )
            out = service.submit(
                identity=BASELINE_SUBMITTER,
                track=track,
                data=path.read_bytes(),
                metadata={
                    "model_name": f"baseline: {name}",
                    "organisation": "demo",
                    "description": description[:2000],
                },
                is_baseline=True,
            )
            if out["status"] == "rejected":
                first = "; ".join(str(e.get("message")) for e in out["report"]["errors"][:3])
                failures.append(f"baseline {track}/{name} was rejected: {first}")
            elif not out["duplicate"]:
                submitted.append(f"{track}/{name}")
    if failures:
        raise SeedError("; ".join(failures))
    return {"tracks": done, "baselines": submitted}
