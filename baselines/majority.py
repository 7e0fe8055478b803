"""Majority baseline: ignores the text and predicts what is most frequent in the train split."""

from __future__ import annotations

from collections import Counter

from baselines.rationale import render
from scoring.protocol import FIELDS


def majority_record(train: list[dict]) -> dict[str, str]:
    """The most frequent complete six-field record in train (ties broken by the record's own ordering)."""
    counts = Counter(tuple(r[f] for f in FIELDS) for r in train)
    best = max(counts.items(), key=lambda kv: (kv[1], kv[0]))[0]
    return dict(zip(FIELDS, best, strict=True))


def varm_output(train: list[dict]) -> str:
    return render("majority", majority_record(train))


def majority_label(train: list[dict]) -> int:
    """The majority train label; 0 on a tie (flagging nothing is the conservative default)."""
    ones = sum(int(r["label"]) for r in train)
    return int(ones > len(train) - ones)
