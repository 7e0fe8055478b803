"""The track registry: one `Track` object per leaderboard track (ARCHITECTURE.md §1.3).

Each track describes itself (name, title, primary metric, metric specs in board order, headline metrics);
the registries below are derived from the track objects. VARM lives in `scoring.varm`; the ToxiTrace tracks
(cold, toxicn, cntp) in `scoring.toxitrace.tracks`, which may be absent (VARM then works alone). Neither
imports this module, so the registry sits above them with no import circle.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from .metrics_spec import MetricSpec
from .names import MODEL_TYPES, SETTINGS, TRACK_NAMES
from .problems import Problem
from .report import Report
from .varm import VARM_TRACK

__all__ = [
    "METRIC_SPECS",
    "MODEL_TYPES",
    "PRIMARY_METRICS",
    "SETTINGS",
    "TRACK_NAMES",
    "TRACK_TITLES",
    "Track",
    "get_track",
    "metric_spec",
    "metric_specs",
]


class Track(Protocol):
    # Read-only: the tracks are frozen dataclasses or class attributes.
    @property
    def name(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def primary_metric(self) -> str: ...

    @property
    def headline_metrics(self) -> tuple[str, ...]: ...  # `headline_keys(metric_specs)`

    @property
    def metric_specs(self) -> tuple[MetricSpec, ...]: ...  # every metric, in board order

    def load_references(self, path: Path, subsets_dir: Path | None = None) -> Any: ...

    # Every problem of a reference bundle (a folder or a test file), for `check-references` and installs.
    def check_reference_bundle(self, directory: Path) -> list[Problem]: ...

    def public_inputs(self, refs: Any) -> list[dict[str, Any]]: ...

    def check_predictions(
        self, data: bytes, inputs: list[dict[str, Any]], *, split: str = "test"
    ) -> Report: ...

    def prediction_keys(self, data: bytes, inputs: list[dict[str, Any]]) -> list[str]: ...

    def check_with_keys(
        self, data: bytes, inputs: list[dict[str, Any]]
    ) -> tuple[Report, list[str] | None]: ...

    def score(
        self, refs: Any, data: bytes, *, bootstrap: int = 1000, seed: int = 0, disclose: bool = True
    ) -> dict[str, Any]: ...

    def row_outcomes(self, refs: Any, data: bytes) -> dict[str, list[Any]]: ...

    # (score(...), row_outcomes(...)), the file parsed once
    def score_with_rows(
        self, refs: Any, data: bytes, *, bootstrap: int = 1000, seed: int = 0
    ) -> tuple[dict[str, Any], dict[str, list[Any]]]: ...

    # {"full" | slice name: (result, row outcomes)}; `full_rows=False`: the full test's row outcomes are
    # not built ({}); `arrays=True`: the row outcomes' numeric columns may be numpy arrays of the same
    # values (for a caller that packs them, worker/gold/outcomes.py)
    def score_slices(
        self,
        refs: Any,
        data: bytes,
        slices: Any,
        *,
        bootstrap: Any,
        seed: int = 0,
        full_rows: bool = True,
        arrays: bool = False,
    ) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]: ...

    def paired_compare(
        self,
        a: dict[str, list[Any]],
        b: dict[str, list[Any]],
        *,
        bootstrap: int,
        seed: int,
        metrics: Sequence[str] | None = None,  # None: every headline metric; else only these
    ) -> dict[str, Any]: ...

    # paired_compare(a, b) == paired_compare_prepared(prepare_compare(a), prepare_compare(b)): the prepared
    # form is decoded once, for the many comparisons of tie groups. prepare_compare also takes the numeric
    # columns as numpy arrays of the same values.
    def prepare_compare(self, rows: dict[str, Any]) -> Any: ...

    def paired_compare_prepared(
        self, a: Any, b: Any, *, bootstrap: int, seed: int, metrics: Sequence[str] | None = None
    ) -> dict[str, Any]: ...

    # The Ladder (scoring/ladder.py): `new` against its submitter's released best, both prepared.
    def release_margin(self, new: Any, best: Any, *, bootstrap: int, seed: int) -> Any: ...


def _installed() -> dict[str, Track]:
    tracks: dict[str, Track] = {VARM_TRACK.name: VARM_TRACK}
    try:
        from .toxitrace.tracks import TRACKS
    except ModuleNotFoundError as error:
        if not (error.name or "").startswith(f"{__package__}.toxitrace"):
            raise  # a missing dependency inside the package is a real bug: don't hide it
    else:
        tracks.update(TRACKS)
    return {name: tracks[name] for name in TRACK_NAMES if name in tracks}


_TRACKS = _installed()
# Said once, by the track objects: the UI, the REST API and the CLI all read these.
TRACK_TITLES = {name: t.title for name, t in _TRACKS.items()}
PRIMARY_METRICS = {name: t.primary_metric for name, t in _TRACKS.items()}
METRIC_SPECS = {name: t.metric_specs for name, t in _TRACKS.items()}


def get_track(name: str) -> Track:
    """The track object for `name`; ValueError for an unknown or unavailable track."""
    if name not in TRACK_NAMES:
        raise ValueError(f"unknown track {name!r}; expected one of {', '.join(TRACK_NAMES)}")
    if name not in _TRACKS:
        raise ValueError(f"track {name!r} is not available: scoring.toxitrace is not installed")
    return _TRACKS[name]


def metric_specs(track: str) -> tuple[MetricSpec, ...]:
    """Every metric of `track` in board order (headline first); () for an unknown track."""
    return METRIC_SPECS.get(track, ())


def metric_spec(track: str, key: str) -> MetricSpec:
    """The spec of `key` on `track`; a key the track does not list (a metric added later) gets a name
    derived from its path, higher-is-better, as a share."""
    for m in metric_specs(track):
        if m.key == key:
            return m
    name = key.replace("_", " ").replace(".", " · ")
    return MetricSpec(key, name[:1].upper() + name[1:], name)
