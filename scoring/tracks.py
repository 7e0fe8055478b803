"""The track registry: one `Track` object per leaderboard track (ARCHITECTURE.md §1.3).

VARM lives here (`scoring.varm`); the ToxiTrace tracks (cold, toxicn, cntp) come from
`scoring.toxitrace.tracks.TRACKS`, imported lazily so VARM works even when that package is absent.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from .problems import Problem
from .report import Report

__all__ = ["MODEL_TYPES", "PRIMARY_METRICS", "SETTINGS", "TRACK_NAMES", "TRACK_TITLES", "Track", "get_track"]

TRACK_NAMES = ("varm", "cold", "toxicn", "cntp")
# Said once, here: the Track objects, the UI, the REST API and the CLI all read these.
TRACK_TITLES = {"varm": "VARM-Bench", "cold": "COLD", "toxicn": "ToxiCN", "cntp": "CNTP"}
PRIMARY_METRICS = {"varm": "jrem", "cold": "f1", "toxicn": "f1", "cntp": "spans.overlap_f1"}
# Submission metadata a board filters by (a submitter may leave either empty; worker.records validates).
MODEL_TYPES = ("open", "closed")
SETTINGS = ("zero-shot", "taxonomy", "fine-tuned")


class Track(Protocol):
    # Read-only: the tracks are frozen dataclasses or class attributes.
    @property
    def name(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def primary_metric(self) -> str: ...

    @property
    def headline_metrics(self) -> tuple[str, ...]: ...

    def load_references(self, path: Path, subsets_dir: Path | None = None) -> Any: ...

    # Every problem of a reference bundle (a folder or a test file), for `check-references` and installs.
    def check_reference_bundle(self, directory: Path) -> list[Problem]: ...

    def public_inputs(self, refs: Any) -> list[dict]: ...

    def check_predictions(self, data: bytes, inputs: list[dict], *, split: str = "test") -> Report: ...

    def prediction_keys(self, data: bytes, inputs: list[dict]) -> list[str]: ...

    def check_with_keys(self, data: bytes, inputs: list[dict]) -> tuple[Report, list[str] | None]: ...

    def score(
        self, refs: Any, data: bytes, *, bootstrap: int = 1000, seed: int = 0, disclose: bool = True
    ) -> dict: ...

    def row_outcomes(self, refs: Any, data: bytes) -> dict[str, list]: ...

    def score_with_rows(
        self, refs: Any, data: bytes, *, bootstrap: int = 1000, seed: int = 0
    ) -> tuple[dict, dict[str, list]]: ...  # (score(...), row_outcomes(...)), the file parsed once

    def score_slices(
        self, refs: Any, data: bytes, slices: Any, *, bootstrap: Any, seed: int = 0
    ) -> dict[str, tuple[dict, dict[str, list]]]: ...  # {"full" | slice name: (result, row outcomes)}

    def paired_compare(
        self,
        a: dict[str, list],
        b: dict[str, list],
        *,
        bootstrap: int,
        seed: int,
        metrics: Sequence[str] | None = None,  # None: every headline metric; else only these
    ) -> dict: ...

    # paired_compare(a, b) == paired_compare_prepared(prepare_compare(a), prepare_compare(b)): the prepared
    # form is decoded once, for the many comparisons of tie groups. prepare_compare also takes the numeric
    # columns as numpy arrays of the same values.
    def prepare_compare(self, rows: dict[str, Any]) -> Any: ...

    def paired_compare_prepared(
        self, a: Any, b: Any, *, bootstrap: int, seed: int, metrics: Sequence[str] | None = None
    ) -> dict: ...

    # The Ladder (scoring/ladder.py): `new` against its submitter's released best, both prepared.
    def release_margin(self, new: Any, best: Any, *, bootstrap: int, seed: int) -> Any: ...


def get_track(name: str) -> Track:
    """The track object for `name`; ValueError for an unknown or unavailable track."""
    if name not in TRACK_NAMES:
        raise ValueError(f"unknown track {name!r}; expected one of {', '.join(TRACK_NAMES)}")
    if name == "varm":
        from .varm import VARM_TRACK

        return VARM_TRACK
    try:
        from .toxitrace.tracks import TRACKS
    except ModuleNotFoundError as error:
        if not (error.name or "").startswith(f"{__package__}.toxitrace"):
            raise  # a missing dependency inside the package is a real bug: don't hide it
        raise ValueError(f"track {name!r} is not available: scoring.toxitrace is not installed") from None
    if name not in TRACKS:
        raise ValueError(f"track {name!r} is not available in scoring.toxitrace")
    return TRACKS[name]
