"""Figures recorded by the reliability tests, collected by bench/reliability.py into docs/RELIABILITY.md.

Each test writes `<dir>/<name>.json` (dir: $RELIABILITY_FIGURES_DIR, default test-output/reliability).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def figures_dir() -> Path:
    return Path(os.environ.get("RELIABILITY_FIGURES_DIR") or ROOT / "test-output" / "reliability")


def record(name: str, **values: object) -> None:
    """Write the figures of one test (best effort: never fails a test)."""
    try:
        out = figures_dir()
        out.mkdir(parents=True, exist_ok=True)
        payload = {"name": name, "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **values}
        text = json.dumps(payload, indent=2, ensure_ascii=False, default=str) + "\n"
        (out / f"{name}.json").write_text(text)
    except OSError:
        pass


def load_all(directory: Path | None = None) -> dict[str, dict]:
    directory = directory or figures_dir()
    out = {}
    for path in sorted(directory.glob("*.json")):
        try:
            out[path.stem] = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
    return out
