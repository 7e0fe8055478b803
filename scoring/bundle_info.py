"""`bundle.json`: what an importer knows about a reference bundle that the rows do not say.

Its `test_status` (../shared/spec/disclosure.md §1) is `public` when the release the bundle was imported
from publishes its test labels (the real COLD and ToxiCN releases do), `private` otherwise (a VARM-Bench test
held by its maintainers). `python -m worker install` records it in the set's manifest unless `--test-status`
says otherwise; a bundle without the file is private.
"""

from __future__ import annotations

import json
from pathlib import Path

FILE = "bundle.json"
TEST_STATUSES = ("private", "public")


def write(out_dir: Path, *, dataset: str, test_status: str, source: str) -> Path:
    if test_status not in TEST_STATUSES:
        raise ValueError(f"test_status must be one of {', '.join(TEST_STATUSES)}")
    path = Path(out_dir) / FILE
    body = {"dataset": dataset, "test_status": test_status, "source": source}
    path.write_text(json.dumps(body, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return path


def test_status(bundle: Path) -> str | None:
    """The bundle's recorded test status; None when it records none (or the file is unreadable)."""
    path = Path(bundle) / FILE
    try:
        status = json.loads(path.read_text(encoding="utf-8")).get("test_status") if path.is_file() else None
    except (OSError, ValueError, AttributeError):
        return None
    return status if status in TEST_STATUSES else None
