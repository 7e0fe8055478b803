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

from scoring.names import TRACK_NAMES
from worker.service import BASELINE_SUBMITTER, Service
from worker.store import Store

DEMO_DIR = Path(os.environ.get("DEMO_DIR") or Path(__file__).resolve().parents[2] / "data" / "demo")


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
                first = "; ".join(str(e.get("message")) for e in (out["report"] or {}).get("errors", [])[:3])
                failures.append(f"baseline {track}/{name} was rejected: {first}")
            elif not out["duplicate"]:
                submitted.append(f"{track}/{name}")
    if failures:
        raise SeedError("; ".join(failures))
    return {"tracks": done, "baselines": submitted}
