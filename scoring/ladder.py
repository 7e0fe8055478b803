"""The Ladder (Blum & Hardt 2015, parameter-free): when a new submission is released on the live board.

A submitter who sends many files and watches the public-slice score can climb on noise: keep the files that
happened to score higher, combine them, and the public score rises while the private one does not
(bench/label_leak.py measures it). The Ladder shows a new score only when it beats the submitter's released
best by more than the standard error of the paired difference, so a noise step is not shown and teaches
nothing (../shared/spec/disclosure.md §3). Pure functions over row outcomes; the publisher replays each
submitter's chain in submission order (worker/gold/ladder.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Margin:
    """A new submission against its submitter's released best, on the primary metric (public slice)."""

    diff: float  # metric(new) − metric(best)
    se: float  # standard error of the paired difference

    @property
    def released(self) -> bool:
        return self.diff > self.se


def per_row_margin(new: np.ndarray, best: np.ndarray) -> Margin:
    """For a metric that is the mean of a per-row value (accuracy, JREM): the mean of the per-row
    differences and std(d) / √n."""
    d = np.asarray(new, dtype=np.float64) - np.asarray(best, dtype=np.float64)
    if not d.size:
        return Margin(0.0, 0.0)
    return Margin(float(d.mean()), float(d.std() / math.sqrt(d.size)))


def bootstrap_margin(comparison: dict[str, Any]) -> Margin:
    """For any other metric: the paired bootstrap's difference and standard error (one metric's entry of
    `Track.paired_compare`, with the track's resample count and seed)."""
    se = comparison.get("se")
    return Margin(float(comparison["diff"]), float("inf") if se is None else float(se))
