"""Warnings about a ToxiTrace split layout that do not make it invalid (the importer and the reference
checker report the same ones). Texts are never quoted: counts and line numbers only."""

from __future__ import annotations

from collections import Counter

SPLIT_ORDER = ("train", "dev", "test")


def split_warnings(texts: dict[str, list[str]]) -> list[str]:
    """`texts`: split name -> the texts of its rows, in file order."""
    warnings = []
    if not texts.get("test"):
        warnings.append(
            "no test split: the leaderboard scores the test split, so this bundle cannot be "
            "installed as it is"
        )
    for split in sorted(texts, key=lambda s: (SPLIT_ORDER.index(s) if s in SPLIT_ORDER else 9, s)):
        counts = Counter(texts[split])
        repeated = sum(n - 1 for n in counts.values() if n > 1)
        if repeated:
            distinct = sum(1 for n in counts.values() if n > 1)
            warnings.append(
                f"{split}: {repeated:,} row(s) repeat a text that occurs earlier in the same "
                f"split ({distinct:,} distinct texts)"
            )
    test = set(texts.get("test", ()))
    for other in ("train", "dev"):
        shared = test.intersection(texts.get(other, ()))
        if shared:
            warnings.append(
                f"test: {len(shared):,} distinct test text(s) also occur in {other} (a system "
                f"trained on {other} has seen them)"
            )
    return warnings
