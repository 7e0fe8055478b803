"""Where the real COLD release (Apache-2.0, not shipped with the project) is on this machine.

The workplace keeps it at ../shared next to the checkout; a clone elsewhere (a CI run) finds it through
$SHARED_DIR, else at /work/shared. Tests that need it skip, saying where they looked, when it is absent.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_FROM_ENV = [Path(os.environ["SHARED_DIR"])] if os.environ.get("SHARED_DIR") else []
_CANDIDATES = [ROOT.parent / "shared", *_FROM_ENV, Path("/work/shared")]


def cold_release() -> Path:
    """The folder holding train.csv, dev.csv and test.csv of the COLD release (the first candidate that has
    them; the first candidate's path when none does, so a skip message names it)."""
    for shared in _CANDIDATES:
        folder = shared / "data" / "real" / "COLDataset" / "COLDataset"
        if (folder / "test.csv").is_file():
            return folder
    return _CANDIDATES[0] / "data" / "real" / "COLDataset" / "COLDataset"
