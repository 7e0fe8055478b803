"""Reading demo splits and writing prediction files (canonical JSONL, like the generator)."""

from __future__ import annotations

import json
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parent.parent / "data" / "demo"


def prediction_path(out: Path, track: str, name: str, split: str) -> Path:
    """Where a baseline's predictions for one split live: ``<out>/<track>/baselines/<name>.<split>.jsonl``."""
    return out / track / "baselines" / f"{name}.{split}.jsonl"


def read_jsonl(path: Path) -> list[dict]:
    """All objects of a UTF-8 JSONL file, blank lines skipped."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def write_jsonl(path: Path, rows: list[dict]) -> None:
    """Write rows as canonical JSONL (key order kept, ``ensure_ascii=False``, trailing newline)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8"))


def inputs(rows: list[dict]) -> list[dict]:
    """Only what a participant sees: ``{"id", "text"}``. Baselines never read gold fields of dev/test."""
    return [{"id": r["id"], "text": r["text"]} for r in rows]
